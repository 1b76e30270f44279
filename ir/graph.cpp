#include "ir/graph.h"

#include <algorithm>
#include <set>

#include "ir/op_registry.h"

namespace kiln::ir {

void Value::set_type(DType dtype, Shape shape) {
  dtype_ = dtype;
  shape_ = std::move(shape);
  has_type_ = true;
}

void Value::set_constant(Tensor t) {
  set_type(t.dtype(), t.shape());
  constant_ = std::move(t);
}

std::string Node::describe() const {
  return fmt::format("node '{}' ({})", name_, op_);
}

void Node::set_input(size_t i, Value* v) {
  if (i >= inputs_.size()) inputs_.resize(i + 1, nullptr);
  if (Value* old = inputs_[i]) {
    auto it = std::find(old->users_.begin(), old->users_.end(), this);
    if (it != old->users_.end()) old->users_.erase(it);
  }
  inputs_[i] = v;
  if (v) v->users_.push_back(this);
}

const Attribute& Node::attr(std::string_view name) const {
  if (auto it = attrs_.find(name); it != attrs_.end()) return it->second;
  for (const AttrSpec& spec : def_->attrs)
    if (spec.name == name && spec.default_value) return *spec.default_value;
  fail("{}: missing attribute '{}'", describe(), name);
}

Value* Graph::add_value(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->name_ = unique_value_name(name.empty() ? "v" : name);
  v->graph_ = this;
  Value* raw = v.get();
  by_name_[raw->name_] = raw;
  values_.push_back(std::move(v));
  return raw;
}

Value* Graph::add_value(const std::string& name, DType dtype, Shape shape) {
  Value* v = add_value(name);
  v->set_type(dtype, std::move(shape));
  return v;
}

Value* Graph::add_constant(const std::string& name, Tensor t) {
  Value* v = add_value(name);
  v->set_constant(std::move(t));
  return v;
}

Value* Graph::find_value(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::string Graph::unique_value_name(const std::string& base) const {
  if (!by_name_.count(base)) return base;
  for (int k = 1;; ++k) {
    std::string candidate = fmt::format("{}_{}", base, k);
    if (!by_name_.count(candidate)) return candidate;
  }
}

Node* Graph::add_node(const std::string& op, std::vector<Value*> inputs,
                      const std::vector<std::string>& output_names, AttributeMap attrs,
                      std::string name) {
  const OpDef* def = registry().find(op);
  if (!def) fail("unknown op '{}'", op);
  auto node = std::make_unique<Node>();
  Node* n = node.get();
  n->op_ = op;
  n->def_ = def;
  n->graph_ = this;
  n->attrs_ = std::move(attrs);
  n->name_ = name.empty() ? fmt::format("{}_{}", op, nodes_.size()) : std::move(name);
  for (size_t i = 0; i < inputs.size(); ++i) n->set_input(i, inputs[i]);
  for (const std::string& out : output_names) {
    Value* v = add_value(out);
    v->producer_ = n;
    n->outputs_.push_back(v);
  }
  nodes_.push_back(std::move(node));
  return n;
}

void Graph::move_last_before(const Node* before) {
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node>& n) { return n.get() == before; });
  if (it == nodes_.end() || nodes_.empty()) return;
  std::unique_ptr<Node> last = std::move(nodes_.back());
  nodes_.pop_back();
  nodes_.insert(it, std::move(last));
}

bool Graph::is_graph_output(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

void Graph::replace_all_uses(Value* from, Value* to) {
  std::vector<Node*> users = from->users_;
  for (Node* user : users)
    for (size_t i = 0; i < user->inputs_.size(); ++i)
      if (user->inputs_[i] == from) user->set_input(i, to);
  for (Value*& out : outputs_)
    if (out == from) out = to;
}

void Graph::remove_nodes(const std::vector<Node*>& doomed) {
  std::set<const Node*> set(doomed.begin(), doomed.end());
  for (Node* n : doomed)
    for (size_t i = 0; i < n->inputs_.size(); ++i) n->set_input(i, nullptr);
  for (Node* n : doomed) {
    for (Value* out : n->outputs_) {
      if (!out->users_.empty() || is_graph_output(out))
        fail("cannot remove {}: output '{}' is still used", n->describe(), out->name());
      out->producer_ = nullptr;
    }
  }
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return set.count(n.get()) > 0; });
  remove_unused_values();
}

void Graph::fold_node(Node* node, std::vector<Tensor> results) {
  if (results.size() != node->outputs_.size())
    fail("{}: folding produced {} results for {} outputs", node->describe(), results.size(),
         node->outputs_.size());
  for (size_t i = 0; i < results.size(); ++i) {
    node->outputs_[i]->producer_ = nullptr;
    node->outputs_[i]->set_constant(std::move(results[i]));
  }
  node->outputs_.clear();
  remove_nodes({node});
}

void Graph::remove_unused_values() {
  std::set<const Value*> keep(inputs_.begin(), inputs_.end());
  keep.insert(outputs_.begin(), outputs_.end());
  for (const auto& n : nodes_) {
    keep.insert(n->inputs_.begin(), n->inputs_.end());
    keep.insert(n->outputs_.begin(), n->outputs_.end());
    // Subgraphs may read values of this graph by pointer.
    for (const auto& [name, a] : n->attrs_)
      if (a.type() == AttrType::Graph)
        for (const auto& sn : a.g()->nodes()) keep.insert(sn->inputs().begin(), sn->inputs().end());
  }
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) {
    if (keep.count(v.get())) return false;
    by_name_.erase(v->name_);
    return true;
  });
}

}  // namespace kiln::ir
