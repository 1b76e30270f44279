// Ops that copy a rearranged selection of their input: Slice, Split, Pad, Expand, Tile,
// DepthToSpace, SpaceToDepth. Every dtype; elements are copied as bytes. Inputs that decide
// the output's shape (starts, pads, repeats...) must be constants for the shape to be known.
#include "ir/ops/slice_pad.h"

#include <algorithm>
#include <cstring>

#include "ir/shape_values.h"

namespace kiln::ir {
namespace {

// Input i's value: the eval input when evaluating, else its constant; nullptr when omitted or
// not known. `known` is false when the input is present but its value is not known.
const Tensor* input_value(const Node& node, size_t i, std::span<const Tensor* const> in,
                          bool& known) {
  if (!in.empty()) {
    known = true;
    return optional_input(in, i);
  }
  const Value* v = node.input(i);
  known = !v || v->is_constant();
  return v && v->is_constant() ? &v->constant() : nullptr;
}

std::vector<int64_t> int_values(const Node& node, size_t i, const Tensor& t) {
  if (t.dtype() != DType::I64 && t.dtype() != DType::I32)
    fail("{}: input {} is {}, expected i32 or i64", node.describe(), i, dtype_name(t.dtype()));
  if (t.rank() > 1) fail("{}: input {} must be 1-D, got {}", node.describe(), i, t.shape().str());
  return t.to_int64_vector();
}

std::vector<Dim> unknown_dims(size_t rank) { return std::vector<Dim>(rank, Dim::unknown()); }

// Output dims of a view, as a static shape.
Shape shape_of(const std::vector<int64_t>& dims) { return Shape::of(dims); }

void require_static(const Node& node, size_t i) {
  if (!node.input(i)->shape().is_static())
    fail("{}: input '{}' has shape {}; its dims must be known", node.describe(),
         node.input(i)->name(), node.input(i)->shape().str());
}

// ---- Slice ---------------------------------------------------------------------------------

void infer_slice(Node& node) {
  for (size_t i = 1; i < 5; ++i)
    if (node.has_input(i)) require_dtype(node, i, {DType::I32, DType::I64});
  const Shape& s = node.input(0)->shape();
  std::optional<StridedView> v = s.is_static() ? slice_view(node, s.values()) : std::nullopt;
  if (!v && s.is_known()) {
    // Symbolic dims (--dim NAME=MIN..MAX): an axis the slice leaves whole keeps its dim, which
    // shows as the same extent out as in for two different stand-in sizes; an axis it cuts
    // must be a number (its clamped bounds are not a polynomial of the symbol).
    auto probe = [&](int64_t big) {
      std::vector<int64_t> dims;
      for (const Dim& d : s.dims()) dims.push_back(d.is_static() ? d.value() : big);
      return slice_view(node, dims);
    };
    constexpr int64_t kProbeA = int64_t{1} << 20, kProbeB = kProbeA + 7;
    std::optional<StridedView> a = probe(kProbeA), b = probe(kProbeB);
    if (a && b) {
      std::vector<Dim> out;
      for (size_t i = 0; i < s.rank(); ++i)
        out.push_back(s[i].is_static() ? Dim(a->dims[i])
                      : a->dims[i] == kProbeA && b->dims[i] == kProbeB ? s[i]
                                                                       : Dim::unknown());
      node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(out)));
      return;
    }
  }
  node.output(0)->set_type(node.input(0)->dtype(),
                           v ? shape_of(v->dims) : Shape(unknown_dims(s.rank())));
}

void eval_slice(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = strided_copy(*in[0], *slice_view(node, in[0]->dims(), in));
}

// ---- Split ---------------------------------------------------------------------------------

void infer_split(Node& node) {
  const Shape& s = node.input(0)->shape();
  if (s.rank() == 0) fail("{}: cannot split a scalar", node.describe());
  const int64_t axis = split_axis(node, static_cast<int64_t>(s.rank()));
  std::optional<std::vector<int64_t>> sizes;
  if (s[axis].is_static()) sizes = split_sizes(node, s[axis].value());
  for (size_t k = 0; k < node.num_outputs(); ++k) {
    std::vector<Dim> d = s.dims();
    d[axis] = sizes ? Dim((*sizes)[k]) : Dim::unknown();
    node.output(k)->set_type(node.input(0)->dtype(), Shape(std::move(d)));
  }
}

