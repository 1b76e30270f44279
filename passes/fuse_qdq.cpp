// Pass: the QDQ form of quantized models (onnxruntime.quantization's QuantFormat.QDQ,
// TensorFlow's and PyTorch's exporters) into the operator form, so that chains of quantized
// ops stay in 8 bits and run on the int8 kernels:
//
//   Conv(DequantizeLinear(xq), DequantizeLinear(wq const), bias?) [-> Relu] -> QuantizeLinear
//     becomes QLinearConv(xq, ..., wq, ..., bias as int32 at scale x_scale * w_scale[m])
//   MatMul(DequantizeLinear(xq), DequantizeLinear(wq const 2-D)) -> QuantizeLinear
//     becomes QLinearMatMul (per-tensor weight parameters)
//   Gemm(DequantizeLinear(xq), DequantizeLinear(wq const s8, symmetric, per tensor or per
//     output column), C) becomes MatMulInteger(xq, wq as [K, N], x_zero_point) * (x_scale *
//     w_scale[n] * alpha) [+ beta * C], f32 (as quantize_static lowers a Gemm; a classifier's
//     weights then stay 8-bit instead of being dequantized on every run)
//   Add(DequantizeLinear(aq), DequantizeLinear(bq)) [-> Relu] -> QuantizeLinear, same shapes,
//     becomes kiln.QLinearAdd (one pass over the 8-bit values, computed as ONNX Runtime's
//     QLinearAdd: a value differs by one step from the f32 ops' only where their sum lies within
//     float rounding of a half-integer)
//   MaxPool(DequantizeLinear(xq)) -> QuantizeLinear, with the same scale (positive) and zero
//     point on both sides, becomes MaxPool(xq): the maximum commutes with a monotonic
//     quantization, and quantizing a dequantized value gives it back
//
// Weights per tensor or per output channel (axis 0 of a Conv's weights); activations per
// tensor. A Relu between the op and its QuantizeLinear goes when the output zero point is the
// type's lowest value (the quantization then clamps exactly as Relu would), and so does a Clip
// from 0 (ReLU6) when the quantization's largest value is also within its upper bound. It runs
// before fold_constants, which would otherwise turn the weights' DequantizeLinear into f32
// constants.
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "passes/integer_matmul.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool is_8bit(const ir::Value* v) {
  return v && v->has_type() && (v->dtype() == ir::DType::U8 || v->dtype() == ir::DType::I8);
}

// A DequantizeLinear computing `v` from 8-bit data with constant f32 scale and zero point
// (or none), per tensor unless per_channel (then also along axis 0, `channels` values).
ir::Node* dequantize_of(const ir::Value* v, bool constant_data, bool per_channel, int64_t channels) {
  ir::Node* dq = v ? v->producer() : nullptr;
  if (!dq || dq->op() != "DequantizeLinear" || !is_8bit(dq->input(0))) return nullptr;
  if (constant_data && !dq->input(0)->is_constant()) return nullptr;
  if (dq->has_attr("block_size") && dq->i("block_size") != 0) return nullptr;
  const ir::Value* scale = dq->input(1);
  if (!scale->is_constant() || scale->dtype() != ir::DType::F32) return nullptr;
  const int64_t n = scale->constant().numel();
  if (n != 1) {
    const int64_t rank = static_cast<int64_t>(dq->input(0)->shape().rank());
    const int64_t axis = dq->has_attr("axis") ? dq->i("axis") : 1;
    if (!per_channel || n != channels || scale->shape().rank() != 1 || (axis != 0 && axis != -rank)) return nullptr;
  }
  if (dq->has_input(2) && (!dq->input(2)->is_constant() || dq->input(2)->constant().numel() != n)) return nullptr;
  return dq;
}

