// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes input, keepdims,
// noop_with_empty_axes), ArgMax, ArgMin, CumSum, CumProd, TopK. The references accumulate floats
// in double and integers in int64.
#include "ir/ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <cstring>

#include "kiln/rt/reduce.h"

namespace kiln::ir {
namespace {

const char* const kReduceOps[] = {"ReduceSum",  "ReduceMean",   "ReduceMax",       "ReduceMin",
                                  "ReduceProd", "ReduceL1",     "ReduceL2",        "ReduceLogSum",
                                  "ReduceLogSumExp", "ReduceSumSquare"};

Shape reduce_output(const Node& node, const Shape& in, const std::vector<bool>& red) {
  std::vector<Dim> out;
  const bool keep = node.i("keepdims") != 0;
  for (size_t d = 0; d < in.rank(); ++d) {
    if (!red[d])
      out.push_back(in[d]);
    else if (keep)
      out.push_back(Dim(1));
  }
  return Shape(std::move(out));
}

void infer_reduce(Node& node) {
  if (node.has_input(1)) require_dtype(node, 1, {DType::I64});
  const Shape& s = node.input(0)->shape();
  std::optional<std::vector<bool>> red = reduced_dims(node, static_cast<int64_t>(s.rank()));
  if (!red) {  // axes known only at run time: the rank follows from their number
    size_t rank = s.rank();
    if (node.i("keepdims") == 0) {
      const Shape& a = node.input(1)->shape();
      if (a.rank() != 1 || !a[0].is_static())
        fail("{}: with keepdims 0, the number of axes must be known", node.describe());
      const int64_t n = a[0].value();
      if (n > static_cast<int64_t>(rank)) fail("{}: {} axes for input {}", node.describe(), n, s.str());
      rank = n == 0 ? (node.i("noop_with_empty_axes") != 0 ? rank : 0) : rank - static_cast<size_t>(n);
    }
    node.output(0)->set_type(node.input(0)->dtype(), Shape(std::vector<Dim>(rank, Dim::unknown())));
    return;
  }
  node.output(0)->set_type(node.input(0)->dtype(), reduce_output(node, s, *red));
}

template <class T>
void reduce_typed(const Node& node, const Tensor& x, const std::vector<bool>& red, Tensor& y) {
  using Acc = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;
  const std::string& op = node.op();
  const std::vector<int64_t>& dims = x.dims();
  // Output strides for each input dim (0 on reduced dims).
  std::vector<int64_t> kept;
  for (size_t d = 0; d < dims.size(); ++d) kept.push_back(red[d] ? 1 : dims[d]);
  std::vector<int64_t> ost = contiguous_strides(kept);
  for (size_t d = 0; d < dims.size(); ++d)
    if (red[d]) ost[d] = 0;
  const int64_t n_out = numel(kept);
  int64_t count = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    if (red[d]) count *= dims[d];
  const bool is_max = op == "ReduceMax", is_min = op == "ReduceMin";
  Acc init = 0;
  if (op == "ReduceProd") init = 1;
  if (is_max || op == "ReduceLogSumExp")
    init = std::is_floating_point_v<Acc> ? -std::numeric_limits<Acc>::infinity()
                                         : static_cast<Acc>(std::numeric_limits<T>::lowest());
  if (is_min)
    init = std::is_floating_point_v<Acc> ? std::numeric_limits<Acc>::infinity()
                                         : static_cast<Acc>(std::numeric_limits<T>::max());
  std::vector<Acc> acc(static_cast<size_t>(n_out), init), peak(acc);
  const T* src = x.data<T>();
  auto for_each = [&](auto&& fn) {
    if (x.numel() == 0) return;
    std::vector<int64_t> idx(dims.size(), 0);
    int64_t i = 0;
    do {
      int64_t o = 0;
      for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * ost[d];
      fn(static_cast<size_t>(o), static_cast<Acc>(static_cast<compute_t<T>>(src[i++])));
    } while (next_index(idx, dims));
  };
  if (op == "ReduceLogSumExp") {
    for_each([&](size_t o, Acc v) { peak[o] = std::max(peak[o], v); });
    std::fill(acc.begin(), acc.end(), Acc(0));
  }
  for_each([&](size_t o, Acc v) {
    Acc& a = acc[o];
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceLogSum") a += v;
    else if (is_max) a = std::max(a, v);
    else if (is_min) a = std::min(a, v);
    else if (op == "ReduceProd") a *= v;
    else if (op == "ReduceL1") a += v < 0 ? -v : v;
    else if (op == "ReduceL2" || op == "ReduceSumSquare") a += v * v;
    else a += static_cast<Acc>(std::exp(static_cast<double>(v - peak[o])));  // LogSumExp
  });
  T* dst = y.mutable_data<T>();
  for (size_t o = 0; o < acc.size(); ++o) {
    double r = static_cast<double>(acc[o]);
    if (op == "ReduceMean") r = std::is_floating_point_v<Acc> ? r / count
                                                              : static_cast<double>(acc[o] / std::max<int64_t>(count, 1));
    if (op == "ReduceL2") r = std::sqrt(r);
    if (op == "ReduceLogSum") r = std::log(r);
    if (op == "ReduceLogSumExp")
      r = count == 0 ? -std::numeric_limits<double>::infinity()
                     : static_cast<double>(peak[o]) + std::log(r);
    if constexpr (std::is_floating_point_v<Acc>)
      dst[o] = static_cast<T>(static_cast<compute_t<T>>(r));
    else
      dst[o] = static_cast<T>(op == "ReduceMean" || op == "ReduceL2" || op == "ReduceLogSum"
                                  ? static_cast<Acc>(r) : acc[o]);
  }
}

void eval_reduce(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<bool> red = *reduced_dims(node, x.rank(), in);
  out[0] = Tensor(x.dtype(), reduce_output(node, x.shape(), red).values());
  if (std::none_of(red.begin(), red.end(), [](bool b) { return b; })) {
    out[0] = x;
    return;
  }
  visit_dtype(x.dtype(), [&]<class T>() { reduce_typed<T>(node, x, red, out[0]); });
}

// ---- ArgMax, ArgMin ------------------------------------------------------------------------

Shape arg_output(const Node& node, const Shape& in) {
  if (in.rank() == 0) fail("{}: input must have rank >= 1", node.describe());
  const int64_t axis = reduce_axis(node, static_cast<int64_t>(in.rank()));
  std::vector<bool> red(in.rank(), false);
  red[axis] = true;
  return reduce_output(node, in, red);
}

// outer x len x inner geometry around `axis`.
void split_at(const std::vector<int64_t>& dims, int64_t axis, int64_t& outer, int64_t& len,
              int64_t& inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  len = dims[axis];
}

void eval_arg(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  out[0] = Tensor(DType::I64, arg_output(node, x.shape()).values());
  int64_t outer, len, inner;
  split_at(x.dims(), reduce_axis(node, x.rank()), outer, len, inner);
  if (len == 0 && out[0].numel() > 0) fail("{}: cannot reduce an empty axis", node.describe());
  const bool is_max = node.op() == "ArgMax", last = node.i("select_last_index") != 0;
  int64_t* dst = out[0].mutable_data<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bv = x.as_double(o * len * inner + i);
      for (int64_t k = 1; k < len; ++k) {
        double v = x.as_double((o * len + k) * inner + i);
        bool better = is_max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
        if (better) {
          best = k;
          bv = v;
        }
      }
      dst[o * inner + i] = best;
    }
}

// ---- CumSum, CumProd -----------------------------------------------------------------------

void infer_cumsum(Node& node) {
  require_dtype(node, 1, {DType::I32, DType::I64});
  if (node.input(1)->shape().rank() > 1 ||
      (node.input(1)->shape().is_static() && node.input(1)->shape().numel() != 1))
    fail("{}: axis must be a scalar", node.describe());
  if (node.input(1)->is_constant()) reduce_axis(node, node.input(0)->shape().rank());
  node.output(0)->set_type(node.input(0)->dtype(), node.input(0)->shape());
}

void eval_cumsum(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  out[0] = Tensor(x.dtype(), x.dims());
  if (x.numel() == 0) return;
  int64_t outer, len, inner;
  split_at(x.dims(), reduce_axis(node, x.rank(), in), outer, len, inner);
  const bool exclusive = node.i("exclusive") != 0, reverse = node.i("reverse") != 0;
  const bool product = node.op() == "CumProd";
  visit_dtype(x.dtype(), [&]<class T>() {
    using Acc = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;
    if (product) rt::scan<true, T, Acc>(outer, len, inner, exclusive, reverse, x.data<T>(), out[0].mutable_data<T>());
    else rt::scan<false, T, Acc>(outer, len, inner, exclusive, reverse, x.data<T>(), out[0].mutable_data<T>());
  });
}

// ---- TopK ----------------------------------------------------------------------------------

void infer_topk(Node& node) {
  require_dtype(node, 1, {DType::I64});
  const Shape& s = node.input(0)->shape();
  if (s.rank() == 0) fail("{}: input must have rank >= 1", node.describe());
  const int64_t axis = reduce_axis(node, static_cast<int64_t>(s.rank()));
  std::vector<Dim> dims = s.dims();
  std::optional<int64_t> k = topk_k(node);
  if (k && dims[axis].is_static() && *k > dims[axis].value())
    fail("{}: k {} is larger than axis {} of {}", node.describe(), *k, axis, s.str());
  dims[axis] = k ? Dim(*k) : Dim::unknown();
  node.output(0)->set_type(node.input(0)->dtype(), Shape(dims));
  if (node.num_outputs() > 1) node.output(1)->set_type(DType::I64, Shape(dims));
}

void eval_topk(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t axis = reduce_axis(node, x.rank());
  const int64_t k = *topk_k(node, in);
  int64_t outer, len, inner;
  split_at(x.dims(), axis, outer, len, inner);
  if (k > len) fail("{}: k {} is larger than axis {} of {}", node.describe(), k, axis, len);
  std::vector<int64_t> dims = x.dims();
  dims[axis] = k;
  out[0] = Tensor(x.dtype(), dims);
  Tensor indices(DType::I64, dims);
  const bool largest = node.i("largest") != 0;
  const size_t es = dtype_size(x.dtype());
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      std::iota(order.begin(), order.end(), 0);
      // Ties keep the lower index first, as ONNX specifies.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        double va = x.as_double(at(a)), vb = x.as_double(at(b));
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dst = (o * k + j) * inner + i;
        std::memcpy(static_cast<uint8_t*>(out[0].mutable_raw()) + dst * es,
                    static_cast<const uint8_t*>(x.raw()) + at(order[j]) * es, es);
        indices.mutable_data<int64_t>()[dst] = order[j];
      }
    }
  if (out.size() > 1) out[1] = indices;
}

}  // namespace

