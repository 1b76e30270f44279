#include "ir/shape_values.h"

#include <algorithm>

#include "ir/error.h"

namespace kiln::ir {

namespace {

// Longer lists are data, not shapes.
constexpr int64_t kMaxShapeValueElements = 64;

// A constant's integers, or those of a Constant node's output before constant folding has
// made it a constant value (ONNX graphs give Slice's starts and ends that way).
std::optional<std::vector<int64_t>> constant_ints(const Value* v) {
  if (!v) return std::nullopt;
  const Tensor* t = v->is_constant() ? &v->constant() : nullptr;
  if (!t) {
    const Node* p = v->producer();
    if (!p || p->op() != "Constant" || !p->has_attr("value")) return std::nullopt;
    t = &p->attr("value").t();
    if (!t->defined()) return std::nullopt;
  }
  if ((t->dtype() != DType::I64 && t->dtype() != DType::I32) || t->rank() > 1 || t->numel() > kMaxShapeValueElements)
    return std::nullopt;
  return t->to_int64_vector();
}

// Element i of a list broadcast from length 1.
const Dim& element(const std::vector<Dim>& d, size_t i) { return d.size() == 1 ? d[0] : d[i]; }

std::optional<std::vector<Dim>> arithmetic(const Node& node) {
  std::optional<std::vector<Dim>> a = shape_value_of(node.input(0)), b = shape_value_of(node.input(1));
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return std::nullopt;
  std::vector<Dim> out;
  const size_t n = std::max(a->size(), b->size());
  for (size_t i = 0; i < n; ++i) {
    const Dim &x = element(*a, i), &y = element(*b, i);
    if (node.op() == "Add") out.push_back(x + y);
    else if (node.op() == "Sub") out.push_back(x - y);
    else if (node.op() == "Mul") out.push_back(x * y);
    else out.push_back(x.exact_div(y).value_or(Dim::unknown()));
  }
  return out;
}

std::optional<std::vector<Dim>> computed(const Node& node) {
  const std::string& op = node.op();
  const Value* out = node.output(0);
  if (!out->has_type() || (out->dtype() != DType::I64 && out->dtype() != DType::I32) || out->shape().rank() > 1)
    return std::nullopt;
  if (op == "Shape") {
    const Shape& s = node.input(0)->shape();
    const int64_t rank = static_cast<int64_t>(s.rank());
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(node.i("start")), end = node.has_attr("end") ? clamp(node.i("end")) : rank;
    if (end - start > kMaxShapeValueElements) return std::nullopt;
    return std::vector<Dim>(s.dims().begin() + start, s.dims().begin() + std::max(start, end));
  }
  if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" ||
      op == "Cast")
    return shape_value_of(node.input(0));
  if (op == "Gather") {
    std::optional<std::vector<Dim>> data = shape_value_of(node.input(0));
    std::optional<std::vector<int64_t>> idx = constant_ints(node.input(1));
    if (!data || !idx || node.i("axis") != 0) return std::nullopt;
    std::vector<Dim> r;
    const int64_t n = static_cast<int64_t>(data->size());
    for (int64_t i : *idx) {
      if (i < -n || i >= n) return std::nullopt;
      r.push_back((*data)[static_cast<size_t>(i < 0 ? i + n : i)]);
    }
    return r;
  }
  if (op == "Concat") {
    std::vector<Dim> r;
    for (const Value* in : node.inputs()) {
      std::optional<std::vector<Dim>> d = shape_value_of(in);
      if (!d) return std::nullopt;
      r.insert(r.end(), d->begin(), d->end());
    }
    return r;
  }
  if (op == "Slice") {
    std::optional<std::vector<Dim>> data = shape_value_of(node.input(0));
    std::optional<std::vector<int64_t>> starts = constant_ints(node.input(1)), ends = constant_ints(node.input(2));
    if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (node.has_input(3)) {
      std::optional<std::vector<int64_t>> axes = constant_ints(node.input(3));
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
    }
    if (node.has_input(4)) {
      std::optional<std::vector<int64_t>> steps = constant_ints(node.input(4));
      if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
    }
    const int64_t n = static_cast<int64_t>(data->size());
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    const int64_t s = clamp((*starts)[0]), e = clamp((*ends)[0]);
    return std::vector<Dim>(data->begin() + s, data->begin() + std::max(s, e));
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return arithmetic(node);
  if (op == "ReduceProd") {  // the element count of some dims (TensorFlow's Tensordot reshapes by it)
    std::optional<std::vector<Dim>> data = shape_value_of(node.input(0));
    if (!data) return std::nullopt;
    if (node.has_input(1)) {
      std::optional<std::vector<int64_t>> axes = constant_ints(node.input(1));
      if (!axes || (!axes->empty() && (axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)))) return std::nullopt;
    }
    Dim product(1);
    for (const Dim& d : *data) product = product * d;
    return std::vector<Dim>{product};
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<Dim>> shape_value_of(const Value* v) {
  if (!v) return std::nullopt;
  if (v->shape_value()) return v->shape_value();
  std::optional<std::vector<int64_t>> c = constant_ints(v);
  if (!c) return std::nullopt;
  std::vector<Dim> dims;
  for (int64_t x : *c) dims.push_back(x >= 0 ? Dim(x) : Dim::unknown());
  return dims;
}

void propagate_shape_value(Node& node) {
  if (node.num_outputs() != 1) return;
  std::optional<std::vector<Dim>> v = computed(node);
  // Only worth keeping where a symbol is involved: all-static values fold to constants.
  node.output(0)->set_shape_value(std::move(v));
}

std::vector<Dim> reshape_dims(const Node& node, const Shape& in, const std::vector<Dim>& target) {
  const bool allowzero = node.i("allowzero") != 0;
  std::vector<Dim> out;
  int64_t infer_at = -1;
  bool unresolved = false;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& d = target[i];
    if (d.is_static() && d.value() == 0 && !allowzero) {
      if (i >= in.rank())
        fail("{}: shape element {} copies dim {} (a 0) but the input {} has rank {}", node.describe(), i, i,
             in.str(), in.rank());
      out.push_back(in[i]);
    } else if (d.is_unknown()) {
      if (infer_at >= 0) unresolved = true;
      infer_at = static_cast<int64_t>(i);
      out.push_back(Dim::unknown());
    } else {
      out.push_back(d);
    }
  }
  if (infer_at >= 0 && !unresolved) {
    Dim known(1);
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int64_t>(i) != infer_at) known = known * out[i];
    if (std::optional<Dim> q = in.product().exact_div(known)) out[static_cast<size_t>(infer_at)] = *q;
  }
  // Where both sides are known the element counts must agree, symbols and all.
  Shape result(out);
  const Dim a = in.product(), b = result.product();
  if (!a.is_unknown() && !b.is_unknown() && a != b)
    fail("{}: cannot reshape input {} to {}", node.describe(), in.str(), result.str());
  return out;
}

}  // namespace kiln::ir
