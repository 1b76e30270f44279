// Ops whose results follow from shapes and a few scalars: ConstantOfShape, Range, Size,
// EyeLike, Trilu. Every dtype the ops allow.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/ops/op_helpers.h"
#include "ir/shape_values.h"

namespace kiln::ir {
namespace {

// ---- ConstantOfShape -----------------------------------------------------------------------

Tensor fill_value(const Node& node) {
  if (!node.has_attr("value")) return Tensor::from_vector<float>(DType::F32, {1}, {0.0f});
  const Tensor& t = node.attr("value").t();
  if (!t.defined() || t.numel() != 1)
    fail("{}: value must be a tensor of one element", node.describe());
  return t;
}

std::vector<int64_t> shape_values(const Node& node, const Tensor& t) {
  std::vector<int64_t> dims = t.to_int64_vector();
  for (int64_t d : dims)
    if (d < 0) fail("{}: shape {} has a negative dim", node.describe(), ints_str(dims));
  return dims;
}

void infer_constant_of_shape(Node& node) {
  require_dtype(node, 0, {DType::I64});
  const Value* s = node.input(0);
  if (s->shape().rank() != 1)
    fail("{}: shape must be 1-D, got {}", node.describe(), s->shape().str());
  DType dtype = fill_value(node).dtype();
  if (s->is_constant()) {
    node.output(0)->set_type(dtype, Shape::of(shape_values(node, s->constant())));
  } else {
    if (!s->shape()[0].is_static()) fail("{}: the shape input's length is unknown", node.describe());
    node.output(0)->set_type(dtype, Shape(std::vector<Dim>(s->shape()[0].value(), Dim::unknown())));
  }
}

void eval_constant_of_shape(const Node& node, std::span<const Tensor* const> in,
                            std::vector<Tensor>& out) {
  Tensor v = fill_value(node);
  out[0] = Tensor(v.dtype(), shape_values(node, *in[0]));
  const size_t es = dtype_size(v.dtype());
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for (int64_t i = 0; i < out[0].numel(); ++i) std::memcpy(dst + i * es, v.raw(), es);
}

// ---- Range ---------------------------------------------------------------------------------

int64_t range_length(const Node& node, double start, double limit, double delta) {
  if (delta == 0) fail("{}: delta is 0", node.describe());
  double n = std::ceil((limit - start) / delta);
  if (!(n < 1e12)) fail("{}: range of {} elements is too large", node.describe(), n);
  return std::max<int64_t>(static_cast<int64_t>(n), 0);
}

void infer_range(Node& node) {
  require_dtype(node, 0, {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I16, DType::I32,
                          DType::I64});
  require_same_dtype(node, 0, 1);
  require_same_dtype(node, 0, 2);
  for (size_t i = 0; i < 3; ++i)
    if (node.input(i)->shape().rank() != 0 && node.input(i)->shape().numel() != 1)
      fail("{}: input '{}' must be a scalar", node.describe(), node.input(i)->name());
  Dim n = Dim::unknown();
  if (node.input(0)->is_constant() && node.input(1)->is_constant() && node.input(2)->is_constant())
    n = Dim(range_length(node, node.input(0)->constant().as_double(0),
                         node.input(1)->constant().as_double(0),
                         node.input(2)->constant().as_double(0)));
  // Range(0, seq, 1) and the like over a symbolic limit (--dim seq=MIN..MAX): its length is
  // limit / delta where that division is exact.
  std::optional<std::vector<Dim>> limit = shape_value_of(node.input(1));
  if (n.is_unknown() && !is_float(node.input(0)->dtype()) && node.input(0)->is_constant() &&
      node.input(2)->is_constant() && limit && limit->size() == 1) {
    const int64_t start = node.input(0)->constant().as_int64(0), delta = node.input(2)->constant().as_int64(0);
    if (start == 0 && delta > 0) n = (*limit)[0].exact_div(Dim(delta)).value_or(Dim::unknown());
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape({n}));
}

void eval_range(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const DType t = in[0]->dtype();
  const double start = in[0]->as_double(0), delta = in[2]->as_double(0);
  const int64_t n = range_length(node, start, in[1]->as_double(0), delta);
  std::vector<double> v;
  if (is_float(t)) {
    for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<double>(i) * delta);
  } else {
    const int64_t s = in[0]->as_int64(0), d = in[2]->as_int64(0);
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(s + i * d));
  }
  out[0] = Tensor::from_vector<double>(t, {n}, v);
}