// The QuantizeLinear that alone reads `v` (through a removable Relu or Clip from 0), per
// tensor, constant f32 scale and 8-bit zero point; the Relu or Clip (or null) in `relu`.
ir::Node* quantize_after(const ir::Value* v, ir::Node*& relu) {
  relu = nullptr;
  ir::Node* q = single_user(v);
  float hi = 0;
  if (q && clamps_from_zero(*q, &hi)) {
    relu = q;
    q = single_user(q->output(0));
  }
  if (!q || q->op() != "QuantizeLinear" || !q->has_input(2) || !is_8bit(q->input(2))) return nullptr;
  if (!q->input(1)->is_constant() || q->input(1)->dtype() != ir::DType::F32 || q->input(1)->constant().numel() != 1 ||
      !q->input(2)->is_constant() || q->input(2)->constant().numel() != 1)
    return nullptr;
  if (q->has_attr("precision") && q->i("precision") != 0) return nullptr;
  if (relu) {
    // Quantizing clamps at the type's lowest value, which must be 0, and at its highest,
    // which must lie within a Clip's upper bound.
    const int64_t zp = q->input(2)->constant().as_int64(0);
    const int64_t lowest = q->input(2)->dtype() == ir::DType::U8 ? 0 : -128;
    if (zp != lowest) return nullptr;
    const double top = static_cast<double>(q->input(1)->constant().data<float>()[0]) * static_cast<double>(lowest + 255 - zp);
    if (!(top <= static_cast<double>(hi) * (1 + 1e-6))) return nullptr;
  }
  return q;
}

// The bias of a Conv as int32 at scale x_scale * w_scale[m]: a DequantizeLinear of int32 data
// or f32 constants, rescaled (exact when its scale already is that product, as ORT writes it).
ir::Value* integer_bias(ir::Graph& graph, const ir::Node& conv, const ir::Node& dx, const ir::Node& dw,
                        int64_t m) {
  const ir::Value* b = conv.input(2);
  std::vector<double> values;
  if (b->is_constant() && b->dtype() == ir::DType::F32 && b->constant().numel() == m) {
    for (int64_t i = 0; i < m; ++i) values.push_back(b->constant().data<float>()[i]);
  } else if (ir::Node* dq = b->producer(); dq && dq->op() == "DequantizeLinear" && dq->input(0)->is_constant() &&
                                           dq->input(0)->dtype() == ir::DType::I32 &&
                                           dq->input(0)->constant().numel() == m && dq->input(1)->is_constant() &&
                                           dq->input(1)->dtype() == ir::DType::F32) {
    const ir::Tensor& s = dq->input(1)->constant();
    const ir::Tensor* z = dq->has_input(2) && dq->input(2)->is_constant() ? &dq->input(2)->constant() : nullptr;
    if (dq->has_input(2) && !z) return nullptr;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t si = s.numel() > 1 ? i : 0;
      if (si >= s.numel() || (z && si >= z->numel())) return nullptr;
      const double q = static_cast<double>(dq->input(0)->constant().data<int32_t>()[i]) -
                       (z ? static_cast<double>(z->as_int64(si)) : 0.0);
      values.push_back(q * static_cast<double>(s.data<float>()[si]));
    }
  } else {
    return nullptr;
  }
  const float xs = dx.input(1)->constant().data<float>()[0];
  const ir::Tensor& ws = dw.input(1)->constant();
  ir::Tensor out(ir::DType::I32, {m});
  for (int64_t i = 0; i < m; ++i) {
    const double scale = static_cast<double>(xs) * static_cast<double>(ws.data<float>()[ws.numel() > 1 ? i : 0]);
    const double q = scale > 0 ? std::nearbyint(values[i] / scale) : 0.0;
    if (!(std::fabs(q) < 2147483647.0)) return nullptr;
    out.mutable_data<int32_t>()[i] = static_cast<int32_t>(q);
  }
  return graph.add_constant(conv.name() + "_bias_q", std::move(out));
}