void eval_split(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t axis = split_axis(node, x.rank());
  std::vector<int64_t> sizes = *split_sizes(node, x.dims()[axis], in);
  StridedView v{x.dims(), contiguous_strides(x.dims()), 0};
  for (size_t k = 0; k < out.size(); ++k) {
    v.dims[axis] = sizes[k];
    out[k] = strided_copy(x, v);
    v.offset += sizes[k] * v.strides[axis];
  }
}

// ---- Pad -----------------------------------------------------------------------------------

void infer_pad(Node& node) {
  require_dtype(node, 1, {DType::I64});
  if (node.has_input(2)) require_same_dtype(node, 0, 2);
  if (node.has_input(3)) require_dtype(node, 3, {DType::I32, DType::I64});
  const std::string& mode = node.s("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    fail("{}: mode '{}' is not one of constant, reflect, edge, wrap", node.describe(), mode);
  const Shape& s = node.input(0)->shape();
  std::vector<Dim> dims = unknown_dims(s.rank());
  if (s.is_static()) {
    if (auto t = pad_tables(node, s.values()))
      for (size_t d = 0; d < dims.size(); ++d) dims[d] = Dim(static_cast<int64_t>((*t)[d].size()));
  } else if (auto amounts = pad_amounts(node, s.rank())) {
    // Symbolic dims grow by their constant pads (a batch dim that is not padded stays itself).
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t change = amounts->first[d] + amounts->second[d];
      dims[d] = change >= 0 ? s[d] + Dim(change) : s[d] - Dim(-change);
      if (dims[d].is_static() && dims[d].value() < 0)
        fail("{}: pads remove more than dim {} of {} holds", node.describe(), d, s.str());
    }
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

// Copies x through per-dim tables (pad_tables) into out, `fill` where a table says -1.
void copy_through_tables(const Tensor& x, const std::vector<std::vector<int64_t>>& t, const Tensor* fill_value,
                         Tensor& out) {
  std::vector<int64_t> dims;
  for (const auto& table : t) dims.push_back(static_cast<int64_t>(table.size()));
  out = Tensor(x.dtype(), dims);
  if (out.numel() == 0) return;
  const size_t es = dtype_size(x.dtype());
  std::vector<uint8_t> fill(es, 0);
  if (fill_value) std::memcpy(fill.data(), fill_value->raw(), es);
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  std::vector<int64_t> idx(dims.size(), 0);
  do {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t o = t[d][static_cast<size_t>(idx[d])];
      inside = inside && o >= 0;
      offset += o;
    }
    std::memcpy(dst, inside ? src + static_cast<size_t>(offset) * es : fill.data(), es);
    dst += es;
  } while (next_index(idx, dims));
}

void eval_pad(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<std::vector<int64_t>> t = *pad_tables(node, x.dims(), in);
  const Tensor* c = optional_input(in, 2);
  if (c && c->numel() != 1) fail("{}: constant_value must have one element", node.describe());
  copy_through_tables(x, t, c, out[0]);
}

// ---- CenterCropPad -------------------------------------------------------------------------

void infer_center_crop_pad(Node& node) {
  require_dtype(node, 1, {DType::I32, DType::I64});
  const Shape& s = node.input(0)->shape();
  std::optional<std::vector<std::vector<int64_t>>> t =
      s.is_static() ? center_crop_pad_tables(node, s.values()) : std::nullopt;
  std::vector<Dim> dims = s.dims();
  if (t) {
    for (size_t d = 0; d < dims.size(); ++d) dims[d] = Dim(static_cast<int64_t>((*t)[d].size()));
  } else {
    for (int64_t a : axes_attr_or_all(node, static_cast<int64_t>(s.rank()))) dims[a] = Dim::unknown();
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_center_crop_pad(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  copy_through_tables(*in[0], *center_crop_pad_tables(node, in[0]->dims(), in), nullptr, out[0]);
}

// ---- Expand and Tile -----------------------------------------------------------------------

std::optional<std::vector<int64_t>> shape_input(const Node& node, size_t i,
                                                std::span<const Tensor* const> in) {
  bool known;
  const Tensor* t = input_value(node, i, in, known);
  if (!t) return std::nullopt;
  return int_values(node, i, *t);
}

void infer_expand(Node& node) {
  require_dtype(node, 1, {DType::I64});
  std::optional<std::vector<int64_t>> shape = shape_input(node, 1, {});
  const Shape& s = node.input(0)->shape();
  if (!shape) {
    // A shape computed from other shapes (Shape, Gather, Concat) keeps its symbolic dims:
    // TensorFlow's Fill of [batch, units] is one.
    if (std::optional<std::vector<Dim>> dims = shape_value_of(node.input(1))) {
      node.output(0)->set_type(node.input(0)->dtype(), broadcast_shapes(s, Shape(*dims)));
      return;
    }
    const Dim& n = node.input(1)->shape()[0];
    if (!n.is_static()) fail("{}: the shape input's length is unknown", node.describe());
    node.output(0)->set_type(node.input(0)->dtype(),
                             Shape(unknown_dims(std::max<size_t>(s.rank(), n.value()))));
    return;
  }
  node.output(0)->set_type(node.input(0)->dtype(), broadcast_shapes(s, Shape::of(*shape)));
}

void eval_expand(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<int64_t> dims = broadcast_dims(in[0]->dims(), int_values(node, 1, *in[1]));
  out[0] = strided_copy(*in[0], expand_view(in[0]->dims(), dims));
}

std::vector<int64_t> tile_repeats(const Node& node, const std::vector<int64_t>& r, size_t rank) {
  if (r.size() != rank)
    fail("{}: repeats has {} values for an input of rank {}", node.describe(), r.size(), rank);
  for (int64_t v : r)
    if (v < 0) fail("{}: repeats {} has a negative value", node.describe(), ints_str(r));
  return r;
}

void infer_tile(Node& node) {
  require_dtype(node, 1, {DType::I64});
  const Shape& s = node.input(0)->shape();
  std::optional<std::vector<int64_t>> r = shape_input(node, 1, {});
  std::vector<Dim> dims = unknown_dims(s.rank());
  if (r) {
    tile_repeats(node, *r, s.rank());
    for (size_t d = 0; d < dims.size(); ++d)
      if (s[d].is_static()) dims[d] = Dim(s[d].value() * (*r)[d]);
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_tile(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> r = tile_repeats(node, int_values(node, 1, *in[1]), x.dims().size());
  std::vector<int64_t> dims;
  for (size_t d = 0; d < r.size(); ++d) dims.push_back(x.dims()[d] * r[d]);
  out[0] = strided_copy(x, tile_view(x.dims(), r)).reshaped(dims);
}

// ---- DepthToSpace and SpaceToDepth ---------------------------------------------------------

void infer_depth_space(Node& node) {
  require_static(node, 0);
  std::vector<int64_t> x = node.input(0)->shape().values();
  depth_space_view(node, x);  // validates
  const int64_t b = node.i("blocksize");
  std::vector<int64_t> y = node.op() == "DepthToSpace"
                               ? std::vector<int64_t>{x[0], x[1] / (b * b), x[2] * b, x[3] * b}
                               : std::vector<int64_t>{x[0], x[1] * b * b, x[2] / b, x[3] / b};
  node.output(0)->set_type(node.input(0)->dtype(), Shape::of(y));
}

void eval_depth_space(const Node& node, std::span<const Tensor* const> in,
                      std::vector<Tensor>& out) {
  const std::vector<int64_t>& x = in[0]->dims();
  const int64_t b = node.i("blocksize");
  std::vector<int64_t> y = node.op() == "DepthToSpace"
                               ? std::vector<int64_t>{x[0], x[1] / (b * b), x[2] * b, x[3] * b}
                               : std::vector<int64_t>{x[0], x[1] * b * b, x[2] / b, x[3] / b};
  out[0] = strided_copy(*in[0], depth_space_view(node, x)).reshaped(y);
}

}  // namespace

// ---- shared geometry -----------------------------------------------------------------------

Tensor strided_copy(const Tensor& x, const StridedView& v) {
  Tensor y(x.dtype(), v.dims);
  if (y.numel() == 0) return y;
  const size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.mutable_raw());
  std::vector<int64_t> idx(v.dims.size(), 0);
  do {
    int64_t offset = v.offset;
    for (size_t k = 0; k < idx.size(); ++k) offset += idx[k] * v.strides[k];
    std::memcpy(dst, src + static_cast<size_t>(offset) * es, es);
    dst += es;
  } while (next_index(idx, v.dims));
  return y;
}

std::optional<StridedView> slice_view(const Node& node, const std::vector<int64_t>& in_dims,
                                      std::span<const Tensor* const> in) {
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  bool k1, k2, k3, k4;
  const Tensor* ts = input_value(node, 1, in, k1);
  const Tensor* te = input_value(node, 2, in, k2);
  const Tensor* ta = input_value(node, 3, in, k3);
  const Tensor* tp = input_value(node, 4, in, k4);
  if (!ts || !te || !k3 || !k4) return std::nullopt;
  std::vector<int64_t> starts = int_values(node, 1, *ts), ends = int_values(node, 2, *te);
  std::vector<int64_t> axes, steps;
  if (ta) {
    axes = int_values(node, 3, *ta);
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  steps = tp ? int_values(node, 4, *tp) : std::vector<int64_t>(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail("{}: starts {}, ends {}, axes {} and steps {} must have the same length", node.describe(),
         ints_str(starts), ints_str(ends), ints_str(axes), ints_str(steps));
  StridedView v{in_dims, contiguous_strides(in_dims), 0};
  std::vector<bool> seen(in_dims.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = require_axis(node, axes[i], rank);
    if (seen[a]) fail("{}: axis {} is repeated in axes {}", node.describe(), a, ints_str(axes));
    seen[a] = true;
    const int64_t dim = in_dims[a], step = steps[i];
    if (step == 0) fail("{}: steps {} has a 0", node.describe(), ints_str(steps));
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    const int64_t n = step > 0 ? (e - s + step - 1) / step : (s - e + (-step) - 1) / (-step);
    v.dims[a] = std::max<int64_t>(n, 0);
    v.offset += v.dims[a] > 0 ? s * v.strides[a] : 0;
    v.strides[a] *= step;
  }
  return v;
}

int64_t split_axis(const Node& node, int64_t rank) { return require_axis(node, node.i("axis"), rank); }

std::optional<std::vector<int64_t>> split_sizes(const Node& node, int64_t dim,
                                                std::span<const Tensor* const> in) {
  const int64_t n = static_cast<int64_t>(node.num_outputs());
  bool known;
  const Tensor* t = input_value(node, 1, in, known);
  if (!known) return std::nullopt;
  std::vector<int64_t> sizes;
  if (t) {
    sizes = int_values(node, 1, *t);
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) fail("{}: split {} has a negative size", node.describe(), ints_str(sizes));
      total += s;
    }
    if (static_cast<int64_t>(sizes.size()) != n || total != dim)
      fail("{}: split {} does not divide a dim of {} into {} outputs", node.describe(),
           ints_str(sizes), dim, n);
    return sizes;
  }
  if (node.has_attr("num_outputs")) {
    if (node.i("num_outputs") != n)
      fail("{}: num_outputs is {} but the node has {} outputs", node.describe(),
           node.i("num_outputs"), n);
    const int64_t part = (dim + n - 1) / n;
    for (int64_t k = 0; k < n; ++k) sizes.push_back(std::clamp<int64_t>(dim - k * part, 0, part));
    return sizes;
  }
  if (dim % n != 0)
    fail("{}: a dim of {} does not split evenly into {} outputs", node.describe(), dim, n);
  return std::vector<int64_t>(static_cast<size_t>(n), dim / n);
}

StridedView expand_view(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims) {
  return StridedView{out_dims, broadcast_strides(in_dims, out_dims), 0};
}

StridedView tile_view(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& repeats) {
  StridedView v;
  std::vector<int64_t> st = contiguous_strides(in_dims);
  for (size_t d = 0; d < in_dims.size(); ++d) {
    v.dims.insert(v.dims.end(), {repeats[d], in_dims[d]});
    v.strides.insert(v.strides.end(), {0, st[d]});
  }
  return v;
}

StridedView depth_space_view(const Node& node, const std::vector<int64_t>& x) {
  if (x.size() != 4) fail("{}: input must be 4-D, got {}", node.describe(), dims_str(x));
  const int64_t b = node.i("blocksize");
  if (b <= 0) fail("{}: blocksize {} must be positive", node.describe(), b);
  std::vector<int64_t> r, perm;  // the reshaped input and the transpose
  if (node.op() == "DepthToSpace") {
    if (x[1] % (b * b) != 0)
      fail("{}: channels {} are not a multiple of blocksize^2 {}", node.describe(), x[1], b * b);
    if (node.s("mode") == "DCR") {
      r = {x[0], b, b, x[1] / (b * b), x[2], x[3]};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (node.s("mode") == "CRD") {
      r = {x[0], x[1] / (b * b), b, b, x[2], x[3]};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      fail("{}: mode '{}' is not DCR or CRD", node.describe(), node.s("mode"));
    }
  } else {
    if (x[2] % b != 0 || x[3] % b != 0)
      fail("{}: spatial dims {} are not multiples of blocksize {}", node.describe(), dims_str(x), b);
    r = {x[0], x[1], x[2] / b, b, x[3] / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  }
  std::vector<int64_t> st = contiguous_strides(r);
  StridedView v;
  for (int64_t p : perm) {
    v.dims.push_back(r[p]);
    v.strides.push_back(st[p]);
  }
  return v;
}

std::optional<std::vector<std::vector<int64_t>>> pad_tables(const Node& node,
                                                            const std::vector<int64_t>& in_dims,
                                                            std::span<const Tensor* const> in) {
  std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> amounts =
      pad_amounts(node, in_dims.size(), in);
  if (!amounts) return std::nullopt;
  return pad_tables_for(node, in_dims, amounts->first, amounts->second, node.s("mode"));
}

std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pad_amounts(const Node& node, size_t rank_,
                                                                                std::span<const Tensor* const> in) {
  const int64_t rank = static_cast<int64_t>(rank_);
  bool kp, ka;
  const Tensor* tp = input_value(node, 1, in, kp);
  const Tensor* ta = input_value(node, 3, in, ka);
  if (!tp || !ka) return std::nullopt;
  std::vector<int64_t> pads = int_values(node, 1, *tp), axes;
  if (ta) {
    for (int64_t a : int_values(node, 3, *ta)) axes.push_back(require_axis(node, a, rank));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size())
    fail("{}: pads {} must have 2 values for each of the {} axes", node.describe(), ints_str(pads),
         axes.size());
  std::vector<int64_t> begin(rank_, 0), end(rank_, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    begin[axes[i]] = pads[i];
    end[axes[i]] = pads[i + axes.size()];
  }
  return std::pair{begin, end};
}

std::vector<std::vector<int64_t>> pad_tables_for(const Node& node, const std::vector<int64_t>& in_dims,
                                                 const std::vector<int64_t>& begin,
                                                 const std::vector<int64_t>& end, const std::string& mode) {
  std::vector<int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  std::vector<int64_t> st = contiguous_strides(in_dims);
  std::vector<std::vector<int64_t>> tables(in_dims.size());
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const int64_t n = in_dims[d], len = n + begin[d] + end[d];
    if (len < 0)
      fail("{}: pads {} remove more than dim {} of {} holds", node.describe(), ints_str(pads), d,
           dims_str(in_dims));
    if (n == 0 && len > 0 && mode != "constant")
      fail("{}: cannot pad an empty dim in mode '{}'", node.describe(), mode);
    for (int64_t o = 0; o < len; ++o) {
      int64_t i = o - begin[d];
      if (i < 0 || i >= n) {
        if (mode == "constant") {
          tables[d].push_back(-1);
          continue;
        }
        if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, n - 1);
        } else if (mode == "wrap") {
          i = ((i % n) + n) % n;
        } else if (n == 1) {  // reflect
          i = 0;
        } else {
          const int64_t period = 2 * (n - 1);
          i = ((i % period) + period) % period;
          if (i >= n) i = period - i;
        }
      }
      tables[d].push_back(i * st[d]);
    }
  }
  return tables;
}

std::optional<std::vector<std::vector<int64_t>>> center_crop_pad_tables(const Node& node,
                                                                        const std::vector<int64_t>& in_dims,
                                                                        std::span<const Tensor* const> in) {
  bool known;
  const Tensor* ts = input_value(node, 1, in, known);
  if (!ts) return std::nullopt;
  const std::vector<int64_t> axes = axes_attr_or_all(node, static_cast<int64_t>(in_dims.size()));
  const std::vector<int64_t> shape = int_values(node, 1, *ts);
  if (shape.size() != axes.size())
    fail("{}: shape {} must have one value for each of the {} axes", node.describe(), ints_str(shape),
         axes.size());
  // Centred: the first (smaller) half of the difference goes before, the rest after.
  std::vector<int64_t> begin(in_dims.size(), 0), end(in_dims.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (shape[i] < 0 || shape[i] > (int64_t{1} << 40))
      fail("{}: shape {} must be non-negative", node.describe(), ints_str(shape));
    const int64_t diff = shape[i] - in_dims[axes[i]];
    begin[axes[i]] = diff >= 0 ? diff / 2 : -((-diff) / 2);
    end[axes[i]] = diff - begin[axes[i]];
  }
  return pad_tables_for(node, in_dims, begin, end, "constant");
}

void register_slice_pad_ops(Registry& r) {
  r.add(OpDef{
      .name = "Slice",
      .summary = "elements [starts, ends) by steps along axes (clamped as numpy does)",
      .inputs = {{"data"}, {"starts"}, {"ends"}, {"axes", true}, {"steps", true}},
      .outputs = {"output"},
      .infer = infer_slice,
      .eval = eval_slice,
  });
  r.add(OpDef{
      .name = "Split",
      .summary = "parts along axis: sizes from split, or num_outputs equal parts (last smaller)",
      .inputs = {{"input"}, {"split", true}},
      .outputs = numbered_names("outputs", 256),
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{0})},
                {"num_outputs", AttrType::Int, std::nullopt, true}},
      .infer = infer_split,
      .eval = eval_split,
  });
  r.add(OpDef{
      .name = "Pad",
      .summary = "pads (begin values, then end values) along axes: constant, reflect, edge, wrap",
      .inputs = {{"data"}, {"pads"}, {"constant_value", true}, {"axes", true}},
      .outputs = {"output"},
      .attrs = {{"mode", AttrType::String, Attribute("constant")}},
      .infer = infer_pad,
      .eval = eval_pad,
  });
  r.add(OpDef{
      .name = "CenterCropPad",
      .summary = "crops or zero-pads the given axes to shape, centred",
      .inputs = {{"input_data"}, {"shape"}},
      .outputs = {"output_data"},
      .attrs = {{"axes", AttrType::Ints, std::nullopt, true}},
      .infer = infer_center_crop_pad,
      .eval = eval_center_crop_pad,
  });
  r.add(OpDef{
      .name = "Expand",
      .summary = "broadcasts the input to shape (numpy rules, both ways)",
      .inputs = {{"input"}, {"shape"}},
      .outputs = {"output"},
      .infer = infer_expand,
      .eval = eval_expand,
  });
  r.add(OpDef{
      .name = "Tile",
      .summary = "repeats the input repeats[d] times along each dim d",
      .inputs = {{"input"}, {"repeats"}},
      .outputs = {"output"},
      .infer = infer_tile,
      .eval = eval_tile,
  });
  r.add(OpDef{
      .name = "DepthToSpace",
      .summary = "moves channel blocks into blocksize x blocksize spatial tiles (DCR or CRD)",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"blocksize", AttrType::Int}, {"mode", AttrType::String, Attribute("DCR")}},
      .infer = infer_depth_space,
      .eval = eval_depth_space,
  });
  r.add(OpDef{
      .name = "SpaceToDepth",
      .summary = "moves blocksize x blocksize spatial tiles into channels",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"blocksize", AttrType::Int}},
      .infer = infer_depth_space,
      .eval = eval_depth_space,
  });
}

}  // namespace kiln::ir
