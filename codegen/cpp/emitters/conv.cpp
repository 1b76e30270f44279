// Conv (1-D and 2-D, f32) through the runtime's conv2d kernels (emitter_util's emit_conv2d,
// shared with kiln.FusedConv); 1-D runs as H = 1.
#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

void register_conv_emitters(EmitterRegistry& r) {
  r.add("Conv", Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) {
                          emit_conv2d(ctx, node, "kiln::rt::Epilogue{}");
                        },
                        .unsupported = unsupported_conv2d,
                        .scratch_bytes = conv2d_scratch_bytes,
                        .packs_input = conv2d_packs_weights});
}

}  // namespace kiln::codegen::cpp
