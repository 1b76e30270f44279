// Channel-blocked tensors and the ops on them, made only by passes/layout_nchwc.cpp.
// A blocked tensor is an NCHW one with C a multiple of 16 stored as [N, C / 16, H, W, 16]: the 16
// channels of a block contiguous at each position (NCHW16c). kiln.ToNchwc and kiln.FromNchwc
// convert; kiln.MaxPoolNchwc is MaxPool on blocked X and Y; kiln.ConvNchwc is a kiln.FusedConv whose X (or, for a stem's few channels, plain
// NCHW X), Z and Y are blocked (kiln.DepthwiseConvNchwc: one of a depthwise 3x3, for its own
// kernel); kiln.FusedConvDepthwiseNchwc is a kiln.FusedConvDepthwise whose
// Y (and X, where of rank 5) is blocked. Their semantics are the plain ops' through the registry
// (no math is written twice).
#include "ir/ops/blocked.h"

#include <utility>

#include "ir/ops/conv.h"
#include "ir/ops/fused.h"
#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"

namespace kiln::ir {
namespace {

constexpr int64_t kBlock = 16;

// [N, C, H, W] of f32 with C a static multiple of 16 -> [N, C / 16, H, W, 16].
Shape blocked_shape(const Node& node, DType t, const Shape& s) {
  if (t != DType::F32 || s.rank() != 4 || !s[1].is_static() || s[1].value() % kBlock != 0)
    fail("{}: expected f32 [N, C, H, W] with C a multiple of {}, got {}{}", node.describe(), kBlock,
         dtype_name(t), s.str());
  return Shape(std::vector<Dim>{s[0], Dim(s[1].value() / kBlock), s[2], s[3], Dim(kBlock)});
}

// [N, C / 16, H, W, 16] of f32 -> [N, C, H, W].
Shape unblocked_shape(const Node& node, const Value& v) {
  const Shape& s = v.shape();
  if (v.dtype() != DType::F32 || s.rank() != 5 || !s[1].is_static() || !s[4].is_static() ||
      s[4].value() != kBlock)
    fail("{}: expected a blocked f32 [N, C/{}, H, W, {}], got {}{}", node.describe(), kBlock, kBlock,
         dtype_name(v.dtype()), s.str());
  return Shape(std::vector<Dim>{s[0], Dim(s[1].value() * kBlock), s[2], s[3]});
}

// Element (n, c, q) of [N, C, HW] is element ((n, c / 16, q), c % 16) of the blocked tensor.
Tensor reorder(const Tensor& x, std::vector<int64_t> dims, bool to_blocked) {
  Tensor y(DType::F32, std::move(dims));
  const std::vector<int64_t>& d = to_blocked ? x.dims() : y.dims();
  const int64_t N = d[0], C = d[1], HW = d[2] * d[3];
  const float* src = x.data<float>();
  float* dst = y.mutable_data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t q = 0; q < HW; ++q) {
        const int64_t plain = (n * C + c) * HW + q, blocked = ((n * (C / kBlock) + c / kBlock) * HW + q) * kBlock + c % kBlock;
        dst[to_blocked ? blocked : plain] = src[to_blocked ? plain : blocked];
      }
  return y;
}

std::vector<int64_t> static_dims(const Shape& s) { return s.values(); }

void infer_to_nchwc(Node& node) {
  node.output(0)->set_type(DType::F32, blocked_shape(node, node.input(0)->dtype(), node.input(0)->shape()));
}
void infer_from_nchwc(Node& node) {
  node.output(0)->set_type(DType::F32, unblocked_shape(node, *node.input(0)));
}

void eval_to_nchwc(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = reorder(*in[0], static_dims(node.output(0)->shape()), true);
}
void eval_from_nchwc(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = reorder(*in[0], static_dims(node.output(0)->shape()), false);
}

// kiln.ConvNchwc's inputs as kiln.FusedConv's: X and Z unblocked.
std::vector<std::pair<DType, Shape>> fused_conv_types(const Node& node) {
  std::vector<std::pair<DType, Shape>> t(4);
  for (size_t i = 0; i < 4; ++i) {
    const Value* v = node.input(i);
    if (!v) continue;
    const bool blocked = i == 3 || (i == 0 && v->shape().rank() != 4);  // X: plain when of rank 4
    t[i] = {v->dtype(), blocked ? unblocked_shape(node, *v) : v->shape()};
  }
  return t;
}

AttributeMap conv_attrs(const Node& node) { return node.attrs(); }

void infer_conv_nchwc(Node& node) {
  std::vector<std::pair<DType, Shape>> t = fused_conv_types(node);
  std::vector<std::pair<DType, Shape>*> types;
  for (size_t i = 0; i < 4; ++i) types.push_back(node.input(i) ? &t[i] : nullptr);
  const auto [dtype, shape] = infer_op("kiln.FusedConv", conv_attrs(node), types);
  node.output(0)->set_type(DType::F32, blocked_shape(node, dtype, shape));
}

void eval_conv_nchwc(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  auto plain = [&](size_t i) {
    std::vector<int64_t> dims = static_dims(unblocked_shape(node, *node.input(i)));
    return reorder(*in[i], dims, false);
  };
  const Tensor x = node.input(0)->shape().rank() == 4 ? *in[0] : plain(0);
  const Tensor* z = optional_input(in, 3);
  const Tensor zp = z ? plain(3) : Tensor();
  const Tensor y = eval_op("kiln.FusedConv", conv_attrs(node), {&x, in[1], optional_input(in, 2), z ? &zp : nullptr});
  out[0] = reorder(y, static_dims(node.output(0)->shape()), true);
}

Cost conv_nchwc_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& y = node.output(0)->shape();
  const Shape& w = node.input(1)->shape();
  if (!y.is_static() || !w.is_static()) return c;
  // One multiply-add per weight and output position, as the FusedConv's.
  const int64_t positions = y[0].value() * y[2].value() * y[3].value();
  c.flops = 2.0 * static_cast<double>(w.numel()) * static_cast<double>(positions) + 2.0 * static_cast<double>(y.numel());
  return c;
}

