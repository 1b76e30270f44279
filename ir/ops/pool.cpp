// Pools: MaxPool, AveragePool (sliding windows, ir/ops/window.h) and their global forms.
#include <algorithm>
#include <limits>

#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"

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
  const std::vector<int64_t>& kernel = node.ints("kernel_shape");
  if (kernel.size() != n)
    fail("{}: kernel_shape {} has {} dims, input {} has {} spatial dims", node.describe(),
         ints_str(kernel), kernel.size(), x.str(), n);
  std::vector<int64_t> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = x[i + 2].is_static() ? x[i + 2].value() : -1;
  ResolvedWindow w = resolve_window(node, in, kernel);
  std::vector<Dim> dims = {x[0], x[1]};
  for (const Dim& d : window_out_dims(w)) dims.push_back(d);
  out = Shape(std::move(dims));
  return w;
}

void check_max_pool(const Node& node) {
  if (node.num_outputs() > 1) fail("{}: the Indices output is not supported", node.describe());
  if (node.i("storage_order") != 0)
    fail("{}: storage_order {} is not supported (only 0, row major)", node.describe(),
         node.i("storage_order"));
}

void check_avg_pool(const Node& node) {
  int64_t cip = node.i("count_include_pad");
  if (cip != 0 && cip != 1)
    fail("{}: count_include_pad must be 0 or 1, got {}", node.describe(), cip);
}

void infer_window_pool(Node& node) {
  if (node.op() == "MaxPool") {
    check_max_pool(node);
    require_dtype(node, 0, {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8});
  } else {
    check_avg_pool(node);
    require_float(node, 0);
  }
  Shape out;
  pool_window(node, node.input(0)->shape(), out);
  node.output(0)->set_type(node.input(0)->dtype(), out);
}

// The loop shared by MaxPool and AveragePool: for each output position and each (N, C)
// plane, `reduce(taps, padded_count, x_plane)` computes one output element.
template <class S, class Reduce>
void eval_window_pool(const Node& node, const Tensor& x, Tensor& y, Reduce reduce) {
  Shape out;
  ResolvedWindow w = pool_window(node, x.shape(), out);
  y = Tensor(x.dtype(), out.values());
  const int64_t planes = x.dims()[0] * x.dims()[1];
  const std::vector<int64_t> in_spatial(x.dims().begin() + 2, x.dims().end());
  const int64_t in_plane = numel(in_spatial), out_plane = numel(w.out_dims);
  if (out_plane == 0 || planes == 0) return;
  const S* px = x.data<S>();
  S* py = y.mutable_data<S>();
  std::vector<WindowTap> taps;
  int64_t padded = 0;
  std::vector<int64_t> o(w.out_dims.size(), 0);
  int64_t p = 0;
  do {
    window_taps(w, in_spatial, o, taps, padded);
    for (int64_t c = 0; c < planes; ++c)
      py[c * out_plane + p] = reduce(taps, padded, px + c * in_plane);
    ++p;
  } while (next_index(o, w.out_dims));
}

void eval_max_pool(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  check_max_pool(node);
  visit_dtype(in[0]->dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (!std::is_same_v<S, bool>) {
      eval_window_pool<S>(node, *in[0], out[0],
                          [](const std::vector<WindowTap>& taps, int64_t, const S* x) {
                            // A window entirely in padding gives the lowest value, as ORT does.
                            C m = std::numeric_limits<C>::lowest();
                            for (const WindowTap& t : taps)
                              m = std::max(m, static_cast<C>(x[t.input_offset]));
                            return S(m);
                          });
    } else {
      fail("bool is not supported");
    }
  });
}

void eval_average_pool(const Node& node, std::span<const Tensor* const> in,
                       std::vector<Tensor>& out) {
  check_avg_pool(node);
  const bool include_pad = node.i("count_include_pad") != 0;
  visit_dtype(in[0]->dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      eval_window_pool<S>(node, *in[0], out[0],
                          [&](const std::vector<WindowTap>& taps, int64_t padded, const S* x) {
                            C sum = 0;
                            for (const WindowTap& t : taps)
                              sum += static_cast<C>(x[t.input_offset]);
                            // Taps past the end pad (ceil_mode) never count, as in ORT.
                            int64_t count =
                                include_pad ? padded : static_cast<int64_t>(taps.size());
                            return S(count > 0 ? sum / static_cast<C>(count) : C(0));
                          });
    } else {
      fail("{} is not supported", dtype_name(in[0]->dtype()));
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
  c.flops = static_cast<double>(y.numel()) * (taps + (node.op() == "AveragePool" ? 1 : 0));
  return c;
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

std::vector<AttrSpec> window_attrs(bool average) {
  std::vector<AttrSpec> a = {{"auto_pad", AttrType::String, Attribute("NOTSET")},
                             {"ceil_mode", AttrType::Int, Attribute(int64_t{0})},
                             {"dilations", AttrType::Ints, std::nullopt, true},
                             {"kernel_shape", AttrType::Ints},
                             {"pads", AttrType::Ints, std::nullopt, true},
                             {"strides", AttrType::Ints, std::nullopt, true}};
  if (average)
    a.push_back({"count_include_pad", AttrType::Int, Attribute(int64_t{0})});
  else
    a.push_back({"storage_order", AttrType::Int, Attribute(int64_t{0})});
  return a;
}

}  // namespace

void register_pool_ops(Registry& r) {
  r.add(OpDef{
      .name = "MaxPool",
      .summary = "max over sliding windows; padding never wins; the Indices output is rejected",
      .inputs = {{"X"}},
      .outputs = {"Y", "Indices"},
      .min_outputs = 1,
      .attrs = window_attrs(false),
      .infer = infer_window_pool,
      .eval = eval_max_pool,
      .cost = window_pool_cost,
  });
  r.add(OpDef{
      .name = "AveragePool",
      .summary = "mean over sliding windows, counting pads if count_include_pad",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .attrs = window_attrs(true),
      .infer = infer_window_pool,
      .eval = eval_average_pool,
      .cost = window_pool_cost,
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
