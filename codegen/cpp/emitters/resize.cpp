// Resize (any dtype for nearest, floating types for linear and cubic) through the runtime's
// kiln::rt::resize, with the plan the IR resolves (ir/ops/resize.h). Scales and sizes must be
// constants; a tf_crop_and_resize roi may be read at run time (f32).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/op_helpers.h"
#include "ir/ops/resize.h"
#include "ir/symbolic_params.h"

namespace kiln::codegen::cpp {

namespace {

bool runtime_roi(const ir::Node& node) {
  return node.s("coordinate_transformation_mode") == "tf_crop_and_resize" && node.has_input(1) &&
         !node.input(1)->is_constant() && node.input(1)->shape().numel() > 0;
}

// The plan from the node's constants, the symbolic dims bound to `at`. With a roi read at
// run time, a stand-in roi that resizes every axis, so that the scratch size covers any roi.
void plan_of(const ir::Node& node, ir::ResizePlan& plan, const std::map<std::string, int64_t>& at = {}) {
  const std::vector<int64_t> x = ir::bound_dims(node.input(0), at);
  std::optional<ir::Tensor> stand_in;
  const ir::Tensor* roi = ir::resize_input_constant(node, 1);
  if (runtime_roi(node)) {
    stand_in = ir::Tensor(ir::DType::F32, node.input(1)->shape().values());
    for (int64_t i = 0; i < stand_in->numel(); ++i) stand_in->mutable_data<float>()[i] = 0.5f;
    roi = &*stand_in;
  }
  ir::resize_plan(node, x, roi, ir::resize_input_constant(node, 2), ir::resize_input_constant(node, 3), plan);
}

// With symbolic dims: the input and output extents as polynomials of the symbols, when the
// scales (and roi) are the same at every size (constant scales, not sizes); else nullopt.
std::optional<std::vector<ir::Dim>> symbolic_extents(const ir::Node& node) {
  std::optional<std::pair<std::vector<double>, std::vector<double>>> first;  // scales, roi
  bool same = true;
  auto lifted = ir::lift_params(ir::node_symbols(node), ranges_of(node), [&](const std::map<std::string, int64_t>& at) {
    ir::ResizePlan plan;
    plan_of(node, plan, at);
    if (!first) first = std::make_pair(plan.scales, plan.roi);
    same = same && plan.scales == first->first && plan.roi == first->second;
    std::vector<int64_t> f = plan.in_dims;
    f.insert(f.end(), plan.out_dims.begin(), plan.out_dims.end());
    return f;
  });
  if (!lifted || !same) return std::nullopt;
  return lifted;
}

std::string unsupported(const ir::Node& node) {
  for (size_t i : {size_t{2}, size_t{3}})
    if (node.has_input(i) && !node.input(i)->is_constant() && node.input(i)->shape().numel() > 0)
      return fmt::format("input '{}' ({}) must be known at compile time", node.input(i)->name(),
                         i == 2 ? "scales" : "sizes");
  if (runtime_roi(node) && node.input(1)->dtype() != ir::DType::F32)
    return fmt::format("input '{}' (roi) is {}; compiled Resize reads an f32 roi at run time",
                       node.input(1)->name(), ir::dtype_name(node.input(1)->dtype()));
  if (has_symbols(node) && (runtime_roi(node) || !symbolic_extents(node)))
    return "with symbolic dims, only Resize by constant scales is compiled (its scales must not depend on them)";
  const ir::DType t = node.input(0)->dtype();
  if (node.s("mode") != "nearest" && !ir::is_float(t))
    return fmt::format("compiled Resize interpolates ({}) floating-point types only, not {}", node.s("mode"),
                       ir::dtype_name(t));
  return "";
}

size_t scratch_bytes(const ir::Node& node, const EmitOptions&) {
  return max_over_range(node, [&](const std::map<std::string, int64_t>& at) {
    ir::ResizePlan plan;
    plan_of(node, plan, at);
    return kiln::rt::resize_scratch_bytes(plan.params);
  });
}

const char* mode_name(kiln::rt::ResizeMode m) {
  switch (m) {
    case kiln::rt::ResizeMode::Nearest: return "Nearest";
    case kiln::rt::ResizeMode::Linear: return "Linear";
    case kiln::rt::ResizeMode::Cubic: return "Cubic";
  }
  return "";
}

const char* coord_name(kiln::rt::ResizeCoord c) {
  switch (c) {
    case kiln::rt::ResizeCoord::HalfPixel: return "HalfPixel";
    case kiln::rt::ResizeCoord::HalfPixelSymmetric: return "HalfPixelSymmetric";
    case kiln::rt::ResizeCoord::PytorchHalfPixel: return "PytorchHalfPixel";
    case kiln::rt::ResizeCoord::AlignCorners: return "AlignCorners";
    case kiln::rt::ResizeCoord::Asymmetric: return "Asymmetric";
    case kiln::rt::ResizeCoord::TfCropAndResize: return "TfCropAndResize";
  }
  return "";
}

const char* nearest_name(kiln::rt::ResizeNearest n) {
  switch (n) {
    case kiln::rt::ResizeNearest::RoundPreferFloor: return "RoundPreferFloor";
    case kiln::rt::ResizeNearest::RoundPreferCeil: return "RoundPreferCeil";
    case kiln::rt::ResizeNearest::Floor: return "Floor";
    case kiln::rt::ResizeNearest::Ceil: return "Ceil";
  }
  return "";
}

std::string doubles(const std::vector<double>& v) {
  std::string s;
  for (double d : v) s += (s.empty() ? "" : ", ") + float_literal(d, ir::DType::F64);
  return s;
}

void emit(EmitContext& ctx, const ir::Node& node) {
  ir::ResizePlan plan;
  plan_of(node, plan, tuning_point(node));
  const kiln::rt::ResizeParams& p = plan.params;
  const int64_t rank = p.rank;
  std::string in_dims = ctx.array(plan.in_dims), out_dims = ctx.array(plan.out_dims);
  if (has_symbols(node)) {
    std::optional<std::vector<ir::Dim>> f = symbolic_extents(node);
    if (!f) fail("{}: its extents are not polynomials of the symbolic dims", node.describe());
    in_dims = ctx.dims({f->begin(), f->begin() + rank});
    out_dims = ctx.dims({f->begin() + rank, f->end()});
  }
  ctx.line(fmt::format("static const double scales[] = {{{}}};", doubles(plan.scales)));
  std::string roi = "nullptr";
  if (runtime_roi(node)) {
    // Axes the op does not resize keep [0, 1]; the others read the input's starts and ends.
    std::vector<double> fixed(2 * rank, 0.0);
    std::fill(fixed.begin() + rank, fixed.end(), 1.0);
    ctx.line(fmt::format("double roi[] = {{{}}};", doubles(fixed)));
    const std::vector<int64_t> axes = ir::axes_attr_or_all(node, rank);
    const int64_t n = static_cast<int64_t>(axes.size());
    for (int64_t i = 0; i < n; ++i) {
      ctx.line(fmt::format("roi[{}] = static_cast<double>({}[{}]);", axes[i], ctx.in(node, 1), i));
      ctx.line(fmt::format("roi[{}] = static_cast<double>({}[{}]);", rank + axes[i], ctx.in(node, 1), n + i));
    }
    roi = "roi";
  } else if (!plan.roi.empty()) {
    ctx.line(fmt::format("static const double roi[] = {{{}}};", doubles(plan.roi)));
    roi = "roi";
  }
  ctx.line(fmt::format(
      "const kiln::rt::ResizeParams p{{{}, {}, {}, scales, {}, kiln::rt::ResizeMode::{}, kiln::rt::ResizeCoord::{}, "
      "kiln::rt::ResizeNearest::{}, {}, {}, {}, {}}};",
      rank, in_dims, out_dims, roi, mode_name(p.mode), coord_name(p.coord),
      nearest_name(p.nearest), float_literal(p.cubic_a, ir::DType::F64), p.antialias ? "true" : "false",
      p.exclude_outside ? "true" : "false", float_literal(p.extrapolation, ir::DType::F64)));
  const ir::DType t = node.input(0)->dtype();
  const std::string compute = cpp_compute_type(t);  // unused by nearest, which copies
  const bool needs_scratch = scratch_bytes(node, ctx.options()) > 0;
  ctx.line(fmt::format("kiln::rt::resize<{}, {}>(p, {}, {}, {});", cpp_type(t), compute, ctx.in(node, 0),
                       ctx.out(node, 0), needs_scratch ? ctx.scratch(node) : "nullptr"));
}

}  // namespace

void register_resize_emitters(EmitterRegistry& r) {
  r.add("Resize", Emitter{.emit = emit, .unsupported = unsupported, .scratch_bytes = scratch_bytes, .dynamic_shapes = true,
                          .batch_items = every_item});
}

}  // namespace kiln::codegen::cpp
