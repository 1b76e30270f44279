// Ops driven by index tensors read at run time: GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot, and the data-dependent NonZero and Unique. Indices are bounds-checked;
// negative ones count from the end.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

void require_indices(const Node& node, size_t i) { require_dtype(node, i, {DType::I32, DType::I64}); }

// The index wrapped into [0, dim), or a failure naming the node.
int64_t wrap_index(const Node& node, int64_t i, int64_t dim) {
  const int64_t w = i < 0 ? i + dim : i;
  if (w < 0 || w >= dim)
    fail("{}: index {} is out of range for a dim of size {}", node.describe(), i, dim);
  return w;
}

const uint8_t* bytes(const Tensor& t) { return static_cast<const uint8_t*>(t.raw()); }

// ---- GatherElements and ScatterElements ----------------------------------------------------

void infer_gather_elements(Node& node) {
  require_indices(node, 1);
  const Shape &d = node.input(0)->shape(), &i = node.input(1)->shape();
  if (d.rank() != i.rank() || d.rank() == 0)
    fail("{}: data {} and indices {} must have the same rank >= 1", node.describe(), d.str(),
         i.str());
  require_axis(node, node.i("axis"), static_cast<int64_t>(d.rank()));
  node.output(0)->set_type(node.input(0)->dtype(), i);
}

// Calls fn(index_position, data_position) for every element of `indices`, with
// data_position the element of data it addresses along `axis`.
template <class Fn>
void for_each_element_index(const Node& node, const Tensor& data, const Tensor& indices, Fn&& fn) {
  const int64_t axis = require_axis(node, node.i("axis"), data.rank());
  const std::vector<int64_t>& idims = indices.dims();
  std::vector<int64_t> dst = contiguous_strides(data.dims());
  for (size_t d = 0; d < idims.size(); ++d)
    if (d != static_cast<size_t>(axis) && idims[d] > data.dims()[d])
      fail("{}: indices {} exceed data {} off the axis", node.describe(), dims_str(idims),
           dims_str(data.dims()));
  if (indices.numel() == 0) return;
  std::vector<int64_t> idx(idims.size(), 0);
  int64_t p = 0;
  do {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += (d == static_cast<size_t>(axis)
                  ? wrap_index(node, indices.as_int64(p), data.dims()[d])
                  : idx[d]) * dst[d];
    fn(p++, off);
  } while (next_index(idx, idims));
}

void eval_gather_elements(const Node& node, std::span<const Tensor* const> in,
                          std::vector<Tensor>& out) {
  const Tensor &data = *in[0], &indices = *in[1];
  out[0] = Tensor(data.dtype(), indices.dims());
  const size_t es = dtype_size(data.dtype());
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for_each_element_index(node, data, indices, [&](int64_t p, int64_t off) {
    std::memcpy(dst + p * es, bytes(data) + off * es, es);
  });
}

// data[at] combined with v by the node's reduction.
template <class T>
void combine(const std::string& reduction, T& at, T v) {
  using C = compute_t<T>;
  if (reduction == "none") at = v;
  else if (reduction == "add") at = static_cast<T>(static_cast<C>(at) + static_cast<C>(v));
  else if (reduction == "mul") at = static_cast<T>(static_cast<C>(at) * static_cast<C>(v));
  else if (reduction == "max") at = static_cast<C>(v) > static_cast<C>(at) ? v : at;
  else at = static_cast<C>(v) < static_cast<C>(at) ? v : at;  // min
}

