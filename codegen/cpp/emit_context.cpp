#include "codegen/cpp/emit_context.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp/weight_blob.h"
#include "ir/error.h"

namespace kiln::codegen::cpp {

std::string cpp_type(ir::DType t) {
  switch (t) {
    case ir::DType::F32: return "float";
    case ir::DType::F64: return "double";
    case ir::DType::F16: return "kiln::rt::f16";
    case ir::DType::BF16: return "kiln::rt::bf16";
    case ir::DType::I8: return "int8_t";
    case ir::DType::U8: return "uint8_t";
    case ir::DType::I16: return "int16_t";
    case ir::DType::U16: return "uint16_t";
    case ir::DType::U32: return "uint32_t";
    case ir::DType::U64: return "uint64_t";
    case ir::DType::I32: return "int32_t";
    case ir::DType::I64: return "int64_t";
    case ir::DType::Bool: return "bool";
    case ir::DType::F8E4M3FN: return "kiln::rt::f8e4m3fn";
    case ir::DType::F8E4M3FNUZ: return "kiln::rt::f8e4m3fnuz";
    case ir::DType::F8E5M2: return "kiln::rt::f8e5m2";
    case ir::DType::F8E5M2FNUZ: return "kiln::rt::f8e5m2fnuz";
    case ir::DType::F8E8M0: return "kiln::rt::f8e8m0";
    case ir::DType::F4E2M1: return "kiln::rt::f4e2m1";
    case ir::DType::I4: return "kiln::rt::i4";
    case ir::DType::U4: return "kiln::rt::u4";
    case ir::DType::I2: return "kiln::rt::i2";
    case ir::DType::U2: return "kiln::rt::u2";
  }
  return "void";
}

std::string cpp_compute_type(ir::DType t) {
  return t == ir::DType::F16 || t == ir::DType::BF16 ? "float" : cpp_type(t);
}

std::string kiln_dtype_enum(ir::DType t) {
  std::string name(ir::dtype_name(t));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "KILN_" + name;
}

std::string float_literal(double v, ir::DType t) {
  std::string type = cpp_compute_type(t);
  if (std::isnan(v)) return fmt::format("std::numeric_limits<{}>::quiet_NaN()", type);
  if (std::isinf(v))
    return fmt::format("{}std::numeric_limits<{}>::infinity()", v < 0 ? "-" : "", type);
  if (type == "float") {
    std::string s = fmt::format("{}", static_cast<float>(v));
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s + "f";
  }
  if (type == "double") {
    std::string s = fmt::format("{}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  return fmt::format("{}({})", type, static_cast<int64_t>(v));
}

std::string string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", static_cast<char>(c));
    else if (c == 0)  // a C string cannot hold NUL: spelled as the two characters \0
      out += "\\\\0";
    else if (c < 0x20 || c >= 0x7f)
      out += fmt::format("\\{:03o}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string comment_text(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    char safe = c < 0x20 || c == 0x7f ? ' ' : c == '\\' ? '/' : static_cast<char>(c);
    if (safe == '/' && !out.empty() && out.back() == '*') out += ' ';
    out += safe;
  }
  return out;
}

const Location& EmitContext::location(const ir::Value* v) const {
  auto it = locations_.find(v);
  if (it == locations_.end()) fail("internal: value '{}' has no storage", v->name());
  return it->second;
}

std::string EmitContext::value_ptr(const ir::Value* v, bool writable) const {
  std::string p = located_ptr(v, writable);
  auto it = item_elements_.find(v);
  if (it == item_elements_.end()) return p;
  return fmt::format("({} + kiln_item * {})", p, it->second);  // in a batch loop: this item's elements
}

std::string EmitContext::located_ptr(const ir::Value* v, bool writable) const {
  const Location& loc = location(v);
  std::string type = (writable ? "" : "const ") + cpp_type(v->dtype()) + "*";
  switch (loc.kind) {
    case Location::Input:
      if (writable) fail("internal: graph input '{}' written", v->name());
      return fmt::format("static_cast<{}>(in[{}])", type, loc.index);
    case Location::Output:
      return fmt::format("static_cast<{}>(out[{}])", type, loc.index);
    case Location::Weight:
      if (writable) fail("internal: weight '{}' written", v->name());
      return fmt::format("reinterpret_cast<{}>(W + {})", type, loc.offset);
    case Location::Widened:
      if (writable) fail("internal: weight '{}' written", v->name());
      return fmt::format("reinterpret_cast<{}>(X + {})", type, loc.offset);
    case Location::Arena:
      return fmt::format("reinterpret_cast<{}>(A + {})", type, loc.offset);
  }
  return "nullptr";
}

std::string EmitContext::dim(const ir::Dim& d) const {
  if (d.is_static()) return std::to_string(d.value());
  if (d.is_unknown()) fail("a dim of unknown size reached code generation");
  return d.cpp([&](const std::string& s) {
    auto it = ranges_.find(s);
    if (it == ranges_.end()) fail("symbolic dim '{}' has no bounds (give it --dim {}=MIN..MAX)", s, s);
    return fmt::format("D[{}]", std::distance(ranges_.begin(), it));
  });
}

std::string EmitContext::dim_slot(const std::string& symbol) const {
  auto it = ranges_.find(symbol);
  if (it == ranges_.end() || !it->second.data_dependent) fail("internal: '{}' is not a data-dependent dim", symbol);
  // D is the context's dims array (see run_graph); only this node writes this slot.
  return fmt::format("const_cast<int64_t*>(D)[{}]", std::distance(ranges_.begin(), it));
}

size_t max_value_bytes(const ir::Value* v) {
  const ir::Graph* g = v->graph();
  std::optional<int64_t> n = v->shape().max_numel(g ? g->dim_ranges() : ir::DimRanges{});
  if (!n) fail("value '{}' has shape {}: a dim without bounds", v->name(), v->shape().str());
  return static_cast<size_t>(*n) * ir::dtype_size(v->dtype());
}

std::string EmitContext::run_bytes(const ir::Value* v) const {
  if (v->shape().is_static()) return std::to_string(max_value_bytes(v));
  return fmt::format("static_cast<size_t>({}) * {}", numel(v), ir::dtype_size(v->dtype()));
}

std::string EmitContext::dim_list(const std::vector<ir::Dim>& dims) const {
  std::vector<std::string> exprs;
  for (const ir::Dim& d : dims) exprs.push_back(dim(d));
  return fmt::format("{}", fmt::join(exprs, ", "));
}

std::string EmitContext::dims(const std::vector<ir::Dim>& dims) {
  std::vector<int64_t> values;
  std::vector<std::string> exprs;
  for (const ir::Dim& d : dims) {
    if (d.is_static()) values.push_back(d.value());
    exprs.push_back(dim(d));
  }
  if (values.size() == dims.size()) return array(values);
  const std::string name = fmt::format("kiln_dims{}", local_arrays_++);
  line(fmt::format("const int64_t {}[] = {{{}}};", name, fmt::join(exprs, ", ")));
  return name;
}

std::string EmitContext::in(const ir::Node& node, size_t i) const {
  return node.has_input(i) ? value_ptr(node.input(i), false) : "nullptr";
}

std::string EmitContext::out(const ir::Node& node, size_t i) const {
  return value_ptr(node.output(i), true);
}

std::string EmitContext::scratch(const ir::Node& node) const {
  auto it = scratch_.find(&node);
  if (it == scratch_.end()) fail("internal: {} has no scratch memory", node.describe());
  return fmt::format("(A + {})", it->second);
}

std::string EmitContext::add_weight_floats(const std::vector<float>& values) {
  if (weights_ == nullptr) fail("internal error: no weights blob to add compile-time constants to");
  const Location loc = weights_->add_floats(values.data(), values.size());
  return fmt::format("reinterpret_cast<const float*>({} + {})", loc.kind == Location::Widened ? "X" : "W", loc.offset);
}

bool EmitContext::stores_gemm_b_bf16(int64_t K, int64_t N) const {
  return weights_ != nullptr && weights_->precision() == passes::Precision::BF16 &&
         K * N >= static_cast<int64_t>(WeightBlob::kMinHalvedElements);
}

EmitContext::Bf16Weights EmitContext::add_bf16_weights(const std::vector<uint16_t>& packed, int64_t K, int64_t N,
                                                       bool conv) {
  if (weights_ == nullptr) fail("internal error: no weights blob to add compile-time constants to");
  const WeightBlob::GemmB at = weights_->add_gemm_b_bf16(packed, K, N, conv);
  return {fmt::format("(XB ? reinterpret_cast<const float*>(XB + {}) : nullptr)", at.widened),
          fmt::format("reinterpret_cast<const uint16_t*>(W + {})", at.bf16)};
}

std::string EmitContext::add_weight_bytes(const void* data, size_t size) {
  if (weights_ == nullptr) fail("internal error: no weights blob to add compile-time constants to");
  return fmt::format("(W + {})", weights_->add_bytes(data, size).offset);
}

std::string EmitContext::array(const std::vector<int64_t>& values) {
  auto it = array_names_.find(values);
  if (it != array_names_.end()) return it->second;
  std::string name = fmt::format("k{}", array_names_.size());
  array_names_.emplace(values, name);
  if (values.empty())
    arrays_ += fmt::format("const int64_t {}[1] = {{0}};\n", name);
  else
    arrays_ += fmt::format("const int64_t {}[] = {{{}}};\n", name, fmt::join(values, ", "));
  return name;
}

std::string EmitContext::epilogue_function(const std::string& body) {
  auto it = function_names_.find(body);
  if (it != function_names_.end()) return it->second;
  std::string name = fmt::format("kiln_ep{}", function_names_.size());
  function_names_.emplace(body, name);
  constexpr const char* kParams = "(const void* c, float* y, int64_t offset, int64_t n)";
  functions_ += fmt::format(
      "void {0}_generic{1} {{ {2} }}\n#if KILN_EPILOGUE_DISPATCH\nKILN_EPILOGUE_AVX2 void {0}_avx2{1} {{ {2} }}\n#endif\n",
      name, kParams, body);
  return name;
}

void EmitContext::line(const std::string& text) { body_ += "    " + text + "\n"; }

std::string EmitContext::fail_stmt(const ir::Node& node, const std::string& message) const {
  return fmt::format("return fail(ctx, {});",
                     string_literal(fmt::format("{}: {}", node.describe(), message)));
}

void EmitContext::begin_node(const ir::Node& node) {
  body_ += fmt::format("  {{  // {}\n", comment_text(node.describe()));
}

void EmitContext::end_node() { body_ += "  }\n"; }

void EmitContext::begin_batch_loop(const std::string& count, const std::vector<const ir::Value*>& items) {
  for (const ir::Value* v : items) item_elements_[v] = v->shape().numel();
  line(fmt::format("for (int64_t kiln_item = 0; kiln_item < {}; ++kiln_item) {{", count));
}

void EmitContext::end_batch_loop() {
  item_elements_.clear();
  line("}");
}

}  // namespace kiln::codegen::cpp
