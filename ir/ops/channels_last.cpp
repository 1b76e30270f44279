// Channels-last (NHWC) 8-bit tensors and the ops on them, made only by passes/layout_nhwc.cpp (and
// fuse_nhwc_global_pool.cpp).
// kiln.ToNhwc and kiln.FromNhwc are Transposes of a rank-4 tensor (perm 0 2 3 1 and 0 3 1 2);
// kiln.QLinearConvNhwc is a QLinearConv whose x and y are NHWC, its semantics QLinearConv's
// through the registry (no math is written twice), and kiln.DequantizeGlobalAveragePoolNhwc the
// f32 GlobalAveragePool of a per-tensor DequantizeLinear of a kiln.FromNhwc, through theirs
// (made by passes/fuse_nhwc_global_pool.cpp). kiln.QLinearAdd needs no NHWC form: it
// adds tensors of one shape element by element, whatever their layout.
#include "ir/ops/channels_last.h"

#include <vector>

#include "ir/ops/conv.h"
#include "ir/ops/fused.h"
#include "ir/ops/op_helpers.h"
#include "ir/ops/qlinear.h"
#include "ir/ops/window.h"
#include "kiln/rt/qconv_nhwc.h"

namespace kiln::ir {
namespace {

const std::vector<int64_t> kToNhwc{0, 2, 3, 1};
const std::vector<int64_t> kToNchw{0, 3, 1, 2};

Shape permuted(const Node& node, const Shape& s, const std::vector<int64_t>& perm) {
  if (s.rank() != 4) fail("{}: expected a 4-D tensor, got {}", node.describe(), s.str());
  std::vector<Dim> d;
  for (int64_t p : perm) d.push_back(s[static_cast<size_t>(p)]);
  return Shape(d);
}

Tensor transposed(const Tensor& t, const std::vector<int64_t>& perm) {
  return eval_op("Transpose", {{"perm", perm}}, {&t});
}

void infer_to_nhwc(Node& node) {
  node.output(0)->set_type(node.input(0)->dtype(), permuted(node, node.input(0)->shape(), kToNhwc));
}
void infer_from_nhwc(Node& node) {
  node.output(0)->set_type(node.input(0)->dtype(), permuted(node, node.input(0)->shape(), kToNchw));
}
void eval_to_nhwc(const Node&, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = transposed(*in[0], kToNhwc);
}
void eval_from_nhwc(const Node&, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = transposed(*in[0], kToNchw);
}

// kiln.DequantizeGlobalAveragePoolNhwc: x [N, H, W, C] (8 bits) to f32 [N, C, 1, 1], the result of
// GlobalAveragePool(DequantizeLinear(kiln.FromNhwc(x), x_scale, x_zero_point)), the scale and zero
// point per tensor (passes/fuse_nhwc_global_pool.cpp makes it only so).
void infer_dequantize_gap_nhwc(Node& node) {
  const DType t = node.input(0)->dtype();
  if (t != DType::U8 && t != DType::I8) fail("{}: expected u8 or i8, got {}", node.describe(), dtype_name(t));
  // The three ops' own rules, in turn (they check the scale and zero point).
  std::pair<DType, Shape> x{t, permuted(node, node.input(0)->shape(), kToNchw)}, scale, zero_point;
  std::vector<std::pair<DType, Shape>*> dq{&x, &scale, nullptr};
  scale = {node.input(1)->dtype(), node.input(1)->shape()};
  if (node.has_input(2)) {
    zero_point = {node.input(2)->dtype(), node.input(2)->shape()};
    dq[2] = &zero_point;
  }
  std::pair<DType, Shape> y = infer_op("DequantizeLinear", {}, dq);
  const auto [dtype, shape] = infer_op("GlobalAveragePool", {}, {&y});
  node.output(0)->set_type(dtype, shape);
}
void eval_dequantize_gap_nhwc(const Node&, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor nchw = transposed(*in[0], kToNchw);
  const Tensor dq = eval_op("DequantizeLinear", {}, {&nchw, in[1], in.size() > 2 ? in[2] : nullptr});
  out[0] = eval_op("GlobalAveragePool", {}, {&dq});
}

// kiln.QLinearConvNhwc's inputs as QLinearConv's: x in NCHW.
void infer_qlinear_conv_nhwc(Node& node) {
  std::vector<std::pair<DType, Shape>> t(node.num_inputs());
  std::vector<std::pair<DType, Shape>*> types;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const Value* v = node.input(i);
    if (v) t[i] = {v->dtype(), i == 0 ? permuted(node, v->shape(), kToNchw) : v->shape()};
    types.push_back(v ? &t[i] : nullptr);
  }
  const auto [dtype, shape] = infer_op("QLinearConv", node.attrs(), types);
  node.output(0)->set_type(dtype, permuted(node, shape, kToNhwc));
}

void eval_qlinear_conv_nhwc(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor x = transposed(*in[0], kToNchw);
  std::vector<const Tensor*> inputs(in.begin(), in.end());
  inputs[0] = &x;
  out[0] = transposed(eval_op("QLinearConv", node.attrs(), inputs), kToNhwc);
}

}  // namespace

