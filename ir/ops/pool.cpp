// Pools: MaxPool (with its Indices output), AveragePool, LpPool (sliding windows,
// ir/ops/window.h, computed by kiln::rt::pool_nd) and the global forms.
#include <algorithm>
#include <limits>

#include "ir/ops/pool.h"

#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"
#include "kiln/rt/pool_nd.h"

namespace kiln::ir {
namespace {

void require_pool_input(const Node& node, const Shape& x) {
  if (x.rank() < 3)
    fail("{}: input X must have rank >= 3 (N, C, spatial...), got {}", node.describe(), x.str());
}

// The window of a MaxPool or AveragePool over input shape x, and its output shape.
ResolvedWindow pool_window(const Node& node, const Shape& x, Shape& out) {
  require_pool_input(node, x);
  const size_t n = x.rank() - 2;
  if (n > 8) fail("{}: {} spatial dims, at most 8 are supported", node.describe(), n);
  const std::vector<int64_t>& kernel = node.ints("kernel_shape");
  if (kernel.size() != n)
    fail("{}: kernel_shape {} has {} dims, input {} has {} spatial dims", node.describe(),
         ints_str(kernel), kernel.size(), x.str(), n);
  std::vector<int64_t> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = x[i + 2].is_static() ? x[i + 2].value() : -1;
  ResolvedWindow w = resolve_window(node, in, kernel);
  std::vector<Dim> dims = {x[0], x[1]};
  for (const Dim& d : window_out_dims(node, {x.dims().begin() + 2, x.dims().end()}, kernel, w)) dims.push_back(d);
  out = Shape(std::move(dims));
  return w;
}

// The runtime's parameters for X of `x` dims (pointing into `w` and `in_spatial`).
rt::PoolNdParams pool_nd_params(const std::vector<int64_t>& x, const ResolvedWindow& w,
                                const std::vector<int64_t>& in_spatial) {
  return rt::PoolNdParams{x[0],
                          x[1],
                          static_cast<int64_t>(in_spatial.size()),
                          in_spatial.data(),
                          w.out_dims.data(),
                          w.kernel.data(),
                          w.strides.data(),
                          w.dilations.data(),
                          w.pads_begin.data(),
                          w.pads_end.data()};
}

void check_max_pool(const Node& node) {
  const int64_t order = node.i("storage_order");
  if (order != 0 && order != 1)
    fail("{}: storage_order must be 0 (row major) or 1 (column major), got {}", node.describe(), order);
}

void check_avg_pool(const Node& node) {
  int64_t cip = node.i("count_include_pad");
  if (cip != 0 && cip != 1)
    fail("{}: count_include_pad must be 0 or 1, got {}", node.describe(), cip);
}

void check_lp_pool(const Node& node) {
  const int64_t p = node.i("p");
  if (p < 1 || p > 64) fail("{}: p must be in [1, 64], got {}", node.describe(), p);
}

void infer_window_pool(Node& node) {
  if (node.op() == "MaxPool") {
    check_max_pool(node);
    require_dtype(node, 0, {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8});
  } else {
    if (node.op() == "AveragePool") check_avg_pool(node);
    else check_lp_pool(node);
    require_float(node, 0);
  }
  Shape out;
  pool_window(node, node.input(0)->shape(), out);
  node.output(0)->set_type(node.input(0)->dtype(), out);
  if (node.num_outputs() > 1 && node.output(1)) node.output(1)->set_type(DType::I64, out);
}

// MaxPool, AveragePool and LpPool through kiln::rt::pool_nd, as generated code runs them.
void eval_window_pool(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const std::string& op = node.op();
  rt::PoolKind kind = rt::PoolKind::Max;
  if (op == "MaxPool") {
    check_max_pool(node);
  } else if (op == "AveragePool") {
    check_avg_pool(node);
    kind = node.i("count_include_pad") ? rt::PoolKind::AverageIncludePad : rt::PoolKind::Average;
  } else {
    check_lp_pool(node);
    kind = rt::PoolKind::Lp;
  }
  Shape out_shape;
  ResolvedWindow w = pool_window(node, x.shape(), out_shape);
  const std::vector<int64_t> y_dims = out_shape.values();
  out[0] = Tensor(x.dtype(), y_dims);
  const bool with_indices = out.size() > 1;
  if (with_indices) out[1] = Tensor(DType::I64, y_dims);
  if (out[0].numel() == 0) return;
  const std::vector<int64_t> in_spatial(x.dims().begin() + 2, x.dims().end());
  const rt::PoolNdParams p = pool_nd_params(x.dims(), w, in_spatial);
  const double lp = kind == rt::PoolKind::Lp ? static_cast<double>(node.i("p")) : 0.0;
  int64_t* indices = with_indices ? out[1].mutable_data<int64_t>() : nullptr;
  const bool column_major = op == "MaxPool" && node.i("storage_order") == 1;
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (!std::is_same_v<S, bool>) {
      if (kind != rt::PoolKind::Max && !std::is_floating_point_v<C>)
        fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
      rt::pool_nd<S, C>(p, kind, lp, x.data<S>(), out[0].mutable_data<S>(), indices, column_major);
    } else {
      fail("{}: bool is not supported", node.describe());
    }
  });
}