bool try_conv(ir::Graph& graph, ir::Node& conv) {
  if (conv.op() != "Conv" || !conv.output(0)->has_type()) return false;
  const ir::Value* wv = conv.input(1);
  if (!wv->has_type() || !wv->shape().is_static() || wv->shape().rank() < 3 || wv->shape().rank() > 4) return false;
  const int64_t m = wv->shape()[0].value();
  ir::Node* dx = dequantize_of(conv.input(0), false, false, 0);
  ir::Node* dw = dequantize_of(wv, true, true, m);
  ir::Node* relu = nullptr;
  ir::Node* q = quantize_after(conv.output(0), relu);
  if (!dx || !dw || !q) return false;
  ir::Value* bias = nullptr;
  if (conv.has_input(2) && !(bias = integer_bias(graph, conv, *dx, *dw, m))) return false;
  std::vector<ir::Node*> old = {&conv};
  if (relu) old.push_back(relu);
  old.push_back(q);
  replace_with_node(graph, old, q->output(0), "QLinearConv",
                    {dx->input(0), dx->input(1), dx->input(2), dw->input(0), dw->input(1), dw->input(2), q->input(1),
                     q->input(2), bias},
                    conv.attrs(), conv.name());
  return true;
}

bool try_matmul(ir::Graph& graph, ir::Node& mm) {
  if (mm.op() != "MatMul" || !mm.output(0)->has_type()) return false;
  const ir::Value* wv = mm.input(1);
  if (!wv->has_type() || wv->shape().rank() != 2) return false;
  ir::Node* dx = dequantize_of(mm.input(0), false, false, 0);
  ir::Node* dw = dequantize_of(wv, true, false, 0);
  ir::Node* relu = nullptr;
  ir::Node* q = quantize_after(mm.output(0), relu);
  if (!dx || !dw || !q || mm.input(0)->shape().rank() < 2) return false;
  std::vector<ir::Node*> old = {&mm};
  if (relu) old.push_back(relu);
  old.push_back(q);
  replace_with_node(graph, old, q->output(0), "QLinearMatMul",
                    {dx->input(0), dx->input(1), dx->input(2), dw->input(0), dw->input(1), dw->input(2), q->input(1),
                     q->input(2)},
                    {}, mm.name());
  return true;
}

bool try_gemm(ir::Graph& graph, ir::Node& gemm) {
  if (gemm.op() != "Gemm" || !gemm.output(0)->has_type() || (gemm.has_attr("transA") && gemm.i("transA") != 0))
    return false;
  const ir::Value* wv = gemm.input(1);
  if (!wv->has_type() || !wv->shape().is_static() || wv->shape().rank() != 2 || !gemm.input(0)->has_type() ||
      gemm.input(0)->shape().rank() != 2)
    return false;
  ConstantWeightMatMul m;
  m.transposed = gemm.has_attr("transB") && gemm.i("transB") != 0;
  m.K = wv->shape()[m.transposed ? 1 : 0].value();
  m.N = wv->shape()[m.transposed ? 0 : 1].value();
  if (gemm.has_attr("alpha")) m.alpha = gemm.f("alpha");
  if (gemm.has_attr("beta")) m.beta = gemm.f("beta");
  m.c = gemm.has_input(2) ? gemm.input(2) : nullptr;
  if (m.K == 0 || m.N == 0 || (m.c && m.beta != 1 && !m.c->is_constant())) return false;
  ir::Node* dx = dequantize_of(gemm.input(0), false, false, 0);
  // Per output column: along axis 0 of a transposed W ([N, K]) only.
  ir::Node* dw = dequantize_of(wv, true, m.transposed, m.N);
  if (!dx || !dx->has_input(2) || !dw || dw->input(0)->dtype() != ir::DType::I8) return false;
  if (dw->has_input(2))
    for (int64_t i = 0; i < dw->input(2)->constant().numel(); ++i)
      if (dw->input(2)->constant().as_int64(i) != 0) return false;
  const int8_t* w = dw->input(0)->constant().data<int8_t>();
  const ir::Tensor& ws = dw->input(1)->constant();
  std::vector<int8_t> q(static_cast<size_t>(m.K * m.N));
  for (int64_t k = 0; k < m.K; ++k)
    for (int64_t n = 0; n < m.N; ++n) q[static_cast<size_t>(k * m.N + n)] = w[m.transposed ? n * m.K + k : k * m.N + n];
  std::vector<float> scale(static_cast<size_t>(m.N));
  for (int64_t n = 0; n < m.N; ++n) scale[static_cast<size_t>(n)] = ws.data<float>()[ws.numel() > 1 ? n : 0];
  m.x = gemm.input(0);
  m.w = dw->input(0);
  lower_to_matmul_integer(graph, gemm, m, dx->input(0), dx->input(1), dx->input(2), q, std::move(scale));
  return true;
}

