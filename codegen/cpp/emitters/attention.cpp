// Attention (f32) through the runtime's attention_f32; the parameters come from the op's own
// geometry (ir/ops/attention.h), so the compiled code and the reference agree by construction.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/emitters/f32_staging.h"
#include "ir/symbolic_params.h"
#include "ir/ops/attention.h"

namespace kiln::codegen::cpp {

namespace {

using ir::kAttnK;
using ir::kAttnMask;
using ir::kAttnNonpad;
using ir::kAttnPastKey;
using ir::kAttnPastValue;
using ir::kAttnQ;
using ir::kAttnV;

std::vector<std::vector<int64_t>> input_dims(const ir::Node& node) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < node.num_inputs(); ++i)
    dims.push_back(node.has_input(i) ? dims_of(node.input(i)) : std::vector<int64_t>{});
  return dims;
}

// The present key and value the node must build though they are not outputs: with a past,
// K and V are read from them.
size_t present_bytes(const ir::Node& node) {
  if (!ir::attention_needs_present(node)) return 0;
  const kiln::rt::AttentionParams p = ir::attention_params(node, input_dims(node), true);
  size_t floats = 0;
  if (node.num_outputs() < 2) floats += static_cast<size_t>(p.batch * p.kv_heads * p.kv_len * p.head_dim);
  if (node.num_outputs() < 3) floats += static_cast<size_t>(p.batch * p.kv_heads * p.kv_len * p.v_head_dim);
  return (floats * sizeof(float) + 63) / 64 * 64;
}

// The present key/value when they are not outputs, then the f32 copies of 16-bit data.
size_t scratch_bytes(const ir::Node& node, const EmitOptions&) {
  return present_bytes(node) + f32_staging_bytes(node);
}
// FlexAttention's: the f32 copies of 16-bit data.
size_t flex_scratch_bytes(const ir::Node& node, const EmitOptions&) { return f32_staging_bytes(node); }

std::string layout(const kiln::rt::AttentionLayout& l) {
  return fmt::format("kiln::rt::AttentionLayout{{{}, {}, {}}}", l.batch, l.head, l.seq);
}

void emit(EmitContext& ctx, const ir::Node& node) {
  const bool from_present = ir::attention_needs_present(node);
  const kiln::rt::AttentionParams p = ir::attention_params(node, input_dims(node), from_present);
  const bool packed = node.input(kAttnQ)->shape().rank() == 3;
  const F32Staging st(ctx, node, present_bytes(node));
  ctx.line("kiln::rt::AttentionParams p;");
  ctx.line(fmt::format("p.batch = {}; p.q_heads = {}; p.kv_heads = {}; p.q_len = {}; p.kv_len = {};", p.batch,
                       p.q_heads, p.kv_heads, p.q_len, p.kv_len));
  ctx.line(fmt::format("p.head_dim = {}; p.v_head_dim = {};", p.head_dim, p.v_head_dim));
  ctx.line(fmt::format("p.q = {}; p.k = {};", layout(p.q), layout(p.k)));
  ctx.line(fmt::format("p.v = {}; p.y = {};", layout(p.v), layout(p.y)));
  ctx.line(fmt::format("p.scale = {}; p.softcap = {};", float_literal(p.scale, ir::DType::F32),
                       float_literal(p.softcap, ir::DType::F32)));
  if (p.mask.causal)
    ctx.line(fmt::format("p.mask.causal = true; p.mask.causal_offset = {};", p.mask.causal_offset));
  if (node.has_input(kAttnMask)) {
    const bool is_bool = node.input(kAttnMask)->dtype() == ir::DType::Bool;
    ctx.line(fmt::format("p.mask.{} = {}; p.mask.keys = {};", is_bool ? "allow" : "bias",
                         is_bool ? ctx.in(node, kAttnMask) : st.in(kAttnMask),
                         p.mask.keys));
    ctx.line(fmt::format("p.mask.stride[0] = {}; p.mask.stride[1] = {}; p.mask.stride[2] = {}; p.mask.stride[3] = {};",
                         p.mask.stride[0], p.mask.stride[1], p.mask.stride[2], p.mask.stride[3]));
  }
  if (node.has_input(kAttnNonpad)) {
    ctx.line(fmt::format("p.mask.nonpad_kv_seqlen = {};", ctx.in(node, kAttnNonpad)));
    ctx.line(fmt::format("for (int64_t b = 0; b < {}; ++b)", p.batch));
    ctx.line(fmt::format("  if (p.mask.nonpad_kv_seqlen[b] < 0 || p.mask.nonpad_kv_seqlen[b] > {}) {}", p.kv_len,
                         ctx.fail_stmt(node, fmt::format("nonpad_kv_seqlen is outside [0, {}]", p.kv_len))));
  }
  if (node.num_outputs() > 3) {
    ctx.line(fmt::format("p.scores = {}; p.scores_mode = kiln::rt::AttentionScores({});", st.out(3),
                         static_cast<int>(p.scores_mode)));
  }
  // The present key and value: outputs when asked for, else scratch (needed with a past).
  const int64_t past = p.mask.causal_offset, kv_new = p.kv_len - past;
  const int64_t k_floats = p.batch * p.kv_heads * p.kv_len * p.head_dim;
  std::string k_ptr = st.in(kAttnK), v_ptr = st.in(kAttnV);
  auto present = [&](size_t out, size_t past_in, size_t cur_in, int64_t dim, int64_t scratch_floats) {
    std::string dst;
    if (node.num_outputs() > out)
      dst = st.out(out);
    else if (from_present)
      dst = fmt::format("reinterpret_cast<float*>({}) + {}", ctx.scratch(node), scratch_floats);
    else
      return std::string();
    const kiln::rt::AttentionLayout cur = packed ? kiln::rt::attention_layout_bshd(p.kv_heads, kv_new, dim)
                                                 : kiln::rt::attention_layout_bhsd(p.kv_heads, kv_new, dim);
    ctx.line(fmt::format("kiln::rt::attention_concat_kv_f32({}, {}, {}, {}, {}, {}, {}, {}, {});", p.batch,
                         p.kv_heads, past, kv_new, dim, from_present ? st.in(past_in) : "nullptr",
                         st.in(cur_in), layout(cur), dst));
    return dst;
  };
  std::string pk = present(1, kAttnPastKey, kAttnK, p.head_dim, 0);
  std::string pv = present(2, kAttnPastValue, kAttnV, p.v_head_dim, node.num_outputs() < 2 ? k_floats : 0);
  if (from_present) {
    k_ptr = pk;
    v_ptr = pv;
  }
  ctx.line(fmt::format("if (!kiln::rt::attention_f32(p, {}, {}, {}, {}, pool)) {}", st.in(kAttnQ), k_ptr, v_ptr,
                       st.out(0), ctx.fail_stmt(node, "out of memory")));
  st.finish();
}

