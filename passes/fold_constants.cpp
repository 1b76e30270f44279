// Pass: evaluate at compile time every node whose results are already determined, either
// by constant inputs (through the op's reference implementation) or by the inputs' static
// types alone (through the op's fold rule, e.g. Shape).
#include "ir/control_flow.h"
#include "ir/op_registry.h"
#include "passes/pass_manager.h"

namespace kiln::passes {

namespace {

// Results bigger than this that are not cheaper than their inputs stay computed at run time,
// so folding never bloats the binary (e.g. Expand of a scalar to a huge tensor).
constexpr int64_t kMaxFoldedGrowthBytes = 1 << 20;

bool all_inputs_constant(const ir::Node& node) {
  for (const ir::Value* v : node.inputs())
    if (v && !v->is_constant()) return false;
  return true;
}

bool worth_storing(const ir::Node& node) {
  int64_t in_bytes = 0, out_bytes = 0;
  for (const ir::Value* v : node.inputs())
    if (v) in_bytes += v->constant().nbytes();
  for (const ir::Value* v : node.outputs())
    if (v->has_type() && v->shape().is_static())
      out_bytes += v->shape().numel() * ir::dtype_size(v->dtype());
  return out_bytes <= in_bytes + kMaxFoldedGrowthBytes;
}

// What is known of an If, Loop or Scan node at compile time reaches its bodies: a captured
// value that is constant becomes that constant inside them (the body input stays, unread, so
// positions do not move), and an If on a constant condition keeps only the branch it takes.
void fold_into_bodies(ir::Node& node) {
  if (node.op() != "If" && node.op() != "Loop" && node.op() != "Scan") return;
  const size_t captured = ir::num_captured(node);
  const size_t first = node.num_inputs() - captured;
  for (const auto& [name, a] : node.attrs()) {
    if (a.type() != ir::AttrType::Graph || !a.g()) continue;
    ir::Graph& body = *a.g();
    if (body.inputs().size() < captured) continue;  // malformed: the shape rule says so
    const size_t formal = body.inputs().size() - captured;
    for (size_t i = first; i < node.num_inputs(); ++i) {
      ir::Value* in = body.inputs()[formal + (i - first)];
      if (node.input(i)->is_constant() && !in->is_constant()) in->set_constant(node.input(i)->constant());
    }
  }
  if (node.op() == "If" && node.input(0)->is_constant() && node.input(0)->constant().numel() == 1) {
    const bool taken = node.input(0)->constant().as_int64(0) != 0;
    ir::Attribute live = node.attr(taken ? "then_branch" : "else_branch");
    node.set_attr("then_branch", live);
    node.set_attr("else_branch", live);
  }
}

}  // namespace

void fold_constants(ir::Graph& graph) {
  // Snapshot: folding removes nodes from the list.
  std::vector<ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  for (ir::Node* node : nodes) {
    // Earlier folds may have made inputs constant (a Reshape's shape computed from Shape):
    // re-derive the types with what is now known.
    fold_into_bodies(*node);
    ir::infer_node(*node);
    if (node->def().fold) {
      if (auto results = node->def().fold(*node)) {
        graph.fold_node(node, std::move(*results));
        continue;
      }
    }
    if (!all_inputs_constant(*node) || !worth_storing(*node)) continue;
    std::vector<const ir::Tensor*> args;
    for (const ir::Value* v : node->inputs()) args.push_back(v ? &v->constant() : nullptr);
    graph.fold_node(node, ir::eval_node(*node, args));
  }
}

}  // namespace kiln::passes
