// Rotary position embedding (ONNX RotaryEmbedding-23), f32.
#pragma once

#include <cstdint>

#include "kiln/rt/attention.h"

namespace kiln::rt {

struct RotaryParams {
  int64_t batch = 1, heads = 1, seq = 0, head_dim = 0;
  int64_t rotary_dim = 0;    // the leading dims of each head that rotate (even); the rest is copied
  bool interleaved = false;  // pairs (2i, 2i + 1) rather than (i, i + rotary_dim / 2)
  AttentionLayout layout;    // of x and y alike
  int64_t cache_rows = 0;    // rows of cos and sin when position ids pick them
};

// y = x rotated: with x1, x2 the two halves of a pair and c, s the cache entries of its
// position, (x1, x2) -> (c x1 - s x2, s x1 + c x2). cos and sin are [cache_rows, rotary_dim/2]
// indexed by position_ids [batch, seq], or [batch, seq, rotary_dim/2] when position_ids is
// nullptr. Returns false when a position id is outside [0, cache_rows). y may equal x.
bool rotary_embedding_f32(const RotaryParams& p, const float* x, const float* cos, const float* sin,
                          const int64_t* position_ids, float* y) noexcept;

}  // namespace kiln::rt