// The integer fields of AttentionParams, in the order emit_symbolic writes them.
std::vector<int64_t> param_fields(const kiln::rt::AttentionParams& p) {
  std::vector<int64_t> f = {p.batch, p.q_heads, p.kv_heads, p.q_len, p.kv_len, p.head_dim, p.v_head_dim};
  for (const kiln::rt::AttentionLayout* l : {&p.q, &p.k, &p.v, &p.y}) f.insert(f.end(), {l->batch, l->head, l->seq});
  f.insert(f.end(), {p.mask.stride[0], p.mask.stride[1], p.mask.stride[2], p.mask.stride[3], p.mask.keys,
                     p.mask.causal_offset});
  return f;
}

// The fields as run-time expressions of the node's symbolic dims (symbolic_params.h), or
// nullopt when they are not polynomials of them.
std::optional<std::vector<ir::Dim>> symbolic_fields(const ir::Node& node, const ir::DimRanges& ranges) {
  return ir::lift_params(ir::node_symbols(node), ranges, [&](const std::map<std::string, int64_t>& at) {
    std::vector<std::vector<int64_t>> dims;
    for (size_t i = 0; i < node.num_inputs(); ++i)
      dims.push_back(node.has_input(i) ? ir::bound_dims(node.input(i), at) : std::vector<int64_t>{});
    return param_fields(ir::attention_params(node, dims, false));
  });
}

