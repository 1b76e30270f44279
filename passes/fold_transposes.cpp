// Pass: Transpose folding. Transpose(Transpose(x, p1), p2) becomes one Transpose(x, p1∘p2),
// or nothing when the composition is the identity; Transposes of constants are left to
// fold_constants. The first Transpose stays while others read it.
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

std::vector<int64_t> perm_of(const ir::Node& n) {
  if (n.has_attr("perm")) return n.ints("perm");
  size_t rank = n.input(0)->shape().rank();
  std::vector<int64_t> p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
  return p;
}

}  // namespace

void fold_transposes(ir::Graph& graph) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& n : graph.nodes()) {
      if (n->op() != "Transpose" || !n->input(0)->has_type()) continue;
      ir::Node* first = n->input(0)->producer();
      if (!first || first->op() != "Transpose" || !first->input(0)->has_type()) continue;
      std::vector<int64_t> p1 = perm_of(*first), p2 = perm_of(*n), p(p2.size());
      bool identity = true;
      for (size_t i = 0; i < p2.size(); ++i) {
        p[i] = p1[static_cast<size_t>(p2[i])];
        identity &= p[i] == static_cast<int64_t>(i);
      }
      ir::Value* x = first->input(0);
      ir::Value* out = n->output(0);
      if (identity && !graph.is_graph_output(out)) {
        graph.replace_all_uses(out, x);
        graph.remove_nodes({n.get()});
      } else if (!identity) {
        ir::AttributeMap attrs = n->attrs();
        attrs["perm"] = ir::Attribute(p);
        replace_with_node(graph, {n.get()}, out, "Transpose", {x}, attrs, n->name());
      } else {
        continue;
      }
      if (first->output(0)->users().empty() && !graph.is_graph_output(first->output(0)))
        graph.remove_nodes({first});
      changed = true;
      break;  // the node list changed
    }
  }
  graph.remove_unused_values();
}

}  // namespace kiln::passes