// ---- Size ----------------------------------------------------------------------------------

std::optional<std::vector<Tensor>> fold_size(const Node& node) {
  const Shape& s = node.input(0)->shape();
  if (!s.is_static()) return std::nullopt;
  return std::vector<Tensor>{Tensor::scalar_i64(s.numel())};
}

// ---- EyeLike and Trilu ---------------------------------------------------------------------

DType eye_dtype(const Node& node) {
  if (!node.has_attr("dtype")) return node.input(0)->dtype();
  std::optional<DType> t = dtype_from_code(static_cast<int>(node.i("dtype")));
  if (!t) fail("{}: dtype {} is not supported", node.describe(), node.i("dtype"));
  return *t;
}

Tensor eye(DType dtype, const std::vector<int64_t>& dims, int64_t k) {
  std::vector<double> v(static_cast<size_t>(dims[0] * dims[1]), 0.0);
  for (int64_t i = 0; i < dims[0]; ++i)
    if (i + k >= 0 && i + k < dims[1]) v[static_cast<size_t>(i * dims[1] + i + k)] = 1.0;
  return Tensor::from_vector<double>(dtype, dims, v);
}

void infer_eye_like(Node& node) {
  const Shape& s = node.input(0)->shape();
  if (s.rank() != 2) fail("{}: input must be 2-D, got {}", node.describe(), s.str());
  node.output(0)->set_type(eye_dtype(node), s);
}

std::optional<std::vector<Tensor>> fold_eye_like(const Node& node) {
  const Shape& s = node.input(0)->shape();
  if (!s.is_static()) return std::nullopt;
  return std::vector<Tensor>{eye(eye_dtype(node), s.values(), node.i("k"))};
}

void infer_trilu(Node& node) {
  const Shape& s = node.input(0)->shape();
  if (s.rank() < 2) fail("{}: input must have rank >= 2, got {}", node.describe(), s.str());
  if (node.has_input(1)) require_dtype(node, 1, {DType::I64});
  node.output(0)->set_type(node.input(0)->dtype(), s);
}

void eval_trilu(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t k = optional_input(in, 1) ? in[1]->as_int64(0) : 0;
  const bool upper = node.i("upper") != 0;
  const int64_t rows = x.dims()[x.dims().size() - 2], cols = x.dims().back();
  out[0] = Tensor(x.dtype(), x.dims());  // zero-filled
  const size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    if (upper ? c - r >= k : c - r <= k) std::memcpy(dst + i * es, src + i * es, es);
  }
}

}  // namespace

void register_generate_ops(Registry& r) {
  r.add(OpDef{
      .name = "ConstantOfShape",
      .summary = "a tensor of the given shape filled with value (default f32 0)",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"value", AttrType::Tensor, std::nullopt, true}},
      .infer = infer_constant_of_shape,
      .eval = eval_constant_of_shape,
  });
  r.add(OpDef{
      .name = "Range",
      .summary = "start, start + delta, ... up to limit (exclusive)",
      .inputs = {{"start"}, {"limit"}, {"delta"}},
      .outputs = {"output"},
      .infer = infer_range,
      .eval = eval_range,
  });
  r.add(OpDef{
      .name = "Size",
      .summary = "the input's number of elements as an i64 scalar",
      .inputs = {{"data"}},
      .outputs = {"size"},
      .infer = [](Node& n) { n.output(0)->set_type(DType::I64, Shape{}); },
      .eval = [](const Node&, std::span<const Tensor* const> in,
                 std::vector<Tensor>& out) { out[0] = Tensor::scalar_i64(in[0]->numel()); },
      .fold = fold_size,
  });
  r.add(OpDef{
      .name = "EyeLike",
      .summary = "ones on diagonal k of a 2-D tensor shaped like the input, zeros elsewhere",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"dtype", AttrType::Int, std::nullopt, true},
                {"k", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_eye_like,
      .eval = [](const Node& n, std::span<const Tensor* const> in,
                 std::vector<Tensor>& out) { out[0] = eye(eye_dtype(n), in[0]->dims(), n.i("k")); },
      .fold = fold_eye_like,
  });
  r.add(OpDef{
      .name = "Trilu",
      .summary = "keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last 2 dims",
      .inputs = {{"input"}, {"k", true}},
      .outputs = {"output"},
      .attrs = {{"upper", AttrType::Int, Attribute(int64_t{1})}},
      .infer = infer_trilu,
      .eval = eval_trilu,
  });
}

}  // namespace kiln::ir