void check_reduction(const Node& node) {
  const std::string& r = node.s("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    fail("{}: reduction '{}' is not one of none, add, mul, max, min", node.describe(), r);
}

void infer_scatter_elements(Node& node) {
  require_indices(node, 1);
  require_same_dtype(node, 0, 2);
  check_reduction(node);
  const Shape &d = node.input(0)->shape(), &i = node.input(1)->shape(), &u = node.input(2)->shape();
  if (d.rank() != i.rank() || d.rank() == 0 || !(i == u))
    fail("{}: data {}, indices {} and updates {} must have the same rank >= 1 (indices and "
         "updates the same shape)", node.describe(), d.str(), i.str(), u.str());
  require_axis(node, node.i("axis"), static_cast<int64_t>(d.rank()));
  node.output(0)->set_type(node.input(0)->dtype(), d);
}

void eval_scatter_elements(const Node& node, std::span<const Tensor* const> in,
                           std::vector<Tensor>& out) {
  const Tensor &data = *in[0], &indices = *in[1], &updates = *in[2];
  out[0] = Tensor(data.dtype(), data.dims());
  std::memcpy(out[0].mutable_raw(), data.raw(), data.nbytes());
  visit_dtype(data.dtype(), [&]<class T>() {
    T* y = out[0].mutable_data<T>();
    const T* u = updates.data<T>();
    for_each_element_index(node, data, indices,
                           [&](int64_t p, int64_t off) { combine(node.s("reduction"), y[off], u[p]); });
  });
}

// ---- GatherND and ScatterND ----------------------------------------------------------------

struct NdGeometry {
  int64_t batch = 1, n_tuples = 0, tuple = 0, slice = 1;  // per batch: n_tuples tuples
  std::vector<int64_t> out_dims;
};

NdGeometry nd_geometry(const Node& node, const std::vector<int64_t>& data,
                       const std::vector<int64_t>& idx, int64_t batch_dims) {
  if (idx.empty() || data.empty())
    fail("{}: data and indices must have rank >= 1", node.describe());
  NdGeometry g;
  g.tuple = idx.back();
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
  if (batch_dims < 0 || batch_dims >= std::min(r, q) || g.tuple < 1 || batch_dims + g.tuple > r)
    fail("{}: indices {} with batch_dims {} do not fit data {}", node.describe(), dims_str(idx),
         batch_dims, dims_str(data));
  for (int64_t b = 0; b < batch_dims; ++b) {
    if (data[b] != idx[b])
      fail("{}: batch dims of data {} and indices {} differ", node.describe(), dims_str(data),
           dims_str(idx));
    g.batch *= data[b];
    g.out_dims.push_back(data[b]);
  }
  g.n_tuples = 1;
  for (int64_t d = batch_dims; d < q - 1; ++d) {
    g.n_tuples *= idx[d];
    g.out_dims.push_back(idx[d]);
  }
  for (int64_t d = batch_dims + g.tuple; d < r; ++d) {
    g.slice *= data[d];
    g.out_dims.push_back(data[d]);
  }
  return g;
}

// Element offset (within one batch of data) of tuple t of batch b.
int64_t nd_offset(const Node& node, const Tensor& indices, const std::vector<int64_t>& data,
                  int64_t batch_dims, const NdGeometry& g, int64_t b, int64_t t) {
  int64_t off = 0;
  const int64_t base = (b * g.n_tuples + t) * g.tuple;
  for (int64_t k = 0; k < g.tuple; ++k) {
    const int64_t dim = data[batch_dims + k];
    off = off * dim + wrap_index(node, indices.as_int64(base + k), dim);
  }
  return off * g.slice;
}

void infer_gather_nd(Node& node) {
  require_dtype(node, 1, {DType::I64});
  const Shape &d = node.input(0)->shape(), &i = node.input(1)->shape();
  if (d.is_static() && i.is_static()) {
    NdGeometry g = nd_geometry(node, d.values(), i.values(), node.i("batch_dims"));
    node.output(0)->set_type(node.input(0)->dtype(), Shape::of(g.out_dims));
    return;
  }
  // Symbolic dims (a bounded batch, NonZero's count): the same rule over dims; the tuple
  // length, indices' last dim, must be a number.
  const int64_t r = static_cast<int64_t>(d.rank()), q = static_cast<int64_t>(i.rank()), bd = node.i("batch_dims");
  if (q == 0 || r == 0 || !i[q - 1].is_static())
    fail("{}: data {} and indices {}: the tuple length (indices' last dim) must be known", node.describe(), d.str(),
         i.str());
  const int64_t tuple = i[q - 1].value();
  if (bd < 0 || bd >= std::min(r, q) || tuple < 1 || bd + tuple > r)
    fail("{}: indices {} with batch_dims {} do not fit data {}", node.describe(), i.str(), bd, d.str());
  std::vector<Dim> y;
  for (int64_t b = 0; b < bd; ++b) y.push_back(d[b]);
  for (int64_t k = bd; k < q - 1; ++k) y.push_back(i[k]);
  for (int64_t k = bd + tuple; k < r; ++k) y.push_back(d[k]);
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(y)));
}

