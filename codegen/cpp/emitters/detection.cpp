// RoiAlign (floating types) through the runtime's roi_align; NonMaxSuppression's output length
// depends on the data, so it runs in the interpreter only.
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

std::string nms_unsupported(const ir::Node&) {
  return "its output length depends on the input data (the number of boxes kept): runs in the interpreter only";
}

}  // namespace

void register_detection_emitters(EmitterRegistry& r) {
  r.add("RoiAlign", Emitter{.emit = emit_roi_align, .unsupported = roi_align_unsupported});
  r.add("NonMaxSuppression", Emitter{.emit = nullptr, .unsupported = nms_unsupported});
}

}  // namespace kiln::codegen::cpp
