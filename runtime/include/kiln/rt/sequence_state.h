// Sequence ops that carry a state between calls (decoder blocks of linear-attention and
// state-space models): LinearAttention-27 and CausalConvWithState-27, f32.
#pragma once

#include <cstdint>

namespace kiln::rt {

// How LinearAttention updates its [key_dim, value_dim] state S per step, with k, v, q rows:
// Linear: S += k v^T; Gated: S = exp(g) S + k v^T; Delta: S += k (beta (v - S^T k))^T;
// GatedDelta: both. Output row: scale * S^T q.
enum class LinearUpdate : int { Linear = 0, Gated = 1, Delta = 2, GatedDelta = 3 };

struct LinearAttentionParams {
  int64_t batch = 1, seq = 0, q_heads = 1, kv_heads = 1, key_dim = 0, value_dim = 0;
  LinearUpdate rule = LinearUpdate::GatedDelta;
  float scale = 1.f;
  int64_t decay_width = 1;  // decay values per kv head and step: 1 or key_dim
  int64_t beta_width = 1;   // beta values per step: kv_heads or 1 (shared)
};

// q [B, T, q_heads * key_dim], k [B, T, kv_heads * key_dim], v [B, T, kv_heads * value_dim];
// past [B, kv_heads, key_dim, value_dim] or nullptr (zeros); decay [B, T, kv_heads *
// decay_width] (gated rules) and beta [B, T, beta_width] (delta rules) or nullptr.
// y [B, T, q_heads * value_dim]; state [B, kv_heads, key_dim, value_dim] receives the state
// after the last step. Query head h reads kv head h / (q_heads / kv_heads).
void linear_attention_f32(const LinearAttentionParams& p, const float* q, const float* k, const float* v,
                          const float* past, const float* decay, const float* beta, float* y,
                          float* state) noexcept;

// Depthwise causal convolution along the last axis with a carried state: x [B, C, L] is
// preceded by past [B, C, K - 1] (zeros when nullptr) and convolved with w [C, 1, K] plus
// bias [C] (or nullptr); silu applies y * sigmoid(y). present [B, C, K - 1] receives the last
// K - 1 inputs of the padded sequence.
void causal_conv_with_state_f32(int64_t batch, int64_t channels, int64_t length, int64_t kernel, const float* x,
                                const float* w, const float* bias, const float* past, bool silu, float* y,
                                float* present) noexcept;

}  // namespace kiln::rt
