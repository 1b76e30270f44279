// ONNX Attention's geometry, shared by the reference (ir/ops/attention.cpp) and the C++
// emitter: both describe the op to the runtime's one kernel (kiln/rt/attention.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/attention.h"

namespace kiln::ir {

// Input positions of Attention (opset 23/24).
enum AttentionInput : size_t { kAttnQ, kAttnK, kAttnV, kAttnMask, kAttnPastKey, kAttnPastValue, kAttnNonpad };

// Sizes of one Attention node; -1 where a dim is symbolic.
struct AttentionGeometry {
  bool packed = false;  // 3-D inputs [B, S, heads * dim]
  int64_t batch = -1, q_heads = -1, kv_heads = -1, q_len = -1, kv_new = -1, past = 0;
  int64_t head_dim = -1, v_head_dim = -1;
  int64_t kv_len() const { return kv_new < 0 || past < 0 ? -1 : kv_new + past; }
};

// Checks the inputs' ranks, dims and the head attributes; fails naming the node.
AttentionGeometry attention_geometry(const Node& node, const std::vector<const Shape*>& inputs);

// The kernel's parameters for static shapes `dims` (one per input, empty when omitted): the
// layouts of Q (as given), of K and V (the present key/value, [B, Hkv, past + S, D], when
// `kv_from_present`), of Y, the scale, softcap, causal flag and the mask's strides. Data
// pointers (mask, nonpad_kv_seqlen, scores) are left for the caller.
kiln::rt::AttentionParams attention_params(const Node& node, const std::vector<std::vector<int64_t>>& dims,
                                           bool kv_from_present);

// ai.onnx.preview:FlexAttention without score_mod or prob_mod: 4-D Q [B, Hq, L, E], K [B, Hkv, S,
// E], V [B, Hkv, S, Ev], Hq a multiple of Hkv, optional scale. Checks static dims.
kiln::rt::AttentionParams flex_attention_params(const Node& node, const std::vector<int64_t>& q,
                                                const std::vector<int64_t>& k, const std::vector<int64_t>& v);

// Whether K and V must be read from the present key/value (a past is given).
inline bool attention_needs_present(const Node& node) { return node.has_input(kAttnPastKey); }

}  // namespace kiln::ir
