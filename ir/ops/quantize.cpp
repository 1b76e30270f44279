// Quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; integer,
// float8 and float4 results), DynamicQuantizeLinear and kiln.Range (a calibrated range). The
// scalar rules are runtime/include/kiln/rt/quantize.h, shared with generated code.
#include "ir/ops/quantize.h"

#include <algorithm>
#include <cmath>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

namespace rt = kiln::rt;

kiln::rt::QuantLayout quant_layout(const Node& node) {
  const Shape& xs = node.input(0)->shape();
  const Shape& ss = node.input(1)->shape();
  if (!xs.is_static() || !ss.is_static())
    fail("{}: shapes of x {} and scale {} must be known", node.describe(), xs.str(), ss.str());
  const std::vector<int64_t> x = xs.values(), s = ss.values();
  rt::QuantLayout l;
  if (ss.numel() == 1) {  // per tensor, whatever the scale's rank
    l.inner = xs.numel();
    return l;
  }
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = require_axis(node, node.i("axis"), rank);
  const int64_t block = node.i("block_size");
  l.outer = numel(std::vector<int64_t>(x.begin(), x.begin() + axis));
  l.axis_len = x[static_cast<size_t>(axis)];
  l.inner = numel(std::vector<int64_t>(x.begin() + axis + 1, x.end()));
  if (block <= 0) {
    if (s.size() != 1 || s[0] != l.axis_len)
      fail("{}: per-axis scale must be 1-D of x's axis {} length {}, got {}", node.describe(), axis,
           l.axis_len, ss.str());
    l.axis_stride = 1;
    return l;
  }
  std::vector<int64_t> want = x;
  want[static_cast<size_t>(axis)] = (l.axis_len + block - 1) / block;
  if (s != want)
    fail("{}: blocked scale must have shape {} (x {} in blocks of {} on axis {}), got {}",
         node.describe(), dims_str(want), xs.str(), block, axis, ss.str());
  l.block = block;
  l.inner_stride = 1;
  l.axis_stride = l.inner;
  l.outer_stride = want[static_cast<size_t>(axis)] * l.inner;
  return l;
}

namespace {

bool is_quantized_type(DType t) {
  return t == DType::U8 || t == DType::I8 || t == DType::U16 || t == DType::I16 ||
         (is_storage_only(t) && t != DType::F8E8M0);
}

// Calls fn.template operator()<Q>() for a quantized dtype (and i32, which DequantizeLinear takes).
template <class Fn>
void visit_quantized(const Node& node, DType t, Fn&& fn) {
  if (!is_quantized_type(t) && t != DType::I32)
    fail("{}: {} is not a quantized dtype", node.describe(), dtype_name(t));
  visit_any_dtype(t, [&]<class Q>() {
    if constexpr (!std::is_same_v<Q, rt::f8e8m0> && !std::is_floating_point_v<Q> &&
                  !std::is_same_v<Q, f16> && !std::is_same_v<Q, bf16> && !std::is_same_v<Q, bool> &&
                  !std::is_same_v<Q, int64_t> && !std::is_same_v<Q, uint64_t> && !std::is_same_v<Q, uint32_t>)
      fn.template operator()<Q>();
  });
}

void check_zero_point(const Node& n, DType q) {
  if (!n.has_input(2)) return;
  if (n.input(2)->dtype() != q)
    fail("{}: zero point is {}, expected {}", n.describe(), dtype_name(n.input(2)->dtype()), dtype_name(q));
  const Shape &zs = n.input(2)->shape(), &ss = n.input(1)->shape();
  const bool both_one = zs.is_static() && ss.is_static() && zs.numel() == 1 && ss.numel() == 1;
  if (!both_one && zs != ss)
    fail("{}: zero point {} and scale {} must have the same shape", n.describe(),
         n.input(2)->shape().str(), n.input(1)->shape().str());
}

// A dtype attribute where 0 means "not given".
std::optional<DType> optional_dtype_attr(const Node& n, const char* name) {
  const int64_t code = n.i(name);
  if (code == 0) return std::nullopt;
  std::optional<DType> t = code > 0 && code <= 64 ? dtype_from_code(static_cast<int>(code)) : std::nullopt;
  if (!t) fail("{}: {} {} is not a dtype kiln has", n.describe(), name, code);
  return t;
}

// ---- QuantizeLinear -------------------------------------------------------------------------

DType quantize_output_dtype(const Node& n) {
  std::optional<DType> attr = optional_dtype_attr(n, "output_dtype");
  if (n.has_input(2)) {
    if (attr && *attr != n.input(2)->dtype())
      fail("{}: output_dtype {} differs from the zero point's {}", n.describe(), dtype_name(*attr),
           dtype_name(n.input(2)->dtype()));
    return n.input(2)->dtype();
  }
  return attr.value_or(DType::U8);
}

// The dtype x / scale is rounded to: the `precision` attribute, else x's dtype.
DType division_dtype(const Node& n) {
  return optional_dtype_attr(n, "precision").value_or(n.input(0)->dtype());
}

void infer_quantize(Node& n) {
  require_float(n, 0);
  require_float(n, 1);
  const DType q = quantize_output_dtype(n);
  if (!is_quantized_type(q)) fail("{}: cannot quantize to {}", n.describe(), dtype_name(q));
  if (!is_float(division_dtype(n)))
    fail("{}: precision {} is not a float dtype", n.describe(), dtype_name(division_dtype(n)));
  check_zero_point(n, q);
  if (n.input(0)->shape().is_static() && n.input(1)->shape().is_static()) quant_layout(n);
  n.output(0)->set_type(q, n.input(0)->shape());
}

void eval_quantize(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const DType q = n.output(0)->dtype();
  const rt::QuantLayout l = quant_layout(n);
  const Tensor* zp = optional_input(in, 2);
  const auto division = static_cast<kiln_dtype>(division_dtype(n));
  out[0] = Tensor(q, in[0]->dims());
  visit_float(n, in[0]->dtype(), [&]<class X>() {
    visit_float(n, in[1]->dtype(), [&]<class S>() {
      visit_quantized(n, q, [&]<class Q>() {
        rt::quantize_linear<X, S, Q>(in[0]->data<X>(), in[1]->data<S>(), zp ? zp->data<Q>() : nullptr,
                                     out[0].mutable_data<Q>(), l, division, n.i("saturate") != 0);
      });
    });
  });
}

// ---- DequantizeLinear -----------------------------------------------------------------------

void infer_dequantize(Node& n) {
  const DType q = n.input(0)->dtype();
  if (!is_quantized_type(q) && q != DType::I32)
    fail("{}: cannot dequantize {}", n.describe(), dtype_name(q));
  require_float(n, 1);
  check_zero_point(n, q);
  const DType y = optional_dtype_attr(n, "output_dtype").value_or(n.input(1)->dtype());
  if (!is_float(y)) fail("{}: output_dtype {} is not a float dtype", n.describe(), dtype_name(y));
  if (n.input(0)->shape().is_static() && n.input(1)->shape().is_static()) quant_layout(n);
  n.output(0)->set_type(y, n.input(0)->shape());
}

void eval_dequantize(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const rt::QuantLayout l = quant_layout(n);
  const Tensor* zp = optional_input(in, 2);
  out[0] = Tensor(n.output(0)->dtype(), in[0]->dims());
  visit_quantized(n, in[0]->dtype(), [&]<class Q>() {
    visit_float(n, in[1]->dtype(), [&]<class S>() {
      visit_float(n, out[0].dtype(), [&]<class Y>() {
        rt::dequantize_linear<Q, S, Y>(in[0]->data<Q>(), in[1]->data<S>(), zp ? zp->data<Q>() : nullptr,
                                       out[0].mutable_data<Y>(), l);
      });
    });
  });
}

// ---- DynamicQuantizeLinear ------------------------------------------------------------------

void infer_dynamic_quantize(Node& n) {
  require_dtype(n, 0, {DType::F32});
  n.output(0)->set_type(DType::U8, n.input(0)->shape());
  if (n.num_outputs() > 1) n.output(1)->set_type(DType::F32, Shape{});
  if (n.num_outputs() > 2) n.output(2)->set_type(DType::U8, Shape{});
}

void eval_dynamic_quantize(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  float scale = 0;
  uint8_t zero_point = 0;
  out[0] = Tensor(DType::U8, x.dims());
  rt::dynamic_quantize_linear_u8(x.data<float>(), x.numel(), out[0].mutable_data<uint8_t>(), &scale, &zero_point);
  out.resize(3);
  out[1] = Tensor::from_vector<float>(DType::F32, {}, {scale});
  out[2] = Tensor::from_vector<uint8_t>(DType::U8, {}, {zero_point});
  out.resize(n.num_outputs());
}

Cost quantize_cost(const Node& node) {
  const Shape& s = node.input(0)->shape();
  return {s.is_static() ? 2.0 * static_cast<double>(s.numel()) : 0.0, io_bytes(node)};
}

}  // namespace

