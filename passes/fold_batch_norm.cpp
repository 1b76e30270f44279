// Pass: Conv+BatchNormalization folding. An inference BatchNormalization whose input is the
// only result of a Conv with constant f32 weights (and bias) folds into that Conv:
//   a = scale / sqrt(var + epsilon),  W' = W * a (per output channel),  B' = (B - mean) * a + beta.
// The folded Conv takes the BatchNormalization's result and name.
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

}  // namespace

void fold_batch_norm(ir::Graph& graph) {
  rewrite_until_done(graph, try_fold);
}

}  // namespace kiln::passes