// With symbolic dims (--dim NAME=MIN..MAX): f32 self-attention without a past or extra
// outputs, its geometry computed at run time.
void emit_symbolic(EmitContext& ctx, const ir::Node& node) {
  std::optional<std::vector<ir::Dim>> f = symbolic_fields(node, ctx.dim_ranges());
  if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
  std::vector<std::string> e;
  for (const ir::Dim& d : *f) e.push_back(ctx.dim(d));
  // The scale and softcap do not depend on the symbols: read them at the maxima.
  std::map<std::string, int64_t> at;
  for (const auto& [name, r] : ctx.dim_ranges()) at[name] = r.max;
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < node.num_inputs(); ++i)
    dims.push_back(node.has_input(i) ? ir::bound_dims(node.input(i), at) : std::vector<int64_t>{});
  const kiln::rt::AttentionParams p0 = ir::attention_params(node, dims, false);
  ctx.line("kiln::rt::AttentionParams p;");
  ctx.line(fmt::format("p.batch = {}; p.q_heads = {}; p.kv_heads = {}; p.q_len = {}; p.kv_len = {};", e[0], e[1], e[2],
                       e[3], e[4]));
  ctx.line(fmt::format("p.head_dim = {}; p.v_head_dim = {};", e[5], e[6]));
  const char* names[4] = {"q", "k", "v", "y"};
  for (size_t l = 0; l < 4; ++l)
    ctx.line(fmt::format("p.{} = kiln::rt::AttentionLayout{{{}, {}, {}}};", names[l], e[7 + 3 * l], e[8 + 3 * l],
                         e[9 + 3 * l]));
  ctx.line(fmt::format("p.scale = {}; p.softcap = {};", float_literal(p0.scale, ir::DType::F32),
                       float_literal(p0.softcap, ir::DType::F32)));
  if (node.i("is_causal") != 0) ctx.line(fmt::format("p.mask.causal = true; p.mask.causal_offset = {};", e[24]));
  if (node.has_input(kAttnMask)) {
    const bool is_bool = node.input(kAttnMask)->dtype() == ir::DType::Bool;
    ctx.line(fmt::format("p.mask.{} = {}; p.mask.keys = {};", is_bool ? "allow" : "bias", ctx.in(node, kAttnMask),
                         e[23]));
    ctx.line(fmt::format("p.mask.stride[0] = {}; p.mask.stride[1] = {}; p.mask.stride[2] = {}; p.mask.stride[3] = {};",
                         e[19], e[20], e[21], e[22]));
  }
  ctx.line(fmt::format("if (!kiln::rt::attention_f32(p, {}, {}, {}, {}, pool)) {}", ctx.in(node, kAttnQ),
                       ctx.in(node, kAttnK), ctx.in(node, kAttnV), ctx.out(node, 0),
                       ctx.fail_stmt(node, "out of memory")));
}

void emit_any(EmitContext& ctx, const ir::Node& node) {
  if (has_symbols(node))
    emit_symbolic(ctx, node);
  else
    emit(ctx, node);
}

// f32 runs as is; f16 and bf16 through f32 copies.
std::string unsupported(const ir::Node& node) {
  const ir::DType t = node.input(kAttnQ)->dtype();
  if (t != ir::DType::F32 && t != ir::DType::F16 && t != ir::DType::BF16)
    return fmt::format("{} inputs are not supported (f32, f16 and bf16 are)", ir::dtype_name(t));
  if (has_symbols(node)) {
    if (t != ir::DType::F32 || ir::attention_needs_present(node) || node.num_outputs() > 1 ||
        node.has_input(kAttnNonpad) || node.has_input(kAttnPastKey))
      return "with symbolic dims, only f32 attention without a past, padding lengths or extra outputs is compiled";
    const ir::Graph* g = node.output(0)->graph();
    if (!symbolic_fields(node, g ? g->dim_ranges() : ir::DimRanges{}))
      return "its geometry is not a polynomial of the symbolic dims";
  }
  return "";
}

void emit_flex(EmitContext& ctx, const ir::Node& node) {
  const kiln::rt::AttentionParams p =
      ir::flex_attention_params(node, dims_of(node.input(0)), dims_of(node.input(1)), dims_of(node.input(2)));
  const F32Staging st(ctx, node, 0);
  ctx.line("kiln::rt::AttentionParams p;");
  ctx.line(fmt::format("p.batch = {}; p.q_heads = {}; p.kv_heads = {}; p.q_len = {}; p.kv_len = {};", p.batch,
                       p.q_heads, p.kv_heads, p.q_len, p.kv_len));
  ctx.line(fmt::format("p.head_dim = {}; p.v_head_dim = {}; p.scale = {};", p.head_dim, p.v_head_dim,
                       float_literal(p.scale, ir::DType::F32)));
  ctx.line(fmt::format("p.q = {}; p.k = {};", layout(p.q), layout(p.k)));
  ctx.line(fmt::format("p.v = {}; p.y = {};", layout(p.v), layout(p.y)));
  ctx.line(fmt::format("if (!kiln::rt::attention_f32(p, {}, {}, {}, {}, pool)) {}", st.in(0), st.in(1), st.in(2),
                       st.out(0), ctx.fail_stmt(node, "out of memory")));
  st.finish();
}

}  // namespace

void register_attention_emitters(EmitterRegistry& r) {
  r.add("Attention", Emitter{.emit = emit_any, .unsupported = unsupported, .scratch_bytes = scratch_bytes,
                             .dynamic_shapes = true});
  r.add("ai.onnx.preview:FlexAttention",
        Emitter{.emit = emit_flex, .unsupported = unsupported, .scratch_bytes = flex_scratch_bytes});
}

}  // namespace kiln::codegen::cpp
