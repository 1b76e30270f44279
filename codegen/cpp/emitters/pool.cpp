// MaxPool and AveragePool (1-D and 2-D, f32), GlobalAveragePool (f32), GlobalMaxPool (any
// ordered dtype).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/window.h"
#include "kiln/rt/pool.h"

namespace kiln::codegen::cpp {

namespace {

kiln::rt::Pool2dParams pool_params(const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  ir::ResolvedWindow win = ir::resolve_window(node, spatial, node.ints("kernel_shape"));
  bool one_d = spatial.size() == 1;
  auto at = [&](const std::vector<int64_t>& v, size_t i2d, int64_t lifted) {
    return one_d ? (i2d == 0 ? lifted : v[0]) : v[i2d];
  };
  kiln::rt::Pool2dParams p{};
  p.N = x[0];
  p.C = x[1];
  p.H = at(spatial, 0, 1);
  p.W = at(spatial, 1, 1);
  p.KH = at(win.kernel, 0, 1);
  p.KW = at(win.kernel, 1, 1);
  p.OH = at(win.out_dims, 0, 1);
  p.OW = at(win.out_dims, 1, 1);
  p.stride_h = at(win.strides, 0, 1);
  p.stride_w = at(win.strides, 1, 1);
  p.pad_top = at(win.pads_begin, 0, 0);
  p.pad_left = at(win.pads_begin, 1, 0);
  p.dil_h = at(win.dilations, 0, 1);
  p.dil_w = at(win.dilations, 1, 1);
  p.pad_bottom = at(win.pads_end, 0, 0);
  p.pad_right = at(win.pads_end, 1, 0);
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
