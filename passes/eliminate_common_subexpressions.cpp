// Pass: common subexpression elimination. Constants with the same dtype, shape and bytes
// become one (exporters often duplicate initializers behind Identity), then a node with the
// same op, inputs and attributes as an earlier one is replaced by it. Graph inputs and
// outputs keep their values, so their names never change; nodes holding subgraphs are left.
#include <map>
#include <string>

#include "ir/printer.h"
#include "passes/pass_manager.h"

namespace kiln::passes {

namespace {

// The node without its outputs and name: "Op(%a, %b) {attrs}".
std::string node_key(const ir::Node& n) {
  std::string text = ir::print_node(n);
  size_t begin = text.find(" = " + n.op() + "(");
  begin = begin == std::string::npos ? 0 : begin + 3;
  size_t end = text.rfind(" @");
  return text.substr(begin, end == std::string::npos || end < begin ? std::string::npos : end - begin);
}

bool has_subgraph(const ir::Node& n) {
  for (const auto& [name, a] : n.attrs())
    if (a.type() == ir::AttrType::Graph) return true;
  return false;
}

void merge_constants(ir::Graph& graph) {
  std::map<std::string, ir::Value*> seen;  // dtype, shape and bytes -> first such constant
  std::vector<ir::Value*> constants;
  for (const auto& v : graph.values())
    if (v->is_constant() && !v->producer()) constants.push_back(v.get());
  for (ir::Value* v : constants) {
    bool pinned = graph.is_graph_output(v);
    for (const ir::Value* in : graph.inputs()) pinned |= in == v;
    if (pinned) continue;
    const ir::Tensor& t = v->constant();
    std::string key = ir::print_type(v->dtype(), v->shape()) + ":" +
                      std::string(static_cast<const char*>(t.raw()), t.nbytes());
    auto [it, inserted] = seen.emplace(key, v);
    if (inserted) continue;
    graph.replace_all_uses(v, it->second);
  }
}

}  // namespace

void eliminate_common_subexpressions(ir::Graph& graph) {
  merge_constants(graph);
  std::map<std::string, ir::Node*> seen;
  std::vector<ir::Node*> doomed;
  for (const auto& n : graph.nodes()) {
    if (n->num_outputs() == 0 || has_subgraph(*n)) continue;
    auto [it, inserted] = seen.emplace(node_key(*n), n.get());
    if (inserted) continue;
    bool output = false;
    for (const ir::Value* v : n->outputs()) output |= graph.is_graph_output(v);
    if (output) continue;
    for (size_t i = 0; i < n->num_outputs(); ++i) graph.replace_all_uses(n->output(i), it->second->output(i));
    doomed.push_back(n.get());
  }
  if (!doomed.empty()) graph.remove_nodes(doomed);
  graph.remove_unused_values();
}

}  // namespace kiln::passes
