// LinearAttention and CausalConvWithState (f32) through the runtime's kernels; parameters from
// the ops' own shape rules (ir/ops/sequence_state.h).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/emitters/f32_staging.h"
#include "ir/ops/sequence_state.h"

namespace kiln::codegen::cpp {

namespace {

std::vector<std::vector<int64_t>> input_dims(const ir::Node& node) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < node.num_inputs(); ++i)
    dims.push_back(node.has_input(i) ? dims_of(node.input(i)) : std::vector<int64_t>{});
  return dims;
}

std::string in_or_null(const F32Staging& st, const ir::Node& node, size_t i) {
  return i < node.num_inputs() && node.has_input(i) ? st.in(i) : "nullptr";
}

size_t round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// The present state when it is not an output: scratch.
size_t linear_attention_state_bytes(const ir::Node& node) {
  if (node.num_outputs() > 1) return 0;
  const kiln::rt::LinearAttentionParams p = ir::linear_attention_params(node, input_dims(node));
  return round64(static_cast<size_t>(p.batch * p.kv_heads * p.key_dim * p.value_dim) * sizeof(float));
}
size_t linear_attention_scratch(const ir::Node& node, const EmitOptions&) {
  return linear_attention_state_bytes(node) + f32_staging_bytes(node);
}

void emit_linear_attention(EmitContext& ctx, const ir::Node& node) {
  const kiln::rt::LinearAttentionParams p = ir::linear_attention_params(node, input_dims(node));
  const F32Staging st(ctx, node, linear_attention_state_bytes(node));
  ctx.line("kiln::rt::LinearAttentionParams p;");
  ctx.line(fmt::format("p.batch = {}; p.seq = {}; p.q_heads = {}; p.kv_heads = {}; p.key_dim = {}; p.value_dim = {};",
                       p.batch, p.seq, p.q_heads, p.kv_heads, p.key_dim, p.value_dim));
  ctx.line(fmt::format("p.rule = kiln::rt::LinearUpdate({}); p.scale = {}; p.decay_width = {}; p.beta_width = {};",
                       static_cast<int>(p.rule), float_literal(p.scale, ir::DType::F32), p.decay_width,
                       p.beta_width));
  const std::string state =
      node.num_outputs() > 1 ? st.out(1) : "reinterpret_cast<float*>(" + ctx.scratch(node) + ")";
  ctx.line(fmt::format("kiln::rt::linear_attention_f32(p, {}, {}, {}, {}, {}, {}, {}, {});", st.in(0), st.in(1),
                       st.in(2), in_or_null(st, node, 3), in_or_null(st, node, 4), in_or_null(st, node, 5),
                       st.out(0), state));
  st.finish();
}

size_t causal_conv_state_bytes(const ir::Node& node) {
  if (node.num_outputs() > 1) return 0;
  const ir::CausalConvGeometry g = ir::causal_conv_geometry(node, input_dims(node));
  return round64(static_cast<size_t>(g.batch * g.channels * (g.kernel - 1)) * sizeof(float));
}
size_t causal_conv_scratch(const ir::Node& node, const EmitOptions&) {
  return causal_conv_state_bytes(node) + f32_staging_bytes(node);
}

void emit_causal_conv(EmitContext& ctx, const ir::Node& node) {
  const ir::CausalConvGeometry g = ir::causal_conv_geometry(node, input_dims(node));
  const F32Staging st(ctx, node, causal_conv_state_bytes(node));
  const std::string state =
      node.num_outputs() > 1 ? st.out(1) : "reinterpret_cast<float*>(" + ctx.scratch(node) + ")";
  ctx.line(fmt::format("kiln::rt::causal_conv_with_state_f32({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});", g.batch,
                       g.channels, g.length, g.kernel, st.in(0), st.in(1), in_or_null(st, node, 2),
                       in_or_null(st, node, 3), g.silu ? "true" : "false", st.out(0), state));
  st.finish();
}

// f32 runs as is; f16 and bf16 through f32 copies.
std::string unsupported(const ir::Node& node) {
  for (const ir::Value* v : node.inputs())
    if (v && v->dtype() != ir::DType::F32 && !is_16bit_float(v))
      return fmt::format("input '{}' is {}; compiled {} supports f32, f16 and bf16", v->name(),
                         ir::dtype_name(v->dtype()), node.op());
  return "";
}

}  // namespace

void register_sequence_state_emitters(EmitterRegistry& r) {
  r.add("LinearAttention", Emitter{.emit = emit_linear_attention, .unsupported = unsupported,
                                   .scratch_bytes = linear_attention_scratch});
  r.add("CausalConvWithState",
        Emitter{.emit = emit_causal_conv, .unsupported = unsupported, .scratch_bytes = causal_conv_scratch});
}

}  // namespace kiln::codegen::cpp