// The same constant scalar (scale or zero point) of the same dtype.
bool same_scalar(const ir::Value* a, const ir::Value* b) {
  if (!a || !b || !a->is_constant() || !b->is_constant() || a->dtype() != b->dtype()) return false;
  const ir::Tensor& x = a->constant();
  const ir::Tensor& y = b->constant();
  if (x.numel() != 1 || y.numel() != 1) return false;
  if (a->dtype() == ir::DType::F32) return x.data<float>()[0] == y.data<float>()[0];
  return x.as_int64(0) == y.as_int64(0);
}

bool try_maxpool(ir::Graph& graph, ir::Node& pool) {
  if (pool.op() != "MaxPool" || pool.num_outputs() != 1 || !pool.output(0)->has_type()) return false;
  ir::Node* dx = dequantize_of(pool.input(0), false, false, 0);
  ir::Node* relu = nullptr;
  ir::Node* q = quantize_after(pool.output(0), relu);
  if (!dx || !q || relu || !dx->has_input(2) || !same_scalar(dx->input(1), q->input(1)) ||
      !same_scalar(dx->input(2), q->input(2)) || !(dx->input(1)->constant().data<float>()[0] > 0.0f))
    return false;
  replace_with_node(graph, {&pool, q}, q->output(0), "MaxPool", {dx->input(0)}, pool.attrs(), pool.name());
  return true;
}

bool try_add(ir::Graph& graph, ir::Node& add) {
  if (add.op() != "Add" || !add.output(0)->has_type()) return false;
  ir::Node* da = dequantize_of(add.input(0), false, false, 0);
  ir::Node* db = dequantize_of(add.input(1), false, false, 0);
  ir::Node* relu = nullptr;
  ir::Node* q = quantize_after(add.output(0), relu);
  if (!da || !db || !q || !da->input(0)->has_type() || !db->input(0)->has_type() ||
      da->input(0)->shape() != db->input(0)->shape() || da->input(0)->shape() != add.output(0)->shape())
    return false;
  std::vector<ir::Node*> old = {&add};
  if (relu) old.push_back(relu);
  old.push_back(q);
  replace_with_node(graph, old, q->output(0), "kiln.QLinearAdd",
                    {da->input(0), da->input(1), da->input(2), db->input(0), db->input(1), db->input(2), q->input(1),
                     q->input(2)},
                    {}, add.name());
  return true;
}

bool try_fuse(ir::Graph& graph, ir::Node& n) {
  return try_conv(graph, n) || try_matmul(graph, n) || try_gemm(graph, n) || try_add(graph, n) || try_maxpool(graph, n);
}

}  // namespace

void fuse_qdq(ir::Graph& graph) {
  bool any = false;
  for (const auto& n : graph.nodes()) any = any || n->op() == "DequantizeLinear";
  if (!any) return;
  // Types as far as they can be known before constants fold (a shape computed by Shape ops
  // may not be): the patterns need only those of the values around quantized ops.
  for (const auto& n : graph.nodes()) {
    try {
      ir::infer_node(*n);
    } catch (const kiln::Error&) {
      break;
    }
  }
  rewrite_until_done(graph, try_fuse);
}

}  // namespace kiln::passes
