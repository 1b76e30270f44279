// MaxPool and AveragePool (1-D and 2-D, f32), GlobalAveragePool (f32), GlobalMaxPool (any
// ordered dtype).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "kiln/rt/pool.h"

namespace kiln::codegen::cpp {

namespace {

kiln::rt::Pool2dParams pool_params(const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  Window2d win = window_2d(node, {x.begin() + 2, x.end()}, node.ints("kernel_shape"));
  kiln::rt::Pool2dParams p{x[0],         x[1],         win.H,        win.W,       win.KH,
                           win.KW,       win.OH,       win.OW,       win.stride_h, win.stride_w,
                           win.pad_top,  win.pad_left, win.dil_h,    win.dil_w};
  p.pad_bottom = win.pad_bottom;
  p.pad_right = win.pad_right;
  return p;
}

std::string params_literal(const kiln::rt::Pool2dParams& p) {
  return fmt::format(
      "kiln::rt::Pool2dParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};",
      p.N, p.C, p.H, p.W, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
      p.dil_h, p.dil_w, p.pad_bottom, p.pad_right);
}

std::string unsupported_window(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  size_t rank = node.input(0)->shape().rank();
  if (rank != 3 && rank != 4)
    return fmt::format("compiled {} supports 1-D and 2-D pooling, not {}-D", node.op(), rank - 2);
  if (node.num_outputs() > 1) return "the Indices output is not supported";
  return "";
}

void emit_maxpool(EmitContext& ctx, const ir::Node& node) {
  ctx.line("const " + params_literal(pool_params(node)));
  ctx.line(fmt::format("kiln::rt::maxpool2d_f32(p, {}, {}, pool);", ctx.in(node, 0),
                       ctx.out(node, 0)));
}

void emit_avgpool(EmitContext& ctx, const ir::Node& node) {
  ctx.line("const " + params_literal(pool_params(node)));
  ctx.line(fmt::format("kiln::rt::avgpool2d_f32(p, {}, {}, {}, pool);",
                       node.i("count_include_pad") ? "true" : "false", ctx.in(node, 0),
                       ctx.out(node, 0)));
}

std::pair<int64_t, int64_t> nc_and_spatial(const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t spatial = 1;
  for (size_t i = 2; i < x.size(); ++i) spatial *= x[i];
  return {x[0] * x[1], spatial};
}

void emit_global_avg(EmitContext& ctx, const ir::Node& node) {
  auto [nc, spatial] = nc_and_spatial(node);
  ctx.line(fmt::format("kiln::rt::global_avgpool_f32({}, {}, {}, {});", nc, spatial,
                       ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_global_max(EmitContext& ctx, const ir::Node& node) {
  auto [nc, spatial] = nc_and_spatial(node);
  ctx.line(fmt::format("kiln::rt::global_maxpool({}, {}, {}, {});", nc, spatial, ctx.in(node, 0),
                       ctx.out(node, 0)));
}

}  // namespace

void register_pool_emitters(EmitterRegistry& r) {
  r.add("MaxPool", Emitter{.emit = emit_maxpool, .unsupported = unsupported_window});
  r.add("AveragePool", Emitter{.emit = emit_avgpool, .unsupported = unsupported_window});
  r.add("GlobalAveragePool", Emitter{.emit = emit_global_avg, .unsupported = require_f32});
  r.add("GlobalMaxPool", Emitter{.emit = emit_global_max});
}

}  // namespace kiln::codegen::cpp
