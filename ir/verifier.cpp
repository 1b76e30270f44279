#include "ir/verifier.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/op_registry.h"
#include "ir/printer.h"

namespace kiln::ir {
namespace {

std::string ref(const Value* v) { return print_value_ref(v); }

bool dims_compatible(const Dim& recorded, const Dim& inferred) {
  if (recorded == inferred) return true;
  bool r_unknown = !recorded.is_static() && recorded.name().empty();
  bool i_unknown = !inferred.is_static() && inferred.name().empty();
  if (r_unknown || i_unknown) return true;
  return !recorded.is_static() && !inferred.is_static();
}

bool types_compatible(const Value& recorded, const Value& inferred) {
  if (recorded.dtype() != inferred.dtype() || recorded.shape().rank() != inferred.shape().rank())
    return false;
  for (size_t i = 0; i < recorded.shape().rank(); ++i)
    if (!dims_compatible(recorded.shape()[i], inferred.shape()[i])) return false;
  return true;
}

// What is visible while checking one graph: its values defined so far, then (for a subgraph)
// what the enclosing graph had defined before the node that holds it.
struct Scope {
  const Graph* graph = nullptr;
  const Scope* parent = nullptr;
  std::set<const Value*> owned;
  std::set<const Value*> defined;
  std::set<std::string, std::less<>> defined_names;

  // The innermost scope that owns v, or nullptr.
  const Scope* owner(const Value* v) const {
    for (const Scope* s = this; s; s = s->parent)
      if (s->owned.count(v)) return s;
    return nullptr;
  }
  bool name_visible_outside(std::string_view name) const {
    for (const Scope* s = parent; s; s = s->parent)
      if (s->defined_names.count(name)) return true;
    return false;
  }
};

class Verifier {
 public:
  void graph(const Graph& g, const Scope* parent, const std::string& ctx) {
    graphs_.push_back(&g);
    Scope s;
    s.graph = &g;
    s.parent = parent;

    std::set<std::string_view> names;
    for (const auto& vp : g.values()) {
      const Value* v = vp.get();
      s.owned.insert(v);
      if (v->graph() != &g) fail("{}value {} belongs to another graph", ctx, ref(v));
      if (!names.insert(v->name()).second) fail("{}value name {} is used twice", ctx, ref(v));
      if (g.find_value(v->name()) != v)
        fail("{}value {} is not registered under its name", ctx, ref(v));
    }
    std::set<const Node*> nodes;
    for (const auto& np : g.nodes()) {
      nodes.insert(np.get());
      all_nodes_.insert(np.get());
      if (np->graph() != &g) fail("{}{} belongs to another graph", ctx, np->describe());
    }
    for (const auto& vp : g.values()) {
      const Value* v = vp.get();
      if (const Node* p = v->producer()) {
        if (!nodes.count(p))
          fail("{}value {} names a producer that is not a node of this graph", ctx, ref(v));
        if (std::find(p->outputs().begin(), p->outputs().end(), v) == p->outputs().end())
          fail("{}value {} names {} as its producer, which does not list it as an output", ctx,
               ref(v), p->describe());
        if (v->is_constant())
          fail("{}value {} is produced by {} and also holds constant data", ctx, ref(v),
               p->describe());
      }
      if (v->is_constant() && !(v->has_type() && v->dtype() == v->constant().dtype() &&
                                v->shape() == v->constant().shape()))
        fail("{}constant {} has type {} but its data is {}", ctx, ref(v),
             v->has_type() ? print_type(v->dtype(), v->shape()) : "unknown",
             print_type(v->constant().dtype(), v->constant().shape()));
    }

    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* v = g.inputs()[i];
      if (!v) fail("{}graph input {} is null", ctx, i);
      if (!s.owned.count(v)) fail("{}graph input {} is not a value of this graph", ctx, i);
      if (v->producer())
        fail("{}graph input {} is produced by {}", ctx, ref(v), v->producer()->describe());
      if (s.defined.count(v)) fail("{}graph input {} is listed twice", ctx, ref(v));
      define(s, v, ctx);
    }
    for (const auto& vp : g.values())
      if (vp->is_constant() && !s.defined.count(vp.get())) define(s, vp.get(), ctx);

    for (const auto& np : g.nodes()) node(*np, s, ctx);

    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Value* v = g.outputs()[i];
      if (!v) fail("{}graph output {} is null", ctx, i);
      const Scope* o = s.owner(v);
      if (!o) fail("{}graph output {} is not a value of this graph or an enclosing one", ctx, i);
      if (!o->defined.count(v)) fail("{}graph output {} is not defined", ctx, ref(v));
    }
  }

  // Every value's users list holds each node that reads it, once per input slot.
  void users() const {
    for (const Graph* g : graphs_) {
      for (const auto& vp : g->values()) {
        const Value* v = vp.get();
        auto it = readers_.find(v);
        std::vector<const Node*> expected = it == readers_.end() ? std::vector<const Node*>{} : it->second;
        for (const Node* u : v->users())
          if (!all_nodes_.count(u))
            fail("value {} lists a user that is not a node of the graph", ref(v));
        for (const Node* n : expected) {
          auto want = std::count(expected.begin(), expected.end(), n);
          auto have = std::count(v->users().begin(), v->users().end(), n);
          if (want != have)
            fail("value {}: {} reads it {} time(s) but its users list has the node {} time(s)",
                 ref(v), n->describe(), want, have);
        }
        for (const Node* u : v->users())
          if (std::find(expected.begin(), expected.end(), u) == expected.end())
            fail("value {} lists {} as a user, which does not read it", ref(v), u->describe());
      }
    }
  }