void eval_gather_nd(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor &data = *in[0], &indices = *in[1];
  const int64_t bd = node.i("batch_dims");
  NdGeometry g = nd_geometry(node, data.dims(), indices.dims(), bd);
  out[0] = Tensor(data.dtype(), g.out_dims);
  const size_t es = dtype_size(data.dtype()), row = static_cast<size_t>(g.slice) * es;
  const int64_t per_batch = data.numel() / std::max<int64_t>(g.batch, 1);
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t t = 0; t < g.n_tuples; ++t) {
      const int64_t off = b * per_batch + nd_offset(node, indices, data.dims(), bd, g, b, t);
      std::memcpy(dst, bytes(data) + off * es, row);
      dst += row;
    }
}

void infer_scatter_nd(Node& node) {
  require_dtype(node, 1, {DType::I64});
  require_same_dtype(node, 0, 2);
  check_reduction(node);
  const Shape &d = node.input(0)->shape(), &i = node.input(1)->shape(), &u = node.input(2)->shape();
  if (d.is_static() && i.is_static() && u.is_static()) {
    NdGeometry g = nd_geometry(node, d.values(), i.values(), 0);
    if (g.out_dims != u.values())
      fail("{}: updates {} should be {}", node.describe(), u.str(), dims_str(g.out_dims));
  }
  node.output(0)->set_type(node.input(0)->dtype(), d);
}

void eval_scatter_nd(const Node& node, std::span<const Tensor* const> in,
                     std::vector<Tensor>& out) {
  const Tensor &data = *in[0], &indices = *in[1], &updates = *in[2];
  NdGeometry g = nd_geometry(node, data.dims(), indices.dims(), 0);
  if (g.out_dims != updates.dims())
    fail("{}: updates {} should be {}", node.describe(), dims_str(updates.dims()),
         dims_str(g.out_dims));
  out[0] = Tensor(data.dtype(), data.dims());
  std::memcpy(out[0].mutable_raw(), data.raw(), data.nbytes());
  visit_dtype(data.dtype(), [&]<class T>() {
    T* y = out[0].mutable_data<T>();
    const T* u = updates.data<T>();
    for (int64_t t = 0; t < g.n_tuples; ++t) {
      const int64_t off = nd_offset(node, indices, data.dims(), 0, g, 0, t);
      for (int64_t s = 0; s < g.slice; ++s) combine(node.s("reduction"), y[off + s], u[t * g.slice + s]);
    }
  });
}

// ---- OneHot --------------------------------------------------------------------------------

int64_t onehot_depth(const Node& node, const Tensor& t) {
  if (t.numel() != 1) fail("{}: depth must hold one value", node.describe());
  const double d = t.as_double(0);
  if (!(d >= 1)) fail("{}: depth {} must be at least 1", node.describe(), d);
  return static_cast<int64_t>(d);
}

void infer_onehot(Node& node) {
  const Shape& s = node.input(0)->shape();
  const int64_t rank = static_cast<int64_t>(s.rank()) + 1;
  const int64_t axis = require_axis(node, node.i("axis"), rank);
  std::vector<Dim> dims = s.dims();
  dims.insert(dims.begin() + axis, node.input(1)->is_constant()
                                       ? Dim(onehot_depth(node, node.input(1)->constant()))
                                       : Dim::unknown());
  node.output(0)->set_type(node.input(2)->dtype(), Shape(std::move(dims)));
}

