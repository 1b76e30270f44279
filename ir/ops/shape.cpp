// Ops that only look at or change shapes: Shape, Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Constant. None of them moves data (their results share the input's buffer).
#include <algorithm>

#include "ir/ops/op_helpers.h"
#include "ir/shape_values.h"

namespace kiln::ir {
namespace {

// a * b, failing instead of overflowing (dims in a model are untrusted).
int64_t checked_mul(const Node& node, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail("{}: shape is too large", node.describe());
  return r;
}

// A 1-D int64 input (shape or axes): its constant value, or nullopt if not known. A scalar
// counts as a list of one, as ONNX Runtime and ONNX's own function bodies (AffineGrid's) have it.
std::optional<std::vector<int64_t>> int_list_input(const Node& node, size_t input) {
  const Value* v = node.input(input);
  require_dtype(node, input, {DType::I64});
  if (v->shape().rank() > 1)
    fail("{}: input '{}' must be 1-D, got {}", node.describe(), v->name(), v->shape().str());
  if (v->is_constant()) return v->constant().to_int64_vector();
  // The output of a Constant node (exporters write axes and shapes so) is known before
  // constant folding runs: shape inference at import needs it to know ranks.
  const Node* p = v->producer();
  if (p != nullptr && p->op() == "Constant" && p->has_attr("value")) {
    const Tensor& t = p->attr("value").t();
    if (t.defined() && t.dtype() == DType::I64 && t.rank() <= 1) return t.to_int64_vector();
  }
  return std::nullopt;
}

// The length of a 1-D input whose values are unknown; fails if that is unknown too.
int64_t int_list_length(const Node& node, size_t input) {
  if (node.input(input)->shape().rank() == 0) return 1;
  const Dim& d = node.input(input)->shape()[0];
  if (!d.is_static())
    fail("{}: input '{}' is neither constant nor of known length, output rank is unknown",
         node.describe(), node.input(input)->name());
  return d.value();
}

Shape unknown_dims(int64_t rank) { return Shape(std::vector<Dim>(rank, Dim::unknown())); }

// Normalizes axes against `rank`, failing on out-of-range and repeated axes.
std::vector<int64_t> normalize_axes(const Node& node, const std::vector<int64_t>& axes,
                                    int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = require_axis(node, a, rank);
    if (std::find(out.begin(), out.end(), n) != out.end())
      fail("{}: axis {} is repeated in {}", node.describe(), a, ints_str(axes));
    out.push_back(n);
  }
  return out;
}

// ---- Shape ---------------------------------------------------------------------------------

// [start, end) of Shape after clamping, as ONNX defines it.
std::pair<int64_t, int64_t> shape_range(const Node& node, int64_t rank) {
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(node.i("start"));
  int64_t end = node.has_attr("end") ? clamp(node.i("end")) : rank;
  return {start, std::max(start, end)};
}

void infer_shape(Node& node) {
  auto [start, end] = shape_range(node, static_cast<int64_t>(node.input(0)->shape().rank()));
  node.output(0)->set_type(DType::I64, Shape{end - start});
}

Tensor shape_tensor(const Node& node, const std::vector<int64_t>& dims) {
  auto [start, end] = shape_range(node, static_cast<int64_t>(dims.size()));
  std::vector<int64_t> v(dims.begin() + start, dims.begin() + end);
  return Tensor::from_vector<int64_t>(DType::I64, {end - start}, v);
}

void eval_shape(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = shape_tensor(node, in[0]->dims());
}

std::optional<std::vector<Tensor>> fold_shape(const Node& node) {
  const Shape& s = node.input(0)->shape();
  auto [start, end] = shape_range(node, static_cast<int64_t>(s.rank()));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (!s[i].is_static()) return std::nullopt;
    dims.push_back(s[i].value());
  }
  return std::vector<Tensor>{Tensor::from_vector<int64_t>(DType::I64, {end - start}, dims)};
}

