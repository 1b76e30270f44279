// TfLowering: the graph-building helpers every op lowering uses, and the TF node's attributes.
#include <fmt/format.h>

#include "frontend/tensorflow/tf_internal.h"
#include "frontend/tensorflow/tf_types.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend::tensorflow {

std::string TfLowering::describe() const {
  return fmt::format("{}{}node '{}' ({})", file_, where_.empty() ? ": " : fmt::format(": function '{}', ", where_),
                     node_->name(), node_->op());
}

void TfLowering::fail_node(const std::string& problem) const { fail("{}: {}", describe(), problem); }

std::vector<ir::Value*> TfLowering::nodes(const std::string& op, std::vector<ir::Value*> inputs, size_t outputs,
                                          ir::AttributeMap attrs) {
  if (graph_.nodes().size() >= limits_.max_nodes)
    fail_node(fmt::format("the model has more than {} nodes, the node limit (--max-nodes)", limits_.max_nodes));
  const std::string name = part_ == 0 ? base_ : fmt::format("{}_{}", base_, part_);
  ++part_;
  std::vector<std::string> names;
  for (size_t k = 0; k < outputs; ++k) names.push_back(k == 0 ? name : fmt::format("{}:{}", name, k));
  try {
    ir::Node* n = graph_.add_node(op, std::move(inputs), names, std::move(attrs), name);
    ir::infer_node(*n);
    if (auto folded = fold(*n)) return *folded;
    return n->outputs();
  } catch (const Error& e) {
    fail_node(e.what());
  }
}

// A node whose inputs are all constants, or whose result is a shape made of known numbers,
// becomes constants right away: TF graphs compute permutations, axes and Reshape targets
// (Keras's Tensordot) from Shape, Range and ConcatV2, and the lowerings that need them known
// see the numbers. Large results stay computed (as fold_constants keeps them).
std::optional<std::vector<ir::Value*>> TfLowering::fold(ir::Node& n) {
  constexpr int64_t kMaxFoldBytes = 1 << 16;
  bool constant = true;
  for (const ir::Value* v : n.inputs()) constant = constant && (!v || v->is_constant());
  int64_t bytes = 0;
  for (const ir::Value* v : n.outputs()) {
    if (!v->has_type() || !v->shape().is_static()) return std::nullopt;
    bytes += v->shape().numel() * static_cast<int64_t>(ir::dtype_size(v->dtype()));
  }
  if (bytes > kMaxFoldBytes) return std::nullopt;
  std::vector<ir::Tensor> results;
  if (constant) {
    std::vector<const ir::Tensor*> in;
    for (const ir::Value* v : n.inputs()) in.push_back(v ? &v->constant() : nullptr);
    results = ir::eval_node(n, in);
  } else if (n.num_outputs() == 1 && n.output(0)->shape_value()) {
    std::vector<int64_t> values;
    for (const ir::Dim& d : *n.output(0)->shape_value()) {
      if (!d.is_static()) return std::nullopt;
      values.push_back(d.value());
    }
    if (static_cast<int64_t>(values.size()) != n.output(0)->shape().numel()) return std::nullopt;
    results.push_back(ir::Tensor::from_vector<int64_t>(n.output(0)->dtype(), n.output(0)->shape().values(), values));
  } else {
    return std::nullopt;
  }
  // The node stays, unread, for eliminate_dead_code: removing nodes mid-import would also drop
  // the values made for nodes not lowered yet.
  std::vector<ir::Value*> out;
  for (size_t k = 0; k < results.size(); ++k) out.push_back(graph_.add_constant(n.output(k)->name() + "_c", std::move(results[k])));
  return out;
}

ir::Value* TfLowering::node(const std::string& op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs) {
  return nodes(op, std::move(inputs), 1, std::move(attrs))[0];
}

ir::Value* TfLowering::constant(ir::Tensor t) { return graph_.add_constant(fmt::format("{}_c{}", base_, part_++), std::move(t)); }

ir::Value* TfLowering::i64s(const std::vector<int64_t>& v) {
  return constant(ir::Tensor::from_vector<int64_t>(ir::DType::I64, {static_cast<int64_t>(v.size())}, v));
}

ir::Value* TfLowering::scalar(double v, ir::DType dt) { return constant(ir::Tensor::from_vector<double>(dt, {}, {v})); }

ir::Value* TfLowering::reshape(ir::Value* v, const std::vector<int64_t>& d) {
  if (v->has_type() && v->shape().is_static() && v->shape().values() == d) return v;
  return node("Reshape", {v, i64s(d)});
}

