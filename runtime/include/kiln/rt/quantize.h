// QuantizeLinear and DequantizeLinear as ONNX defines them (per tensor, per axis and
// blocked), written once for kiln's reference and for generated code. These are plain
// reference loops; a fast kernel for a common case (f32 to u8/i8 per tensor, say) can be
// chosen inside these functions without changing their callers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/rt/dtype.h"
#include "kiln/rt/lowp.h"

namespace kiln::rt {

// Where the scale and zero point of element x[o, a, i] are, with x viewed as
// [outer, axis_len, inner] around the quantization axis: at
// o * outer_stride + (a / block) * axis_stride + i * inner_stride. Per tensor every stride
// is 0; per axis axis_stride is 1; blocked, the parameters have x's shape with the axis
// divided into blocks of `block`.
struct QuantLayout {
  int64_t outer = 1, axis_len = 1, inner = 1;
  int64_t block = 1;
  int64_t outer_stride = 0, axis_stride = 0, inner_stride = 0;
};

// v rounded to the precision of dtype t (f32, f16, bf16 or f64): where ONNX's reference
// divides in that type.
inline double round_to_dtype(double v, kiln_dtype t) noexcept {
  switch (t) {
    case KILN_F16: return static_cast<float>(f16::from_bits(f64_to_f16_bits(v)));
    case KILN_BF16: return static_cast<float>(bf16(static_cast<float>(v)));
    case KILN_F64: return v;
    default: return static_cast<double>(static_cast<float>(v));
  }
}

// Round half to even (numpy.rint), whatever the floating-point environment says.
inline double round_half_even(double v) noexcept {
  double r = std::floor(v);
  const double frac = v - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return r;
}

// One quantized value from the quotient x / scale (already rounded to the division's
// precision): integers round half to even, add the zero point and clamp to Q's range;
// float8 ignores the zero point (it must be 0) and saturates or not; float4 adds it and
// always clamps.
template <class Q>
Q quantize_value(double q, Q zero_point, bool saturate) noexcept {
  if constexpr (std::is_same_v<Q, f4e2m1>) {
    return convert<Q>(q + static_cast<double>(widen_storage(zero_point)), CastMode{saturate, RoundMode::up});
  } else if constexpr (is_minifloat<Q>::value) {
    return convert<Q>(q, CastMode{saturate, RoundMode::up});
  } else {
    int64_t lo, hi;
    if constexpr (is_small_int<Q>::value) {
      lo = Q::lowest, hi = Q::highest;
    } else {
      static_assert(std::is_integral_v<Q>, "quantize_value: Q is an integer or a minifloat");
      lo = static_cast<int64_t>(std::numeric_limits<Q>::lowest()), hi = static_cast<int64_t>(std::numeric_limits<Q>::max());
    }
    double r = round_half_even(q);
    if (!(r == r)) r = 0;
    r = std::fmin(std::fmax(r, -4e18), 4e18);
    int64_t v = static_cast<int64_t>(r) + static_cast<int64_t>(widen_storage(zero_point));
    v = v < lo ? lo : (v > hi ? hi : v);
    if constexpr (is_small_int<Q>::value)
      return Q::wrap(v);
    else
      return static_cast<Q>(v);
  }
}

// y = quantize(x / scale + zero_point). `zero_point` may be null (0). The quotient is rounded
// to `division` (ONNX divides in x's type, or in the `precision` attribute's).
template <class X, class S, class Q>
void quantize_linear(const X* x, const S* scale, const Q* zero_point, Q* y, const QuantLayout& l,
                     kiln_dtype division, bool saturate) noexcept {
  if constexpr (std::is_same_v<X, float> && std::is_same_v<S, float> &&
                (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>)) {
    if (l.outer_stride == 0 && l.axis_stride == 0 && l.inner_stride == 0 && division == KILN_F32) {
      // f32 to 8 bits per tensor (activations between quantized layers): the same values as
      // the loop below, in a loop the compiler vectorizes. The quotient is rounded to f32 by
      // the division itself; clamped to the integer range first (NaN to 0), then rounded half
      // to even by adding and subtracting 1.5 * 2^23 (exact for |q| <= 2^22).
      const float s = scale[0];
      const float zp = zero_point ? static_cast<float>(zero_point[0]) : 0.0f;
      const float lo = static_cast<float>(std::numeric_limits<Q>::lowest()) - zp;
      const float hi = static_cast<float>(std::numeric_limits<Q>::max()) - zp;
      const int64_t n = l.outer * l.axis_len * l.inner;
      for (int64_t i = 0; i < n; ++i) {
        float q = x[i] / s;
        q = q == q ? q : 0.0f;
        q = q > lo ? q : lo;
        q = q < hi ? q : hi;
        q = (q + 12582912.0f) - 12582912.0f;
        y[i] = static_cast<Q>(static_cast<int32_t>(q + zp));
      }
      return;
    }
  }
  int64_t k = 0;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t a = 0; a < l.axis_len; ++a)
      for (int64_t i = 0; i < l.inner; ++i, ++k) {
        const int64_t p = o * l.outer_stride + (a / l.block) * l.axis_stride + i * l.inner_stride;
        const double q = round_to_dtype(static_cast<double>(widen_storage(x[k])) / static_cast<double>(widen_storage(scale[p])), division);
        y[k] = quantize_value<Q>(q, zero_point ? zero_point[p] : Q{}, saturate);
      }
}

