#include "ir/op_registry.h"

#include "ir/shape_values.h"

#include <climits>
#include <cstdint>

namespace kiln::ir {

#define KILN_OP_FAMILY(family) void register_##family##_ops(Registry&);
#include "ir/ops/families.def"
#undef KILN_OP_FAMILY

size_t OpDef::min_inputs() const {
  size_t n = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].optional) n = i + 1;
  return n;
}

size_t OpDef::max_inputs() const {
  if (!inputs.empty() && inputs.back().variadic) return SIZE_MAX;
  return inputs.size();
}

void Registry::add(OpDef def) {
  if (ops_.count(def.name)) fail("op '{}' registered twice", def.name);
  if (!def.scalar_expr.empty()) def.elementwise = true;
  std::string name = def.name;
  ops_.emplace(std::move(name), std::move(def));
}

const OpDef* Registry::find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<const OpDef*> Registry::all() const {
  std::vector<const OpDef*> out;
  for (const auto& [name, def] : ops_) out.push_back(&def);
  return out;
}

const Registry& registry() {
  static const Registry instance = [] {
    Registry r;
#define KILN_OP_FAMILY(family) register_##family##_ops(r);
#include "ir/ops/families.def"
#undef KILN_OP_FAMILY
    return r;
  }();
  return instance;
}

namespace {

void check_signature(const Node& node) {
  const OpDef& def = node.def();
  size_t n = node.num_inputs();
  if (n < def.min_inputs() || n > def.max_inputs())
    fail("{}: has {} inputs, op takes {}{}", node.describe(), n, def.min_inputs(),
         def.max_inputs() == SIZE_MAX ? " or more" : fmt::format(" to {}", def.max_inputs()));
  for (size_t i = 0; i < n; ++i) {
    bool optional = i < def.inputs.size() ? def.inputs[i].optional : false;
    if (!node.has_input(i) && !optional)
      fail("{}: required input {} ('{}') is missing", node.describe(), i,
           def.inputs[std::min(i, def.inputs.size() - 1)].name);
    if (node.has_input(i) && !node.input(i)->has_type())
      fail("{}: input '{}' has no known type", node.describe(), node.input(i)->name());
  }
  if (node.num_outputs() < def.min_outputs || node.num_outputs() > def.outputs.size())
    fail("{}: has {} outputs, op produces {} to {}", node.describe(), node.num_outputs(),
         def.min_outputs, def.outputs.size());
  for (const auto& [name, a] : node.attrs()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attrs)
      if (s.name == name) spec = &s;
    if (!spec) fail("{}: unknown attribute '{}'", node.describe(), name);
    if (spec->type != a.type())
      fail("{}: attribute '{}' is {}, expected {}", node.describe(), name,
           attr_type_name(a.type()), attr_type_name(spec->type));
  }
  for (const AttrSpec& s : def.attrs)
    if (!s.default_value && !s.optional && !node.has_attr(s.name))
      fail("{}: missing required attribute '{}'", node.describe(), s.name);
}

// Storage-only dtypes reach only the ops that declare them (OpDef::storage_dtypes).
template <class Values>
void refuse_storage_dtypes(const Node& node, const char* what, const Values& values) {
  for (const Value* v : values)
    if (v && v->has_type() && is_storage_only(v->dtype()))
      fail("{}: {} '{}' is {}, a storage-only dtype this op does not accept (convert it with Cast "
           "first)",
           node.describe(), what, v->name(), dtype_name(v->dtype()));
}

}  // namespace

void infer_node(Node& node) {
  check_signature(node);
  if (!node.def().storage_dtypes) refuse_storage_dtypes(node, "input", node.inputs());
  try {
    node.def().infer(node);
    propagate_shape_value(node);
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.find(node.describe()) == std::string::npos) msg = node.describe() + ": " + msg;
    throw Error(msg);
  }
  if (!node.def().storage_dtypes) refuse_storage_dtypes(node, "output", node.outputs());
}

std::vector<Tensor> eval_node(const Node& node, std::span<const Tensor* const> inputs) {
  std::vector<Tensor> outputs(node.num_outputs());
  try {
    node.def().eval(node, inputs, outputs);
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.find(node.describe()) == std::string::npos) msg = node.describe() + ": " + msg;
    throw Error(msg);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].defined()) fail("{}: reference produced no output {}", node.describe(), i);
  return outputs;
}

Cost node_cost(const Node& node) {
  if (node.def().cost) return node.def().cost(node);
  Cost c;
  for (const Value* v : node.inputs())
    if (v && v->shape().is_static()) c.bytes += v->shape().numel() * dtype_size(v->dtype());
  for (const Value* v : node.outputs())
    if (v->shape().is_static()) c.bytes += v->shape().numel() * dtype_size(v->dtype());
  return c;
}

}  // namespace kiln::ir
