// kiln.QLinearAdd in one pass over the 8-bit operands: qlinear_add_reference's formula
// (qlinear.h) on 16 values an instruction (AVX-512) or 8 (AVX2 and FMA), the same fused
// multiply-adds, clamp and rounding (half to even: cvtps2dq in the default rounding mode), so
// the same values.
#include <cstdint>
#include <type_traits>

#include "kiln/rt/qlinear.h"
#include "kiln/rt/x86_dispatch.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define KILN_QADD_X86 1
#else
#define KILN_QADD_X86 0
#endif

namespace kiln::rt {
namespace {

template <bool AS, bool BS, bool YS>
void reference(const QLinearAddParams& p, const void* a, const void* b, void* y, int64_t n) {
  using A = std::conditional_t<AS, int8_t, uint8_t>;
  using B = std::conditional_t<BS, int8_t, uint8_t>;
  using Y = std::conditional_t<YS, int8_t, uint8_t>;
  qlinear_add_reference<A, B, Y>(p, static_cast<const A*>(a), static_cast<const B*>(b), static_cast<Y*>(y), n);
}

#if KILN_QADD_X86

// 16 values of the formula, narrowed to bytes (the clamp keeps them in Y's range).
template <bool AS, bool BS>
__attribute__((target("avx512f,avx512bw,avx512vl,fma"))) inline __m128i sixteen(__m512 ra, __m512 rb, __m512 c,
                                                                                 __m512 lo, __m512 hi, __m128i va,
                                                                                 __m128i vb) {
  const __m512 fa = _mm512_cvtepi32_ps(AS ? _mm512_cvtepi8_epi32(va) : _mm512_cvtepu8_epi32(va));
  const __m512 fb = _mm512_cvtepi32_ps(BS ? _mm512_cvtepi8_epi32(vb) : _mm512_cvtepu8_epi32(vb));
  // max_ps returns its second operand for NaN: the low end, as the reference
  const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_fmadd_ps(fa, ra, _mm512_fmadd_ps(fb, rb, c)), lo), hi);
  __m128i o = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v));
  __asm__("" : "+v"(o));  // narrowed in a register: vpmovdb straight to memory is microcoded
  return o;
}

// Full vectors with plain loads (folded into vpmovzxbd) and stores, the last partial one masked.
template <bool AS, bool BS, bool YS>
__attribute__((target("avx512f,avx512bw,avx512vl,fma"))) void add_avx512(const QLinearAddParams& p, const void* a,
                                                                          const void* b, void* y, int64_t n) {
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  auto* py = static_cast<unsigned char*>(y);
  const __m512 ra = _mm512_set1_ps(p.ra), rb = _mm512_set1_ps(p.rb), c = _mm512_set1_ps(p.c);
  const __m512 lo = _mm512_set1_ps(YS ? -128.0f : 0.0f), hi = _mm512_set1_ps(YS ? 127.0f : 255.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pa + i));
    const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(py + i), sixteen<AS, BS>(ra, rb, c, lo, hi, va, vb));
  }
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m128i va = _mm_maskz_loadu_epi8(mask, pa + i), vb = _mm_maskz_loadu_epi8(mask, pb + i);
    _mm_mask_storeu_epi8(py + i, mask, sixteen<AS, BS>(ra, rb, c, lo, hi, va, vb));
  }
}

// 8 values at a time; the last n % 8 through the reference loop.
template <bool AS, bool BS, bool YS>
__attribute__((target("avx2,fma"))) void add_avx2(const QLinearAddParams& p, const void* a, const void* b, void* y,
                                                  int64_t n) {
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  auto* py = static_cast<unsigned char*>(y);
  const __m256 ra = _mm256_set1_ps(p.ra), rb = _mm256_set1_ps(p.rb), c = _mm256_set1_ps(p.c);
  const __m256 lo = _mm256_set1_ps(YS ? -128.0f : 0.0f), hi = _mm256_set1_ps(YS ? 127.0f : 255.0f);
  const int64_t whole = n / 8 * 8;
  for (int64_t i = 0; i < whole; i += 8) {
    const __m128i va = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(pa + i));
    const __m128i vb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(pb + i));
    const __m256 fa = _mm256_cvtepi32_ps(AS ? _mm256_cvtepi8_epi32(va) : _mm256_cvtepu8_epi32(va));
    const __m256 fb = _mm256_cvtepi32_ps(BS ? _mm256_cvtepi8_epi32(vb) : _mm256_cvtepu8_epi32(vb));
    const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(fa, ra, _mm256_fmadd_ps(fb, rb, c)), lo), hi);
    const __m256i t = _mm256_cvtps_epi32(v);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(py + i), YS ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
  }
  if (whole < n) reference<AS, BS, YS>(p, pa + whole, pb + whole, py + whole, n - whole);
}

bool has_avx512() {
  static const bool has = [] {
    return cpu_has_avx512_bw_vl();
  }();
  return has;
}

bool has_avx2() {
  static const bool has = [] {
    return cpu_has_avx2_fma();
  }();
  return has;
}
#endif

using AddFn = void (*)(const QLinearAddParams&, const void*, const void*, void*, int64_t);

template <bool AS, bool BS, bool YS>
AddFn choose(QAddIsa isa) {
#if KILN_QADD_X86
  if ((isa == QAddIsa::automatic || isa == QAddIsa::avx512) && has_avx512()) return add_avx512<AS, BS, YS>;
  if (isa != QAddIsa::portable && has_avx2()) return add_avx2<AS, BS, YS>;
#else
  (void)isa;
#endif
  return reference<AS, BS, YS>;
}

template <bool AS, bool BS>
AddFn choose_y(bool y_signed, QAddIsa isa) {
  return y_signed ? choose<AS, BS, true>(isa) : choose<AS, BS, false>(isa);
}

}  // namespace

void qlinear_add_8bit(const QLinearAddParams& p, const void* a, const void* b, void* y, int64_t n,
                      QAddIsa isa) noexcept {
  AddFn fn;
  if (p.a_signed)
    fn = p.b_signed ? choose_y<true, true>(p.y_signed, isa) : choose_y<true, false>(p.y_signed, isa);
  else
    fn = p.b_signed ? choose_y<false, true>(p.y_signed, isa) : choose_y<false, false>(p.y_signed, isa);
  fn(p, a, b, y, n);
}

}  // namespace kiln::rt