// y = (x - zero_point) * scale, computed in float (double for a double scale) as ONNX's
// reference does, then stored as Y. float8 and float4 ignore the zero point.
template <class Q, class S, class Y>
void dequantize_linear(const Q* x, const S* scale, const Q* zero_point, Y* y, const QuantLayout& l) noexcept {
  using C = std::conditional_t<std::is_same_v<S, double>, double, float>;
  if constexpr (std::is_same_v<S, float> && std::is_same_v<Y, float> &&
                (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>)) {
    if (l.outer_stride == 0 && l.axis_stride == 0 && l.inner_stride == 0) {
      // 8 bits to f32 per tensor: the loop below's arithmetic, vectorizable.
      const float s = scale[0];
      const float zp = zero_point ? static_cast<float>(zero_point[0]) : 0.0f;
      const int64_t n = l.outer * l.axis_len * l.inner;
      for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zp) * s;
      return;
    }
  }
  int64_t k = 0;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t a = 0; a < l.axis_len; ++a)
      for (int64_t i = 0; i < l.inner; ++i, ++k) {
        const int64_t p = o * l.outer_stride + (a / l.block) * l.axis_stride + i * l.inner_stride;
        C d = static_cast<C>(widen_storage(x[k]));
        if constexpr (!is_minifloat<Q>::value && !std::is_same_v<Q, f8e8m0>) {
          if (zero_point) d -= static_cast<C>(widen_storage(zero_point[p]));
        }
        y[k] = convert<Y>(d * static_cast<C>(widen_storage(scale[p])));
      }
}

// DynamicQuantizeLinear: u8 with scale = (max(x, 0) - min(x, 0)) / 255 (1/255 when that is 0)
// and the zero point that maps 0 exactly, computed in float as ONNX's reference does.
inline void dynamic_quantize_linear_u8(const float* x, int64_t n, uint8_t* y, float* scale_out,
                                       uint8_t* zero_point_out) noexcept {
  // Range in 16 lanes, which the compiler vectorizes (one running min/max would not be).
  constexpr int64_t kLanes = 16;
  float lo16[kLanes] = {}, hi16[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      lo16[j] = x[i + j] < lo16[j] ? x[i + j] : lo16[j];
      hi16[j] = x[i + j] > hi16[j] ? x[i + j] : hi16[j];
    }
  float lo = 0, hi = 0;
  for (; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  for (int64_t j = 0; j < kLanes; ++j) {
    lo = lo16[j] < lo ? lo16[j] : lo;
    hi = hi16[j] > hi ? hi16[j] : hi;
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float initial = 0.0f - lo / scale;
  const float zp = static_cast<float>(round_half_even(clip(initial, 0.0f, 255.0f)));
  // round_half_even(x / scale) + zp clipped to [0, 255], in a vectorizable form: the f32
  // quotient clamped to [-zp, 255 - zp] first (the bounds are integers, so clamping and
  // rounding commute; NaN becomes 0), then rounded half to even by adding and subtracting
  // 1.5 * 2^23 (exact for |q| <= 2^22), as quantize_linear's per-tensor loop does.
  const float qlo = -zp, qhi = 255.0f - zp;
  for (int64_t k = 0; k < n; ++k) {
    float q = x[k] / scale;
    q = q == q ? q : 0.0f;
    q = q > qlo ? q : qlo;
    q = q < qhi ? q : qhi;
    q = (q + 12582912.0f) - 12582912.0f;
    y[k] = static_cast<uint8_t>(static_cast<int32_t>(q + zp));
  }
  *scale_out = scale;
  *zero_point_out = static_cast<uint8_t>(zp);
}

}  // namespace kiln::rt