void eval_onehot(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor &idx = *in[0], &values = *in[2];
  if (values.numel() != 2) fail("{}: values must hold [off, on]", node.describe());
  const int64_t depth = onehot_depth(node, *in[1]);
  const int64_t axis = require_axis(node, node.i("axis"), idx.rank() + 1);
  std::vector<int64_t> dims = idx.dims();
  dims.insert(dims.begin() + axis, depth);
  out[0] = Tensor(values.dtype(), dims);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t es = dtype_size(values.dtype());
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < depth; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = static_cast<int64_t>(idx.as_double(o * inner + i));
        if (v < 0) v += depth;
        std::memcpy(dst, bytes(values) + (v == k ? es : 0), es);
        dst += es;
      }
}

// ---- NonZero and Unique (shapes depend on the data) ----------------------------------------

void eval_nonzero(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.as_double(i) != 0) hits.push_back(i);
  const int64_t rank = std::max<int64_t>(x.rank(), 1), n = static_cast<int64_t>(hits.size());
  std::vector<int64_t> coords(static_cast<size_t>(rank * n));
  std::vector<int64_t> st = contiguous_strides(x.dims());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < x.rank(); ++d) coords[d * n + j] = hits[j] / st[d] % x.dims()[d];
  out[0] = Tensor::from_vector<int64_t>(DType::I64, {x.rank(), n}, coords);
}

void infer_unique(Node& node) {
  const DType t = node.input(0)->dtype();
  const Shape& x = node.input(0)->shape();
  const bool flat = !node.has_attr("axis");
  const size_t rank = flat ? 1 : x.rank();
  const size_t axis = flat ? 0 : static_cast<size_t>(require_axis(node, node.i("axis"), static_cast<int64_t>(rank)));
  // The count is known when the node runs; a compile gives it a symbol of its own
  // (passes::bound_data_dependent_dims), which later inference keeps.
  const Value* y0 = node.output(0);
  const Dim count = y0 && y0->has_type() && y0->shape().rank() == rank && y0->shape()[axis].is_symbol()
                        ? y0->shape()[axis]
                        : Dim::unknown();
  std::vector<Dim> y = flat ? std::vector<Dim>{count} : x.dims();
  y[axis] = count;
  if (node.output(0)) node.output(0)->set_type(t, Shape(std::move(y)));
  const Dim len = flat ? x.product() : x[axis];  // inverse_indices: one per slice of the input
  for (size_t k = 1; k < node.num_outputs(); ++k)
    if (node.output(k)) node.output(k)->set_type(DType::I64, Shape({k == 2 ? len : count}));
}

void eval_unique(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const bool flat = !node.has_attr("axis");
  const int64_t axis = flat ? 0 : require_axis(node, node.i("axis"), x.rank());
  const std::vector<int64_t> dims = flat ? std::vector<int64_t>{x.numel()} : x.dims();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t len = dims[axis];
  // Each slice along the axis as a vector of values, compared lexicographically.
  std::vector<std::vector<double>> slices(static_cast<size_t>(len));
  for (int64_t k = 0; k < len; ++k)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) slices[k].push_back(x.as_double((o * len + k) * inner + i));
  std::vector<int64_t> first;                    // first occurrence of each unique slice
  std::vector<int64_t> inverse(static_cast<size_t>(len));
  // Lexicographic, NaN after every number and equal to NaN (as the compiled kernel, rt::unique):
  // a strict weak order whatever the data holds, which std::map and std::sort need.
  const auto before = [](const std::vector<double>& a, const std::vector<double>& b) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      const double u = a[i], v = b[i];
      const bool un = u != u, vn = v != v;
      if (un && vn) continue;
      if (un || vn) return vn;  // the number first
      if (u != v) return u < v;
    }
    return a.size() < b.size();
  };
  std::map<std::vector<double>, int64_t, decltype(before)> seen(before);  // slice -> position in `first`
  for (int64_t k = 0; k < len; ++k) {
    auto [it, added] = seen.emplace(slices[k], static_cast<int64_t>(first.size()));
    if (added) first.push_back(k);
    inverse[k] = it->second;
  }
  std::vector<int64_t> order(first.size());  // output position -> position in `first`
  std::iota(order.begin(), order.end(), 0);
  if (node.i("sorted") != 0)
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return before(slices[first[a]], slices[first[b]]); });
  std::vector<int64_t> rank_of(order.size());
  for (size_t p = 0; p < order.size(); ++p) rank_of[order[p]] = static_cast<int64_t>(p);
  const int64_t n = static_cast<int64_t>(order.size());
  std::vector<int64_t> ydims = dims;
  ydims[axis] = n;
  Tensor y(x.dtype(), ydims);
  const size_t es = dtype_size(x.dtype());
  auto* dst = static_cast<uint8_t*>(y.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < n; ++p)
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(dst + ((o * n + p) * inner + i) * es,
                    bytes(x) + ((o * len + first[order[p]]) * inner + i) * es, es);
  std::vector<int64_t> indices, inv, counts(static_cast<size_t>(n), 0);
  for (int64_t p = 0; p < n; ++p) indices.push_back(first[order[p]]);
  for (int64_t k = 0; k < len; ++k) {
    inv.push_back(rank_of[inverse[k]]);
    ++counts[rank_of[inverse[k]]];
  }
  out[0] = y;
  std::vector<int64_t>* extra[] = {&indices, &inv, &counts};
  for (size_t k = 1; k < out.size(); ++k)
    out[k] = Tensor::from_vector<int64_t>(DType::I64, {static_cast<int64_t>(extra[k - 1]->size())},
                                          *extra[k - 1]);
}

}  // namespace