std::optional<std::vector<bool>> reduced_dims(const Node& node, int64_t rank,
                                              std::span<const Tensor* const> in) {
  std::vector<int64_t> axes;
  const Tensor* t = in.empty() ? nullptr : optional_input(in, 1);
  if (in.empty() && node.has_input(1)) {
    if (!node.input(1)->is_constant()) return std::nullopt;
    t = &node.input(1)->constant();
  }
  if (t) axes = t->to_int64_vector();
  std::vector<bool> red(static_cast<size_t>(rank), axes.empty() && node.i("noop_with_empty_axes") == 0);
  for (int64_t a : axes) {
    const int64_t n = require_axis(node, a, rank);
    if (red[n]) fail("{}: axis {} is repeated in {}", node.describe(), a, ints_str(axes));
    red[n] = true;
  }
  return red;
}

int64_t reduce_axis(const Node& node, int64_t rank, std::span<const Tensor* const> in) {
  if (node.op() != "CumSum" && node.op() != "CumProd") return require_axis(node, node.i("axis"), rank);
  const Tensor* t = in.empty() ? &require_constant(node, 1) : in[1];
  return require_axis(node, t->as_int64(0), rank);
}

std::optional<int64_t> topk_k(const Node& node, std::span<const Tensor* const> in) {
  const Tensor* t = in.empty() ? nullptr : in[1];
  if (in.empty()) {
    if (!node.input(1)->is_constant()) return std::nullopt;
    t = &node.input(1)->constant();
  }
  if (t->numel() != 1) fail("{}: K must hold one value", node.describe());
  const int64_t k = t->as_int64(0);
  if (k < 0) fail("{}: k {} is negative", node.describe(), k);
  return k;
}