ir::Value* TfLowering::transpose(ir::Value* v, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
  if (identity) return v;
  return node("Transpose", {v}, {{"perm", perm}});
}

ir::Value* TfLowering::cast(ir::Value* v, ir::DType dt) {
  if (v->dtype() == dt) return v;
  return node("Cast", {v}, {{"to", static_cast<int64_t>(dt)}});
}

ir::Value* TfLowering::to_channels_first(ir::Value* v) {
  const int64_t r = static_cast<int64_t>(rank(v));
  std::vector<int64_t> perm = {0, r - 1};
  for (int64_t k = 1; k < r - 1; ++k) perm.push_back(k);
  return transpose(v, perm);
}

ir::Value* TfLowering::to_channels_last(ir::Value* v) {
  const int64_t r = static_cast<int64_t>(rank(v));
  std::vector<int64_t> perm = {0};
  for (int64_t k = 2; k < r; ++k) perm.push_back(k);
  perm.push_back(1);
  return transpose(v, perm);
}

const kiln::tf::AttrValue* TfLowering::find_attr(const std::string& key) const {
  auto it = node_->attr().find(key);
  return it == node_->attr().end() ? nullptr : &it->second;
}

bool TfLowering::has_attr(const std::string& key) const { return find_attr(key) != nullptr; }

int64_t TfLowering::attr_int(const std::string& key) const {
  const auto* a = find_attr(key);
  if (!a) fail_node(fmt::format("missing attribute '{}'", key));
  if (a->value_case() != kiln::tf::AttrValue::kI) fail_node(fmt::format("attribute '{}' is not an integer", key));
  return a->i();
}

int64_t TfLowering::attr_int(const std::string& key, int64_t fallback) const { return has_attr(key) ? attr_int(key) : fallback; }

float TfLowering::attr_float(const std::string& key, float fallback) const {
  const auto* a = find_attr(key);
  if (!a) return fallback;
  if (a->value_case() != kiln::tf::AttrValue::kF) fail_node(fmt::format("attribute '{}' is not a float", key));
  return a->f();
}

bool TfLowering::attr_bool(const std::string& key, bool fallback) const {
  const auto* a = find_attr(key);
  if (!a) return fallback;
  if (a->value_case() != kiln::tf::AttrValue::kB) fail_node(fmt::format("attribute '{}' is not a bool", key));
  return a->b();
}

std::string TfLowering::attr_string(const std::string& key, const std::string& fallback) const {
  const auto* a = find_attr(key);
  if (!a) return fallback;
  if (a->value_case() != kiln::tf::AttrValue::kS) fail_node(fmt::format("attribute '{}' is not a string", key));
  return a->s();
}

std::vector<int64_t> TfLowering::attr_ints(const std::string& key) const {
  const auto* a = find_attr(key);
  if (!a) return {};
  if (a->value_case() != kiln::tf::AttrValue::kList) fail_node(fmt::format("attribute '{}' is not a list", key));
  return {a->list().i().begin(), a->list().i().end()};
}

ir::DType TfLowering::attr_dtype(const std::string& key) const {
  const auto* a = find_attr(key);
  if (!a) fail_node(fmt::format("missing attribute '{}'", key));
  if (a->value_case() != kiln::tf::AttrValue::kType) fail_node(fmt::format("attribute '{}' is not a type", key));
  auto dt = tf_dtype(a->type());
  if (!dt) fail_node(fmt::format("attribute '{}': {} is not supported", key, tf_dtype_name(a->type())));
  return *dt;
}

std::vector<int64_t> TfLowering::const_ints(const ir::Value* v, const std::string& what) const {
  const ir::Tensor* t = constant_of(v);
  if (!t) fail_node(fmt::format("{} ('{}') must be known at compile time", what, v->name()));
  if (ir::is_float(t->dtype())) fail_node(fmt::format("{} ('{}') must be integers", what, v->name()));
  return t->to_int64_vector();
}

std::vector<int64_t> TfLowering::dims(const ir::Value* v) const {
  if (!v->has_type() || !v->shape().is_static()) fail_node(fmt::format("'{}' has no static shape", v->name()));
  return v->shape().values();
}

size_t TfLowering::rank(const ir::Value* v) const {
  if (!v->has_type()) fail_node(fmt::format("'{}' has no known rank", v->name()));
  return v->shape().rank();
}

}  // namespace kiln::frontend::tensorflow
