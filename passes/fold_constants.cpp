// Pass: evaluate at compile time every node whose results are already determined, either
// by constant inputs (through the op's reference implementation) or by the inputs' static
// types alone (through the op's fold rule, e.g. Shape).
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

}  // namespace

void fold_constants(ir::Graph& graph) {
  // Snapshot: folding removes nodes from the list.
  std::vector<ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  for (ir::Node* node : nodes) {
    // Earlier folds may have made inputs constant (a Reshape's shape computed from Shape):
    // re-derive the types with what is now known.
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