// kiln.FusedConvDepthwiseNchwc: kiln.FusedConvDepthwise's inputs, X unblocked where it is of
// rank 5.
std::vector<std::pair<DType, Shape>> conv_depthwise_types(const Node& node) {
  std::vector<std::pair<DType, Shape>> t(node.num_inputs());
  for (size_t i = 0; i < t.size(); ++i)
    if (const Value* v = node.input(i))
      t[i] = {v->dtype(), i == 0 && v->shape().rank() == 5 ? unblocked_shape(node, *v) : v->shape()};
  return t;
}

std::vector<std::pair<DType, Shape>*> pointers(const Node& node, std::vector<std::pair<DType, Shape>>& t) {
  std::vector<std::pair<DType, Shape>*> p;
  for (size_t i = 0; i < t.size(); ++i) p.push_back(node.input(i) ? &t[i] : nullptr);
  return p;
}

void infer_conv_depthwise_nchwc(Node& node) {
  std::vector<std::pair<DType, Shape>> t = conv_depthwise_types(node);
  const auto [dtype, shape] = infer_op("kiln.FusedConvDepthwise", node.attrs(), pointers(node, t));
  node.output(0)->set_type(DType::F32, blocked_shape(node, dtype, shape));
}

void eval_conv_depthwise_nchwc(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const bool x_blocked = node.input(0)->shape().rank() == 5;
  const Tensor x = x_blocked ? reorder(*in[0], static_dims(unblocked_shape(node, *node.input(0))), false) : Tensor();
  std::vector<const Tensor*> args(in.begin(), in.end());
  if (x_blocked) args[0] = &x;
  const Tensor y = eval_op("kiln.FusedConvDepthwise", node.attrs(), args);
  out[0] = reorder(y, static_dims(node.output(0)->shape()), true);
}

Cost conv_depthwise_nchwc_cost(const Node& node) {
  if (!node.output(0)->shape().is_static()) return Cost{0, io_bytes(node)};
  std::vector<std::pair<DType, Shape>> t = conv_depthwise_types(node);
  return cost_op("kiln.FusedConvDepthwise", node.attrs(), pointers(node, t));
}

// kiln.MaxPoolNchwc: MaxPool's Y of the unblocked X, blocked.
void infer_maxpool_nchwc(Node& node) {
  std::pair<DType, Shape> x{node.input(0)->dtype(), unblocked_shape(node, *node.input(0))};
  const auto [dtype, shape] = infer_op("MaxPool", node.attrs(), {&x});
  node.output(0)->set_type(DType::F32, blocked_shape(node, dtype, shape));
}

void eval_maxpool_nchwc(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor x = reorder(*in[0], static_dims(unblocked_shape(node, *node.input(0))), false);
  const Tensor y = eval_op("MaxPool", node.attrs(), {&x});
  out[0] = reorder(y, static_dims(node.output(0)->shape()), true);
}

}  // namespace