 private:
  void define(Scope& s, const Value* v, const std::string& ctx) {
    if (s.name_visible_outside(v->name()))
      fail("{}value {} shadows a value of an enclosing graph", ctx, ref(v));
    s.defined.insert(v);
    s.defined_names.insert(v->name());
  }

  void node(const Node& n, Scope& s, const std::string& graph_ctx) {
    const std::string ctx = graph_ctx + n.describe() + ": ";
    const OpDef* def = registry().find(n.op());
    if (!def) fail("{}op '{}' is not registered", ctx, n.op());

    size_t count = n.num_inputs();
    if (count < def->min_inputs() || count > def->max_inputs())
      fail("{}has {} inputs, op takes {}{}", ctx, count, def->min_inputs(),
           def->max_inputs() == SIZE_MAX ? " or more" : fmt::format(" to {}", def->max_inputs()));
    for (size_t i = 0; i < count; ++i) {
      const Value* v = n.input(i);
      if (!v) {
        bool optional = i < def->inputs.size() && def->inputs[i].optional;
        if (!optional)
          fail("{}required input {} ('{}') is missing", ctx, i,
               def->inputs[std::min(i, def->inputs.size() - 1)].name);
        continue;
      }
      const Scope* o = s.owner(v);
      if (!o) fail("{}input {} is not a value of this graph or an enclosing one", ctx, i);
      if (!o->defined.count(v))
        fail("{}input {} {} is used before it is defined{}", ctx, i, ref(v),
             o == &s ? "" : " in the enclosing graph");
      readers_[v].push_back(&n);
    }

    if (n.num_outputs() < def->min_outputs || n.num_outputs() > def->outputs.size())
      fail("{}has {} outputs, op produces {} to {}", ctx, n.num_outputs(), def->min_outputs,
           def->outputs.size());
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      if (!v) fail("{}output {} is null", ctx, i);
      if (!s.owned.count(v)) fail("{}output {} is not a value of this graph", ctx, i);
      if (v->producer() != &n)
        fail("{}output {} names {} as its producer", ctx, ref(v),
             v->producer() ? v->producer()->describe() : "no node");
      if (s.defined.count(v)) fail("{}output {} is already defined", ctx, ref(v));
    }

    for (const auto& [name, a] : n.attrs()) {
      auto spec = std::find_if(def->attrs.begin(), def->attrs.end(),
                               [&, &key = name](const AttrSpec& sp) { return sp.name == key; });
      if (spec == def->attrs.end()) fail("{}unknown attribute '{}'", ctx, name);
      if (spec->type != a.type())
        fail("{}attribute '{}' is {}, expected {}", ctx, name, attr_type_name(a.type()),
             attr_type_name(spec->type));
    }
    for (const AttrSpec& sp : def->attrs)
      if (!sp.default_value && !sp.optional && !n.has_attr(sp.name))
        fail("{}missing required attribute '{}'", ctx, sp.name);

    for (const auto& [name, a] : n.attrs()) {
      if (a.type() != AttrType::Graph) continue;
      if (!a.g()) fail("{}attribute '{}' holds no graph", ctx, name);
      graph(*a.g(), &s, fmt::format("{}attribute '{}': graph '{}': ", ctx, name, a.g()->name()));
    }

    types(n, graph_ctx);
    for (const Value* v : n.outputs()) define(s, v, ctx);
  }

  // Re-runs the op's shape rule on a copy of the node and compares with the recorded types.
  static void types(const Node& n, const std::string& graph_ctx) {
    if (!n.def().infer) return;
    for (const Value* v : n.inputs())
      if (v && !v->has_type()) return;
    if (std::none_of(n.outputs().begin(), n.outputs().end(), [](const Value* v) { return v->has_type(); }))
      return;
    Graph copy;
    std::map<const Value*, Value*> copies;
    std::vector<Value*> inputs;
    for (const Value* v : n.inputs()) {
      if (!v) {
        inputs.push_back(nullptr);
        continue;
      }
      Value*& c = copies[v];
      if (!c)
        c = v->is_constant() ? copy.add_constant(v->name(), v->constant())
                             : copy.add_value(v->name(), v->dtype(), v->shape());
      inputs.push_back(c);
    }
    std::vector<std::string> output_names;
    for (const Value* v : n.outputs()) output_names.push_back(v->name());
    Node* c = nullptr;
    try {
      c = copy.add_node(n.op(), inputs, output_names, n.attrs(), n.name());
      infer_node(*c);
    } catch (const Error& e) {
      fail("{}{} (re-running its shape rule on the recorded types)", graph_ctx, e.what());
    }
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* recorded = n.output(i);
      const Value* inferred = c->output(i);
      if (recorded->has_type() && inferred->has_type() && !types_compatible(*recorded, *inferred))
        fail("{}{}: output {} is recorded as {} but its shape rule gives {}", graph_ctx,
             n.describe(), ref(recorded), print_type(recorded->dtype(), recorded->shape()),
             print_type(inferred->dtype(), inferred->shape()));
    }
  }

  std::vector<const Graph*> graphs_;
  std::set<const Node*> all_nodes_;
  std::map<const Value*, std::vector<const Node*>> readers_;
};

}  // namespace

void verify_graph(const Graph& graph) {
  Verifier v;
  v.graph(graph, nullptr, "");
  v.users();
}

}  // namespace kiln::ir
