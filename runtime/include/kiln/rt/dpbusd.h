// acc + vpdpbusd(u8 b, s8 w) for the int8 kernels' register tiles (runtime sources only; the
// callers are compiled for AVX-512 VNNI and chosen at run time). x86-64 only.
#pragma once

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>

namespace kiln::rt {

// Under GCC the instruction is written out: from the intrinsic GCC moved a tile's 21 sums to
// other registers and to the stack and back at every k-group (qgemm's and qconv2d's tiles).
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"), always_inline)) inline __m512i dpbusd_reg(
    __m512i acc, __m512i b, __m512i w) {
#if defined(__GNUC__) && !defined(__clang__)
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b), "v"(w));
  return acc;
#else
  return _mm512_dpbusd_epi32(acc, b, w);
#endif
}

}  // namespace kiln::rt
#endif
