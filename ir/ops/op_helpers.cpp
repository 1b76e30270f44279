#include "ir/ops/op_helpers.h"

#include <algorithm>

namespace kiln::ir {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim da = i < rank - a.rank() ? Dim(1) : a[i - (rank - a.rank())];
    Dim db = i < rank - b.rank() ? Dim(1) : b[i - (rank - b.rank())];
    if (da == Dim(1))
      out[i] = db;
    else if (db == Dim(1) || da == db)
      out[i] = da;
    else if (!da.is_static() && db.is_static())
      out[i] = db;  // a symbolic dim must then equal b's
    else if (da.is_static() && !db.is_static())
      out[i] = da;
    else if (!da.is_static() && !db.is_static())
      out[i] = Dim::unknown();
    else
      fail("shapes {} and {} cannot be broadcast", a.str(), b.str());
  }
  return Shape(std::move(out));
}

std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return broadcast_shapes(Shape::of(a), Shape::of(b)).values();
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> strides(out_dims.size(), 0);
  std::vector<int64_t> in_strides = contiguous_strides(in_dims);
  size_t offset = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i)
    strides[offset + i] = in_dims[i] == 1 ? 0 : in_strides[i];
  return strides;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::vector<int64_t> axes_attr_or_all(const Node& node, int64_t rank) {
  std::vector<int64_t> axes;
  if (!node.has_attr("axes")) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    return axes;
  }
  for (int64_t a : node.ints("axes")) {
    const int64_t n = require_axis(node, a, rank);
    if (std::find(axes.begin(), axes.end(), n) != axes.end())
      fail("{}: axes {} repeats axis {}", node.describe(), ints_str(node.ints("axes")), a);
    axes.push_back(n);
  }
  return axes;
}

std::vector<float> values_f32(const Tensor* t) {
  if (!t) return {};
  std::vector<float> v(static_cast<size_t>(t->numel()));
  visit_dtype(t->dtype(), [&]<class S>() {
    const S* p = t->data<S>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<compute_t<S>>(p[i]));
  });
  return v;
}

Tensor tensor_from_f32(DType dtype, std::vector<int64_t> dims, const std::vector<float>& v) {
  Tensor t(dtype, std::move(dims));
  visit_dtype(dtype, [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) {
      S* p = t.mutable_data<S>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = S(static_cast<compute_t<S>>(v[i]));
    } else {
      fail("{} is not supported", dtype_name(dtype));
    }
  });
  return t;
}

void require_dtype(const Node& node, size_t input, std::initializer_list<DType> allowed) {
  DType t = node.input(input)->dtype();
  for (DType a : allowed)
    if (a == t) return;
  std::string names;
  for (DType a : allowed) names += fmt::format("{}{}", names.empty() ? "" : ", ", dtype_name(a));
  fail("{}: input '{}' is {}, op supports {}", node.describe(), node.input(input)->name(),
       dtype_name(t), names);
}

void require_float(const Node& node, size_t input) {
  require_dtype(node, input, {DType::F32, DType::F64, DType::F16, DType::BF16});
}

void require_same_dtype(const Node& node, size_t a, size_t b) {
  if (node.input(a)->dtype() != node.input(b)->dtype())
    fail("{}: inputs '{}' ({}) and '{}' ({}) must have the same dtype", node.describe(),
         node.input(a)->name(), dtype_name(node.input(a)->dtype()), node.input(b)->name(),
         dtype_name(node.input(b)->dtype()));
}

const Tensor& require_constant(const Node& node, size_t input) {
  const Value* v = node.input(input);
  if (!v || !v->is_constant())
    fail("{}: input {} ('{}') must be known at compile time", node.describe(), input,
         v ? v->name() : std::string("<missing>"));
  return v->constant();
}

int64_t require_axis(const Node& node, int64_t axis, int64_t rank) {
  std::optional<int64_t> a = normalize_axis(axis, rank);
  if (!a) fail("{}: axis {} is out of range for rank {}", node.describe(), axis, rank);
  return *a;
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{}", i ? "," : "", v[i]);
  return s + "]";
}

double io_bytes(const Node& node) {
  double bytes = 0;
  for (const Value* v : node.inputs())
    if (v && v->has_type() && v->shape().is_static())
      bytes += static_cast<double>(v->shape().numel()) * dtype_size(v->dtype());
  for (const Value* v : node.outputs())
    if (v->has_type() && v->shape().is_static())
      bytes += static_cast<double>(v->shape().numel()) * dtype_size(v->dtype());
  return bytes;
}

std::vector<std::string> numbered_names(const std::string& base, int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(fmt::format("{}_{}", base, i));
  return names;
}

}  // namespace kiln::ir
