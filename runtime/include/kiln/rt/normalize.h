// Normalizations by statistics of groups of elements, header-only so that the element type
// inlines: LayerNormalization, RMSNormalization, InstanceNormalization and GroupNormalization
// (one kernel, per-channel affine), BatchNormalization in training mode,
// MeanVarianceNormalization, LpNormalization and LRN.
// T is the storage type, Acc the type statistics are kept in (float for f16/bf16/f32, double
// for f64). The row kernels keep eight partial sums, which the compiler turns into one vector
// register; their elementwise passes read and write through restrict pointers.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/rt/reduce.h"

namespace kiln::rt {

namespace detail {

// Sum of f(x[i]) over n contiguous elements, in eight partial sums.
template <class Acc, class T, class F>
Acc blocked_sum(int64_t n, const T* __restrict x, F f) {
  Acc part[8] = {};
  const int64_t n8 = n - n % 8;
  for (int64_t i = 0; i < n8; i += 8)
    for (int k = 0; k < 8; ++k) part[k] += f(static_cast<Acc>(x[i + k]));
  Acc s = 0;
  for (int64_t i = n8; i < n; ++i) s += f(static_cast<Acc>(x[i]));
  for (int k = 0; k < 8; ++k) s += part[k];
  return s;
}

// y[i] = f(i) for i < n, in blocks of eight (a fixed trip count the compiler turns into
// vector code at -O2) and a tail.
template <class F>
inline void blocked_for(int64_t n, F f) {
  const int64_t n8 = n - n % 8;
  for (int64_t i = 0; i < n8; i += 8)
    for (int k = 0; k < 8; ++k) f(i + k);
  for (int64_t i = n8; i < n; ++i) f(i);
}

// y[i] = (x[i] - mean) * inv * scale[i] + bias[i] over one row (scale or bias may be null).
template <class T, class Acc>
void affine_row(int64_t n, const T* __restrict x, Acc mean, Acc inv, const T* __restrict scale,
                const T* __restrict bias, T* __restrict y) {
  if (scale && bias) {
    blocked_for(n, [&](int64_t i) {
      y[i] = static_cast<T>((static_cast<Acc>(x[i]) - mean) * inv * static_cast<Acc>(scale[i]) +
                            static_cast<Acc>(bias[i]));
    });
  } else if (scale) {
    blocked_for(n, [&](int64_t i) {
      y[i] = static_cast<T>((static_cast<Acc>(x[i]) - mean) * inv * static_cast<Acc>(scale[i]));
    });
  } else {
    blocked_for(n, [&](int64_t i) { y[i] = static_cast<T>((static_cast<Acc>(x[i]) - mean) * inv); });
  }
}

// Mean and 1 / sqrt(var + eps) of n contiguous elements (two passes: the variance is the mean
// of the squared deviations, which loses nothing to cancellation).
template <class T, class Acc>
void moments(int64_t n, const T* x, Acc eps, Acc& mean, Acc& inv_std) {
  mean = detail::blocked_sum<Acc>(n, x, [](Acc v) { return v; }) / static_cast<Acc>(n);
  const Acc m = mean;
  const Acc var = detail::blocked_sum<Acc>(n, x, [m](Acc v) { return (v - m) * (v - m); }) / static_cast<Acc>(n);
  inv_std = Acc(1) / std::sqrt(var + eps);
}

}  // namespace detail

// LayerNormalization over `rows` rows of `len` contiguous elements:
// y = (x - mean) / sqrt(var + eps) * scale + bias with the row's mean and (population)
// variance; scale and bias hold `len` values (bias may be null). mean_out and inv_std_out
// (either may be null) receive each row's mean and 1 / sqrt(var + eps). y must not overlap x.
template <class T, class Acc, class U>
void layer_norm(int64_t rows, int64_t len, const T* x, const T* scale, const T* bias, Acc eps, T* y, U* mean_out,
                U* inv_std_out) {
  if (len <= 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    Acc mean, inv;
    detail::moments(len, x + r * len, eps, mean, inv);
    detail::affine_row(len, x + r * len, mean, inv, scale, bias, y + r * len);
    if (mean_out) mean_out[r] = static_cast<U>(mean);
    if (inv_std_out) inv_std_out[r] = static_cast<U>(inv);
  }
}

// RMSNormalization over rows of `len` contiguous elements:
// y = x / sqrt(mean(x^2) + eps) * scale, scale holding `len` values. y must not overlap x.
template <class T, class Acc>
void rms_norm(int64_t rows, int64_t len, const T* x, const T* scale, Acc eps, T* y) {
  if (len <= 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * len;
    const Acc ms = detail::blocked_sum<Acc>(len, xr, [](Acc v) { return v * v; }) / static_cast<Acc>(len);
    detail::affine_row(len, xr, Acc(0), Acc(1) / std::sqrt(ms + eps), scale, static_cast<const T*>(nullptr),
                       y + r * len);
  }
}

// GroupNormalization (and InstanceNormalization, one channel per group) of x [N, C, spatial]
// with C = groups * group_channels: each (n, group) block of group_channels * spatial
// elements is normalized by its own mean and variance, then channel c is scaled by scale[c]
// and shifted by bias[c]. y must not overlap x.
template <class T, class Acc>
void group_norm(int64_t N, int64_t groups, int64_t group_channels, int64_t spatial, const T* x, const T* scale,
                const T* bias, Acc eps, T* y) {
  const int64_t block = group_channels * spatial;
  if (block <= 0) return;
  for (int64_t b = 0; b < N * groups; ++b) {
    Acc mean, inv;
    detail::moments(block, x + b * block, eps, mean, inv);
    for (int64_t k = 0; k < group_channels; ++k) {
      const int64_t c = (b % groups) * group_channels + k;
      const Acc a = inv * static_cast<Acc>(scale[c]), s = static_cast<Acc>(bias[c]);
      const T* xs = x + b * block + k * spatial;
      T* ys = y + b * block + k * spatial;
      for (int64_t i = 0; i < spatial; ++i) ys[i] = static_cast<T>((static_cast<Acc>(xs[i]) - mean) * a + s);
    }
  }
}

// BatchNormalization in training mode over x [N, C, spatial]: channel c is normalized by its
// batch mean and (population) variance, then scaled by scale[c] and shifted by bias[c].
// running_mean and running_var (either may be null) receive mean_in * momentum + mean *
// (1 - momentum), and likewise for the variance. y must not overlap x.
template <class T, class Acc>
void batch_norm_training(int64_t N, int64_t C, int64_t spatial, const T* x, const T* scale, const T* bias,
                         const T* mean_in, const T* var_in, Acc eps, Acc momentum, T* y, T* running_mean,
                         T* running_var) {
  const Acc count = static_cast<Acc>(N * spatial);
  for (int64_t c = 0; c < C; ++c) {
    Acc sum = 0;
    for (int64_t n = 0; n < N; ++n) sum += detail::blocked_sum<Acc>(spatial, x + (n * C + c) * spatial, [](Acc v) { return v; });
    const Acc mean = sum / count;
    Acc sq = 0;
    for (int64_t n = 0; n < N; ++n)
      sq += detail::blocked_sum<Acc>(spatial, x + (n * C + c) * spatial, [mean](Acc v) { return (v - mean) * (v - mean); });
    const Acc var = sq / count;
    const Acc a = static_cast<Acc>(scale[c]) / std::sqrt(var + eps), b = static_cast<Acc>(bias[c]);
    for (int64_t n = 0; n < N; ++n) {
      const T* xs = x + (n * C + c) * spatial;
      T* ys = y + (n * C + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i) ys[i] = static_cast<T>((static_cast<Acc>(xs[i]) - mean) * a + b);
    }
    if (running_mean) running_mean[c] = static_cast<T>(static_cast<Acc>(mean_in[c]) * momentum + mean * (1 - momentum));
    if (running_var) running_var[c] = static_cast<T>(static_cast<Acc>(var_in[c]) * momentum + var * (1 - momentum));
  }
}

// MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9), with mean and (population)
// variance over the `red` dims, for each index of the kept `out` dims; strides are x's and y's
// (both contiguous, same shape). Ranks 1..32 as for reduce().
template <class T, class Acc>
void mean_variance_norm(int out_rank, const int64_t* out_dims, const int64_t* out_strides, int red_rank,
                        const int64_t* red_dims, const int64_t* red_strides, const T* x, T* y) {
  int64_t count = 1;
  for (int d = 0; d < red_rank; ++d) count *= red_dims[d];
  if (count <= 0) return;
  detail::for_each_offset(out_rank, out_dims, out_strides, 0, [&](int64_t base) {
    Acc sum = 0;
    detail::for_each_offset(red_rank, red_dims, red_strides, base, [&](int64_t i) { sum += static_cast<Acc>(x[i]); });
    const Acc mean = sum / static_cast<Acc>(count);
    Acc sq = 0;
    detail::for_each_offset(red_rank, red_dims, red_strides, base, [&](int64_t i) {
      const Acc d = static_cast<Acc>(x[i]) - mean;
      sq += d * d;
    });
    const Acc denom = std::sqrt(sq / static_cast<Acc>(count)) + static_cast<Acc>(1e-9);
    detail::for_each_offset(red_rank, red_dims, red_strides, base,
                            [&](int64_t i) { y[i] = static_cast<T>((static_cast<Acc>(x[i]) - mean) / denom); });
  });
}

// LpNormalization along the middle axis of x [outer, len, inner]: y = x / ||x||_p with p 1
// or 2; a lane whose norm is 0 gives 0s (as ONNX's reference does).
template <class T, class Acc>
void lp_norm(int64_t outer, int64_t len, int64_t inner, int p, const T* x, T* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      Acc norm = 0;
      for (int64_t k = 0; k < len; ++k) {
        const Acc v = static_cast<Acc>(x[base + k * inner]);
        norm += p == 1 ? std::abs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < len; ++k)
        y[base + k * inner] = static_cast<T>(norm == 0 ? Acc(0) : static_cast<Acc>(x[base + k * inner]) / norm);
    }
}

// LRN across the channels of x [N, C, spatial]: y = x / (bias + alpha / size * s)^beta with s
// the sum of squares over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
// clipped to [0, C).
template <class T, class Acc>
void lrn(int64_t N, int64_t C, int64_t spatial, int64_t size, Acc alpha, Acc beta, Acc bias, const T* x, T* y) {
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t lo = c - before < 0 ? 0 : c - before, hi = c + after >= C ? C - 1 : c + after;
      for (int64_t i = 0; i < spatial; ++i) {
        Acc s = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          const Acc v = static_cast<Acc>(x[(n * C + k) * spatial + i]);
          s += v * v;
        }
        const int64_t at = (n * C + c) * spatial + i;
        y[at] = static_cast<T>(static_cast<Acc>(x[at]) / std::pow(bias + alpha / static_cast<Acc>(size) * s, beta));
      }
    }
}

}  // namespace kiln::rt