Cost window_pool_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& y = node.output(0)->shape();
  if (!y.is_static()) return c;
  // One compare (max) or add (average) per tap, plus the average's division.
  double taps = static_cast<double>(numel(node.ints("kernel_shape")));
  c.flops = static_cast<double>(y.numel()) * (taps + (node.op() == "MaxPool" ? 0 : 1));
  return c;
}

// The output dims: output_shape's values when given (at least the unpooled dims, which fill
// its start), else the unpooled dims.
std::vector<int64_t> max_unpool_out_dims(const Node& node, const std::vector<int64_t>& unpooled,
                                         const Tensor* output_shape) {
  if (!output_shape || output_shape->numel() == 0) return unpooled;
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < output_shape->numel(); ++i) dims.push_back(static_cast<int64_t>(output_shape->as_double(i)));
  if (dims.size() != unpooled.size())
    fail("{}: output_shape {} must have rank {}", node.describe(), ints_str(dims), unpooled.size());
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] < unpooled[d] || dims[d] > (int64_t{1} << 40) || (d < 2 && dims[d] != unpooled[d]))
      fail("{}: output_shape {} is smaller than the unpooled shape {} (or changes N or C)", node.describe(),
           ints_str(dims), ints_str(unpooled));
  return dims;
}

void infer_max_unpool(Node& node) {
  require_dtype(node, 1, {DType::I64});
  if (node.has_input(2)) require_dtype(node, 2, {DType::I64});
  const Shape& x = node.input(0)->shape();
  const Value* os = node.has_input(2) ? node.input(2) : nullptr;
  if (x.is_static() && (!os || os->is_constant())) {
    const std::vector<int64_t> unpooled = max_unpool_dims(node, x.values());
    node.output(0)->set_type(node.input(0)->dtype(),
                             Shape::of(max_unpool_out_dims(node, unpooled, os ? &os->constant() : nullptr)));
    return;
  }
  std::vector<Dim> dims(x.rank(), Dim::unknown());
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_max_unpool(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& idx = *in[1];
  if (idx.dims() != x.dims())
    fail("{}: I {} must have X's shape {}", node.describe(), dims_str(idx.dims()), dims_str(x.dims()));
  const std::vector<int64_t> unpooled = max_unpool_dims(node, x.dims());
  out[0] = Tensor(x.dtype(), max_unpool_out_dims(node, unpooled, optional_input(in, 2)));
  visit_dtype(x.dtype(), [&]<class S>() {
    if (!rt::max_unpool<S>(static_cast<int64_t>(unpooled.size()), unpooled.data(), out[0].dims().data(), x.numel(),
                           x.data<S>(), idx.data<int64_t>(), out[0].mutable_data<S>()))
      fail("{}: an index in I is outside the unpooled shape {}", node.describe(), dims_str(unpooled));
  });
}

void infer_global_pool(Node& node) {
  require_float(node, 0);
  const Shape& x = node.input(0)->shape();
  require_pool_input(node, x);
  std::vector<Dim> dims = {x[0], x[1]};
  dims.resize(x.rank(), Dim(1));
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_global_pool(const Node& node, std::span<const Tensor* const> in,
                      std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  require_pool_input(node, x.shape());
  std::vector<int64_t> dims = {x.dims()[0], x.dims()[1]};
  dims.resize(x.dims().size(), 1);
  out[0] = Tensor(x.dtype(), dims);
  const int64_t planes = dims[0] * dims[1];
  const int64_t plane = x.numel() / std::max<int64_t>(planes, 1);
  const bool is_max = node.op() == "GlobalMaxPool";
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      const S* px = x.data<S>();
      S* py = out[0].mutable_data<S>();
      for (int64_t c = 0; c < planes; ++c) {
        C acc = is_max ? std::numeric_limits<C>::lowest() : C(0);
        for (int64_t i = 0; i < plane; ++i) {
          C v = static_cast<C>(px[c * plane + i]);
          acc = is_max ? std::max(acc, v) : acc + v;
        }
        if (!is_max && plane > 0) acc /= static_cast<C>(plane);
        py[c] = S(acc);
      }
    } else {
      fail("{} is not supported", dtype_name(x.dtype()));
    }
  });
}

