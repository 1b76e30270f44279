// Conv (1-D and 2-D, f32) through the runtime's conv2d_f32; 1-D runs as H = 1.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/window.h"
#include "kiln/rt/conv.h"

namespace kiln::codegen::cpp {

namespace {

// The node as the runtime's 2-D parameters (1-D lifted to H = 1).
kiln::rt::Conv2dParams conv_params(const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0)), w = dims_of(node.input(1));
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  ir::ResolvedWindow win = ir::resolve_window(node, spatial, kernel);
  bool one_d = spatial.size() == 1;
  auto at = [&](const std::vector<int64_t>& v, size_t i2d, int64_t lifted) {
    return one_d ? (i2d == 0 ? lifted : v[0]) : v[i2d];
  };
  kiln::rt::Conv2dParams p{};
  p.N = x[0];
  p.C = x[1];
  p.H = at(spatial, 0, 1);
  p.W = at(spatial, 1, 1);
  p.M = w[0];
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
  p.group = node.i("group");
  return p;
}

std::string unsupported(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  size_t rank = node.input(0)->shape().rank();
  if (rank != 3 && rank != 4)
    return fmt::format("compiled Conv supports 1-D and 2-D convolutions, not {}-D", rank - 2);
  return "";
}

size_t scratch_bytes(const ir::Node& node) {
  return kiln::rt::conv2d_scratch_floats(conv_params(node)) * sizeof(float);
}

void emit(EmitContext& ctx, const ir::Node& node) {
  kiln::rt::Conv2dParams p = conv_params(node);
  ctx.line(fmt::format(
      "const kiln::rt::Conv2dParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};",
      p.N, p.C, p.H, p.W, p.M, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top,
      p.pad_left, p.dil_h, p.dil_w, p.group));
  bool needs_scratch = kiln::rt::conv2d_scratch_floats(p) > 0;
  ctx.line(fmt::format("kiln::rt::conv2d_f32(p, {}, {}, {}, {}, {}, pool);", ctx.in(node, 0),
                       ctx.in(node, 1), ctx.in(node, 2), ctx.out(node, 0),
                       needs_scratch ? "reinterpret_cast<float*>" + ctx.scratch(node) : "nullptr"));
}

}  // namespace

void register_conv_emitters(EmitterRegistry& r) {
  r.add("Conv", Emitter{.emit = emit, .unsupported = unsupported, .scratch_bytes = scratch_bytes});
}

}  // namespace kiln::codegen::cpp