void register_reduce_ops(Registry& r) {
  for (const char* op : kReduceOps)
    r.add(OpDef{
        .name = op,
        .summary = "reduces axes (all when none are given, unless noop_with_empty_axes)",
        .inputs = {{"data"}, {"axes", true}},
        .outputs = {"reduced"},
        .attrs = {{"keepdims", AttrType::Int, Attribute(int64_t{1})},
                  {"noop_with_empty_axes", AttrType::Int, Attribute(int64_t{0})}},
        .infer = infer_reduce,
        .eval = eval_reduce,
    });
  for (const char* op : {"ArgMax", "ArgMin"})
    r.add(OpDef{
        .name = op,
        .summary = "index of the extreme value along axis (first, or last with select_last_index)",
        .inputs = {{"data"}},
        .outputs = {"reduced"},
        .attrs = {{"axis", AttrType::Int, Attribute(int64_t{0})},
                  {"keepdims", AttrType::Int, Attribute(int64_t{1})},
                  {"select_last_index", AttrType::Int, Attribute(int64_t{0})}},
        .infer = [](Node& n) { n.output(0)->set_type(DType::I64, arg_output(n, n.input(0)->shape())); },
        .eval = eval_arg,
    });
  r.add(OpDef{
      .name = "CumSum",
      .summary = "running sums along axis (exclusive: without the element itself; reverse)",
      .inputs = {{"x"}, {"axis"}},
      .outputs = {"y"},
      .attrs = {{"exclusive", AttrType::Int, Attribute(int64_t{0})},
                {"reverse", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_cumsum,
      .eval = eval_cumsum,
  });
  r.add(OpDef{
      .name = "CumProd",
      .summary = "running products along axis (exclusive: without the element itself; reverse)",
      .inputs = {{"x"}, {"axis"}},
      .outputs = {"y"},
      .attrs = {{"exclusive", AttrType::Int, Attribute(int64_t{0})},
                {"reverse", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_cumsum,
      .eval = eval_cumsum,
  });
  r.add(OpDef{
      .name = "TopK",
      .summary = "the k largest (or smallest) values along axis and their indices, sorted",
      .inputs = {{"X"}, {.name = "K", .sets_output_shape = true}},
      .outputs = {"Values", "Indices"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})},
                {"largest", AttrType::Int, Attribute(int64_t{1})},
                {"sorted", AttrType::Int, Attribute(int64_t{1})}},
      .infer = infer_topk,
      .eval = eval_topk,
  });
}

}  // namespace kiln::ir
