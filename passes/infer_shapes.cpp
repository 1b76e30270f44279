// Pass: give every value its dtype and shape by asking each node's op for its shape rule.
#include "ir/op_registry.h"
#include "passes/pass_manager.h"

namespace kiln::passes {

void infer_shapes(ir::Graph& graph) {
  for (const auto& node : graph.nodes()) ir::infer_node(*node);
}

}  // namespace kiln::passes