rt::Conv2dParams nhwc_conv_params(const Node& node) {
  const Shape& xs = node.input(0)->shape();
  const Shape& ws = node.input(3)->shape();
  if (!xs.is_static() || !ws.is_static() || xs.rank() != 4 || ws.rank() != 4)
    fail("{}: shapes {} and {} must be known and 4-D", node.describe(), xs.str(), ws.str());
  const std::vector<int64_t> x = permuted(node, xs, kToNchw).values(), w = ws.values();
  return conv2d_params(x, w, node.i("group"), resolve_window(node, {x[2], x[3]}, {w[2], w[3]}));
}

bool nhwc_conv_runs(const Node& node) {
  const bool nhwc = node.op() == "kiln.QLinearConvNhwc";
  if (!nhwc && node.op() != "QLinearConv") return false;
  for (size_t i : {size_t{0}, size_t{3}})
    if (!node.input(i)->has_type() || node.input(i)->shape().rank() != 4 || !node.input(i)->shape().is_static())
      return false;
  for (size_t i : {size_t{1}, size_t{4}, size_t{6}})  // the scales
    if (!node.input(i)->is_constant() || node.input(i)->dtype() != DType::F32) return false;
  for (size_t i : {size_t{2}, size_t{7}, size_t{8}})  // the zero points, the bias
    if (node.has_input(i) && !node.input(i)->is_constant()) return false;
  if (!node.input(3)->is_constant()) return false;
  const int32_t centre = node.input(3)->dtype() == DType::U8 ? 128 : 0;
  if (!node.has_input(5)) {
    if (centre != 0) return false;
  } else {
    const Value* wz = node.input(5);
    if (!wz->is_constant()) return false;
    for (int64_t i = 0; i < wz->constant().numel(); ++i)
      if (wz->constant().as_int64(i) != centre) return false;
  }
  return rt::qconv2d_nhwc_supported(nhwc ? nhwc_conv_params(node) : integer_conv_params(node, 0, 3));
}

bool nhwc_conv_pairs_fit_int16(const Node& node) {
  if (node.op() != "kiln.QLinearConvNhwc" || !nhwc_conv_runs(node)) return false;
  const rt::Conv2dParams p = nhwc_conv_params(node);
  if (p.group != 1) return false;
  const Tensor& w = node.input(3)->constant();
  std::vector<unsigned char> packed(rt::qconv2d_nhwc_packed_weight_bytes(p));
  if (w.dtype() == DType::U8)
    rt::qconv2d_nhwc_pack_weights(p, w.data<uint8_t>(), packed.data());
  else
    rt::qconv2d_nhwc_pack_weights(p, w.data<int8_t>(), packed.data());
  return rt::qconv2d_nhwc_pairs_fit_int16(p, packed.data());
}

void register_channels_last_ops(Registry& r) {
  r.add(OpDef{
      .name = "kiln.ToNhwc",
      .summary = "[N, C, H, W] to channels-last [N, H, W, C] (Transpose 0 2 3 1)",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .infer = infer_to_nhwc,
      .eval = eval_to_nhwc,
  });
  r.add(OpDef{
      .name = "kiln.FromNhwc",
      .summary = "the inverse of kiln.ToNhwc: [N, H, W, C] to [N, C, H, W] (Transpose 0 3 1 2)",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .infer = infer_from_nhwc,
      .eval = eval_from_nhwc,
  });
  r.add(OpDef{
      .name = "kiln.DequantizeGlobalAveragePoolNhwc",
      .summary = "GlobalAveragePool(DequantizeLinear(kiln.FromNhwc(x), x_scale, x_zero_point)) of an 8-bit "
                 "channels-last x quantized per tensor: f32 [N, C, 1, 1]",
      .inputs = {{"x"}, {"x_scale"}, {"x_zero_point", true}},
      .outputs = {"Y"},
      .infer = infer_dequantize_gap_nhwc,
      .eval = eval_dequantize_gap_nhwc,
  });
  const OpDef* conv = r.find("QLinearConv");
  if (!conv) fail("op family 'channels_last' needs QLinearConv registered first");
  r.add(OpDef{
      .name = "kiln.QLinearConvNhwc",
      .summary = "QLinearConv (2-D) with x and y channels-last as kiln.ToNhwc makes them (the other inputs as "
                 "QLinearConv's)",
      .inputs = conv->inputs,
      .outputs = {"y"},
      .attrs = conv->attrs,
      .infer = infer_qlinear_conv_nhwc,
      .eval = eval_qlinear_conv_nhwc,
      .cost = conv->cost,
  });
}

}  // namespace kiln::ir