// ---- Reshape -------------------------------------------------------------------------------

// Reshape's output for input shape `in` and target `shape`: 0 copies the input dim (unless
// allowzero), one -1 is inferred. With symbolic dims, -1 is still inferred when the symbols
// on both sides cancel (x[N,C,H,W] with [0,-1] gives [N, C*H*W]).
Shape reshape_output(const Node& node, const Shape& in, const std::vector<int64_t>& shape) {
  const bool allowzero = node.i("allowzero") != 0;
  std::vector<Dim> out;
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == -1) {
      if (infer_at >= 0)
        fail("{}: shape {} has more than one -1", node.describe(), ints_str(shape));
      infer_at = static_cast<int64_t>(i);
      out.push_back(Dim::unknown());
    } else if (v == 0 && !allowzero) {
      if (i >= in.rank())
        fail("{}: shape {} copies dim {} (a 0) but the input {} has rank {}", node.describe(),
             ints_str(shape), i, in.str(), in.rank());
      out.push_back(in[i]);
    } else if (v < 0) {
      fail("{}: shape {} has invalid dim {}", node.describe(), ints_str(shape), v);
    } else {
      has_zero = has_zero || v == 0;
      out.push_back(Dim(v));
    }
  }
  if (allowzero && has_zero && infer_at >= 0)
    fail("{}: shape {} has both 0 and -1 with allowzero", node.describe(), ints_str(shape));

  // Cancel named symbols that appear on both sides, multiply the static dims.
  int64_t in_static = 1, out_static = 1;
  std::vector<std::string> in_symbols;
  bool resolvable = true;
  for (const Dim& d : in.dims()) {
    if (d.is_static())
      in_static = checked_mul(node, in_static, d.value());
    else if (d.name().empty())
      resolvable = false;
    else
      in_symbols.push_back(d.name());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int64_t>(i) == infer_at) continue;
    const Dim& d = out[i];
    if (d.is_static()) {
      out_static = checked_mul(node, out_static, d.value());
      continue;
    }
    auto it = d.name().empty() ? in_symbols.end()
                               : std::find(in_symbols.begin(), in_symbols.end(), d.name());
    if (it == in_symbols.end())
      resolvable = false;
    else
      in_symbols.erase(it);
  }
  if (!resolvable || !in_symbols.empty()) return Shape(std::move(out));
  if (infer_at >= 0) {
    if (out_static == 0)
      fail("{}: cannot infer the -1 in shape {} with a zero dim", node.describe(), ints_str(shape));
    if (in_static % out_static != 0)
      fail("{}: cannot reshape input {} to {}", node.describe(), in.str(), ints_str(shape));
    out[infer_at] = Dim(in_static / out_static);
  } else if (in_static != out_static) {
    fail("{}: cannot reshape input {} ({} elements) to {} ({} elements)", node.describe(), in.str(),
         in_static, ints_str(shape), out_static);
  }
  return Shape(std::move(out));
}

void infer_reshape(Node& node) {
  std::optional<std::vector<int64_t>> shape = int_list_input(node, 1);
  std::optional<std::vector<Dim>> target = shape ? std::nullopt : shape_value_of(node.input(1));
  Shape out = shape    ? reshape_output(node, node.input(0)->shape(), *shape)
              : target ? Shape(reshape_dims(node, node.input(0)->shape(), *target))
                       : unknown_dims(int_list_length(node, 1));
  // A constant target whose -1 stands for symbolic dims ([batch,8,16] to [-1,8,2,8]): the -1 is
  // the input's element count divided by the rest, where that divides exactly (batch).
  if (shape && !out.is_known() && node.input(0)->shape().is_known()) {
    std::vector<Dim> dims;
    for (int64_t d : *shape) dims.push_back(d == -1 ? Dim::unknown() : Dim(d));
    out = Shape(reshape_dims(node, node.input(0)->shape(), dims));
  }
  node.output(0)->set_type(node.input(0)->dtype(), std::move(out));
}