void register_quantize_ops(Registry& r) {
  r.add(OpDef{
      .name = "QuantizeLinear",
      .summary = "y = saturate(round(x / scale) + zero_point), per tensor, per axis or blocked; "
                 "to 8-, 16-, 4- or 2-bit integers, float8 or float4",
      .inputs = {{"x"}, {"y_scale"}, {"y_zero_point", true}},
      .outputs = {"y"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{1})},
                {"saturate", AttrType::Int, Attribute(int64_t{1})},
                {"block_size", AttrType::Int, Attribute(int64_t{0})},
                {"output_dtype", AttrType::Int, Attribute(int64_t{0})},
                {"precision", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_quantize,
      .eval = eval_quantize,
      .cost = quantize_cost,
      .storage_dtypes = true,
  });
  r.add(OpDef{
      .name = "DequantizeLinear",
      .summary = "y = (x - zero_point) * scale, per tensor, per axis or blocked",
      .inputs = {{"x"}, {"x_scale"}, {"x_zero_point", true}},
      .outputs = {"y"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{1})},
                {"block_size", AttrType::Int, Attribute(int64_t{0})},
                {"output_dtype", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_dequantize,
      .eval = eval_dequantize,
      .cost = quantize_cost,
      .storage_dtypes = true,
  });
  r.add(OpDef{
      .name = "DynamicQuantizeLinear",
      .summary = "u8 quantization of x with the scale and zero point of its range (0 included)",
      .inputs = {{"x"}},
      .outputs = {"y", "y_scale", "y_zero_point"},
      .min_outputs = 1,
      .infer = infer_dynamic_quantize,
      .eval = eval_dynamic_quantize,
      .cost = quantize_cost,
  });
  // Made by calibration (passes/calibrate.h) and consumed by the pass quantize_static: no
  // code generator sees it.
  r.add(OpDef{
      .name = "kiln.Range",
      .summary = "x unchanged, annotated with the range [min, max] calibration observed for it",
      .inputs = {{"x"}},
      .outputs = {"y"},
      .attrs = {{"min", AttrType::Float}, {"max", AttrType::Float}},
      .infer = [](Node& n) { n.output(0)->set_type(n.input(0)->dtype(), n.input(0)->shape()); },
      .eval = [](const Node&, std::span<const Tensor* const> in, std::vector<Tensor>& out) { out[0] = *in[0]; },
  });
}

}  // namespace kiln::ir
