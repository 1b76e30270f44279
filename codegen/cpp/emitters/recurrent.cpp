// RNN, GRU and LSTM (f32) through the runtime's rnn_f32; the parameters come from the ops'
// own attribute and shape rules (ir/ops/recurrent.h). Constant recurrence weights are packed
// here, once, for the step products at the model's batch (rnn_pack_r), and the node calls
// rnn_f32_prepacked instead.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/recurrent.h"

namespace kiln::codegen::cpp {

namespace {

std::vector<std::vector<int64_t>> input_dims(const ir::Node& node) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < node.num_inputs(); ++i)
    dims.push_back(node.has_input(i) ? dims_of(node.input(i)) : std::vector<int64_t>{});
  return dims;
}

bool packs_r(const ir::Node& node, size_t input) { return input == ir::kRnnR && is_f32_constant(node.input(input)); }

size_t scratch_bytes(const ir::Node& node, const EmitOptions&) {
  const kiln::rt::RnnParams p = ir::rnn_params(node, input_dims(node));
  const size_t floats = packs_r(node, ir::kRnnR) ? kiln::rt::rnn_prepacked_scratch_floats(p)
                                                  : kiln::rt::rnn_scratch_floats(p);
  return floats * sizeof(float);
}

void emit(EmitContext& ctx, const ir::Node& node) {
  const kiln::rt::RnnParams p = ir::rnn_params(node, input_dims(node));
  auto in = [&](size_t i) { return i < node.num_inputs() && node.has_input(i) ? ctx.in(node, i) : "nullptr"; };
  auto out = [&](size_t i) { return i < node.num_outputs() ? ctx.out(node, i) : "nullptr"; };
  ctx.line("kiln::rt::RnnParams p;");
  ctx.line(fmt::format("p.cell = kiln::rt::RnnCell({}); p.seq = {}; p.batch = {}; p.input = {}; p.hidden = {};",
                       static_cast<int>(p.cell), p.seq, p.batch, p.input, p.hidden));
  ctx.line(fmt::format("p.directions = {}; p.reverse = {}; p.batch_first = {}; p.clip = {};", p.directions,
                       p.reverse, p.batch_first, float_literal(p.clip, ir::DType::F32)));
  ctx.line(fmt::format("p.linear_before_reset = {}; p.input_forget = {};", p.linear_before_reset, p.input_forget));
  for (int d = 0; d < p.directions; ++d)
    for (int i = 0; i < kiln::rt::rnn_funcs(p.cell); ++i) {
      const kiln::rt::RnnFunc& f = p.funcs[d][i];
      ctx.line(fmt::format("p.funcs[{}][{}] = kiln::rt::RnnFunc{{kiln::rt::RnnActivation({}), {}, {}}};", d, i,
                           static_cast<int>(f.kind), float_literal(f.alpha, ir::DType::F32),
                           float_literal(f.beta, ir::DType::F32)));
    }
  const bool lstm = p.cell == kiln::rt::RnnCell::Lstm;
  std::string fn = "rnn_f32", r;
  if (packs_r(node, ir::kRnnR)) {
    // The runtime's own packing routine, so that the layout always matches the kernel it ships.
    std::vector<float> packed(kiln::rt::rnn_packed_r_floats(p));
    kiln::rt::rnn_pack_r(p, node.input(ir::kRnnR)->constant().data<float>(), packed.data());
    fn = "rnn_f32_prepacked";
    r = ctx.add_weight_floats(packed);
  } else {
    r = in(ir::kRnnR);
  }
  ctx.line(fmt::format("if (!kiln::rt::{}(p, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, reinterpret_cast<float*>({}), pool)) {}",
                       fn, in(ir::kRnnX), in(ir::kRnnW), r, in(ir::kRnnB), in(ir::kRnnSeqLens),
                       in(ir::kRnnH0), lstm ? in(ir::kRnnC0) : "nullptr", lstm ? in(ir::kRnnP) : "nullptr", out(0),
                       out(1), out(2), ctx.scratch(node),
                       ctx.fail_stmt(node, fmt::format("a sequence length is outside [0, {}]", p.seq))));
}

std::string unsupported(const ir::Node& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i)
    if (i != ir::kRnnSeqLens && node.has_input(i) && node.input(i)->dtype() != ir::DType::F32)
      return fmt::format("input '{}' is {}; compiled {} supports f32 only", node.input(i)->name(),
                         ir::dtype_name(node.input(i)->dtype()), node.op());
  return "";
}

}  // namespace

void register_recurrent_emitters(EmitterRegistry& r) {
  for (const char* op : {"RNN", "GRU", "LSTM"})
    r.add(op, Emitter{.emit = emit, .unsupported = unsupported, .scratch_bytes = scratch_bytes, .packs_input = packs_r});
}

}  // namespace kiln::codegen::cpp
