// Resize: nearest, linear and cubic interpolation of an N-D tensor to given scales or sizes
// (ONNX Resize-19; Upsample and Resize-10 become it in the ONNX frontend). The kernel is
// kiln::rt::resize, shared with the generated code.
#include "ir/ops/resize.h"

#include <algorithm>
#include <cmath>

#include "ir/symbolic_params.h"

namespace kiln::ir {
namespace {

// A non-empty tensor, or nullptr.
const Tensor* given(const Tensor* t) { return t && t->numel() > 0 ? t : nullptr; }

rt::ResizeMode parse_mode(const Node& node) {
  const std::string& m = node.s("mode");
  if (m == "nearest") return rt::ResizeMode::Nearest;
  if (m == "linear") return rt::ResizeMode::Linear;
  if (m == "cubic") return rt::ResizeMode::Cubic;
  fail("{}: mode '{}' is not one of nearest, linear, cubic", node.describe(), m);
}

rt::ResizeCoord parse_coord(const Node& node) {
  const std::string& m = node.s("coordinate_transformation_mode");
  if (m == "half_pixel") return rt::ResizeCoord::HalfPixel;
  if (m == "half_pixel_symmetric") return rt::ResizeCoord::HalfPixelSymmetric;
  if (m == "pytorch_half_pixel") return rt::ResizeCoord::PytorchHalfPixel;
  if (m == "align_corners") return rt::ResizeCoord::AlignCorners;
  if (m == "asymmetric") return rt::ResizeCoord::Asymmetric;
  if (m == "tf_crop_and_resize") return rt::ResizeCoord::TfCropAndResize;
  fail("{}: coordinate_transformation_mode '{}' is not one of half_pixel, half_pixel_symmetric, "
       "pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize",
       node.describe(), m);
}

rt::ResizeNearest parse_nearest(const Node& node) {
  const std::string& m = node.s("nearest_mode");
  if (m == "round_prefer_floor") return rt::ResizeNearest::RoundPreferFloor;
  if (m == "round_prefer_ceil") return rt::ResizeNearest::RoundPreferCeil;
  if (m == "floor") return rt::ResizeNearest::Floor;
  if (m == "ceil") return rt::ResizeNearest::Ceil;
  fail("{}: nearest_mode '{}' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil",
       node.describe(), m);
}

// Output dims and per-axis scales from X's dims and the scales or sizes values.
void resolve_sizes(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& axes,
                   const Tensor* scales, const Tensor* sizes, ResizePlan& plan) {
  const size_t r = x.size();
  plan.out_dims = x;
  plan.scales.assign(r, 1.0);
  if (scales && sizes) fail("{}: give scales or sizes, not both", node.describe());
  if (!scales && !sizes) fail("{}: one of scales and sizes is required", node.describe());
  const Tensor* t = scales ? scales : sizes;
  if (t->rank() != 1 || t->numel() != static_cast<int64_t>(axes.size()))
    fail("{}: {} has shape {}, expected [{}] (one per resized axis)", node.describe(),
         scales ? "scales" : "sizes", dims_str(t->dims()), axes.size());
  if (scales) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = scales->as_double(static_cast<int64_t>(i));
      if (!(s > 0) || !std::isfinite(s)) fail("{}: scale {} must be positive, got {}", node.describe(), i, s);
      const int64_t a = axes[i];
      plan.scales[a] = s;
      const double out = std::floor(s * static_cast<double>(x[a]));
      if (out > 1e15) fail("{}: scale {} makes axis {} too long", node.describe(), s, a);
      plan.out_dims[a] = static_cast<int64_t>(out);
    }
    return;
  }
  if (sizes->dtype() != DType::I64) fail("{}: sizes must be int64, got {}", node.describe(), dtype_name(sizes->dtype()));
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t n = static_cast<int64_t>(sizes->as_double(static_cast<int64_t>(i)));
    if (n <= 0) fail("{}: size {} must be positive, got {}", node.describe(), i, n);
    if (x[axes[i]] == 0) fail("{}: axis {} of X is empty and cannot be resized", node.describe(), axes[i]);
    plan.out_dims[axes[i]] = n;
    plan.scales[axes[i]] = static_cast<double>(n) / static_cast<double>(x[axes[i]]);
  }
  const std::string& policy = node.s("keep_aspect_ratio_policy");
  if (policy == "stretch") return;
  if (policy != "not_larger" && policy != "not_smaller")
    fail("{}: keep_aspect_ratio_policy '{}' is not one of stretch, not_larger, not_smaller", node.describe(), policy);
  double s = plan.scales[axes[0]];
  for (int64_t a : axes) s = policy == "not_larger" ? std::min(s, plan.scales[a]) : std::max(s, plan.scales[a]);
  for (int64_t a : axes) {
    plan.scales[a] = s;
    plan.out_dims[a] = static_cast<int64_t>(s * static_cast<double>(x[a]) + 0.5);
  }
}