void register_indexing_ops(Registry& r) {
  r.add(OpDef{
      .name = "GatherElements",
      .summary = "out[i] = data[i with its axis coordinate replaced by indices[i]]",
      .inputs = {{"data"}, {"indices"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_gather_elements,
      .eval = eval_gather_elements,
  });
  r.add(OpDef{
      .name = "ScatterElements",
      .summary = "data with updates written (or reduced) at indices along axis",
      .inputs = {{"data"}, {"indices"}, {"updates"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{0})},
                {"reduction", AttrType::String, Attribute("none")}},
      .infer = infer_scatter_elements,
      .eval = eval_scatter_elements,
  });
  r.add(OpDef{
      .name = "GatherND",
      .summary = "slices of data addressed by the index tuples in the last dim of indices",
      .inputs = {{"data"}, {"indices"}},
      .outputs = {"output"},
      .attrs = {{"batch_dims", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_gather_nd,
      .eval = eval_gather_nd,
  });
  r.add(OpDef{
      .name = "ScatterND",
      .summary = "data with update slices written (or reduced) at index tuples",
      .inputs = {{"data"}, {"indices"}, {"updates"}},
      .outputs = {"output"},
      .attrs = {{"reduction", AttrType::String, Attribute("none")}},
      .infer = infer_scatter_nd,
      .eval = eval_scatter_nd,
  });
  r.add(OpDef{
      .name = "OneHot",
      .summary = "values[1] where the new axis matches the index, values[0] elsewhere",
      .inputs = {{"indices"}, {.name = "depth", .sets_output_shape = true}, {"values"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}},
      .infer = infer_onehot,
      .eval = eval_onehot,
  });
  r.add(OpDef{
      .name = "NonZero",
      .summary = "coordinates of the non-zero elements, one column each (shape from the data)",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .infer = [](Node& n) {
        // The count is unknown until the node runs; a compile gives it a symbol of its own
        // (passes::bound_data_dependent_dims), which later inference keeps.
        const Value* y = n.output(0);
        const bool counted = y->has_type() && y->shape().rank() == 2 && y->shape()[1].is_symbol();
        n.output(0)->set_type(DType::I64, Shape({Dim(static_cast<int64_t>(n.input(0)->shape().rank())),
                                                 counted ? y->shape()[1] : Dim::unknown()}));
      },
      .eval = eval_nonzero,
  });
  r.add(OpDef{
      .name = "Unique",
      .summary = "unique elements (or slices along axis), their first indices, inverse and counts",
      .inputs = {{"X"}},
      .outputs = {"Y", "indices", "inverse_indices", "counts"},
      .attrs = {{"axis", AttrType::Int, std::nullopt, true},
                {"sorted", AttrType::Int, Attribute(int64_t{1})}},
      .infer = infer_unique,
      .eval = eval_unique,
  });
}

}  // namespace kiln::ir
