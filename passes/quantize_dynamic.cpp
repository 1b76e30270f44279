// Pass (`--precision int8-dynamic` only, not in any -O pipeline): dynamic quantization of the
// MatMul and Gemm whose weight is a constant 2-D f32 matrix, as onnxruntime.quantization's
// quantize_dynamic writes it (per_channel, QInt8 weights):
//
//   MatMul(x, W)  ->  xq, xs, xz = DynamicQuantizeLinear(x)        (u8, per tensor, each run)
//                     acc = MatMulInteger(xq, Wq, xz)              (Wq: s8 constant, packed at compile time)
//                     y = Cast(acc, f32) * (xs * ws)               (ws: f32 [N] constant)
//
// Wq[k, n] = round_half_even(W[k, n] / ws[n]) with ws[n] = max_k |W[k, n]| / 127 (symmetric,
// per output column, in [-127, 127]). Gemm(A, B, C) (transA = 0) transposes B first when
// transB, folds alpha into ws and adds beta * C. Every op already exists: the interpreter runs
// the reference loops and the compiled code the int8 GEMM (MatMulInteger's emitter packs Wq
// and reads the zero point at run time); fuse_elementwise, which runs later, makes one loop of
// Cast, Mul, the bias Add and whatever activation follows.
#include <algorithm>
#include <cmath>

#include "ir/op_registry.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

struct QuantizedWeights {
  ir::Tensor q;               // s8 [K, N]
  std::vector<float> scales;  // [N]
};

// W is [K, N] (row-major), or [N, K] when `transposed`; the result is [K, N] either way.
QuantizedWeights quantize_columns(const std::vector<float>& w, int64_t K, int64_t N, bool transposed, float alpha) {
  auto at = [&](int64_t k, int64_t n) { return w[static_cast<size_t>(transposed ? n * K + k : k * N + n)]; };
  std::vector<float> scale(static_cast<size_t>(N));
  std::vector<int8_t> q(static_cast<size_t>(K * N));
  for (int64_t n = 0; n < N; ++n) {
    float absmax = 0;
    for (int64_t k = 0; k < K; ++k) absmax = std::max(absmax, std::fabs(at(k, n)));
    const float s = absmax > 0 ? absmax / 127.0f : 1.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float v = std::nearbyint(at(k, n) / s);  // round half to even (default rounding mode)
      q[static_cast<size_t>(k * N + n)] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
    scale[static_cast<size_t>(n)] = s * alpha;
  }
  return {ir::Tensor::from_vector<int8_t>(ir::DType::I8, {K, N}, q), std::move(scale)};
}

ir::Node* insert_before(ir::Graph& graph, const ir::Node& anchor, const std::string& op, std::vector<ir::Value*> inputs,
                        const std::vector<std::string>& outputs, ir::AttributeMap attrs = {}) {
  std::vector<std::string> names;
  for (const std::string& o : outputs) names.push_back(graph.unique_value_name(anchor.output(0)->name() + "." + o));
  ir::Node* n = graph.add_node(op, std::move(inputs), names, std::move(attrs), anchor.name() + "." + op);
  graph.move_last_before(&anchor);
  ir::infer_node(*n);
  return n;
}

bool eligible_input(const ir::Value* x) {
  return x->has_type() && x->dtype() == ir::DType::F32 && x->shape().rank() >= 1 && !x->is_constant();
}

bool try_quantize(ir::Graph& graph, ir::Node& node) {
  const bool gemm = node.op() == "Gemm";
  if (node.op() != "MatMul" && !gemm) return false;
  ir::Value* x = node.input(0);
  ir::Value* w = node.input(1);
  if (!eligible_input(x) || !w->is_constant() || w->dtype() != ir::DType::F32 || w->shape().rank() != 2) return false;
  bool transposed = false;
  float alpha = 1, beta = 1;
  ir::Value* c = nullptr;
  if (gemm) {
    if (node.has_attr("transA") && node.i("transA") != 0) return false;
    transposed = node.has_attr("transB") && node.i("transB") != 0;
    if (node.has_attr("alpha")) alpha = node.f("alpha");
    if (node.has_attr("beta")) beta = node.f("beta");
    c = node.has_input(2) ? node.input(2) : nullptr;
    if (c && beta != 1 && !c->is_constant()) return false;
    if (x->shape().rank() != 2) return false;
  }
  const ir::Tensor& wt = w->constant();
  const int64_t K = transposed ? wt.dims()[1] : wt.dims()[0];
  const int64_t N = transposed ? wt.dims()[0] : wt.dims()[1];
  if (K == 0 || N == 0) return false;
  QuantizedWeights qw = quantize_columns(f32_constant(w), K, N, transposed, alpha);

  const std::string base = node.output(0)->name();
  ir::Node* dql = insert_before(graph, node, "DynamicQuantizeLinear", {x}, {"xq", "xs", "xz"});
  ir::Value* wq = graph.add_constant(graph.unique_value_name(w->name() + ".s8"), std::move(qw.q));
  ir::Node* mmi = insert_before(graph, node, "MatMulInteger", {dql->output(0), wq, dql->output(2)}, {"acc"});
  ir::Node* cast = insert_before(graph, node, "Cast", {mmi->output(0)}, {"accf"},
                                 {{"to", ir::Attribute(static_cast<int64_t>(1))}});  // ONNX FLOAT
  ir::Value* ws = graph.add_constant(graph.unique_value_name(w->name() + ".scale"),
                                     ir::Tensor::from_vector<float>(ir::DType::F32, {N}, qw.scales));
  ir::Node* scale = insert_before(graph, node, "Mul", {dql->output(1), ws}, {"scale"});
  if (!c) {
    replace_with_node(graph, {&node}, node.output(0), "Mul", {cast->output(0), scale->output(0)}, {}, node.name());
    return true;
  }
  if (beta != 1) {
    std::vector<float> cv = f32_constant(c);
    for (float& v : cv) v *= beta;
    c = graph.add_constant(graph.unique_value_name(c->name() + ".beta"),
                           ir::Tensor::from_vector<float>(ir::DType::F32, c->constant().dims(), cv));
  }
  ir::Node* y = insert_before(graph, node, "Mul", {cast->output(0), scale->output(0)}, {"y"});
  replace_with_node(graph, {&node}, node.output(0), "Add", {y->output(0), c}, {}, node.name());
  return true;
}

}  // namespace

void quantize_dynamic(ir::Graph& graph) {
  std::vector<ir::Node*> candidates;
  for (const auto& n : graph.nodes()) candidates.push_back(n.get());
  for (ir::Node* n : candidates) try_quantize(graph, *n);
  graph.remove_unused_values();
}

}  // namespace kiln::passes
