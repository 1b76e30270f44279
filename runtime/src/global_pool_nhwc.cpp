// dequantize_global_avgpool_nhwc (pool.h): the end of an 8-bit channels-last chain before an f32
// GlobalAveragePool (MobileNetV2's last 1x1, 7 x 7 x 1280). Apart, a kiln.FromNhwc, a
// DequantizeLinear and a GlobalAveragePool took 4.5 + 7.9 + 4.8 us at one thread and wrote a
// 250 KB f32 tensor; here the channels-last bytes are read once. On AVX2 the 8 lanes of a
// vector are 8 channels, each lane summing in plane_mean's order, so the values are the same.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kiln/rt/pool.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

// v rounded to float as a store would leave it: compilers fuse a multiply into the add after it
// where the target has FMA (generated code's runtime is built with -march=native for `--cpu
// native`), one rounding where dequantize_linear's stored value and global_avgpool_f32's sum
// make two.
inline float rounded(float v) {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
  __asm__("" : "+x"(v));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  volatile float stored = v;
  v = stored;
#endif
  return v;
}

// Channels [c0, c1) of image n, one plane_mean each.
template <class Q>
void channels_portable(int64_t spatial, int64_t C, const Q* x, float scale, float zero_point, float* y, int64_t c0,
                       int64_t c1) {
  for (int64_t c = c0; c < c1; ++c)
    y[c] = plane_mean(spatial,
                      [&](int64_t j) { return rounded((static_cast<float>(x[j * C + c]) - zero_point) * scale); });
}

#if KILN_X86_KERNELS

// 8 channels at x (one pixel's), dequantized.
template <class Q>
KILN_AVX2_FMA inline __m256 dequantize8(const Q* x, __m256 scale, __m256 zero_point) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
  const __m256i w = std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
  __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(w), zero_point), scale);
  __asm__("" : "+x"(v));  // rounded here, as in `rounded`: GCC would fuse the multiply into the caller's add
  return v;
}

// plane_mean of channels [c0, c0 + 8) of image n (x at its first pixel), a lane each.
template <class Q>
KILN_AVX2_FMA void eight_channels_avx2(int64_t spatial, int64_t C, const Q* x, float scale, float zero_point,
                                       float* y) {
  const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(zero_point);
  __m256 s[8];
  for (int q = 0; q < 8; ++q) s[q] = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= spatial; j += 8)
    for (int q = 0; q < 8; ++q) s[q] = _mm256_add_ps(s[q], dequantize8(x + (j + q) * C, vs, vz));
  __m256 rest = _mm256_setzero_ps();
  for (; j < spatial; ++j) rest = _mm256_add_ps(rest, dequantize8(x + j * C, vs, vz));
  const __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3])),
                                                 _mm256_add_ps(_mm256_add_ps(s[4], s[5]), _mm256_add_ps(s[6], s[7]))),
                                   rest);
  _mm256_storeu_ps(y, _mm256_div_ps(sum, _mm256_set1_ps(static_cast<float>(spatial))));
}

#endif

}  // namespace

template <class Q>
void dequantize_global_avgpool_nhwc(int64_t N, int64_t spatial, int64_t C, const Q* x, float scale, float zero_point,
                                    float* y, ThreadPool* pool) noexcept {
  if (N <= 0 || C <= 0) return;
  // Blocks of 8 channels of every image; plane_mean's 0 for no values comes from the portable path.
  const int64_t blocks = (C + 7) / 8;
#if KILN_X86_KERNELS
  const bool avx2 = spatial > 0 && cpu_has_avx2_fma();
#endif
  parallel_for(N * spatial * C < 16 * 1024 ? nullptr : pool, N * blocks, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = b / blocks, c0 = b % blocks * 8, c1 = std::min(C, c0 + 8);
      const Q* xn = x + n * spatial * C;
      float* yn = y + n * C;
#if KILN_X86_KERNELS
      if (avx2 && c1 - c0 == 8) {
        eight_channels_avx2(spatial, C, xn + c0, scale, zero_point, yn + c0);
        continue;
      }
#endif
      channels_portable(spatial, C, xn, scale, zero_point, yn, c0, c1);
    }
  });
}

template void dequantize_global_avgpool_nhwc<uint8_t>(int64_t, int64_t, int64_t, const uint8_t*, float, float, float*,
                                                      ThreadPool*) noexcept;
template void dequantize_global_avgpool_nhwc<int8_t>(int64_t, int64_t, int64_t, const int8_t*, float, float, float*,
                                                     ThreadPool*) noexcept;

}  // namespace kiln::rt
