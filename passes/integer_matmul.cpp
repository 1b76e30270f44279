#include "passes/integer_matmul.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

// q = round_half_even(w / s) in [-127, 127]; NaN weights: 0.
int8_t quantize_s8(float w, float s) {
  const float v = std::nearbyint(w / s);  // round half to even (the default rounding mode)
  return std::isnan(v) ? int8_t{0} : static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
}

}  // namespace

void quantize_symmetric_s8(const float* w, int64_t channels, int64_t K, int64_t channel_stride, int64_t k_stride,
                           int8_t* q, float* scale) {
  for (int64_t c = 0; c < channels; ++c) {
    float absmax = 0;
    for (int64_t k = 0; k < K; ++k) absmax = std::max(absmax, std::fabs(w[c * channel_stride + k * k_stride]));
    const float s = absmax > 0 ? absmax / 127 : 1.0f;
    for (int64_t k = 0; k < K; ++k) q[c * channel_stride + k * k_stride] = quantize_s8(w[c * channel_stride + k * k_stride], s);
    scale[c] = s;
  }
}

std::vector<std::pair<int64_t, int64_t>> conv_weight_pairs(int64_t C, int64_t KH, int64_t KW) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const int64_t taps = KH * KW;
  if (C % 4 == 0) {  // input channels 2i, 2i + 1 at each tap
    for (int64_t c = 0; c < C; c += 2)
      for (int64_t t = 0; t < taps; ++t) pairs.emplace_back(c * taps + t, (c + 1) * taps + t);
    return pairs;
  }
  // Flat patches: the KH x KW x C weights in (kh, kw, c) order, paired in turn.
  const int64_t K = taps * C;
  const auto at = [&](int64_t f) { return ((f % C) * KH + f / (KW * C)) * KW + f / C % KW; };
  for (int64_t f = 0; f < K; f += 2) pairs.emplace_back(at(f), f + 1 < K ? at(f + 1) : -1);
  return pairs;
}

void quantize_conv_s8_pairs_fit_int16(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW, int8_t* q,
                                      float* scale) {
  // A weight's part of its pair's positive and negative sums (NaN: neither, as it quantizes to 0).
  const auto pos = [](float v) { return v > 0 ? v : 0.0f; };
  const auto neg = [](float v) { return v < 0 ? -v : 0.0f; };
  const std::vector<std::pair<int64_t, int64_t>> pairs = conv_weight_pairs(C, KH, KW);
  const int64_t K = C * KH * KW;
  for (int64_t m = 0; m < M; ++m) {
    const float* wm = w + m * K;
    float widest = 0;
    for (const auto& [a, b] : pairs) {
      const float w0 = wm[a], w1 = b >= 0 ? wm[b] : 0.0f;
      widest = std::max({widest, pos(w0) + pos(w1), neg(w0) + neg(w1)});
    }
    // Each rounding adds at most 1/2: two weights' sum of at most 127 becomes at most 128.
    const float s = widest > 0 ? widest / 127 : 1.0f;
    for (int64_t k = 0; k < K; ++k) q[m * K + k] = quantize_s8(wm[k], s);
    scale[m] = s;
  }
}

ir::Node* insert_before(ir::Graph& graph, const ir::Node& anchor, const std::string& op, std::vector<ir::Value*> inputs,
                        const std::vector<std::string>& outputs, ir::AttributeMap attrs) {
  std::vector<std::string> names;
  for (const std::string& o : outputs) names.push_back(graph.unique_value_name(anchor.output(0)->name() + "." + o));
  ir::Node* n = graph.add_node(op, std::move(inputs), names, std::move(attrs), anchor.name() + "." + op);
  graph.move_last_before(&anchor);
  ir::infer_node(*n);
  return n;
}

