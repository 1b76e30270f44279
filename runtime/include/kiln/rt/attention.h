// Scaled dot-product attention (ONNX Attention-23/24), f32: per query head,
// Y = softmax(softcap(scale * Q K^T) + bias) V, computed in blocks of query rows and key
// columns with an online softmax, so the full score matrix is never held at once.
#pragma once

#include <cstdint>

namespace kiln::rt {

class ThreadPool;

// Element strides of a [batch, head, seq, dim] view; the dim axis is contiguous.
struct AttentionLayout {
  int64_t batch = 0, head = 0, seq = 0;
};
// [B, H, S, D] stored as is, and [B, S, H * D] (the heads side by side in each row).
inline AttentionLayout attention_layout_bhsd(int64_t heads, int64_t seq, int64_t dim) {
  return {heads * seq * dim, seq * dim, dim};
}
inline AttentionLayout attention_layout_bshd(int64_t heads, int64_t seq, int64_t dim) {
  return {seq * heads * dim, dim, heads * dim};
}

// What goes into the softmax besides the scores. Masked means a bias of -inf.
struct AttentionMask {
  // Additive f32 bias or boolean (true: attend), read at (b, h, i, j) through `stride`
  // (0 on a broadcast axis); keys j >= `keys` are masked. Both nullptr: no mask.
  const float* bias = nullptr;
  const bool* allow = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t keys = 0;
  // Key j is masked from query i when j > i + causal_offset (bottom-right aligned).
  bool causal = false;
  int64_t causal_offset = 0;
  // Per batch: keys j >= nonpad_kv_seqlen[b] are masked, and the causal offset becomes
  // nonpad_kv_seqlen[b] - q_len. nullptr: all keys are valid.
  const int64_t* nonpad_kv_seqlen = nullptr;
};

// What qk_matmul_output holds (ONNX's qk_matmul_output_mode).
enum class AttentionScores : int {
  Raw = 0,        // scale * Q K^T, softcapped when softcap > 0
  Softcapped = 1, // the same
  Biased = 2,     // plus the mask
  Softmax = 3,    // the probabilities
};

struct AttentionParams {
  int64_t batch = 1;
  int64_t q_heads = 1, kv_heads = 1;  // q_heads a multiple of kv_heads: query head h reads
                                      // key/value head h / (q_heads / kv_heads)
  int64_t q_len = 0, kv_len = 0;
  int64_t head_dim = 0, v_head_dim = 0;  // of Q and K, of V and Y
  AttentionLayout q, k, v, y;
  float scale = 1.f;    // multiplies Q K^T
  float softcap = 0.f;  // > 0: s = softcap * tanh(s / softcap), before the mask
  AttentionMask mask;
  // Optional [batch, q_heads, q_len, kv_len] copy of the scores at the stage `scores_mode`.
  float* scores = nullptr;
  AttentionScores scores_mode = AttentionScores::Raw;
};

// Computes y. A query row whose keys are all masked gets zeros (and zero probabilities).
// Returns false, leaving y unspecified, only when it cannot allocate its working memory.
// y must not overlap the inputs.
bool attention_f32(const AttentionParams& p, const float* q, const float* k, const float* v, float* y,
                   ThreadPool* pool) noexcept;

// The present key or value [batch, heads, past_len + new_len, dim]: the past [batch, heads,
// past_len, dim] (nullptr when past_len is 0) followed by `cur` read through `cur_layout`.
void attention_concat_kv_f32(int64_t batch, int64_t heads, int64_t past_len, int64_t new_len, int64_t dim,
                             const float* past, const float* cur, AttentionLayout cur_layout,
                             float* present) noexcept;

}  // namespace kiln::rt