Cost global_pool_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& x = node.input(0)->shape();
  if (x.is_static()) c.flops = static_cast<double>(x.numel());
  return c;
}

enum class PoolAttrs { Max, Average, Lp };

std::vector<AttrSpec> window_attrs(PoolAttrs kind) {
  std::vector<AttrSpec> a = {{"auto_pad", AttrType::String, Attribute("NOTSET")},
                             {"ceil_mode", AttrType::Int, Attribute(int64_t{0})},
                             {"dilations", AttrType::Ints, std::nullopt, true},
                             {"kernel_shape", AttrType::Ints},
                             {"pads", AttrType::Ints, std::nullopt, true},
                             {"strides", AttrType::Ints, std::nullopt, true}};
  if (kind == PoolAttrs::Average)
    a.push_back({"count_include_pad", AttrType::Int, Attribute(int64_t{0})});
  else if (kind == PoolAttrs::Max)
    a.push_back({"storage_order", AttrType::Int, Attribute(int64_t{0})});
  else
    a.push_back({"p", AttrType::Int, Attribute(int64_t{2})});
  return a;
}

}  // namespace

// MaxUnpool's unpooled dims for X of dims x: each spatial dim as the MaxPool that produced X
// would have had its input. I indexes a tensor of these dims.
std::vector<int64_t> max_unpool_dims(const Node& node, const std::vector<int64_t>& x) {
  if (x.size() < 3 || x.size() > 10)
    fail("{}: X must have rank 3 to 10 (N, C, spatial...), got {}", node.describe(), dims_str(x));
  const size_t n = x.size() - 2;
  const std::vector<int64_t>& kernel = node.ints("kernel_shape");
  if (kernel.size() != n)
    fail("{}: kernel_shape {} has {} dims, X has {} spatial dims", node.describe(), ints_str(kernel), kernel.size(), n);
  std::vector<int64_t> strides(n, 1), pads(2 * n, 0);
  if (node.has_attr("strides")) strides = node.ints("strides");
  if (node.has_attr("pads")) pads = node.ints("pads");
  if (strides.size() != n || pads.size() != 2 * n)
    fail("{}: strides {} and pads {} must have {} and {} values", node.describe(), ints_str(strides), ints_str(pads),
         n, 2 * n);
  std::vector<int64_t> dims = {x[0], x[1]};
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] < 1 || kernel[i] < 1 || pads[i] < 0 || pads[i + n] < 0 || strides[i] > (1 << 20) ||
        kernel[i] > (1 << 20))
      fail("{}: kernel_shape and strides must be positive and pads non-negative", node.describe());
    const int64_t d = (x[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + n];
    if (d < 0) fail("{}: pads {} leave spatial dim {} negative", node.describe(), ints_str(pads), i);
    dims.push_back(d);
  }
  return dims;
}

void register_pool_ops(Registry& r) {
  r.add(OpDef{
      .name = "MaxPool",
      .summary = "max over sliding windows (and where it is); padding never wins",
      .inputs = {{"X"}},
      .outputs = {"Y", "Indices"},
      .min_outputs = 1,
      .attrs = window_attrs(PoolAttrs::Max),
      .infer = infer_window_pool,
      .eval = eval_window_pool,
      .cost = window_pool_cost,
  });
  r.add(OpDef{
      .name = "AveragePool",
      .summary = "mean over sliding windows, counting pads if count_include_pad",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .attrs = window_attrs(PoolAttrs::Average),
      .infer = infer_window_pool,
      .eval = eval_window_pool,
      .cost = window_pool_cost,
  });
  r.add(OpDef{
      .name = "LpPool",
      .summary = "p-norm over sliding windows",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .attrs = window_attrs(PoolAttrs::Lp),
      .infer = infer_window_pool,
      .eval = eval_window_pool,
      .cost = window_pool_cost,
  });
  r.add(OpDef{
      .name = "MaxUnpool",
      .summary = "scatters X to the positions I (MaxPool's Indices) of a zero output",
      .inputs = {{"X"}, {"I"}, {.name = "output_shape", .optional = true, .sets_output_shape = true}},
      .outputs = {"output"},
      .attrs = {{"kernel_shape", AttrType::Ints},
                {"pads", AttrType::Ints, std::nullopt, true},
                {"strides", AttrType::Ints, std::nullopt, true}},
      .infer = infer_max_unpool,
      .eval = eval_max_unpool,
  });
  for (const char* name : {"GlobalAveragePool", "GlobalMaxPool"})
    r.add(OpDef{
        .name = name,
        .summary = "mean or max over all spatial dims, kept as size-1 dims",
        .inputs = {{"X"}},
        .outputs = {"Y"},
        .infer = infer_global_pool,
        .eval = eval_global_pool,
        .cost = global_pool_cost,
    });
}

}  // namespace kiln::ir
