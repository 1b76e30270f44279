#include "frontend/onnx/onnx_graph_builder.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend::onnx_import {

GraphBuilder::GraphBuilder(ModelContext& model, onnx::GraphProto& proto, ir::Graph& graph,
                           GraphBuilder* parent)
    : model_(model),
      proto_(proto),
      graph_(graph),
      parent_(parent),
      hints_(proto, parent ? &parent->hints_ : nullptr) {}

void GraphBuilder::fail_graph(const std::string& problem) const {
  if (is_main()) fail("{}: {}", model_.file, problem);
  fail("{}: subgraph '{}': {}", model_.file, graph_.name(), problem);
}

void GraphBuilder::fail_node(const PendingNode&, const std::string& problem) const {
  fail("{}: node '{}' ({}): {}", model_.file, node_name_, node_op_, problem);
}

void GraphBuilder::build() {
  for (const auto& init : proto_.initializer()) reserved_.insert(init.name());
  for (const auto& in : proto_.input()) reserved_.insert(in.name());
  for (int i = 0; i < proto_.node_size(); ++i) {
    const onnx::NodeProto& n = proto_.node(i);
    std::string name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
    for (const std::string& out : n.output()) {
      reserved_.insert(out);
      defined_later_.emplace(out, fmt::format("node '{}' ({})", name, n.op_type()));
    }
  }
  if (proto_.sparse_initializer_size() > 0)
    fail_graph(fmt::format("sparse initializer '{}' is not supported",
                           proto_.sparse_initializer(0).values().name()));
  add_initializers();
  add_inputs();
  for (int i = 0; i < proto_.node_size(); ++i) add_node(*proto_.mutable_node(i), static_cast<size_t>(i));
  add_outputs();
}

ir::Value* GraphBuilder::lookup(const std::string& name) {
  auto it = scope_.find(name);
  if (it != scope_.end()) return it->second;
  ir::Value* outer = parent_ ? parent_->lookup(name) : nullptr;
  if (!outer) return nullptr;
  // Constants are copied in (the bytes are shared); anything else becomes a captured input.
  if (outer->is_constant()) {
    ir::Value* c = graph_.add_constant(fresh_name(name), outer->constant());
    define(name, c, "as a constant of an enclosing graph");
    return c;
  }
  ir::Value* local = graph_.add_value(fresh_name(name));
  if (outer->has_type()) local->set_type(outer->dtype(), outer->shape());
  graph_.inputs().push_back(local);
  captures_.push_back({outer, local});
  define(name, local, "as a value captured from an enclosing graph");
  return local;
}

// Every subgraph of the node gets the union of what they captured, in one order, as its
// trailing inputs (unused ones where a branch reads less); the node gets the outer values.
void GraphBuilder::add_captured_inputs(PendingNode& p) {
  std::vector<ir::Value*> outer;
  for (const auto& [g, caps] : node_subgraphs_)
    for (const Capture& c : caps)
      if (std::find(outer.begin(), outer.end(), c.outer) == outer.end()) outer.push_back(c.outer);
  if (outer.empty()) return;
  for (const auto& [g, caps] : node_subgraphs_) {
    std::vector<ir::Value*>& inputs = g->inputs();
    inputs.resize(inputs.size() - caps.size());  // captures were appended last
    for (ir::Value* o : outer) {
      auto it = std::find_if(caps.begin(), caps.end(), [&](const Capture& c) { return c.outer == o; });
      inputs.push_back(it != caps.end() ? it->local : g->add_value(o->name()));
    }
  }
  if (p.op != "If" && p.op != "Loop" && p.op != "Scan")
    fail_node(p, "reads values of the enclosing graph in a subgraph; only If, Loop and Scan may");
  // Loop's optional inputs before the captured ones must stay in place, omitted or not.
  if (p.op == "Loop")
    while (p.inputs.size() < 2) p.inputs.push_back(nullptr);
  p.inputs.insert(p.inputs.end(), outer.begin(), outer.end());
  p.attrs["num_captured"] = ir::Attribute(static_cast<int64_t>(outer.size()));
}

void GraphBuilder::define(const std::string& name, ir::Value* v, std::string how) {
  scope_[name] = v;
  how_[name] = std::move(how);
}

// Initializers are constants, also those listed in graph.input (ONNX's overridable defaults):
// a compiled model bakes its weights in.
void GraphBuilder::add_initializers() {
  for (auto& init : *proto_.mutable_initializer()) {
    const std::string name = init.name();
    if (name.empty()) fail_graph("an initializer has no name");
    if (scope_.count(name)) fail_graph(fmt::format("initializer '{}' is defined twice", name));
    ir::Tensor t = model_.loader.load(init, fmt::format("initializer '{}'", name));
    define(name, graph_.add_constant(name, std::move(t)), "as an initializer");
  }
}

