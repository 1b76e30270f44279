#include "kiln/rt/norm.h"

#include <cmath>

namespace kiln::rt {

void batchnorm_f32(int64_t N, int64_t C, int64_t spatial, const float* x, const float* scale, const float* bias,
                   const float* mean, const float* var, float eps, float* y) noexcept {
  for (int64_t c = 0; c < C; ++c) {
    const float a = scale[c] / std::sqrt(var[c] + eps);
    const float b = bias[c] - mean[c] * a;
    for (int64_t n = 0; n < N; ++n) {
      const float* xs = x + (n * C + c) * spatial;
      float* ys = y + (n * C + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i) ys[i] = xs[i] * a + b;
    }
  }
}

void softmax_f32(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y, bool log) noexcept {
  if (axis_len <= 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const float* xs = x + o * axis_len * inner + in;
      float* ys = y + o * axis_len * inner + in;
      float m = xs[0];
      for (int64_t k = 1; k < axis_len; ++k)
        if (xs[k * inner] > m) m = xs[k * inner];
      if (std::isinf(m) && m < 0) m = 0.f;  // all -inf: avoid -inf - -inf
      double sum = 0.0;
      if (log) {
        for (int64_t k = 0; k < axis_len; ++k) sum += std::exp(xs[k * inner] - m);
        const float lse = static_cast<float>(std::log(sum));
        for (int64_t k = 0; k < axis_len; ++k) ys[k * inner] = xs[k * inner] - m - lse;
      } else {
        for (int64_t k = 0; k < axis_len; ++k) {
          const float e = std::exp(xs[k * inner] - m);
          ys[k * inner] = e;
          sum += e;
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t k = 0; k < axis_len; ++k) ys[k * inner] *= inv;
      }
    }
  }
}

}  // namespace kiln::rt
