// Integer matrix products and convolutions of ONNX's quantized ops: MatMulInteger and
// ConvInteger (int32 results), QLinearMatMul and QLinearConv (requantized to 8 bits). Matmuls
// take per-tensor zero points, one [M,K] x [K,N] product per call; convolutions per-tensor
// or per-output-channel weight parameters. Plain reference loops, as ONNX's reference computes them; a fast int8 kernel
// can take over inside these functions without changing their callers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/rt/conv.h"
#include "kiln/rt/dtype.h"
#include "kiln/rt/quantize.h"

namespace kiln::rt {

// sum_k (a_row[k] - a_zero_point) * (b_col[k * b_stride] - b_zero_point) in int32, wrapping on
// overflow as numpy's int32 arithmetic does.
template <class A, class B>
int32_t dot_integer(const A* a_row, const B* b_col, int64_t K, int64_t b_stride, int32_t a_zero_point,
                    int32_t b_zero_point) noexcept {
  uint32_t acc = 0;
  for (int64_t k = 0; k < K; ++k)
    acc += static_cast<uint32_t>(static_cast<int32_t>(a_row[k]) - a_zero_point) *
           static_cast<uint32_t>(static_cast<int32_t>(b_col[k * b_stride]) - b_zero_point);
  return static_cast<int32_t>(acc);
}

// c[M,N] = (a - a_zero_point) x (b - b_zero_point) in int32.
template <class A, class B>
void matmul_integer(const A* a, const B* b, int32_t* c, int64_t M, int64_t K, int64_t N, int32_t a_zero_point,
                    int32_t b_zero_point) noexcept {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) c[m * N + n] = dot_integer(a + m * K, b + n, K, N, a_zero_point, b_zero_point);
}

// QLinearMatMul's requantization factor a_scale * b_scale / y_scale, each step rounded to
// the scales' type S as ONNX's reference computes it.
template <class S>
double qlinear_multiplier(S a_scale, S b_scale, S y_scale) noexcept {
  using C = std::conditional_t<std::is_same_v<S, double>, double, float>;
  const S ab = S(static_cast<C>(a_scale) * static_cast<C>(b_scale));
  return static_cast<double>(static_cast<C>(S(static_cast<C>(ab) / static_cast<C>(y_scale))));
}

// The requantization of QLinearMatMul's and QLinearConv's int32 sums to 8 bits, in float as
// ONNX Runtime (MLAS) computes it: v = float(acc) * multiplier (one float rounding each),
// clamped to Y's range less the zero point (NaN to the low end), rounded half to even, plus
// the zero point (in Y's range). The int8 kernels (qgemm.cpp) compute exactly this, 16 values
// per AVX-512 instruction; in double (as ONNX's reference) a value could round differently
// only when acc * multiplier lies within a float rounding (2^-24 relative) of a half-integer.
template <class Y>
Y requantize_f32(int32_t acc, float multiplier, int32_t zero_point) noexcept {
  const float lo = static_cast<float>(std::numeric_limits<Y>::lowest() - zero_point);
  const float hi = static_cast<float>(std::numeric_limits<Y>::max() - zero_point);
  float v = static_cast<float>(acc) * multiplier;
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return static_cast<Y>(static_cast<int32_t>(std::nearbyint(v)) + zero_point);
}

// Whether a sum of `products` u8 x s8 products (each within 255 x 128) plus `add`, times
// `scale`, can reach 2^30, where requant8 (requant_avx2.h) needs its clamp; true for a NaN or
// infinite scale. Plain arithmetic, not x86's: the channel terms computed on every
// architecture (qconv_nhwc.cpp) call it.
inline bool requant_top_reachable(int32_t add, int64_t products, float scale) noexcept {
  const double bound = (std::fabs(static_cast<double>(add)) + static_cast<double>(products) * 255.0 * 128.0) *
                       std::fabs(static_cast<double>(scale));
  return !(bound < 1073741824.0);  // written so that NaN clamps
}

// y = requantize_f32(matmul_integer(a, b), multiplier, y_zero_point).
template <class A, class B, class Y>
void qlinear_matmul(const A* a, const B* b, Y* y, int64_t M, int64_t K, int64_t N, int32_t a_zero_point,
                    int32_t b_zero_point, float multiplier, int32_t y_zero_point) noexcept {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      y[m * N + n] = requantize_f32<Y>(dot_integer(a + m * K, b + n, K, N, a_zero_point, b_zero_point), multiplier,
                                       y_zero_point);
}

// y[n, m, oh, ow] = bias[m] + sum over the window of (x - x_zero_point) * (w - w_zero_point[m]),
// int32; padding contributes 0. w_zero_point has 1 or M elements (or is null, 0); bias is
// null or M values.
template <class X, class W>
void conv2d_integer(const Conv2dParams& p, const X* x, const W* w, int32_t* y, int32_t x_zero_point,
                    const W* w_zero_point, int64_t w_zero_point_count, const int32_t* bias) noexcept {
  const int64_t cg = p.C / p.group, mg = p.M / p.group;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m) {
      const int64_t g = m / mg;
      const int32_t wz = w_zero_point ? static_cast<int32_t>(w_zero_point[w_zero_point_count > 1 ? m : 0]) : 0;
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          uint32_t acc = bias ? static_cast<uint32_t>(bias[m]) : 0u;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < p.KH; ++kh) {
              const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
              if (ih < 0 || ih >= p.H) continue;
              for (int64_t kw = 0; kw < p.KW; ++kw) {
                const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                if (iw < 0 || iw >= p.W) continue;
                const int32_t xv = static_cast<int32_t>(x[((n * p.C + g * cg + c) * p.H + ih) * p.W + iw]) - x_zero_point;
                const int32_t wv = static_cast<int32_t>(w[((m * cg + c) * p.KH + kh) * p.KW + kw]) - wz;
                acc += static_cast<uint32_t>(xv) * static_cast<uint32_t>(wv);
              }
            }
          y[((n * p.M + m) * p.OH + oh) * p.OW + ow] = static_cast<int32_t>(acc);
        }
    }
}

