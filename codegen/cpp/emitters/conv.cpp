// Conv (1-D and 2-D, f32) through the runtime's conv2d_f32; 1-D runs as H = 1.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "kiln/rt/conv.h"

namespace kiln::codegen::cpp {

namespace {

// The node as the runtime's 2-D parameters (1-D lifted to H = 1).
kiln::rt::Conv2dParams conv_params(const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0)), w = dims_of(node.input(1));
  Window2d win = window_2d(node, {x.begin() + 2, x.end()}, {w.begin() + 2, w.end()});
  return kiln::rt::Conv2dParams{x[0],         x[1],         win.H,        win.W,
                                w[0],         win.KH,       win.KW,       win.OH,
                                win.OW,       win.stride_h, win.stride_w, win.pad_top,
                                win.pad_left, win.dil_h,    win.dil_w,    node.i("group")};
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