void eval_reshape(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  Shape s = reshape_output(node, in[0]->shape(), in[1]->to_int64_vector());
  out[0] = in[0]->reshaped(s.values());
}

// ---- Flatten -------------------------------------------------------------------------------

// The product of dims [begin, end): static if all are, the dim itself if there is one.
Dim dims_product(const Node& node, const Shape& s, size_t begin, size_t end) {
  if (end - begin == 1) return s[begin];
  int64_t p = 1;
  bool symbolic = false;
  for (size_t i = begin; i < end; ++i) {
    if (!s[i].is_static()) {
      symbolic = true;
      continue;
    }
    p = checked_mul(node, p, s[i].value());
  }
  if (!symbolic) return Dim(p);
  Dim d(p);  // a polynomial of the symbols (unknown where one is, or where it overflows)
  for (size_t i = begin; i < end; ++i)
    if (!s[i].is_static()) d = d * s[i];
  return d;
}

Shape flatten_output(const Node& node, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.rank());
  int64_t axis = node.i("axis");
  if (axis < -rank || axis > rank)
    fail("{}: axis {} is out of range [{}, {}] for input {}", node.describe(), axis, -rank, rank,
         in.str());
  if (axis < 0) axis += rank;
  return Shape(std::vector<Dim>{dims_product(node, in, 0, static_cast<size_t>(axis)),
                                dims_product(node, in, static_cast<size_t>(axis), in.rank())});
}

void infer_flatten(Node& node) {
  node.output(0)->set_type(node.input(0)->dtype(), flatten_output(node, node.input(0)->shape()));
}

void eval_flatten(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = in[0]->reshaped(flatten_output(node, in[0]->shape()).values());
}

// ---- Squeeze and Unsqueeze -----------------------------------------------------------------

// Squeeze's output; `axes` absent removes every dim of size 1.
Shape squeeze_output(const Node& node, const Shape& in, const std::vector<int64_t>* axes) {
  std::vector<int64_t> drop;
  if (axes) {
    drop = normalize_axes(node, *axes, static_cast<int64_t>(in.rank()));
    for (int64_t a : drop)
      if (in[a].is_static() && in[a].value() != 1)
        fail("{}: cannot squeeze axis {} of size {} in {}", node.describe(), a, in[a].value(),
             in.str());
  } else {
    for (size_t i = 0; i < in.rank(); ++i) {
      if (!in[i].is_static())
        fail("{}: squeezing all size-1 dims of {} needs static dims (give axes)", node.describe(),
             in.str());
      if (in[i].value() == 1) drop.push_back(static_cast<int64_t>(i));
    }
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < in.rank(); ++i)
    if (std::find(drop.begin(), drop.end(), static_cast<int64_t>(i)) == drop.end())
      out.push_back(in[i]);
  return Shape(std::move(out));
}

void infer_squeeze(Node& node) {
  const Shape& in = node.input(0)->shape();
  Shape out;
  if (!node.has_input(1)) {
    out = squeeze_output(node, in, nullptr);
  } else if (std::optional<std::vector<int64_t>> axes = int_list_input(node, 1)) {
    out = squeeze_output(node, in, &*axes);
  } else {
    int64_t n = int_list_length(node, 1);
    if (n > static_cast<int64_t>(in.rank()))
      fail("{}: {} axes for input {}", node.describe(), n, in.str());
    out = unknown_dims(static_cast<int64_t>(in.rank()) - n);
  }
  node.output(0)->set_type(node.input(0)->dtype(), std::move(out));
}

void eval_squeeze(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor* axes_t = optional_input(in, 1);
  std::vector<int64_t> axes = axes_t ? axes_t->to_int64_vector() : std::vector<int64_t>{};
  Shape s = squeeze_output(node, in[0]->shape(), axes_t ? &axes : nullptr);
  out[0] = in[0]->reshaped(s.values());
}

