#include "codegen/cpp/emitters/emitter_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/ops/conv.h"
#include "ir/ops/fused.h"
#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"
#include "ir/symbolic_params.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/gemm_bf16.h"
#include "kiln/rt/winograd.h"

namespace kiln::codegen::cpp {

Window2d window_2d(const ir::Node& node, const std::vector<int64_t>& spatial_in,
                   std::vector<int64_t> kernel) {
  ir::ResolvedWindow w = ir::resolve_window(node, spatial_in, std::move(kernel));
  bool one_d = spatial_in.size() == 1;
  // Index 0 is H, 1 is W; a 1-D window's only axis is W.
  auto at = [&](const std::vector<int64_t>& v, size_t i, int64_t lifted) {
    return one_d ? (i == 0 ? lifted : v[0]) : v[i];
  };
  return Window2d{at(spatial_in, 0, 1),   at(spatial_in, 1, 1),   at(w.kernel, 0, 1),
                  at(w.kernel, 1, 1),     at(w.out_dims, 0, 1),   at(w.out_dims, 1, 1),
                  at(w.strides, 0, 1),    at(w.strides, 1, 1),    at(w.pads_begin, 0, 0),
                  at(w.pads_begin, 1, 0), at(w.pads_end, 0, 0),   at(w.pads_end, 1, 0),
                  at(w.dilations, 0, 1),  at(w.dilations, 1, 1)};
}

kiln::rt::Conv2dParams conv2d_params(const ir::Node& node) { return conv2d_params_at(node, {}); }

kiln::rt::Conv2dParams conv2d_params_at(const ir::Node& node, const std::map<std::string, int64_t>& at) {
  std::vector<int64_t> x = ir::bound_dims(node.input(0), at), w = ir::bound_dims(node.input(1), at);
  return ir::conv2d_params(x, w, node.i("group"),
                           ir::resolve_window(node, {x.begin() + 2, x.end()}, {w.begin() + 2, w.end()}));
}

namespace {


// With symbolic dims: the parameters as polynomials of the node's symbols, or nullopt.
std::optional<std::vector<ir::Dim>> symbolic_conv_fields(const ir::Node& node) {
  return ir::lift_params(ir::node_symbols(node), ranges_of(node), [&](const std::map<std::string, int64_t>& at) {
    return conv_fields(conv2d_params_at(node, at));
  });
}

}  // namespace

std::vector<int64_t> conv_fields(const kiln::rt::Conv2dParams& p) {
  return {p.N, p.C, p.H, p.W, p.M, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
          p.dil_h, p.dil_w, p.group};
}

std::string unsupported_conv2d(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  size_t rank = node.input(0)->shape().rank();
  if (rank != 3 && rank != 4)
    return fmt::format("compiled {} supports 1-D and 2-D convolutions, not {}-D", node.op(), rank - 2);
  if (has_symbols(node) && !symbolic_conv_fields(node))
    return "its geometry is not a polynomial of the symbolic dims (give the spatial dims a step that its strides "
           "divide: --dim H=32..960:32, or 32..960:32 in --input-shape)";
  return "";
}

int conv2d_winograd_tile(const ir::Node& node, const EmitOptions& options) {
  if (!is_f32_constant(node.input(1))) return 0;  // the weights are transformed at compile time
  // With symbolic dims, chosen for the tuning point (Winograd's packing does not depend on the
  // spatial dims, and it applies to every size of a 3x3 stride-1 window).
  const kiln::rt::Conv2dParams p = conv2d_params_at(node, tuning_point(node));
  if (!kiln::rt::winograd_applicable(p)) return 0;
  switch (options.conv_algo) {
    case ConvAlgo::Auto: return kiln::rt::winograd_choose_tile(p);
    case ConvAlgo::Im2col: return 0;
    case ConvAlgo::Winograd4: return 4;
    case ConvAlgo::Winograd2: return 2;
  }
  return 0;
}

size_t conv2d_scratch_bytes(const ir::Node& node, const EmitOptions& options) {
  const int tile = conv2d_winograd_tile(node, options);
  return max_over_range(node, [&](const std::map<std::string, int64_t>& at) {
    const kiln::rt::Conv2dParams p = conv2d_params_at(node, at);
    return (tile ? kiln::rt::winograd_scratch_floats(p, tile) : kiln::rt::conv2d_scratch_floats(p)) * sizeof(float);
  });
}

bool conv2d_packs_weights(const ir::Node& node, size_t input) {
  // With symbolic dims the runtime picks the weights' layout by the run's shape (use_transposed,
  // the direct kernels): they stay as the model has them.
  return input == 1 && is_f32_constant(node.input(1)) && !has_symbols(node) &&
         kiln::rt::conv2d_packed_weight_floats(conv2d_params(node)) > 0;
}

void emit_conv2d(EmitContext& ctx, const ir::Node& node, const std::string& epilogue) {
  const kiln::rt::Conv2dParams p = conv2d_params_at(node, tuning_point(node));
  if (has_symbols(node)) {
    std::optional<std::vector<ir::Dim>> f = symbolic_conv_fields(node);
    if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
    ctx.line(fmt::format("const kiln::rt::Conv2dParams p{{{}}};", ctx.dim_list(*f)));
  } else {
    ctx.line(fmt::format("const kiln::rt::Conv2dParams p{{{}}};", fmt::join(conv_fields(p), ", ")));
  }
  const std::string bias = node.has_input(2) ? ctx.in(node, 2) : "nullptr";
  if (int tile = conv2d_winograd_tile(node, ctx.options())) {
    // Transformed (G g G^T) and packed now, once, for the GEMM of each tile position.
    std::vector<float> packed(kiln::rt::winograd_packed_weight_floats(p, tile));
    kiln::rt::winograd_pack_weights(p, tile, node.input(1)->constant().data<float>(), packed.data());
    ctx.line(fmt::format("kiln::rt::winograd_conv2d_f32(p, {}, {}, {}, {}, {}, reinterpret_cast<float*>{}, {}, pool);",
                         tile, ctx.in(node, 0), ctx.add_weight_floats(packed), bias, ctx.out(node, 0),
                         ctx.scratch(node), epilogue));
    return;
  }
  std::string weights;
  if (conv2d_packs_weights(node, 1)) {
    // Packed now, once, for the GEMM kernel, rather than on every run.
    std::vector<float> packed(kiln::rt::conv2d_packed_weight_floats(p));
    kiln::rt::conv2d_pack_weights(p, node.input(1)->constant().data<float>(), packed.data());
    weights = ctx.add_weight_floats(packed) + ", true";
  } else {
    weights = ctx.in(node, 1) + ", false";
  }
  const bool needs_scratch = conv2d_scratch_bytes(node, ctx.options()) > 0;
  ctx.line(fmt::format("kiln::rt::conv2d_f32_prepacked(p, {}, {}, {}, {}, {}, {}, pool);", ctx.in(node, 0), weights,
                       bias, ctx.out(node, 0),
                       needs_scratch ? "reinterpret_cast<float*>" + ctx.scratch(node) : "nullptr", epilogue));
}

const ir::DimRanges& ranges_of(const ir::Node& node) {
  static const ir::DimRanges none;
  const ir::Graph* g = node.output(0) ? node.output(0)->graph() : nullptr;
  return g ? g->dim_ranges() : none;
}

bool has_symbols(const ir::Node& node) { return !ir::node_symbols(node).empty(); }

std::map<std::string, int64_t> tuning_point(const ir::Node& node) {
  std::map<std::string, int64_t> at;
  const ir::DimRanges& ranges = ranges_of(node);
  for (const std::string& s : ir::node_symbols(node))
    if (auto it = ranges.find(s); it != ranges.end()) at[s] = it->second.opt;
  return at;
}

size_t max_over_range(const ir::Node& node, const std::function<size_t(const std::map<std::string, int64_t>&)>& f) {
  const ir::DimRanges& ranges = ranges_of(node);
  std::vector<std::string> symbols = ir::node_symbols(node);
  // Every point when there are few (a scratch size need not grow with each dim), else the
  // corners and the tuning point.
  uint64_t count = 1;
  for (const std::string& s : symbols) {
    auto it = ranges.find(s);
    if (it == ranges.end()) fail("{}: symbolic dim '{}' has no bounds", node.describe(), s);
    count *= static_cast<uint64_t>(it->second.max - it->second.min + 1);
    if (count > 4096) break;
  }
  std::vector<std::map<std::string, int64_t>> points(1);
  for (const std::string& s : symbols) {
    const ir::DimRange& r = ranges.at(s);
    std::vector<int64_t> values;
    if (count <= 4096)
      for (int64_t v = r.min; v <= r.max; ++v) values.push_back(v);
    else
      values = {r.min, r.opt, r.max};
    std::vector<std::map<std::string, int64_t>> next;
    for (const auto& p : points)
      for (int64_t v : values) {
        next.push_back(p);
        next.back()[s] = v;
      }
    points = std::move(next);
  }
  size_t best = 0;
  for (const auto& p : points) best = std::max(best, f(p));
  return best;
}

bool is_data_dependent_dim(const ir::Value* v, size_t axis) {
  const ir::Graph* g = v->graph();
  if (!g || !v->has_type() || axis >= v->shape().rank() || !v->shape()[axis].is_symbol()) return false;
  auto it = g->dim_ranges().find(v->shape()[axis].name());
  return it != g->dim_ranges().end() && it->second.data_dependent;
}

size_t axis_or_flat(const ir::Node& node) {
  if (!node.has_attr("axis")) return 0;
  return static_cast<size_t>(*ir::normalize_axis(node.i("axis"), static_cast<int64_t>(node.input(0)->shape().rank())));
}

std::string require_plain_numeric(const ir::Node& node, const char* op) {
  switch (node.input(0)->dtype()) {
    case ir::DType::F32: case ir::DType::F64: case ir::DType::I8: case ir::DType::U8: case ir::DType::I16:
    case ir::DType::U16: case ir::DType::I32: case ir::DType::U32: case ir::DType::I64: case ir::DType::U64:
    case ir::DType::Bool:
      return "";
    default:
      return fmt::format("compiled {} reads f32, f64, integer and bool tensors, not {}", op,
                         ir::dtype_name(node.input(0)->dtype()));
  }
}

bool is_f32_constant(const ir::Value* v) {
  return v != nullptr && v->is_constant() && v->dtype() == ir::DType::F32;
}

std::string gemm_b_operand(EmitContext& ctx, const ir::Value* v, const std::string& expr, bool trans, int64_t K,
                           int64_t N) {
  if (!is_f32_constant(v))
    return fmt::format("kiln::rt::GemmOperand{{{}, {}, {}, false}}", expr, trans ? K : N, trans);
  // Packed now, once, rather than on every run (the runtime's own packing routine, so the
  // layout always matches the kernel it ships).
  if (ctx.stores_gemm_b_bf16(K, N)) {
    std::vector<uint16_t> halves(kiln::rt::gemm_bf16_packed_b_halves(K, N));
    kiln::rt::gemm_bf16_pack_b(trans, K, N, v->constant().data<float>(), trans ? K : N, halves.data());
    const EmitContext::Bf16Weights w = ctx.add_bf16_weights(halves, K, N, false);
    return fmt::format("kiln::rt::GemmOperand{{{}, 0, false, true, {}}}", w.widened, w.bf16);
  }
  std::vector<float> packed(kiln::rt::gemm_f32_packed_b_floats(K, N));
  kiln::rt::gemm_f32_pack_b(trans, K, N, v->constant().data<float>(), trans ? K : N, packed.data());
  return fmt::format("kiln::rt::GemmOperand{{{}, 0, false, true}}", ctx.add_weight_floats(packed));
}

bool gemm_packs_b(const ir::Node& node, size_t input) {
  return input == 1 && is_f32_constant(node.input(1));
}

std::string unsupported_gemm(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  // With symbolic dims (--dim NAME=MIN..MAX) only M, A's rows, may be one: B is packed now.
  const ir::Shape &a = node.input(0)->shape(), &b = node.input(1)->shape();
  if (!b.is_static() || !a[node.i("transA") != 0 ? 0 : 1].is_static())
    return "with symbolic dims, Gemm's K and N must be numbers";
  return "";
}

void emit_gemm(EmitContext& ctx, const ir::Node& node, bool with_epilogue) {
  const ir::Shape& a = node.input(0)->shape();
  std::vector<int64_t> b = dims_of(node.input(1));
  bool ta = node.i("transA") != 0, tb = node.i("transB") != 0;
  const ir::Dim Md = ta ? a[1] : a[0];
  const std::string M = ctx.dim(Md);
  int64_t K = (ta ? a[0] : a[1]).value(), N = tb ? b[0] : b[1];
  float beta = node.f("beta");
  bool has_c = node.has_input(2) && beta != 0.0f;
  if (has_c) {
    BroadcastArgs bc = broadcast_shape_args(ctx, ir::Shape(std::vector<ir::Dim>{Md, ir::Dim(N)}), {node.input(2)});
    ctx.line(fmt::format("kiln::rt::strided_copy_bytes(4, {}, {}, {}, {}, 0, {});", bc.rank, bc.out_dims,
                         ctx.in(node, 2), bc.strides[0], ctx.out(node, 0)));
  }
  std::string b_expr = is_f32_constant(node.input(1)) ? "" : ctx.in(node, 1);
  ctx.line(fmt::format(
      "kiln::rt::gemm_f32_ex({}, {}, {}, {}, kiln::rt::GemmOperand{{{}, {}, {}, false}}, {}, {}, {}, {}, nullptr, "
      "{}, 0, pool);",
      M, N, K, float_literal(node.f("alpha"), ir::DType::F32), ctx.in(node, 0), ta ? M : std::to_string(K), ta,
      gemm_b_operand(ctx, node.input(1), b_expr, tb, K, N), float_literal(has_c ? beta : 0.0f, ir::DType::F32),
      ctx.out(node, 0), N, with_epilogue ? "ep" : "kiln::rt::Epilogue{}"));
}

std::string attr_constants(const ir::OpDef& def, const ir::AttributeMap& attrs) {
  std::string s;
  for (const ir::AttrSpec& spec : def.attrs) {
    auto it = attrs.find(spec.name);
    if (it == attrs.end() && !spec.default_value) continue;  // the expression cannot read it
    const ir::Attribute& a = it != attrs.end() ? it->second : *spec.default_value;
    switch (spec.type) {
      case ir::AttrType::Float:
        s += fmt::format("constexpr float {} = {}; ", spec.name, float_literal(a.f(), ir::DType::F32));
        break;
      case ir::AttrType::Int:
        s += fmt::format("constexpr int64_t {} = {}; ", spec.name, a.i());
        break;
      case ir::AttrType::String:
        s += fmt::format("constexpr std::string_view {} = {}; ", spec.name, string_literal(a.s()));
        break;
      case ir::AttrType::Ints:
      case ir::AttrType::Floats:
      case ir::AttrType::Strings:
      case ir::AttrType::Tensor:
      case ir::AttrType::Graph:
        break;  // the elementwise lists declare only float, int and string attributes
    }
  }
  return s;
}

std::string require_f32(const ir::Node& node) {
  for (const ir::Value* v : node.inputs())
    if (v && v->dtype() != ir::DType::F32)
      return fmt::format("input '{}' is {}; compiled {} supports f32 only", v->name(),
                         ir::dtype_name(v->dtype()), node.op());
  return "";
}

BroadcastArgs broadcast_args(EmitContext& ctx, const std::vector<int64_t>& out_dims,
                             const std::vector<const ir::Value*>& inputs) {
  std::vector<int64_t> dims = out_dims.empty() ? std::vector<int64_t>{1} : out_dims;
  BroadcastArgs args{static_cast<int>(dims.size()), ctx.array(dims), {}};
  for (const ir::Value* v : inputs) {
    std::vector<int64_t> in_dims = dims_of(v);
    std::vector<int64_t> strides = ir::broadcast_strides(in_dims, dims);
    args.strides.push_back(ctx.array(strides));
  }
  return args;
}

BroadcastArgs broadcast_shape_args(EmitContext& ctx, const ir::Shape& out, const std::vector<const ir::Value*>& inputs) {
  if (out.is_static()) return broadcast_args(ctx, out.values(), inputs);
  std::vector<ir::Dim> dims = out.dims();
  BroadcastArgs args{static_cast<int>(dims.size()), ctx.dims(dims), {}};
  for (const ir::Value* v : inputs) {
    const ir::Shape& in = v->shape();
    std::vector<ir::Dim> strides(dims.size(), ir::Dim(0));
    ir::Dim stride(1);
    for (size_t k = 0; k < in.rank(); ++k) {
      const size_t i = in.rank() - 1 - k, o = dims.size() - 1 - k;
      if (!(in[i] == ir::Dim(1) && !(dims[o] == ir::Dim(1)))) strides[o] = stride;
      stride = stride * in[i];
    }
    args.strides.push_back(ctx.dims(strides));
  }
  return args;
}

ir::Dim dims_product(const ir::Shape& s, size_t begin, size_t end) {
  ir::Dim p(1);
  for (size_t i = begin; i < end && i < s.rank(); ++i) p = p * s[i];
  return p;
}

std::string store_activation_expr(const ir::Node& node, const char* prefix) {
  const kiln::rt::StoreActivation a = *ir::store_activation(ir::fused_activation(node, prefix));
  if (a.kind == kiln::rt::StoreActivation::kRelu) return "kiln::rt::StoreActivation{kiln::rt::StoreActivation::kRelu}";
  if (a.kind == kiln::rt::StoreActivation::kNone) return "kiln::rt::StoreActivation{}";
  return fmt::format("kiln::rt::StoreActivation{{kiln::rt::StoreActivation::kClamp, {}, {}}}",
                     float_literal(a.lo, ir::DType::F32), float_literal(a.hi, ir::DType::F32));
}

}  // namespace kiln::codegen::cpp
