// requantize_f32 (qlinear.h) on 16 int32 lanes with AVX-512, for the int8 kernels that
// requantize their sums in registers (qgemm's tile, qconv2d's depthwise). x86-64 only; the
// callers are compiled for AVX-512 (F, BW, VL) and chosen at run time.
#pragma once

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace kiln::rt {

// The output's range less the zero point, and the zero point, for store_requantized.
struct Requant16 {
  __m512 lo, hi;
  __m512i zero_point;
};

template <bool Signed>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline Requant16 requant16(int32_t zero_point) {
  return {_mm512_set1_ps(static_cast<float>((Signed ? -128 : 0) - zero_point)),
          _mm512_set1_ps(static_cast<float>((Signed ? 127 : 255) - zero_point)), _mm512_set1_epi32(zero_point)};
}

// The 16 bytes requantize_f32(t[j], scale): float(t) * scale, clamped (max_ps returns its
// second operand for NaN: the low end), converted rounding half to even (the default rounding
// mode), plus the zero point, narrowed (the values are in range).
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m128i requantized(const Requant16& q, __m512i t,
                                                                               __m512 scale) {
  const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(t), scale), q.lo), q.hi);
  __m128i b = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), q.zero_point));
  __asm__("" : "+v"(b));  // narrowed in a register: vpmovdb straight to memory is microcoded (slow)
  return b;
}

// y[j] = requantize_f32(t[j], scale) for the lanes of `mask`.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline void store_requantized(const Requant16& q, __m512i t,
                                                                                  __m512 scale, __mmask16 mask,
                                                                                  unsigned char* y) {
  const __m128i b = requantized(q, t, scale);
  if (mask == 0xFFFF)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), b);
  else
    _mm_mask_storeu_epi8(y, mask, b);
}

}  // namespace kiln::rt
#endif