// QLinearConv: conv2d_integer, then per output channel m
// y = requantize_f32(acc, x_scale * w_scale[m] / y_scale, y_zero_point); w_scale and
// w_zero_point have 1 or M elements. `acc` is scratch of the output's size.
template <class X, class W, class Y, class S>
void qlinear_conv2d(const Conv2dParams& p, const X* x, S x_scale, int32_t x_zero_point, const W* w,
                    const S* w_scale, int64_t w_scale_count, const W* w_zero_point, int64_t w_zero_point_count,
                    S y_scale, int32_t y_zero_point, const int32_t* bias, int32_t* acc, Y* y) noexcept {
  conv2d_integer<X, W>(p, x, w, acc, x_zero_point, w_zero_point, w_zero_point_count, bias);
  const int64_t plane = p.OH * p.OW;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m) {
      const auto mult = static_cast<float>(qlinear_multiplier<S>(x_scale, w_scale[w_scale_count > 1 ? m : 0], y_scale));
      const int64_t base = (n * p.M + m) * plane;
      for (int64_t i = 0; i < plane; ++i) y[base + i] = requantize_f32<Y>(acc[base + i], mult, y_zero_point);
    }
}

// kiln.QLinearAdd: y = QuantizeLinear(DequantizeLinear(a) + DequantizeLinear(b)) per tensor,
// n elements each, computed as ONNX Runtime's QLinearAdd (MLAS) computes it: with the scales'
// ratios ra = a_scale / y_scale, rb = b_scale / y_scale and the zero points folded into one
// constant c = y_zero_point - ra a_zero_point - rb b_zero_point,
//   v = fma(a, ra, fma(b, rb, c)), clamped to Y's range (NaN to the low end), rounded half to even.
// Against the three f32 ops (dequantize, add, quantize) one at a time, a value differs by one
// step only where the sum lies within a few float roundings (about 1e-4 here) of a half-integer.
struct QLinearAddParams {
  bool a_signed, b_signed, y_signed;  // s8, else u8
  float ra, rb, c;
};

inline QLinearAddParams qlinear_add_params(bool a_signed, bool b_signed, bool y_signed, float a_scale,
                                           float a_zero_point, float b_scale, float b_zero_point, float y_scale,
                                           float y_zero_point) noexcept {
  const float ra = a_scale / y_scale, rb = b_scale / y_scale;
  const auto c = static_cast<float>(static_cast<double>(y_zero_point) - static_cast<double>(ra) * a_zero_point -
                                    static_cast<double>(rb) * b_zero_point);
  return {a_signed, b_signed, y_signed, ra, rb, c};
}

// The reference loop of the formula above.
template <class A, class B, class Y>
void qlinear_add_reference(const QLinearAddParams& p, const A* a, const B* b, Y* y, int64_t n) noexcept {
  const auto lo = static_cast<float>(std::numeric_limits<Y>::lowest());
  const auto hi = static_cast<float>(std::numeric_limits<Y>::max());
  for (int64_t i = 0; i < n; ++i) {
    float v = std::fma(static_cast<float>(a[i]), p.ra, std::fma(static_cast<float>(b[i]), p.rb, p.c));
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    y[i] = static_cast<Y>(static_cast<int32_t>(std::nearbyint(v)));
  }
}

// Which loop qlinear_add_8bit runs: the best the CPU has (automatic), or one named for tests
// (a kernel the CPU lacks falls back to the next one it has).
enum class QAddIsa { automatic, portable, avx2, avx512 };

// qlinear_add_reference's result, 16 values an instruction with AVX-512 or 8 with AVX2 and FMA
// where the CPU has them (qlinear_add.cpp); the reference loop elsewhere.
void qlinear_add_8bit(const QLinearAddParams& p, const void* a, const void* b, void* y, int64_t n,
                      QAddIsa isa = QAddIsa::automatic) noexcept;

template <class A, class B, class Y>
void qlinear_add(const A* a, float a_scale, float a_zero_point, const B* b, float b_scale, float b_zero_point,
                 float y_scale, float y_zero_point, Y* y, int64_t n) noexcept {
  static_assert(sizeof(A) == 1 && sizeof(B) == 1 && sizeof(Y) == 1, "kiln.QLinearAdd takes 8-bit tensors");
  qlinear_add_8bit(qlinear_add_params(std::is_signed_v<A>, std::is_signed_v<B>, std::is_signed_v<Y>, a_scale,
                                      a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point),
                   a, b, y, n);
}

}  // namespace kiln::rt
