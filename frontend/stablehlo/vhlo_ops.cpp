// The VHLO ops kiln translates: their StableHLO names and the names of their attributes in
// the order the properties section stores them (ODS sorts an op's attributes by name), and
// the rewriting of VHLO's flattened dimension numbers into the forms the importer reads.
#include <fmt/format.h>

#include <map>

#include "frontend/stablehlo/vhlo_bytecode.h"

namespace kiln::frontend::stablehlo {
namespace {

const std::map<std::string, VhloOpInfo>& table() {
  static const std::map<std::string, VhloOpInfo> t = [] {
    std::map<std::string, VhloOpInfo> m;
    const char* plain[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
                           "and", "or", "xor", "not", "negate", "abs", "floor", "ceil", "sign",
                           "round_nearest_even", "clamp", "is_finite", "select", "reshape", "convert"};
    for (const char* op : plain) m[fmt::format("{}_v1", op)] = {"", {}};
    // Unary ops that gained a result_accuracy attribute in their second version.
    const char* accurate[] = {"exponential", "exponential_minus_one", "log", "log_plus_one", "tanh", "logistic",
                              "sqrt", "rsqrt", "sine", "cosine", "tan", "cbrt"};
    for (const char* op : accurate) {
      m[fmt::format("{}_v1", op)] = {"", {}};
      m[fmt::format("{}_v2", op)] = {"", {"result_accuracy"}};
    }
    m["constant_v1"] = {"", {"value"}};
    m["iota_v1"] = {"", {"iota_dimension"}};
    m["broadcast_in_dim_v1"] = {"", {"broadcast_dimensions"}};
    m["transpose_v1"] = {"", {"permutation"}};
    m["reverse_v1"] = {"", {"dimensions"}};
    m["concatenate_v1"] = {"", {"dimension"}};
    m["slice_v1"] = {"", {"limit_indices", "start_indices", "strides"}};
    m["pad_v1"] = {"", {"edge_padding_high", "edge_padding_low", "interior_padding"}};
    m["compare_v1"] = {"", {"compare_type", "comparison_direction"}};
    m["dot_v1"] = {"", {"precision_config"}};
    m["dot_general_v1"] = {"",
                           {"lhs_batching_dimensions", "lhs_contracting_dimensions", "precision_config",
                            "rhs_batching_dimensions", "rhs_contracting_dimensions"}};
    m["dot_general_v2"] = {"",
                           {"accumulation_type", "allow_imprecise_accumulation", "lhs_batching_dimensions",
                            "lhs_component_count", "lhs_contracting_dimensions", "lhs_precision_type",
                            "num_primitive_operations", "precision_config", "rhs_batching_dimensions",
                            "rhs_component_count", "rhs_contracting_dimensions", "rhs_precision_type"}};
    m["convolution_v1"] = {"",
                           {"batch_group_count", "feature_group_count", "input_batch_dimension",
                            "input_feature_dimension", "input_spatial_dimensions", "kernel_input_feature_dimension",
                            "kernel_output_feature_dimension", "kernel_spatial_dimensions", "lhs_dilation",
                            "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions",
                            "padding", "precision_config", "rhs_dilation", "window_reversal", "window_strides"}};
    m["reduce_v1"] = {"", {"dimensions"}};
    m["reduce_window_v1"] = {"",
                             {"base_dilations", "padding", "window_dilations", "window_dimensions", "window_strides"}};
    m["gather_v2"] = {"",
                      {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims",
                       "operand_batching_dims", "slice_sizes", "start_index_map", "start_indices_batching_dims"}};
    // The StableHLO name: "stablehlo." and the VHLO name without its version.
    for (auto& [name, info] : m) info.stablehlo = "stablehlo." + name.substr(0, name.rfind("_v"));
    return m;
  }();
  return t;
}

std::string list_text(const std::vector<int64_t>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

}  // namespace

const VhloOpInfo* vhlo_op(const std::string& name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

void translate_attrs(BytecodeFile& f, const std::string& vhlo_name, const VhloOpInfo& info,
                     const std::vector<uint64_t>& values, size_t offset, Op& op) {
  std::map<std::string, uint64_t> by_name;
  for (size_t k = 0; k < values.size(); ++k) by_name[info.attrs[k]] = values[k];
  auto ints = [&](const char* key) { return f.ints(by_name.at(key), key, offset); };
  auto one = [&](const char* key) {
    std::vector<int64_t> v = ints(key);
    if (v.size() != 1) f.fail(offset, fmt::format("vhlo.{}: {} is not one integer", vhlo_name, key));
    return v[0];
  };
  if (vhlo_name.rfind("dot_general_v", 0) == 0) {
    // The text form's #stablehlo.dot<...>, which the importer reads by key.
    Attr a;
    a.kind = Attr::Kind::Opaque;
    a.s = fmt::format(
        "#stablehlo.dot<lhs_batching_dimensions = {}, rhs_batching_dimensions = {}, lhs_contracting_dimensions = {}, "
        "rhs_contracting_dimensions = {}>",
        list_text(ints("lhs_batching_dimensions")), list_text(ints("rhs_batching_dimensions")),
        list_text(ints("lhs_contracting_dimensions")), list_text(ints("rhs_contracting_dimensions")));
    op.attrs["dot_dimension_numbers"] = a;
    return;
  }
  if (vhlo_name == "convolution_v1") {
    // dim_numbers as the pretty form's [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f].
    auto layout = [&](const char* batch, const char* feature, const char* spatial, const char* b, const char* ft) {
      const int64_t bd = one(batch), fd = one(feature);
      const std::vector<int64_t> sp = ints(spatial);
      const int64_t rank = static_cast<int64_t>(sp.size()) + 2;
      std::vector<Attr> tokens(static_cast<size_t>(rank));
      std::vector<bool> set(static_cast<size_t>(rank), false);
      auto put = [&](int64_t d, Attr t) {
        if (d < 0 || d >= rank || set[static_cast<size_t>(d)])
          f.fail(offset, fmt::format("vhlo.convolution_v1: dim {} of {} is out of range or named twice", d, spatial));
        set[static_cast<size_t>(d)] = true;
        tokens[static_cast<size_t>(d)] = std::move(t);
      };
      Attr w;
      w.kind = Attr::Kind::Word;
      w.s = b;
      put(bd, w);
      w.s = ft;
      put(fd, w);
      for (size_t k = 0; k < sp.size(); ++k) {
        Attr n;
        n.kind = Attr::Kind::Int;
        n.i = static_cast<int64_t>(k);
        put(sp[k], n);
      }
      Attr list;
      list.kind = Attr::Kind::List;
      list.items = std::move(tokens);
      return list;
    };
    Attr dn;
    dn.kind = Attr::Kind::List;
    dn.s = "joined";
    dn.items = {layout("input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions", "b", "f"),
                layout("kernel_output_feature_dimension", "kernel_input_feature_dimension", "kernel_spatial_dimensions",
                       "o", "i"),
                layout("output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions", "b", "f")};
    op.attrs["dim_numbers"] = dn;
    for (const char* key : {"window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal",
                            "feature_group_count", "batch_group_count"})
      op.attrs[key] = f.attr(by_name.at(key));
    return;
  }
  for (const auto& [key, index] : by_name) op.attrs[key] = f.attr(index);
}

}  // namespace kiln::frontend::stablehlo
