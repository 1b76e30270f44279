#include "kiln/rt/rotary.h"

namespace kiln::rt {

bool rotary_embedding_f32(const RotaryParams& p, const float* x, const float* cos, const float* sin,
                          const int64_t* position_ids, float* y) noexcept {
  const int64_t half = p.rotary_dim / 2;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t s = 0; s < p.seq; ++s) {
      int64_t row = b * p.seq + s;
      if (position_ids) {
        row = position_ids[b * p.seq + s];
        if (row < 0 || row >= p.cache_rows) return false;
      }
      const float* c = cos + row * half;
      const float* sn = sin + row * half;
      for (int64_t h = 0; h < p.heads; ++h) {
        const int64_t base = b * p.layout.batch + h * p.layout.head + s * p.layout.seq;
        const float* xs = x + base;
        float* ys = y + base;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = p.interleaved ? 2 * i : i, i2 = p.interleaved ? 2 * i + 1 : i + half;
          const float x1 = xs[i1], x2 = xs[i2];
          ys[i1] = c[i] * x1 - sn[i] * x2;
          ys[i2] = sn[i] * x1 + c[i] * x2;
        }
        for (int64_t i = p.rotary_dim; i < p.head_dim; ++i) ys[i] = xs[i];
      }
    }
  return true;
}

}  // namespace kiln::rt
