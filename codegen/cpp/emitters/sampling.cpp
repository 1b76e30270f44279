// GridSample and AffineGrid (floating types) through the runtime's grid_sample and
// affine_grid, with the geometry the IR resolves (ir/ops/sampling.h).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/sampling.h"

namespace kiln::codegen::cpp {

namespace {

std::string grid_sample_unsupported(const ir::Node& node) {
  if (!ir::is_float(node.input(0)->dtype()) || node.input(1)->dtype() != node.input(0)->dtype())
    return fmt::format("compiled GridSample needs X and grid of one floating type, not {} and {}",
                       ir::dtype_name(node.input(0)->dtype()), ir::dtype_name(node.input(1)->dtype()));
  return "";
}

void emit_grid_sample(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> in, out;
  const kiln::rt::GridSampleParams p =
      ir::grid_sample_params(node, dims_of(node.input(0)), dims_of(node.input(1)), in, out);
  const char* mode = p.mode == kiln::rt::GridSampleMode::Nearest  ? "Nearest"
                     : p.mode == kiln::rt::GridSampleMode::Linear ? "Linear"
                                                                  : "Cubic";
  const char* pad = p.padding == kiln::rt::GridSamplePadding::Zeros    ? "Zeros"
                    : p.padding == kiln::rt::GridSamplePadding::Border ? "Border"
                                                                       : "Reflection";
  ctx.line(fmt::format("const kiln::rt::GridSampleParams p{{{}, {}, {}, {}, {}, kiln::rt::GridSampleMode::{}, "
                       "kiln::rt::GridSamplePadding::{}, {}}};",
                       p.N, p.C, p.rank, ctx.array(in), ctx.array(out), mode, pad,
                       p.align_corners ? "true" : "false"));
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::grid_sample<{}, {}>(p, {}, {}, {});", cpp_type(t), cpp_compute_type(t),
                       ctx.in(node, 0), ctx.in(node, 1), ctx.out(node, 0)));
}

std::string affine_grid_unsupported(const ir::Node& node) {
  if (!node.input(1)->is_constant())
    return fmt::format("input '{}' (size) must be known at compile time", node.input(1)->name());
  if (!ir::is_float(node.input(0)->dtype()))
    return fmt::format("compiled AffineGrid supports floating types, not {}", ir::dtype_name(node.input(0)->dtype()));
  return "";
}

void emit_affine_grid(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> y = dims_of(node.output(0));
  const int64_t rank = y.back();
  const std::vector<int64_t> spatial(y.begin() + 1, y.end() - 1);
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::affine_grid<{}>({}, {}, {}, {}, {}, {});", cpp_type(t), y[0], rank,
                       ctx.array(spatial), node.i("align_corners") ? "true" : "false", ctx.in(node, 0),
                       ctx.out(node, 0)));
}

}  // namespace

void register_sampling_emitters(EmitterRegistry& r) {
  r.add("GridSample", Emitter{.emit = emit_grid_sample, .unsupported = grid_sample_unsupported});
  r.add("AffineGrid", Emitter{.emit = emit_affine_grid, .unsupported = affine_grid_unsupported});
}

}  // namespace kiln::codegen::cpp
