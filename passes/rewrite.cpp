#include "passes/rewrite.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::passes {

ir::Node* replace_with_node(ir::Graph& graph, const std::vector<ir::Node*>& old, ir::Value* result,
                            const std::string& op, const std::vector<ir::Value*>& inputs,
                            ir::AttributeMap attrs, std::string name) {
  // Where the new node goes: before the node following the last of `old`.
  const auto& nodes = graph.nodes();
  size_t last = 0;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (std::find(old.begin(), old.end(), nodes[i].get()) != old.end()) last = i;
  const ir::Node* anchor = last + 1 < nodes.size() ? nodes[last + 1].get() : nullptr;

  // The new node first under a temporary name (it holds its inputs alive while the old nodes
  // and their unused values go), then again under `result`'s freed name.
  std::string result_name = result->name();
  ir::Node* temp = graph.add_node(op, inputs, {result_name + ".fused"}, attrs, name);
  if (anchor) graph.move_last_before(anchor);
  ir::infer_node(*temp);
  graph.replace_all_uses(result, temp->output(0));
  graph.remove_nodes(old);
  ir::Node* node = graph.add_node(op, temp->inputs(), {result_name}, std::move(attrs), name);
  graph.move_last_before(temp);
  ir::infer_node(*node);
  graph.replace_all_uses(temp->output(0), node->output(0));
  graph.remove_nodes({temp});
  return node;
}

ir::Node* single_user(const ir::Value* v) {
  if (v->users().size() != 1 || v->graph()->is_graph_output(v)) return nullptr;
  return v->users()[0];
}

std::vector<float> f32_constant(const ir::Value* v) {
  if (!v || !v->is_constant() || v->dtype() != ir::DType::F32) return {};
  const float* p = v->constant().data<float>();
  return std::vector<float>(p, p + v->constant().numel());
}

bool f32_scalar(const ir::Value* v, float& out) {
  if (!v || !v->is_constant() || v->dtype() != ir::DType::F32 || v->constant().numel() != 1) return false;
  out = v->constant().data<float>()[0];
  return true;
}

bool is_f32_scalar(const ir::Value* v, double want, double rel) {
  float x = 0;
  return f32_scalar(v, x) && std::abs(static_cast<double>(x) - want) <= rel * std::abs(want);
}

ir::Value* other_input(const ir::Node& n, const ir::Value* v) {
  if (n.num_inputs() != 2 || n.input(0) == n.input(1)) return nullptr;
  if (n.input(0) == v) return n.input(1);
  if (n.input(1) == v) return n.input(0);
  return nullptr;
}

ir::Node* producer_for(const ir::Value* v, const char* op, const ir::Node* user) {
  ir::Node* p = v ? v->producer() : nullptr;
  if (!p || p->op() != op || single_user(v) != user) return nullptr;
  return p;
}

namespace {

void rewrite_from(ir::Graph& graph, bool (*rewrite)(ir::Graph&, ir::Node&), bool resume_at_change) {
  size_t start = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const auto& nodes = graph.nodes();
    for (size_t i = start; i < nodes.size(); ++i)
      if (rewrite(graph, *nodes[i])) {
        changed = true;
        start = resume_at_change ? i : 0;
        break;
      }
  }
}

}  // namespace

void rewrite_until_done(ir::Graph& graph, bool (*rewrite)(ir::Graph&, ir::Node&)) {
  rewrite_from(graph, rewrite, false);
}

void rewrite_forward_until_done(ir::Graph& graph, bool (*rewrite)(ir::Graph&, ir::Node&)) {
  rewrite_from(graph, rewrite, true);
}

bool clamps_from_zero(const ir::Node& n, float* upper) {
  float lo = 0, hi = std::numeric_limits<float>::infinity();
  const bool clamps = n.op() == "Relu" || (n.op() == "Clip" && n.has_input(1) && f32_scalar(n.input(1), lo) &&
                                           lo == 0 && n.has_input(2) && f32_scalar(n.input(2), hi));
  if (clamps && upper) *upper = hi;
  return clamps;
}

ir::Node* add_node_after(ir::Graph& graph, const ir::Value* v, const std::string& op, std::vector<ir::Value*> inputs,
                         const std::string& name, ir::AttributeMap attrs) {
  const std::string unique = graph.unique_value_name(name);
  ir::Node* n = graph.add_node(op, std::move(inputs), {unique}, std::move(attrs), unique);
  const auto& nodes = graph.nodes();
  const ir::Node* next = nodes.front().get();
  if (v->producer()) {
    auto at = std::find_if(nodes.begin(), nodes.end(), [&](const auto& m) { return m.get() == v->producer(); });
    next = (at + 1)->get();  // n was added last, so the producer is not
  }
  if (next != n) graph.move_last_before(next);
  ir::infer_node(*n);
  return n;
}

}  // namespace kiln::passes