void GraphBuilder::add_inputs() {
  for (const auto& vi : proto_.input()) {
    const std::string& name = vi.name();
    if (name.empty()) fail_graph("a graph input has no name");
    auto it = how_.find(name);
    if (it != how_.end()) {
      if (it->second == "as an initializer") continue;  // a constant, see add_initializers
      fail_graph(fmt::format("input '{}' is listed twice", name));
    }
    ir::Value* v = graph_.add_value(name);
    bool is_tensor = false;
    TypeHint hint = vi.has_type() ? type_hint(vi.type(), &is_tensor) : TypeHint{};
    if (vi.has_type() && !is_tensor)
      fail_graph(fmt::format("input '{}' is not a tensor; only tensor inputs are supported", name));
    if (vi.has_type() && vi.type().tensor_type().has_elem_type() && !hint.dtype)
      fail_graph(fmt::format("input '{}' has unsupported data type {}", name,
                             onnx_dtype_name(vi.type().tensor_type().elem_type())));
    if (hint.shape) check_declared_shape(name, *hint.shape);
    if (hint.dtype && hint.shape) {
      v->set_type(*hint.dtype, *hint.shape);
    } else if (is_main()) {  // subgraph inputs (loop counters ...) may leave it to inference
      fail_graph(fmt::format("input '{}' has no {}", name, hint.dtype ? "shape (rank unknown)" : "type"));
    }
    define(name, v, "as a graph input");
    graph_.inputs().push_back(v);
  }
}

void GraphBuilder::add_node(onnx::NodeProto& node, size_t index) {
  node_name_ = node.name().empty() ? fmt::format("{}_{}", node.op_type(), index) : node.name();
  node_op_ = node.op_type();
  PendingNode p{registry_op_name(node), {}, {}, {}, node_name_};
  for (const std::string& in : node.input()) {
    if (in.empty()) {
      p.inputs.push_back(nullptr);
      continue;
    }
    ir::Value* v = lookup(in);
    if (!v) {
      auto later = defined_later_.find(in);
      if (later != defined_later_.end())
        fail_node(p, fmt::format("input '{}' is used before it is defined (by {}); nodes must be in "
                                 "topological order",
                                 in, later->second));
      fail_node(p, fmt::format("input '{}' is not defined", in));
    }
    p.inputs.push_back(v);
  }
  p.outputs.assign(node.output().begin(), node.output().end());
  for (auto& a : *node.mutable_attribute()) {
    if (p.attrs.count(a.name())) fail_node(p, fmt::format("attribute '{}' is given twice", a.name()));
    // Attributes the IR's control-flow ops keep for themselves (ir/control_flow.h).
    if (a.name() == "num_captured" || a.name() == "untyped_branch")
      fail_node(p, fmt::format("attribute '{}' is not an ONNX attribute", a.name()));
    p.attrs[a.name()] = convert_attr(a);
  }
  add_captured_inputs(p);
  node_subgraphs_.clear();
  int opset = model_.opsets.at(normalize_domain(node.domain()));
  const OpRule* rule = find_op_rule(node.op_type());
  if (rule && rule->convert && opset < rule->canonical_since) rule->convert(*this, p, opset);
  emit(std::move(p), false);
}

std::vector<ir::Value*> GraphBuilder::emit(PendingNode p, bool helper) {
  const ir::OpDef* def = ir::registry().find(p.op);
  if (!def) fail_node(p, fmt::format("op {} is not implemented", p.op));
  for (auto it = p.attrs.begin(); it != p.attrs.end();) {
    bool declared = std::any_of(def->attrs.begin(), def->attrs.end(),
                                [&](const ir::AttrSpec& s) { return s.name == it->first; });
    if (declared) {
      ++it;
    } else if (is_noop_attr(node_op_, it->first) || is_noop_attr(p.op, it->first)) {
      it = p.attrs.erase(it);
    } else {
      fail_node(p, fmt::format("attribute '{}' is not supported", it->first));
    }
  }
  while (!p.inputs.empty() && !p.inputs.back()) p.inputs.pop_back();
  // Omitted trailing outputs are dropped; a helper's outputs all get fresh names.
  while (!helper && !p.outputs.empty() && p.outputs.back().empty()) p.outputs.pop_back();
  std::vector<std::string> names;
  for (const std::string& out : p.outputs) {
    if (helper || out.empty()) {
      names.push_back(fresh_name(p.name + "_out"));
      continue;
    }
    if (auto it = how_.find(out); it != how_.end())
      fail_node(p, fmt::format("output '{}' is already defined ({})", out, it->second));
    if (std::count(p.outputs.begin(), p.outputs.end(), out) > 1)
      fail_node(p, fmt::format("output '{}' is listed twice", out));
    names.push_back(out);
  }
  ir::Node* n = graph_.add_node(p.op, p.inputs, names, std::move(p.attrs), p.name);
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    if (helper || p.outputs[i].empty()) continue;
    if (n->output(i)->name() != p.outputs[i])  // fresh names never take an ONNX name
      fail_node(p, fmt::format("internal error: output '{}' was renamed", p.outputs[i]));
    define(p.outputs[i], n->output(i), fmt::format("by node '{}' ({})", node_name_, node_op_));
  }
  return n->outputs();
}