std::optional<ConstantWeightMatMul> constant_weight_matmul(const ir::Node& node) {
  const bool gemm = node.op() == "Gemm";
  if (node.op() != "MatMul" && !gemm) return std::nullopt;
  ConstantWeightMatMul m;
  m.x = node.input(0);
  m.w = node.input(1);
  if (!m.x->has_type() || m.x->dtype() != ir::DType::F32 || m.x->shape().rank() < 1 || m.x->is_constant())
    return std::nullopt;
  if (!m.w->is_constant() || m.w->dtype() != ir::DType::F32 || m.w->shape().rank() != 2) return std::nullopt;
  if (gemm) {
    if (node.has_attr("transA") && node.i("transA") != 0) return std::nullopt;
    m.transposed = node.has_attr("transB") && node.i("transB") != 0;
    if (node.has_attr("alpha")) m.alpha = node.f("alpha");
    if (node.has_attr("beta")) m.beta = node.f("beta");
    m.c = node.has_input(2) ? node.input(2) : nullptr;
    if (m.c && m.beta != 1 && !m.c->is_constant()) return std::nullopt;
    if (m.x->shape().rank() != 2) return std::nullopt;
  }
  const std::vector<int64_t>& dims = m.w->constant().dims();
  m.K = m.transposed ? dims[1] : dims[0];
  m.N = m.transposed ? dims[0] : dims[1];
  if (m.K == 0 || m.N == 0) return std::nullopt;
  return m;
}

void lower_to_matmul_integer(ir::Graph& graph, ir::Node& node, const ConstantWeightMatMul& m, ir::Value* xq,
                             ir::Value* xs, ir::Value* xz) {
  // W as [K, N], then per column.
  std::vector<float> w = f32_constant(m.w);
  if (m.transposed) {
    std::vector<float> t(w.size());
    for (int64_t n = 0; n < m.N; ++n)
      for (int64_t k = 0; k < m.K; ++k) t[static_cast<size_t>(k * m.N + n)] = w[static_cast<size_t>(n * m.K + k)];
    w = std::move(t);
  }
  std::vector<int8_t> q(w.size());
  std::vector<float> scale(static_cast<size_t>(m.N));
  quantize_symmetric_s8(w.data(), m.N, m.K, 1, m.N, q.data(), scale.data());
  lower_to_matmul_integer(graph, node, m, xq, xs, xz, q, scale);
}

void lower_to_matmul_integer(ir::Graph& graph, ir::Node& node, const ConstantWeightMatMul& m, ir::Value* xq,
                             ir::Value* xs, ir::Value* xz, const std::vector<int8_t>& q, std::vector<float> scale) {
  for (float& s : scale) s *= m.alpha;
  ir::Value* wq = graph.add_constant(graph.unique_value_name(m.w->name() + ".s8"),
                                     ir::Tensor::from_vector<int8_t>(ir::DType::I8, {m.K, m.N}, q));
  ir::Node* mmi = insert_before(graph, node, "MatMulInteger", {xq, wq, xz}, {"acc"});
  ir::Node* cast = insert_before(graph, node, "Cast", {mmi->output(0)}, {"accf"},
                                 {{"to", ir::Attribute(static_cast<int64_t>(1))}});  // ONNX FLOAT
  ir::Value* ws = graph.add_constant(graph.unique_value_name(m.w->name() + ".scale"),
                                     ir::Tensor::from_vector<float>(ir::DType::F32, {m.N}, scale));
  ir::Node* s = insert_before(graph, node, "Mul", {xs, ws}, {"scale"});
  if (!m.c) {
    replace_with_node(graph, {&node}, node.output(0), "Mul", {cast->output(0), s->output(0)}, {}, node.name());
    return;
  }
  ir::Value* c = m.c;
  if (m.beta != 1) {
    std::vector<float> cv = f32_constant(c);
    for (float& v : cv) v *= m.beta;
    c = graph.add_constant(graph.unique_value_name(c->name() + ".beta"),
                           ir::Tensor::from_vector<float>(ir::DType::F32, c->constant().dims(), cv));
  }
  ir::Node* y = insert_before(graph, node, "Mul", {cast->output(0), s->output(0)}, {"y"});
  replace_with_node(graph, {&node}, node.output(0), "Add", {y->output(0), c}, {}, node.name());
}

}  // namespace kiln::passes
