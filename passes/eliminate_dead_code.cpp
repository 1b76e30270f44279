// Pass: remove nodes none of whose results reach a graph output, and unused values.
#include <set>

#include "passes/pass_manager.h"

namespace kiln::passes {

void eliminate_dead_code(ir::Graph& graph) {
  std::set<const ir::Value*> live(graph.outputs().begin(), graph.outputs().end());
  std::vector<ir::Node*> dead;
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    ir::Node* n = it->get();
    bool used = false;
    for (const ir::Value* out : n->outputs()) used |= live.count(out) > 0;
    if (!used) {
      dead.push_back(n);
      continue;
    }
    for (const ir::Value* in : n->inputs())
      if (in) live.insert(in);
  }
  if (!dead.empty()) graph.remove_nodes(dead);
  graph.remove_unused_values();
}

}  // namespace kiln::passes