void infer_resize(Node& node) {
  const Shape& x = node.input(0)->shape();
  const int64_t rank = static_cast<int64_t>(x.rank());
  const std::vector<int64_t> axes = axes_attr_or_all(node, rank);
  if (node.has_input(3) && node.input(3)->dtype() != DType::I64)
    fail("{}: sizes must be int64, got {}", node.describe(), dtype_name(node.input(3)->dtype()));
  if (parse_mode(node) != rt::ResizeMode::Nearest) require_float(node, 0);
  // An input with a static empty shape is omitted, as ONNX spells it.
  auto present = [&](size_t i) {
    if (!node.has_input(i)) return false;
    const Shape& s = node.input(i)->shape();
    return !(s.is_static() && s.numel() == 0);
  };
  const bool has_scales = present(2), has_sizes = present(3);
  if (has_scales == has_sizes)
    fail("{}: give exactly one of scales and sizes (non-empty)", node.describe());
  const Value* src = node.input(has_scales ? 2 : 3);
  if (x.is_static() && src->is_constant()) {
    ResizePlan plan;
    resize_plan(node, x.values(), nullptr, has_scales ? &src->constant() : nullptr,
                has_sizes ? &src->constant() : nullptr, plan);
    node.output(0)->set_type(node.input(0)->dtype(), Shape::of(plan.out_dims));
    return;
  }
  std::vector<Dim> dims = x.dims();
  for (int64_t a : axes) dims[a] = Dim::unknown();
  const Graph* g = node.output(0)->graph();
  if (src->is_constant() && x.is_known() && g) {
    // Symbolic input dims, constant scales or sizes: the output dims as polynomials of the
    // symbols where they are (symbolic_params.h), e.g. 2 * "H/32" for a scale of 2.
    std::vector<std::string> symbols;
    for (const Dim& d : x.dims())
      for (const std::string& s : d.symbols())
        if (std::find(symbols.begin(), symbols.end(), s) == symbols.end()) symbols.push_back(s);
    auto lifted = lift_params(symbols, g->dim_ranges(), [&](const std::map<std::string, int64_t>& at) {
      std::vector<int64_t> xs;
      for (const Dim& d : x.dims()) {
        const Dim b = d.bind(at);
        if (!b.is_static()) fail("dim {} is not known at a sample point", d.name());
        xs.push_back(b.value());
      }
      ResizePlan plan;
      resize_plan(node, xs, nullptr, has_scales ? &src->constant() : nullptr, has_sizes ? &src->constant() : nullptr,
                  plan);
      return plan.out_dims;
    });
    if (lifted) dims = *lifted;
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_resize(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  ResizePlan plan;
  resize_plan(node, x.dims(), given(optional_input(in, 1)), given(optional_input(in, 2)),
              given(optional_input(in, 3)), plan);
  out[0] = Tensor(x.dtype(), plan.out_dims);
  std::vector<unsigned char> scratch(rt::resize_scratch_bytes(plan.params));
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      rt::resize<S, C>(plan.params, x.data<S>(), out[0].mutable_data<S>(), scratch.data());
    } else if (plan.params.mode == rt::ResizeMode::Nearest) {
      rt::resize<S, C>(plan.params, x.data<S>(), out[0].mutable_data<S>(), scratch.data());
    } else {
      fail("{}: {} interpolation of {} is not supported", node.describe(), node.s("mode"),
           dtype_name(x.dtype()));
    }
  });
}

