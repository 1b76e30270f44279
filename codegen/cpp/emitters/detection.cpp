// RoiAlign (floating types) through the runtime's roi_align; NonMaxSuppression through nms_f32,
// the number of boxes it keeps a data-dependent dim.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/detection.h"

namespace kiln::codegen::cpp {

namespace {

std::string roi_align_unsupported(const ir::Node& node) {
  if (!ir::is_float(node.input(0)->dtype()))
    return fmt::format("compiled RoiAlign supports floating types, not {}", ir::dtype_name(node.input(0)->dtype()));
  return "";
}

void emit_roi_align(EmitContext& ctx, const ir::Node& node) {
  const std::vector<int64_t> x = dims_of(node.input(0));
  const kiln::rt::RoiAlignParams p = ir::roi_align_params(node, x, dims_of(node.input(1))[0]);
  ctx.line(fmt::format("const kiln::rt::RoiAlignParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};", p.N, p.C,
                       p.H, p.W, p.rois, p.out_h, p.out_w, p.sampling_ratio,
                       float_literal(p.spatial_scale, ir::DType::F64), p.half_pixel ? "true" : "false",
                       p.max_mode ? "true" : "false"));
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("if (!kiln::rt::roi_align<{}, int64_t>(p, {}, {}, {}, {})) {}", cpp_type(t), ctx.in(node, 0),
                       ctx.in(node, 1), ctx.in(node, 2), ctx.out(node, 0),
                       ctx.fail_stmt(node, "a batch index is out of range")));
}

// The count of boxes kept is a data-dependent dim (passes::bound_data_dependent_dims): the
// output is planned for the most boxes NMS can keep, and the count found is stored for the
// nodes after it and for the output's shape.
std::string nms_unsupported(const ir::Node& node) {
  if (!is_data_dependent_dim(node.output(0), 0))
    return "its output length depends on the input data (the number of boxes kept): runs in the interpreter only";
  return "";
}

size_t nms_scratch_bytes(const ir::Node& node, const EmitOptions&) {
  // order and kept: one int64 per box each.
  const ir::Graph* g = node.input(1)->graph();
  const std::optional<int64_t> boxes = node.input(1)->shape()[2].max_value(g ? g->dim_ranges() : ir::DimRanges{});
  return boxes ? static_cast<size_t>(2 * *boxes) * sizeof(int64_t) : 0;
}

// An optional scalar input's value at run time, or `fallback` when it is omitted or empty.
std::string scalar_or(EmitContext& ctx, const ir::Node& node, size_t i, const std::string& fallback) {
  if (!node.has_input(i) || (node.input(i)->shape().is_static() && node.input(i)->shape().numel() == 0))
    return fallback;
  return fmt::format("static_cast<double>(({})[0])", ctx.in(node, i));
}

void emit_nms(EmitContext& ctx, const ir::Node& node) {
  const ir::Shape& s = node.input(1)->shape();  // [batches, classes, boxes]
  const bool has_score = node.has_input(4) && !(node.input(4)->shape().is_static() && node.input(4)->shape().numel() == 0);
  ctx.line(fmt::format("const kiln::rt::NmsParams p{{{}, {}, {}, static_cast<int64_t>({}), {}, {}, {}, {}}};",
                       ctx.dim(s[0]), ctx.dim(s[1]), ctx.dim(s[2]), scalar_or(ctx, node, 2, "0"),
                       scalar_or(ctx, node, 3, "0.0"), has_score ? "true" : "false", scalar_or(ctx, node, 4, "0.0"),
                       node.i("center_point_box") != 0 ? "true" : "false"));
  ctx.line(fmt::format("int64_t* const order = reinterpret_cast<int64_t*>{};", ctx.scratch(node)));
  ctx.line(fmt::format("{} = kiln::rt::nms_f32(p, {}, {}, {}, order, order + {});",
                       ctx.dim_slot(node.output(0)->shape()[0].name()), ctx.in(node, 0), ctx.in(node, 1),
                       ctx.out(node, 0), ctx.dim(s[2])));
}

}  // namespace

void register_detection_emitters(EmitterRegistry& r) {
  r.add("RoiAlign", Emitter{.emit = emit_roi_align, .unsupported = roi_align_unsupported});
  r.add("NonMaxSuppression", Emitter{.emit = emit_nms,
                                     .unsupported = nms_unsupported,
                                     .scratch_bytes = nms_scratch_bytes,
                                     .dynamic_shapes = true});
}

}  // namespace kiln::codegen::cpp
