// requantize_f32 (qlinear.h) on 8 int32 lanes with AVX2, for the int8 kernels that requantize
// their sums in registers without AVX-512 (qconv2d_nhwc's AVX2 tiles and depthwise). x86-64
// only; the callers are compiled for AVX2 and chosen at run time.
#pragma once

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace kiln::rt {

// 8 int32 sums s (the channel terms already added) requantized as requantize_f32 but for the
// zero point: s * scale in float, rounded half to even by vcvtps2dq. Only the top of the
// clamp is applied here, in float (vcvtps2dq turns values past int32 into INT32_MIN); the
// callers add the zero point to the int16 packs of these (vpaddsw) and pack to 8 bits, and the
// saturation of those three steps is the clamp to the type: rounding commutes with a clamp to
// integer bounds, and every value below them (NaN included: min_ps(hi, NaN) is NaN, converted
// to INT32_MIN) saturates to the type's least. Two fewer operations a vector than the clamp.
// Clamp false leaves out the vminps where no product can reach the top (requant_top_reachable false):
// every value then lies within int32 and the packs' saturation is the whole clamp; it is one
// of the 7 to 9 operations a vector that share the multiply pipes with the products.
template <bool Clamp = true>
__attribute__((target("avx2,fma"))) inline __m256i requant8(__m256i s, __m256 scale, __m256 hi) {
  const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(s), scale);
  return _mm256_cvtps_epi32(Clamp ? _mm256_min_ps(hi, v) : v);
}

// requant8's top of the clamp, the type's largest less the zero point, and the zero point
// (int16 lanes) for an 8-bit output of this signedness.
struct Requant8Bounds {
  __m256 hi;
  __m256i zero_point;
};
template <bool Signed>
__attribute__((target("avx2,fma"))) inline Requant8Bounds requant8_bounds(int32_t y_zero_point) {
  return {_mm256_set1_ps(static_cast<float>((Signed ? 127 : 255) - y_zero_point)),
          _mm256_set1_epi16(static_cast<int16_t>(y_zero_point))};
}

}  // namespace kiln::rt
#endif