Cost resize_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& y = node.output(0)->shape();
  if (!y.is_static()) return c;
  const std::string& m = node.s("mode");
  const double taps_per_axis = m == "nearest" ? 0 : m == "linear" ? 2 : 4;
  c.flops = 2.0 * taps_per_axis * static_cast<double>(y.rank()) * static_cast<double>(y.numel());
  return c;
}

}  // namespace

void resize_plan(const Node& node, const std::vector<int64_t>& x_dims, const Tensor* roi, const Tensor* scales,
                 const Tensor* sizes, ResizePlan& plan) {
  const int64_t rank = static_cast<int64_t>(x_dims.size());
  const std::vector<int64_t> axes = axes_attr_or_all(node, rank);
  if (rank == 0) fail("{}: X must have rank >= 1", node.describe());
  rt::ResizeParams& p = plan.params;
  p.mode = parse_mode(node);
  p.coord = parse_coord(node);
  p.nearest = parse_nearest(node);
  p.cubic_a = node.f("cubic_coeff_a");
  p.antialias = node.i("antialias") != 0;
  p.exclude_outside = node.i("exclude_outside") != 0;
  p.extrapolation = node.f("extrapolation_value");
  if (p.antialias && p.mode == rt::ResizeMode::Nearest)
    fail("{}: antialias needs mode linear or cubic, not nearest", node.describe());
  plan.in_dims = x_dims;
  resolve_sizes(node, x_dims, axes, given(scales), given(sizes), plan);
  plan.roi.clear();
  if (p.coord == rt::ResizeCoord::TfCropAndResize && given(roi)) {
    const int64_t n = static_cast<int64_t>(axes.size());
    if (roi->rank() != 1 || roi->numel() != 2 * n)
      fail("{}: roi has shape {}, expected [{}] (starts and ends of the resized axes)", node.describe(),
           dims_str(roi->dims()), 2 * n);
    plan.roi.assign(2 * rank, 0.0);
    std::fill(plan.roi.begin() + rank, plan.roi.end(), 1.0);
    for (int64_t i = 0; i < n; ++i) {
      plan.roi[axes[i]] = roi->as_double(i);
      plan.roi[rank + axes[i]] = roi->as_double(n + i);
    }
  }
  p.rank = rank;
  p.in_dims = plan.in_dims.data();
  p.out_dims = plan.out_dims.data();
  p.scales = plan.scales.data();
  p.roi = plan.roi.empty() ? nullptr : plan.roi.data();
}

const Tensor* resize_input_constant(const Node& node, size_t i) {
  if (!node.has_input(i) || !node.input(i)->is_constant()) return nullptr;
  return given(&node.input(i)->constant());
}

void register_resize_ops(Registry& r) {
  r.add(OpDef{
      .name = "Resize",
      .summary = "nearest, linear or cubic resampling to given scales or sizes",
      .inputs = {{"X"},
                 {"roi", true},
                 {.name = "scales", .optional = true, .sets_output_shape = true},
                 {.name = "sizes", .optional = true, .sets_output_shape = true}},
      .outputs = {"Y"},
      .attrs = {{"antialias", AttrType::Int, Attribute(int64_t{0})},
                {"axes", AttrType::Ints, std::nullopt, true},
                {"coordinate_transformation_mode", AttrType::String, Attribute("half_pixel")},
                {"cubic_coeff_a", AttrType::Float, Attribute(-0.75f)},
                {"exclude_outside", AttrType::Int, Attribute(int64_t{0})},
                {"extrapolation_value", AttrType::Float, Attribute(0.0f)},
                {"keep_aspect_ratio_policy", AttrType::String, Attribute("stretch")},
                {"mode", AttrType::String, Attribute("nearest")},
                {"nearest_mode", AttrType::String, Attribute("round_prefer_floor")}},
      .infer = infer_resize,
      .eval = eval_resize,
      .cost = resize_cost,
  });
}

}  // namespace kiln::ir
