// Pass: Conv+BatchNormalization folding. An inference BatchNormalization whose input is the
// only result of a Conv with constant f32 weights (and bias) folds into that Conv:
//   a = scale / sqrt(var + epsilon),  W' = W * a (per output channel),  B' = (B - mean) * a + beta.
// The folded Conv takes the BatchNormalization's result and name.
// The same for batch normalization written as arithmetic (Keras's x * a + b, which the
// TensorFlow frontend and tf2onnx give): a Mul or Add of the Conv's only result by a constant
// that is one value per output channel ([M,1,1], [1,M,1,1]) or one value for all, folds into
// the weights (Mul: W' = W * a, B' = B * a) or the bias (Add: B' = B + b).
#include <cmath>

#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool try_fold(ir::Graph& graph, ir::Node& bn) {
  if (bn.op() != "BatchNormalization" || bn.i("training_mode") != 0) return false;
  for (size_t i = 1; i < bn.num_outputs(); ++i)
    if (!bn.output(i)->users().empty() || graph.is_graph_output(bn.output(i))) return false;
  ir::Node* conv = bn.input(0)->producer();
  if (!conv || conv->op() != "Conv" || single_user(conv->output(0)) != &bn) return false;
  std::vector<float> w = f32_constant(conv->input(1));
  if (w.empty() || !conv->input(1)->shape().is_static()) return false;
  const int64_t m = conv->input(1)->shape()[0].value();
  std::vector<float> b = conv->has_input(2) ? f32_constant(conv->input(2)) : std::vector<float>(m, 0.f);
  std::vector<float> scale = f32_constant(bn.input(1)), beta = f32_constant(bn.input(2)),
                     mean = f32_constant(bn.input(3)), var = f32_constant(bn.input(4));
  for (const auto* v : {&b, &scale, &beta, &mean, &var})
    if (static_cast<int64_t>(v->size()) != m) return false;

  const double eps = bn.f("epsilon");
  const size_t per_map = w.size() / static_cast<size_t>(m);
  ir::Tensor w2(ir::DType::F32, conv->input(1)->shape().values());
  ir::Tensor b2(ir::DType::F32, {m});
  float* pw = w2.mutable_data<float>();
  float* pb = b2.mutable_data<float>();
  for (int64_t c = 0; c < m; ++c) {
    const size_t k = static_cast<size_t>(c);
    const double a = scale[k] / std::sqrt(static_cast<double>(var[k]) + eps);
    for (size_t j = 0; j < per_map; ++j) pw[k * per_map + j] = static_cast<float>(w[k * per_map + j] * a);
    pb[k] = static_cast<float>((static_cast<double>(b[k]) - mean[k]) * a + beta[k]);
  }
  ir::Value* wv = graph.add_constant(conv->input(1)->name() + "_bn", std::move(w2));
  ir::Value* bv = graph.add_constant(conv->name() + "_bn_bias", std::move(b2));
  replace_with_node(graph, {conv, &bn}, bn.output(0), "Conv", {conv->input(0), wv, bv}, conv->attrs(),
                    conv->name());
  return true;
}

// The per-output-channel values of `c` for a Conv result of `m` channels and rank `rank`:
// one value for all, or M values along axis 1 (every other dim 1, at most `rank` dims).
std::vector<float> per_channel(const ir::Value* c, int64_t m, size_t rank) {
  std::vector<float> v = f32_constant(c);
  if (v.empty() || !c->shape().is_static() || c->shape().rank() > rank) return {};
  if (v.size() == 1) return std::vector<float>(static_cast<size_t>(m), v[0]);
  const std::vector<int64_t> dims = c->shape().values();
  const size_t channel_axis = dims.size() + 1 - rank;  // axis 1 of the result, right-aligned
  if (dims.size() < rank - 1 || static_cast<int64_t>(v.size()) != m) return {};
  for (size_t k = 0; k < dims.size(); ++k)
    if (k != channel_axis && dims[k] != 1) return {};
  return v;
}

bool try_fold_affine(ir::Graph& graph, ir::Node& op) {
  if ((op.op() != "Mul" && op.op() != "Add") || op.num_inputs() != 2) return false;
  for (int side = 0; side < 2; ++side) {
    ir::Node* conv = op.input(side)->producer();
    const ir::Value* c = op.input(1 - side);
    if (!conv || conv->op() != "Conv" || single_user(conv->output(0)) != &op || !c->is_constant()) continue;
    const ir::Value* y = conv->output(0);
    if (!y->has_type() || y->dtype() != ir::DType::F32 || !op.output(0)->has_type() || !(op.output(0)->shape() == y->shape()))
      continue;
    std::vector<float> w = f32_constant(conv->input(1));
    if (w.empty() || !conv->input(1)->shape().is_static()) continue;
    const int64_t m = conv->input(1)->shape()[0].value();
    std::vector<float> b = conv->has_input(2) ? f32_constant(conv->input(2)) : std::vector<float>(static_cast<size_t>(m), 0.f);
    std::vector<float> a = per_channel(c, m, y->shape().rank());
    if (a.empty() || static_cast<int64_t>(b.size()) != m) continue;
    const bool mul = op.op() == "Mul";
    const size_t per_map = w.size() / static_cast<size_t>(m);
    ir::Tensor w2(ir::DType::F32, conv->input(1)->shape().values());
    ir::Tensor b2(ir::DType::F32, {m});
    float* pw = w2.mutable_data<float>();
    float* pb = b2.mutable_data<float>();
    for (size_t k = 0; k < static_cast<size_t>(m); ++k) {
      for (size_t j = 0; j < per_map; ++j) pw[k * per_map + j] = mul ? w[k * per_map + j] * a[k] : w[k * per_map + j];
      pb[k] = mul ? b[k] * a[k] : b[k] + a[k];
    }
    ir::Value* wv = mul ? graph.add_constant(conv->input(1)->name() + "_scaled", std::move(w2)) : conv->input(1);
    ir::Value* bv = graph.add_constant(conv->name() + (mul ? "_scaled_bias" : "_shifted_bias"), std::move(b2));
    replace_with_node(graph, {conv, &op}, op.output(0), "Conv", {conv->input(0), wv, bv}, conv->attrs(), conv->name());
    return true;
  }
  return false;
}

}  // namespace

void fold_batch_norm(ir::Graph& graph) {
  rewrite_until_done(graph, try_fold);
  rewrite_until_done(graph, try_fold_affine);
}

}  // namespace kiln::passes
