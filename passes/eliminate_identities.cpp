// Pass: remove nodes that pass their input through unchanged: Identity, Dropout at inference
// whose mask nobody reads, and Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Cast whose
// result has the input's dtype, shape and element order. Readers then read the input directly. A result that is a graph output
// keeps its node, so graph output names never change.
#include <numeric>

#include "passes/pass_manager.h"

namespace kiln::passes {

namespace {

bool is_no_op(const ir::Node& n) {
  if (n.num_outputs() != 1 || !n.input(0)) return false;
  const ir::Value* in = n.input(0);
  const ir::Value* out = n.output(0);
  if (n.op() == "Identity") return true;
  if (!in->has_type() || !out->has_type() || in->dtype() != out->dtype()) return false;
  if (!in->shape().is_known() || !(in->shape() == out->shape())) return false;
  if (n.op() == "Reshape" || n.op() == "Flatten" || n.op() == "Squeeze" || n.op() == "Unsqueeze" ||
      n.op() == "Cast")
    return true;
  if (n.op() == "Transpose") {
    if (!n.has_attr("perm")) return in->shape().rank() <= 1;
    const std::vector<int64_t>& perm = n.ints("perm");
    // Only dims of size 1 may move: then the element order is unchanged.
    std::vector<int64_t> kept;
    for (int64_t p : perm)
      if (p >= 0 && static_cast<size_t>(p) < in->shape().rank() && in->shape()[static_cast<size_t>(p)].value() != 1)
        kept.push_back(p);
    return std::is_sorted(kept.begin(), kept.end());
  }
  return false;
}

// Dropout with training_mode omitted or a constant false, whose mask is unread.
bool is_inference_dropout(const ir::Graph& graph, const ir::Node& n) {
  if (n.op() != "Dropout") return false;
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (!n.output(i)->users().empty() || graph.is_graph_output(n.output(i))) return false;
  if (!n.has_input(2)) return true;
  const ir::Value* t = n.input(2);
  return t->is_constant() && t->constant().numel() == 1 && t->constant().as_double(0) == 0;
}

}  // namespace

void eliminate_identities(ir::Graph& graph) {
  std::vector<ir::Node*> doomed;
  for (const auto& n : graph.nodes()) {
    if (!is_no_op(*n) && !is_inference_dropout(graph, *n)) continue;
    ir::Value* out = n->output(0);
    if (graph.is_graph_output(out)) continue;
    graph.replace_all_uses(out, n->input(0));
    doomed.push_back(n.get());
  }
  if (!doomed.empty()) graph.remove_nodes(doomed);
}

}  // namespace kiln::passes