// Unsqueeze's output: axes index the output, whose rank is input rank + number of axes.
Shape unsqueeze_output(const Node& node, const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.rank() + axes.size());
  std::vector<int64_t> insert = normalize_axes(node, axes, rank);
  std::vector<Dim> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(std::find(insert.begin(), insert.end(), i) != insert.end() ? Dim(1) : in[next++]);
  return Shape(std::move(out));
}

void infer_unsqueeze(Node& node) {
  const Shape& in = node.input(0)->shape();
  std::optional<std::vector<int64_t>> axes = int_list_input(node, 1);
  Shape out = axes ? unsqueeze_output(node, in, *axes)
                   : unknown_dims(static_cast<int64_t>(in.rank()) + int_list_length(node, 1));
  node.output(0)->set_type(node.input(0)->dtype(), std::move(out));
}

void eval_unsqueeze(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  Shape s = unsqueeze_output(node, in[0]->shape(), in[1]->to_int64_vector());
  out[0] = in[0]->reshaped(s.values());
}

// ---- Identity and Constant -----------------------------------------------------------------

const Tensor& constant_value(const Node& node) {
  const Tensor& t = node.attr("value").t();
  if (!t.defined()) fail("{}: attribute 'value' holds no tensor", node.describe());
  return t;
}

}  // namespace

void register_shape_ops(Registry& r) {
  r.add(OpDef{
      .name = "Shape",
      .summary = "the input's dims [start, end) as a 1-D i64 tensor",
      .inputs = {{"data"}},
      .outputs = {"shape"},
      .attrs = {{"end", AttrType::Int, std::nullopt, true},
                {"start", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_shape,
      .eval = eval_shape,
      .fold = fold_shape,
  });
  r.add(OpDef{
      .name = "Reshape",
      .summary = "same data, new dims: 0 copies the input dim (unless allowzero), -1 is inferred",
      .inputs = {{"data"}, {"shape"}},
      .outputs = {"reshaped"},
      .attrs = {{"allowzero", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_reshape,
      .eval = eval_reshape,
  });
  r.add(OpDef{
      .name = "Flatten",
      .summary = "2-D view: dims before axis times dims from axis on",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{1})}},
      .infer = infer_flatten,
      .eval = eval_flatten,
  });
  r.add(OpDef{
      .name = "Squeeze",
      .summary = "removes size-1 dims: those in axes, or all of them",
      .inputs = {{"data"}, {"axes", true}},
      .outputs = {"squeezed"},
      .infer = infer_squeeze,
      .eval = eval_squeeze,
  });
  r.add(OpDef{
      .name = "Unsqueeze",
      .summary = "inserts size-1 dims at axes of the output",
      .inputs = {{"data"}, {"axes"}},
      .outputs = {"expanded"},
      .infer = infer_unsqueeze,
      .eval = eval_unsqueeze,
  });
  r.add(OpDef{
      .name = "Identity",
      .summary = "the input, unchanged",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .infer = [](Node& n) { n.output(0)->set_type(n.input(0)->dtype(), n.input(0)->shape()); },
      .eval = [](const Node&, std::span<const Tensor* const> in,
                 std::vector<Tensor>& out) { out[0] = *in[0]; },
      .elementwise = true,
  });
  r.add(OpDef{
      .name = "Constant",
      .summary = "the tensor in attribute value (frontends normalize every value_* form to it)",
      .inputs = {},
      .outputs = {"output"},
      .attrs = {{"value", AttrType::Tensor}},
      .infer =
          [](Node& n) {
            const Tensor& t = constant_value(n);
            n.output(0)->set_type(t.dtype(), t.shape());
          },
      .eval = [](const Node& n, std::span<const Tensor* const>,
                 std::vector<Tensor>& out) { out[0] = constant_value(n); },
      .fold = [](const Node& n) -> std::optional<std::vector<Tensor>> {
        return std::vector<Tensor>{constant_value(n)};
      },
  });
}

}  // namespace kiln::ir