std::optional<rt::ConvNchwcParams> nchwc_conv_params(const Node& node, const std::vector<int64_t>& x,
                                                     const std::vector<int64_t>& w, bool x_nchw) {
  if (x.size() != 4 || w.size() != 4 || w[1] != x[1]) return std::nullopt;
  if (node.i("group") != 1) return std::nullopt;
  if (node.op() != "Conv" && !store_activation(fused_activation(node))) return std::nullopt;
  const ResolvedWindow win = resolve_window(node, {x[2], x[3]}, {w[2], w[3]});
  const std::vector<int64_t> ones{1, 1};
  if (win.dilations != ones) return std::nullopt;
  const rt::ConvNchwcParams p{x[0],           x[1],           x[2],          x[3],          w[0],
                              w[2],           w[3],           win.out_dims[0], win.out_dims[1], win.strides[0],
                              win.strides[1], win.pads_begin[0], win.pads_begin[1], x_nchw};
  if (!rt::conv_nchwc_applicable(p)) return std::nullopt;
  return p;
}

std::optional<rt::Conv2dParams> nchwc_depthwise_params(const Node& node, const std::vector<int64_t>& x,
                                                       const std::vector<int64_t>& w) {
  if (x.size() != 4 || w.size() != 4 || node.has_input(3)) return std::nullopt;
  if (node.op() != "Conv" && !store_activation(fused_activation(node))) return std::nullopt;
  const rt::Conv2dParams p =
      conv2d_params(x, w, node.i("group"), resolve_window(node, {x[2], x[3]}, {w[2], w[3]}));
  if (!rt::depthwise3x3_nchw16c_applicable(p)) return std::nullopt;
  return p;
}

void register_blocked_ops(Registry& r) {
  r.add(OpDef{
      .name = "kiln.ToNchwc",
      .summary = "f32 [N, C, H, W] (C a multiple of 16) to [N, C/16, H, W, 16]: each block's 16 channels together",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .infer = infer_to_nchwc,
      .eval = eval_to_nchwc,
  });
  r.add(OpDef{
      .name = "kiln.FromNchwc",
      .summary = "the inverse of kiln.ToNchwc: f32 [N, C/16, H, W, 16] to [N, C, H, W]",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .infer = infer_from_nchwc,
      .eval = eval_from_nchwc,
  });
  const OpDef* fused = r.find("kiln.FusedConv");
  if (!fused) fail("op family 'blocked' needs kiln.FusedConv registered first");
  // The same semantics under two names: the runtime runs a depthwise 3x3 with its own kernel.
  for (const auto& [name, summary] : {std::pair<const char*, const char*>{
                                          "kiln.ConvNchwc",
                                          "kiln.FusedConv with X (or X plain NCHW, of rank 4), Z and Y blocked as "
                                          "kiln.ToNchwc makes them (W and B as the FusedConv's)"},
                                      {"kiln.DepthwiseConvNchwc",
                                       "kiln.ConvNchwc of a depthwise 3x3 (group = C = M, no Z): X and Y blocked as "
                                       "kiln.ToNchwc makes them"}})
    r.add(OpDef{
        .name = name,
        .summary = summary,
        .inputs = fused->inputs,
        .outputs = {"Y"},
        .attrs = fused->attrs,
        .infer = infer_conv_nchwc,
        .eval = eval_conv_nchwc,
        .cost = conv_nchwc_cost,
    });
  const OpDef* conv_depthwise = r.find("kiln.FusedConvDepthwise");
  if (!conv_depthwise) fail("op family 'blocked' needs kiln.FusedConvDepthwise registered first");
  r.add(OpDef{
      .name = "kiln.FusedConvDepthwiseNchwc",
      .summary = "kiln.FusedConvDepthwise with Y blocked as kiln.ToNchwc makes it, and X too where it is of rank 5 "
                 "(plain NCHW where of rank 4)",
      .inputs = conv_depthwise->inputs,
      .outputs = {"Y"},
      .attrs = conv_depthwise->attrs,
      .infer = infer_conv_depthwise_nchwc,
      .eval = eval_conv_depthwise_nchwc,
      .cost = conv_depthwise_nchwc_cost,
  });
  const OpDef* maxpool = r.find("MaxPool");
  if (!maxpool) fail("op family 'blocked' needs MaxPool registered first");
  r.add(OpDef{
      .name = "kiln.MaxPoolNchwc",
      .summary = "MaxPool (its Y alone) with X and Y blocked as kiln.ToNchwc makes them",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .attrs = maxpool->attrs,
      .infer = infer_maxpool_nchwc,
      .eval = eval_maxpool_nchwc,
      .cost = maxpool->cost,  // its flops within one per output of the op's own count
  });
}

}  // namespace kiln::ir