// A declared input shape within the rank and element limits (static dims only; symbolic dims
// are bounded when they are given values).
void GraphBuilder::check_declared_shape(const std::string& name, const ir::Shape& shape) const {
  const ImportLimits& limits = model_.limits;
  if (static_cast<int64_t>(shape.rank()) > limits.max_rank)
    fail_graph(fmt::format("input '{}' has rank {}, over the rank limit of {} (--max-rank)", name,
                           shape.rank(), limits.max_rank));
  uint64_t count = 1;
  bool zero = false;
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (!shape[i].is_static()) continue;
    auto d = static_cast<uint64_t>(shape[i].value());
    zero = zero || d == 0;
    if (count != UINT64_MAX && __builtin_mul_overflow(count, d, &count)) count = UINT64_MAX;
  }
  if (!zero && count > limits.max_elements)
    fail_graph(fmt::format("input '{}' of shape {} has more than {} elements, the element limit "
                           "(--max-elements)",
                           name, shape.str(), limits.max_elements));
}

void GraphBuilder::add_outputs() {
  std::set<std::string> seen;
  for (const auto& vi : proto_.output()) {
    ir::Value* v = lookup(vi.name());
    if (!v)
      fail_graph(fmt::format("output '{}' is not defined by any node, input or initializer", vi.name()));
    if (!seen.insert(vi.name()).second) fail_graph(fmt::format("output '{}' is listed twice", vi.name()));
    if (!v->has_type() && vi.has_type()) {
      TypeHint hint = type_hint(vi.type());
      if (hint.dtype && hint.shape) v->set_type(*hint.dtype, *hint.shape);
    }
    graph_.outputs().push_back(v);
  }
}

ir::Attribute GraphBuilder::convert_attr(onnx::AttributeProto& a) {
  using AP = onnx::AttributeProto;
  AP::AttributeType type = a.type();
  if (type == AP::UNDEFINED) {  // IR version 1 models leave the type to the field present
    type = a.has_f()               ? AP::FLOAT
           : a.has_i()             ? AP::INT
           : a.has_s()             ? AP::STRING
           : a.has_t()             ? AP::TENSOR
           : a.has_g()             ? AP::GRAPH
           : a.floats_size() > 0   ? AP::FLOATS
           : a.ints_size() > 0     ? AP::INTS
           : a.strings_size() > 0  ? AP::STRINGS
                                   : AP::UNDEFINED;
  }
  switch (type) {
    case AP::FLOAT: return ir::Attribute(a.f());
    case AP::INT: return ir::Attribute(static_cast<int64_t>(a.i()));
    case AP::STRING: return ir::Attribute(std::string(a.s()));
    case AP::FLOATS: return ir::Attribute(std::vector<float>(a.floats().begin(), a.floats().end()));
    case AP::INTS: return ir::Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AP::STRINGS:
      return ir::Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case AP::TENSOR:
      return ir::Attribute(model_.loader.load(
          *a.mutable_t(), fmt::format("node '{}' ({}): attribute '{}'", node_name_, node_op_, a.name())));
    case AP::GRAPH: return ir::Attribute(convert_subgraph(*a.mutable_g(), a.name()));
    default: break;
  }
  fail_node({}, fmt::format("attribute '{}' of type {} is not supported", a.name(),
                            type == AP::UNDEFINED ? "undefined" : AP::AttributeType_Name(type)));
}

std::shared_ptr<ir::Graph> GraphBuilder::convert_subgraph(onnx::GraphProto& g, const std::string& attr) {
  auto sub = std::make_shared<ir::Graph>();
  sub->set_name(g.name().empty() ? fmt::format("{}_{}", node_name_, attr) : g.name());
  GraphBuilder builder(model_, g, *sub, this);
  builder.build();
  node_subgraphs_.emplace_back(sub, builder.captures_);
  return sub;
}

std::string GraphBuilder::fresh_name(const std::string& hint) const {
  std::string name = hint;
  for (int k = 1; reserved_.count(name) || graph_.find_value(name); ++k)
    name = fmt::format("{}_{}", hint, k);
  return name;
}

ir::Value* GraphBuilder::constant(const std::string& hint, ir::Tensor t) {
  return graph_.add_constant(fresh_name(hint), std::move(t));
}

std::vector<ir::Value*> GraphBuilder::emit_helper(PendingNode node) { return emit(std::move(node), true); }

std::optional<ir::DType> GraphBuilder::dtype_of(const ir::Value* v) const {
  if (v->has_type()) return v->dtype();
  const TypeHint* h = hints_.find(v->name());
  return h ? h->dtype : std::nullopt;
}

std::optional<ir::Shape> GraphBuilder::shape_of(const ir::Value* v) const {
  if (v->has_type()) return v->shape();
  const TypeHint* h = hints_.find(v->name());
  return h ? h->shape : std::nullopt;
}

}  // namespace kiln::frontend::onnx_import
