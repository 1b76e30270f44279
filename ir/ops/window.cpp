#include "ir/ops/window.h"

#include <algorithm>

#include "ir/ops/op_helpers.h"
#include "ir/symbolic_params.h"

namespace kiln::ir {
namespace {

// Bounds every window attribute so that the arithmetic below cannot overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 30;

std::vector<int64_t> per_axis(const Node& node, std::string_view name, size_t n, int64_t fill,
                              int64_t min_value) {
  if (!node.has_attr(name)) return std::vector<int64_t>(n, fill);
  const std::vector<int64_t>& v = node.ints(name);
  if (v.size() != n)
    fail("{}: attribute '{}' has {} values, expected {} (one per spatial axis)", node.describe(),
         name, v.size(), n);
  for (int64_t x : v)
    if (x < min_value || x > kMaxWindowValue)
      fail("{}: attribute '{}' value {} is out of range [{}, {}]", node.describe(), name, x,
           min_value, kMaxWindowValue);
  return v;
}

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

}  // namespace

ResolvedWindow resolve_window(const Node& node, const std::vector<int64_t>& spatial_in_dims,
                              std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  if (spatial_in_dims.size() != n)
    fail("{}: kernel has {} spatial dims, input has {}", node.describe(), n,
         spatial_in_dims.size());
  for (int64_t k : kernel)
    if (k < 1 || k > kMaxWindowValue)
      fail("{}: kernel shape {} must be positive", node.describe(), ints_str(kernel));

  ResolvedWindow w;
  w.kernel = std::move(kernel);
  w.strides = per_axis(node, "strides", n, 1, 1);
  w.dilations = per_axis(node, "dilations", n, 1, 1);
  std::vector<int64_t> pads(2 * n, 0);
  if (node.has_attr("pads")) {
    pads = node.ints("pads");
    if (pads.size() != 2 * n)
      fail("{}: attribute 'pads' has {} values, expected {} (begin and end per spatial axis)",
           node.describe(), pads.size(), 2 * n);
    for (int64_t p : pads)
      if (p < 0 || p > kMaxWindowValue)
        fail("{}: pads {} must be non-negative", node.describe(), ints_str(pads));
  }
  std::string auto_pad = node.has_attr("auto_pad") ? node.s("auto_pad") : "NOTSET";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    fail("{}: unknown auto_pad '{}' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)",
         node.describe(), auto_pad);
  int64_t ceil_mode = node.has_attr("ceil_mode") ? node.i("ceil_mode") : 0;
  if (ceil_mode != 0 && ceil_mode != 1)
    fail("{}: ceil_mode must be 0 or 1, got {}", node.describe(), ceil_mode);

  w.pads_begin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n));
  w.pads_end.assign(pads.begin() + static_cast<ptrdiff_t>(n), pads.end());
  w.out_dims.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = spatial_in_dims[i];
    const int64_t s = w.strides[i];
    const int64_t dk = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (auto_pad == "VALID") {
      w.pads_begin[i] = w.pads_end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      if (in < 0) {
        w.pads_begin[i] = w.pads_end[i] = -1;
        continue;
      }
      int64_t out = ceil_div(in, s);
      int64_t needed = std::max<int64_t>(0, (out - 1) * s + dk - in);
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? needed / 2 : (needed + 1) / 2;
      w.pads_end[i] = needed - w.pads_begin[i];
      w.out_dims[i] = out;
      continue;
    }
    if (in < 0) continue;
    const int64_t padded = in + w.pads_begin[i] + w.pads_end[i];
    if (padded < dk)
      fail("{}: kernel extent {} is larger than the padded input {} on spatial axis {}",
           node.describe(), dk, padded, i);
    int64_t out = (ceil_mode ? ceil_div(padded - dk, s) : (padded - dk) / s) + 1;
    // A window must start inside the input or its begin pad (ONNX, PyTorch).
    if (ceil_mode && (out - 1) * s >= in + w.pads_begin[i]) --out;
    w.out_dims[i] = out;
  }
  return w;
}

std::vector<Dim> window_out_dims(const ResolvedWindow& w) {
  std::vector<Dim> dims;
  for (int64_t d : w.out_dims) dims.push_back(d >= 0 ? Dim(d) : Dim::unknown());
  return dims;
}

std::vector<Dim> window_out_dims(const Node& node, const std::vector<Dim>& spatial_in,
                                 const std::vector<int64_t>& kernel, const ResolvedWindow& w) {
  std::vector<Dim> dims = window_out_dims(w);
  const Graph* g = node.output(0) ? node.output(0)->graph() : nullptr;
  if (!g) return dims;
  for (size_t i = 0; i < dims.size() && i < spatial_in.size(); ++i) {
    if (!dims[i].is_unknown() || spatial_in[i].is_unknown()) continue;
    std::vector<int64_t> in(w.out_dims.size(), -1);
    for (size_t j = 0; j < in.size() && j < spatial_in.size(); ++j)
      if (spatial_in[j].is_static()) in[j] = spatial_in[j].value();
    const Dim& d = spatial_in[i];
    auto lifted = lift_params(d.symbols(), g->dim_ranges(), [&](const std::map<std::string, int64_t>& at) {
      const Dim b = d.bind(at);
      if (!b.is_static()) fail("dim {} is not known at a sample point", d.name());
      in[i] = b.value();
      return std::vector<int64_t>{resolve_window(node, in, kernel).out_dims[i]};
    });
    if (lifted) dims[i] = (*lifted)[0];
  }
  return dims;
}

void window_taps(const ResolvedWindow& w, const std::vector<int64_t>& in_dims,
                 const std::vector<int64_t>& out_index, std::vector<WindowTap>& taps,
                 int64_t& padded_count) {
  const size_t n = w.kernel.size();
  taps.clear();
  padded_count = 0;
  std::vector<int64_t> k(n, 0);
  int64_t kernel_index = 0;
  do {
    bool inside = true, in_padded = true;
    int64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      int64_t pos = out_index[i] * w.strides[i] - w.pads_begin[i] + k[i] * w.dilations[i];
      if (pos >= in_dims[i] + w.pads_end[i]) in_padded = false;
      if (pos < 0 || pos >= in_dims[i]) inside = false;
      offset = offset * in_dims[i] + pos;
    }
    if (in_padded) ++padded_count;
    if (inside) taps.push_back({kernel_index, offset});
    ++kernel_index;
  } while (next_index(k, w.kernel));
}

}  // namespace kiln::ir
