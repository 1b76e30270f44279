// DFT and STFT (floating types) through the runtime's dft and stft; the inputs that decide
// their output shapes (axis, dft_length, frame_step, frame_length) must be constants. The
// window functions and MelWeightMatrix are folded when their inputs are constants.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/signal.h"

namespace kiln::codegen::cpp {

namespace {

std::string need_constants(const ir::Node& node, std::initializer_list<size_t> inputs) {
  if (!ir::is_float(node.input(0)->dtype()))
    return fmt::format("compiled {} supports floating types, not {}", node.op(), ir::dtype_name(node.input(0)->dtype()));
  for (size_t i : inputs)
    if (node.has_input(i) && !node.input(i)->is_constant())
      return fmt::format("input '{}' decides the output's shape and must be known at compile time",
                         node.input(i)->name());
  return "";
}

void emit_dft(EmitContext& ctx, const ir::Node& node) {
  int64_t axis = 0;
  const kiln::rt::DftParams p = ir::dft_params(node, dims_of(node.input(0)), axis);
  ctx.line(fmt::format("const kiln::rt::DftParams p{{{}, {}, {}, {}, {}, {}, {}, {}}};", p.outer, p.n_in, p.inner,
                       p.length, p.n_out, p.complex_input ? "true" : "false", p.inverse ? "true" : "false",
                       p.onesided ? "true" : "false"));
  ctx.line(fmt::format("kiln::rt::dft<{}>(p, {}, {});", cpp_type(node.input(0)->dtype()), ctx.in(node, 0),
                       ctx.out(node, 0)));
}

void emit_stft(EmitContext& ctx, const ir::Node& node) {
  const std::vector<int64_t> window = node.has_input(2) ? dims_of(node.input(2)) : std::vector<int64_t>{};
  const kiln::rt::StftParams p = ir::stft_params(node, dims_of(node.input(0)), window);
  ctx.line(fmt::format("const kiln::rt::StftParams p{{{}, {}, {}, {}, {}, {}, {}}};", p.batch, p.length, p.frames,
                       p.step, p.frame_length, p.bins, p.complex_input ? "true" : "false"));
  ctx.line(fmt::format("kiln::rt::stft<{}>(p, {}, {}, {});", cpp_type(node.input(0)->dtype()), ctx.in(node, 0),
                       ctx.in(node, 2), ctx.out(node, 0)));
}

// The generators' shapes are their inputs' values: constant in real models, where they fold.
std::string generator_unsupported(const ir::Node& node) {
  return fmt::format("its output shape is the value of input '{}': make it a constant and the node folds",
                     node.input(0)->name());
}

}  // namespace

void register_signal_emitters(EmitterRegistry& r) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"})
    r.add(op, Emitter{.emit = nullptr, .unsupported = generator_unsupported});
  r.add("DFT", Emitter{.emit = emit_dft, .unsupported = [](const ir::Node& n) { return need_constants(n, {1, 2}); }});
  r.add("STFT", Emitter{.emit = emit_stft, .unsupported = [](const ir::Node& n) { return need_constants(n, {1, 3}); }});
}

}  // namespace kiln::codegen::cpp
