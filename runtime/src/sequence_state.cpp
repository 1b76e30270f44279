#include "kiln/rt/sequence_state.h"

#include <cmath>

namespace kiln::rt {

void linear_attention_f32(const LinearAttentionParams& p, const float* q, const float* k, const float* v,
                          const float* past, const float* decay, const float* beta, float* y,
                          float* state) noexcept {
  const int64_t dk = p.key_dim, dv = p.value_dim, group = p.q_heads / p.kv_heads;
  const bool gated = p.rule == LinearUpdate::Gated || p.rule == LinearUpdate::GatedDelta;
  const bool delta = p.rule == LinearUpdate::Delta || p.rule == LinearUpdate::GatedDelta;
  float retrieved_stack[256];
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.kv_heads; ++h) {
      float* s = state + (b * p.kv_heads + h) * dk * dv;
      for (int64_t i = 0; i < dk * dv; ++i) s[i] = past ? past[(b * p.kv_heads + h) * dk * dv + i] : 0.f;
      for (int64_t t = 0; t < p.seq; ++t) {
        const int64_t row = b * p.seq + t;
        const float* kt = k + (row * p.kv_heads + h) * dk;
        const float* vt = v + (row * p.kv_heads + h) * dv;
        if (gated && decay) {
          const float* g = decay + (row * p.kv_heads + h) * p.decay_width;
          for (int64_t d = 0; d < dk; ++d) {
            const float f = std::exp(p.decay_width == 1 ? g[0] : g[d]);
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= f;
          }
        }
        if (delta && beta) {
          // v' = beta (v - S^T k), one value column at a time.
          const float bt = beta[row * p.beta_width + (p.beta_width == 1 ? 0 : h)];
          for (int64_t m0 = 0; m0 < dv; m0 += 256) {
            const int64_t mn = dv - m0 < 256 ? dv - m0 : 256;
            for (int64_t m = 0; m < mn; ++m) retrieved_stack[m] = 0.f;
            for (int64_t d = 0; d < dk; ++d)
              for (int64_t m = 0; m < mn; ++m) retrieved_stack[m] += s[d * dv + m0 + m] * kt[d];
            for (int64_t m = 0; m < mn; ++m) retrieved_stack[m] = bt * (vt[m0 + m] - retrieved_stack[m]);
            for (int64_t d = 0; d < dk; ++d)
              for (int64_t m = 0; m < mn; ++m) s[d * dv + m0 + m] += kt[d] * retrieved_stack[m];
          }
        } else {
          for (int64_t d = 0; d < dk; ++d)
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += kt[d] * vt[m];
        }
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          const float* qt = q + (row * p.q_heads + qh) * dk;
          float* yt = y + (row * p.q_heads + qh) * dv;
          for (int64_t m = 0; m < dv; ++m) yt[m] = 0.f;
          for (int64_t d = 0; d < dk; ++d)
            for (int64_t m = 0; m < dv; ++m) yt[m] += qt[d] * s[d * dv + m];
          for (int64_t m = 0; m < dv; ++m) yt[m] *= p.scale;
        }
      }
    }
}

void causal_conv_with_state_f32(int64_t batch, int64_t channels, int64_t length, int64_t kernel, const float* x,
                                const float* w, const float* bias, const float* past, bool silu, float* y,
                                float* present) noexcept {
  const int64_t keep = kernel - 1;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      const float* xs = x + (b * channels + c) * length;
      const float* ps = past ? past + (b * channels + c) * keep : nullptr;
      const float* wc = w + c * kernel;
      // Element i of the padded sequence: the past (or zero) for i < keep, then x.
      auto at = [&](int64_t i) { return i >= keep ? xs[i - keep] : ps ? ps[i] : 0.f; };
      float* ys = y + (b * channels + c) * length;
      for (int64_t t = 0; t < length; ++t) {
        float acc = bias ? bias[c] : 0.f;
        for (int64_t j = 0; j < kernel; ++j) acc += wc[j] * at(t + j);
        ys[t] = silu ? acc / (1.f + std::exp(-acc)) : acc;
      }
      float* out = present + (b * channels + c) * keep;
      for (int64_t i = 0; i < keep; ++i) out[i] = at(length + i);
    }
}

}  // namespace kiln::rt
