// 8-bit GEMM (see qgemm.h): A is packed per run into panels of kMR rows, B once into panels
// of kNR columns, both with K in groups of 4 bytes (the unit of vpdpbusd); a kMR x kNR int32
// tile is accumulated over the whole of K (no K blocking: int32 sums stay in registers) and
// finished at once (zero-point correction, bias, scale, clamp, rounding, store).
#include "kiln/rt/qgemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kiln/rt/qlinear.h"
#include "kiln/rt/requant_avx512.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define KILN_QGEMM_X86 1
#else
#define KILN_QGEMM_X86 0
#endif

namespace kiln::rt {
namespace {

constexpr int64_t kMR = 6;
constexpr int64_t kNR = 16;
constexpr int64_t kHeader = 64;
// Bytes of B (K x columns) worked on against each packed panel of A: stays in L2.
constexpr int64_t kBlockBytes = 256 * 1024;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t k_groups(int64_t K) { return (K + 3) / 4; }

struct PackedHeader {
  int64_t K, N;
  int32_t b_shift;    // 128 when the source was u8 (stored as b - 128)
  int32_t pairs_fit;  // 1: every pair of B values (k 0-1, 2-3 of a group) is within 128 (row_pairs_avx2)
};

int64_t colsum_bytes(int64_t N) { return round_up(round_up(N, kNR) * 4, 64); }

const int32_t* packed_colsums(const unsigned char* packed) {
  return reinterpret_cast<const int32_t*>(packed + kHeader);
}

const int8_t* packed_panel(const unsigned char* packed, int64_t K, int64_t N, int64_t j) {
  return reinterpret_cast<const int8_t*>(packed + kHeader + colsum_bytes(N)) + (j / kNR) * k_groups(K) * 64;
}

template <class T, int8_t (*Convert)(T)>
void pack_b_impl(int64_t K, int64_t N, const T* src, int64_t stride_k, int64_t stride_n, int32_t shift,
                 unsigned char* packed) {
  if (K <= 0 || N <= 0) return;
  std::memset(packed, 0, static_cast<size_t>(kHeader));
  int32_t* sums = reinterpret_cast<int32_t*>(packed + kHeader);
  std::memset(sums, 0, static_cast<size_t>(colsum_bytes(N)));
  const int64_t kq = k_groups(K);
  bool pairs_fit = true;
  for (int64_t j0 = 0; j0 < N; j0 += kNR) {
    int8_t* panel = reinterpret_cast<int8_t*>(packed + kHeader + colsum_bytes(N)) + (j0 / kNR) * kq * 64;
    for (int64_t g = 0; g < kq; ++g)
      for (int64_t j = 0; j < kNR; ++j)
        for (int64_t t = 0; t < 4; ++t) {
          const int64_t k = g * 4 + t, n = j0 + j;
          const int8_t v = (k < K && n < N) ? Convert(src[k * stride_k + n * stride_n]) : int8_t{0};
          panel[g * 64 + j * 4 + t] = v;
          if (n < N) sums[n] += v;
          if (t % 2 == 1)
            pairs_fit = pairs_fit && std::abs(int32_t{panel[g * 64 + j * 4 + t - 1]}) + std::abs(int32_t{v}) <= 128;
        }
  }
  const PackedHeader h{K, N, shift, pairs_fit ? 1 : 0};
  std::memcpy(packed, &h, sizeof h);
}

int8_t from_s8(int8_t v) { return v; }
int8_t from_u8(uint8_t v) { return static_cast<int8_t>(static_cast<int32_t>(v) - 128); }

// C tile (kMR x kNR int32, row-major) = sum over kq groups of the broadcast panel (kMR rows x 4
// bytes a group) x the vector panel (kNR columns x 4 bytes a group), for the first `rows` rows
// (the others are left unset). BS: the broadcast operand is s8 and the vector operand u8 (qconv2d's
// weights x activations); else the broadcast is u8 and the vector s8 (qgemm's A x B).
using KernelFn = QTileKernel;

template <bool BS>
void kernel_portable(int64_t kq, const void* bcast, const void* vec, int32_t* c, int rows) {
  using Bc = std::conditional_t<BS, int8_t, uint8_t>;
  using Vc = std::conditional_t<BS, uint8_t, int8_t>;
  const Bc* a = static_cast<const Bc*>(bcast);
  const Vc* b = static_cast<const Vc*>(vec);
  uint32_t t[kMR][kNR] = {};
  for (int64_t g = 0; g < kq; ++g) {
    const Bc* ag = a + g * kMR * 4;
    const Vc* bg = b + g * 64;
    for (int r = 0; r < rows; ++r)
      for (int64_t j = 0; j < kNR; ++j) {
        int32_t s = 0;  // 4 products: |s| <= 4 * 255 * 128, no overflow
        for (int64_t q = 0; q < 4; ++q) s += static_cast<int32_t>(ag[r * 4 + q]) * static_cast<int32_t>(bg[j * 4 + q]);
        t[r][j] += static_cast<uint32_t>(s);
      }
  }
  for (int r = 0; r < rows; ++r)
    for (int64_t j = 0; j < kNR; ++j) c[r * kNR + j] = static_cast<int32_t>(t[r][j]);
}

#if KILN_QGEMM_X86
int32_t load_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// AVX2: operands widened to int16 and multiplied with vpmaddwd (pairs summed in int32, exact).
// 8 columns at a time: per row two accumulators of 4 columns x 2 partial sums.
template <bool BS, int R>
__attribute__((target("avx2"))) void tile_avx2(int64_t kq, const uint8_t* a, const uint8_t* b, int32_t* c) {
  for (int h = 0; h < 2; ++h) {
    __m256i acc[R][2];
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t g = 0; g < kq; ++g) {
      const uint8_t* bg = b + g * 64 + h * 32;
      const __m128i l0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bg));
      const __m128i l1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bg + 16));
      const __m256i b0 = BS ? _mm256_cvtepu8_epi16(l0) : _mm256_cvtepi8_epi16(l0);
      const __m256i b1 = BS ? _mm256_cvtepu8_epi16(l1) : _mm256_cvtepi8_epi16(l1);
      const uint8_t* ag = a + g * kMR * 4;
      _Pragma("GCC unroll 8")
      for (int r = 0; r < R; ++r) {
        const __m128i a4 = _mm_cvtsi32_si128(load_i32(ag + r * 4));
        const __m256i av = _mm256_broadcastq_epi64(BS ? _mm_cvtepi8_epi16(a4) : _mm_cvtepu8_epi16(a4));
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(av, b0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(av, b1));
      }
    }
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      // acc0 = [c0 c0 c1 c1 | c2 c2 c3 c3], acc1 = [c4 c4 c5 c5 | c6 c6 c7 c7] (partial sums)
      const __m256i s = _mm256_hadd_epi32(acc[r][0], acc[r][1]);  // [c0 c1 c4 c5 | c2 c3 c6 c7]
      const __m256i v = _mm256_permute4x64_epi64(s, 0xD8);          // [c0 c1 c2 c3 | c4 c5 c6 c7]
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kNR + h * 8), v);
    }
  }
}

// One row of A against `panels` (1 to 4) consecutive panels of B whose pairs fit int16 (the
// packed header's pairs_fit): vpmaddubsw multiplies the row's u8 quad by a panel's s8 bytes and
// sums each pair in int16 (exact: 255 x 128 at most), vpmaddwd by ones sums the two pairs of a
// column into int32. Row 0 of panel q's tile goes to c + q * kNR. Half the instructions of
// tile_avx2<false, 1>'s widening, and four panels' streams at once: MobileNetV2's classifier
// (K 1280, N 1000) reads its 1.28 MB of weights from beyond L2 every run.
template <int P>
__attribute__((target("avx2"))) void row_pairs_avx2(int64_t kq, const uint8_t* a, const int8_t* b, int64_t panel_bytes,
                                                     int32_t* c) {
  __m256i acc[P][2];
  _Pragma("GCC unroll 4")
  for (int q = 0; q < P; ++q) acc[q][0] = acc[q][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < kq; ++g) {
    const __m256i av = _mm256_set1_epi32(load_i32(a + g * kMR * 4));
    _Pragma("GCC unroll 4")
    for (int q = 0; q < P; ++q) {
      const int8_t* bg = b + q * panel_bytes + g * 64;
      _mm_prefetch(reinterpret_cast<const char*>(bg + 16 * 64), _MM_HINT_T0);  // 16 groups ahead
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg + 32));
      acc[q][0] = _mm256_add_epi32(acc[q][0], _mm256_madd_epi16(_mm256_maddubs_epi16(av, b0), ones));
      acc[q][1] = _mm256_add_epi32(acc[q][1], _mm256_madd_epi16(_mm256_maddubs_epi16(av, b1), ones));
    }
  }
  _Pragma("GCC unroll 4")
  for (int q = 0; q < P; ++q) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + q * kNR), acc[q][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + q * kNR + 8), acc[q][1]);
  }
}

// AVX-512 VNNI (on 256-bit registers): vpdpbusd adds four u8 x s8 products into int32, exact.
template <bool BS, int R>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void tile_vnni(int64_t kq, const uint8_t* a,
                                                                                      const uint8_t* b, int32_t* c) {
  __m256i acc[R][2];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kq; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * 64));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * 64 + 32));
    const uint8_t* ag = a + g * kMR * 4;
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      const __m256i av = _mm256_set1_epi32(load_i32(ag + r * 4));
      // vpdpbusd's first factor is the u8 one
      acc[r][0] = BS ? _mm256_dpbusd_epi32(acc[r][0], b0, av) : _mm256_dpbusd_epi32(acc[r][0], av, b0);
      acc[r][1] = BS ? _mm256_dpbusd_epi32(acc[r][1], b1, av) : _mm256_dpbusd_epi32(acc[r][1], av, b1);
    }
  }
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kNR), acc[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kNR + 8), acc[r][1]);
  }
}

// acc + vpdpbusd(u8 vector v, the s8 quad at w broadcast). GCC copies the accumulators of
// _mm512_dpbusd_epi32(acc, v, _mm512_set1_epi32(...)) to other registers and back around every
// instruction (12 moves per 6 multiply-adds in tile_vnni_requant); the instruction written out,
// with the broadcast in its memory operand, keeps them in place.
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) inline __m512i dpbusd_broadcast(
    __m512i acc, __m512i v, const uint8_t* w) {
#if defined(__GNUC__) && !defined(__clang__)
  using quad = int32_t __attribute__((may_alias, aligned(1)));
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(v), "m"(*reinterpret_cast<const quad*>(w)));
  return acc;
#else
  return _mm512_dpbusd_epi32(acc, v, _mm512_set1_epi32(load_i32(w)));
#endif
}

// tile_vnni<true, R> with the requantization of a plain 8-bit output (qgemm_requantize_rows)
// done on the sums in registers.
template <int R, bool Signed>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void tile_vnni_requant(
    int64_t kq, const uint8_t* a, const uint8_t* b, int64_t n, const int32_t* add, const float* scale,
    int32_t zero_point, unsigned char* y, int64_t y_stride) {
  // One 512-bit register per row (16 pixels x 4 bytes is a whole group of the panel): half the
  // instructions of two 256-bit halves, and no register copies GCC made for those.
  // The sums start at add[r] (the same wrapping int32 sum as adding it at the end).
  __m512i acc[R];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) acc[r] = _mm512_set1_epi32(add[r]);
  for (int64_t g = 0; g < kq; ++g) {
    const __m512i bv = _mm512_loadu_si512(b + g * 64);
    const uint8_t* ag = a + g * kMR * 4;
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) acc[r] = dpbusd_broadcast(acc[r], bv, ag + r * 4);
  }
  const Requant16 q = requant16<Signed>(zero_point);
  const __mmask16 mask = n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) store_requantized(q, acc[r], _mm512_set1_ps(scale[r]), mask, y + r * y_stride);
}

// dpbusd_broadcast on 256 bits.
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) inline __m256i dpbusd_broadcast(
    __m256i acc, __m256i v, const uint8_t* w) {
#if defined(__GNUC__) && !defined(__clang__)
  using quad = int32_t __attribute__((may_alias, aligned(1)));
  __asm__("vpdpbusd %2%{1to8%}, %1, %0" : "+v"(acc) : "v"(v), "m"(*reinterpret_cast<const quad*>(w)));
  return acc;
#else
  return _mm256_dpbusd_epi32(acc, v, _mm256_set1_epi32(load_i32(w)));
#endif
}

// row_pairs_avx2 on AVX-512 VNNI, for any B: a panel's group (16 columns x 4 bytes) is one
// 512-bit vector and vpdpbusd adds its products with the row's quad into int32 (exact). Even and odd
// groups go to two sums, so that 8 multiply-adds are in flight for 4 panels.
template <int P>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void row_vnni(int64_t kq, const uint8_t* a,
                                                                                   const int8_t* b,
                                                                                   int64_t panel_bytes, int32_t* c) {
  __m512i acc[P][2];
  _Pragma("GCC unroll 4")
  for (int q = 0; q < P; ++q) acc[q][0] = acc[q][1] = _mm512_setzero_si512();
  int64_t g = 0;
  for (; g + 2 <= kq; g += 2) {
    // vpdpbusd's first factor is the u8 one: the row's quad, broadcast
    const __m512i a0 = _mm512_set1_epi32(load_i32(a + g * kMR * 4));
    const __m512i a1 = _mm512_set1_epi32(load_i32(a + (g + 1) * kMR * 4));
    _Pragma("GCC unroll 4")
    for (int q = 0; q < P; ++q) {
      const int8_t* bg = b + q * panel_bytes + g * 64;
      _mm_prefetch(reinterpret_cast<const char*>(bg + 16 * 64), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(bg + 17 * 64), _MM_HINT_T0);
      acc[q][0] = _mm512_dpbusd_epi32(acc[q][0], a0, _mm512_loadu_si512(bg));
      acc[q][1] = _mm512_dpbusd_epi32(acc[q][1], a1, _mm512_loadu_si512(bg + 64));
    }
  }
  if (g < kq) {
    const __m512i a0 = _mm512_set1_epi32(load_i32(a + g * kMR * 4));
    _Pragma("GCC unroll 4")
    for (int q = 0; q < P; ++q)
      acc[q][0] = _mm512_dpbusd_epi32(acc[q][0], a0, _mm512_loadu_si512(b + q * panel_bytes + g * 64));
  }
  _Pragma("GCC unroll 4")
  for (int q = 0; q < P; ++q) _mm512_storeu_si512(c + q * kNR, _mm512_add_epi32(acc[q][0], acc[q][1]));
}

// One row against `panels` (1 to 4) panels: row_vnni, or row_pairs_avx2 (vnni false).
void row_kernel(bool vnni, int64_t kq, const uint8_t* a, const int8_t* b, int64_t panel_bytes, int panels, int32_t* c) {
  switch (panels) {
    case 1: return vnni ? row_vnni<1>(kq, a, b, panel_bytes, c) : row_pairs_avx2<1>(kq, a, b, panel_bytes, c);
    case 2: return vnni ? row_vnni<2>(kq, a, b, panel_bytes, c) : row_pairs_avx2<2>(kq, a, b, panel_bytes, c);
    case 3: return vnni ? row_vnni<3>(kq, a, b, panel_bytes, c) : row_pairs_avx2<3>(kq, a, b, panel_bytes, c);
    default: return vnni ? row_vnni<4>(kq, a, b, panel_bytes, c) : row_pairs_avx2<4>(kq, a, b, panel_bytes, c);
  }
}

// tile_vnni_requant for a last panel of at most 8 columns (a 7 x 7 plane's 49th pixel, a
// 14 x 14 plane's last 4): the first half of each group of the panel on 256-bit registers, which
// Zen 4 multiplies two at a time where it takes a 512-bit one a cycle; the groups alternate
// between two sets of sums so that more of them are in flight.
template <int R, bool Signed>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void tile_vnni_requant_half(
    int64_t kq, const uint8_t* a, const uint8_t* b, int64_t n, const int32_t* add, const float* scale,
    int32_t zero_point, unsigned char* y, int64_t y_stride) {
  __m256i acc[R], acc2[R];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm256_set1_epi32(add[r]);
    acc2[r] = _mm256_setzero_si256();
  }
  int64_t g = 0;
  for (; g + 2 <= kq; g += 2) {
    const __m256i bv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * 64));
    const __m256i bv2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * 64 + 64));
    const uint8_t* ag = a + g * kMR * 4;
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      acc[r] = dpbusd_broadcast(acc[r], bv, ag + r * 4);
      acc2[r] = dpbusd_broadcast(acc2[r], bv2, ag + kMR * 4 + r * 4);
    }
  }
  if (g < kq) {
    const __m256i bv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * 64));
    const uint8_t* ag = a + g * kMR * 4;
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) acc[r] = dpbusd_broadcast(acc[r], bv, ag + r * 4);
  }
  const Requant16 q = requant16<Signed>(zero_point);
  const auto mask = static_cast<__mmask16>((1u << n) - 1);
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r)
    store_requantized(q, _mm512_zextsi256_si512(_mm256_add_epi32(acc[r], acc2[r])), _mm512_set1_ps(scale[r]), mask,
                      y + r * y_stride);
}

template <bool Signed>
void kernel_vnni_requant(int64_t kq, const void* bcast, const void* vec, int rows, int64_t n, const int32_t* add,
                         const float* scale, int32_t zero_point, unsigned char* y, int64_t y_stride) {
  const auto* a = static_cast<const uint8_t*>(bcast);
  const auto* b = static_cast<const uint8_t*>(vec);
  if (n <= 8) {
    switch (rows) {
      case 1: return tile_vnni_requant_half<1, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride);
      case 2: return tile_vnni_requant_half<2, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride);
      case 3: return tile_vnni_requant_half<3, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride);
      case 4: return tile_vnni_requant_half<4, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride);
      case 5: return tile_vnni_requant_half<5, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride);
      default: return tile_vnni_requant_half<6, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride);
    }
  }
  switch (rows) {
    case 1: tile_vnni_requant<1, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride); break;
    case 2: tile_vnni_requant<2, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride); break;
    case 3: tile_vnni_requant<3, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride); break;
    case 4: tile_vnni_requant<4, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride); break;
    case 5: tile_vnni_requant<5, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride); break;
    default: tile_vnni_requant<6, Signed>(kq, a, b, n, add, scale, zero_point, y, y_stride); break;
  }
}

void kernel_vnni_requant_any(int64_t kq, const void* bcast, const void* vec, int rows, int64_t n, const int32_t* add,
                             const float* scale, const QGemmOutput& out, unsigned char* y, int64_t y_stride) {
  if (out.type == KILN_U8)
    kernel_vnni_requant<false>(kq, bcast, vec, rows, n, add, scale, out.y_zero_point, y, y_stride);
  else
    kernel_vnni_requant<true>(kq, bcast, vec, rows, n, add, scale, out.y_zero_point, y, y_stride);
}

template <bool BS>
void kernel_avx2(int64_t kq, const void* bcast, const void* vec, int32_t* c, int rows) {
  const auto* a = static_cast<const uint8_t*>(bcast);
  const auto* b = static_cast<const uint8_t*>(vec);
  switch (rows) {
    case 1: tile_avx2<BS, 1>(kq, a, b, c); break;
    case 2: tile_avx2<BS, 2>(kq, a, b, c); break;
    case 3: tile_avx2<BS, 3>(kq, a, b, c); break;
    case 4: tile_avx2<BS, 4>(kq, a, b, c); break;
    case 5: tile_avx2<BS, 5>(kq, a, b, c); break;
    default: tile_avx2<BS, 6>(kq, a, b, c); break;
  }
}

template <bool BS>
void kernel_vnni(int64_t kq, const void* bcast, const void* vec, int32_t* c, int rows) {
  const auto* a = static_cast<const uint8_t*>(bcast);
  const auto* b = static_cast<const uint8_t*>(vec);
  switch (rows) {
    case 1: tile_vnni<BS, 1>(kq, a, b, c); break;
    case 2: tile_vnni<BS, 2>(kq, a, b, c); break;
    case 3: tile_vnni<BS, 3>(kq, a, b, c); break;
    case 4: tile_vnni<BS, 4>(kq, a, b, c); break;
    case 5: tile_vnni<BS, 5>(kq, a, b, c); break;
    default: tile_vnni<BS, 6>(kq, a, b, c); break;
  }
}
#endif

bool cpu_has(QGemmIsa isa) {
  switch (isa) {
    case QGemmIsa::automatic:
    case QGemmIsa::portable: return true;
    case QGemmIsa::avx2:
#if KILN_QGEMM_X86
      return cpu_has_avx2_fma();
#else
      return false;
#endif
    case QGemmIsa::avx512_vnni:
#if KILN_QGEMM_X86
      return cpu_has_avx512_vnni();
#else
      return false;
#endif
    case QGemmIsa::avx_vnni:
#if KILN_QGEMM_X86
      return cpu_has_avx_vnni();
#else
      return false;
#endif
  }
  return false;
}

QGemmIsa best_isa() {
  static const QGemmIsa isa = cpu_has(QGemmIsa::avx512_vnni) ? QGemmIsa::avx512_vnni
                              : cpu_has(QGemmIsa::avx_vnni)  ? QGemmIsa::avx_vnni
                              : cpu_has(QGemmIsa::avx2)      ? QGemmIsa::avx2
                                                             : QGemmIsa::portable;
  return isa;
}

// The kernels `isa` asks for: the best the CPU has for automatic or one it lacks.
QGemmIsa resolved(QGemmIsa isa) { return isa == QGemmIsa::automatic || !cpu_has(isa) ? best_isa() : isa; }

template <bool BS>
KernelFn kernel_for(QGemmIsa isa) {
  switch (resolved(isa)) {
#if KILN_QGEMM_X86
    case QGemmIsa::avx512_vnni: return kernel_vnni<BS>;
    case QGemmIsa::avx_vnni:  // no tile of its own: the AVX2 one
    case QGemmIsa::avx2: return kernel_avx2<BS>;
#else
    case QGemmIsa::avx512_vnni:
    case QGemmIsa::avx_vnni:
    case QGemmIsa::avx2:
#endif
    case QGemmIsa::automatic:
    case QGemmIsa::portable: return kernel_portable<BS>;
  }
  return kernel_portable<BS>;
}

// Packs rows [0, m) of A (row i at a + i * lda) into panels of kMR rows, K in groups of 4
// (zero-padded), as u8 (s8 values flipped by 128); row_sums[i] = sum_k of the packed values.
void pack_a(const unsigned char* a, int64_t lda, bool a_signed, int64_t m, int64_t K, uint8_t* out,
            uint32_t* row_sums) {
  const int64_t kq = k_groups(K);
  const uint8_t flip = a_signed ? 0x80 : 0;
  for (int64_t i0 = 0; i0 < m; i0 += kMR) {
    uint8_t* panel = out + (i0 / kMR) * kq * kMR * 4;
    std::memset(panel, 0, static_cast<size_t>(kq * kMR * 4));
    for (int64_t r = 0; r < kMR && i0 + r < m; ++r) {
      const unsigned char* row = a + (i0 + r) * lda;
      uint32_t s = 0;
      for (int64_t k = 0; k < K; ++k) {
        const uint8_t v = static_cast<uint8_t>(row[k] ^ flip);
        panel[(k / 4) * kMR * 4 + r * 4 + (k % 4)] = v;
        s += v;
      }
      row_sums[i0 + r] = s;
    }
  }
}

// How a single row of A runs: through Problem::kernel, on row_pairs_avx2 (AVX2 chosen, B's
// pairs_fit) or on row_vnni.
enum class RowKernel { none, pairs_avx2, vnni };

struct Problem {
  int64_t M, N, K;
  const unsigned char* a;
  int64_t lda;
  bool a_signed;
  uint32_t a_zero;
  const unsigned char* packed_b;
  const int32_t* b_zero;
  int64_t b_zero_count;
  uint32_t b_shift;
  const int32_t* colsums;  // null when K == 0
  QGemmOutput out;
  KernelFn kernel;
  RowKernel row_kernel;  // for single rows
};

int64_t pick(int64_t count, int64_t j) { return count > 1 ? j : 0; }

// Requantization of one value (see QGemmOutput).
template <class Q>
int32_t requantize(double v, int32_t zero_point) {
  constexpr double lo = Q(-1) < Q(0) ? -128.0 : 0.0, hi = Q(-1) < Q(0) ? 127.0 : 255.0;
  // Clamped first (NaN goes to the low end), so that the rounding below is exact and the
  // conversion defined.
  const double zp = zero_point;
  v = v > lo - zp - 1 ? v : lo - zp - 1;
  v = v < hi - zp + 1 ? v : hi - zp + 1;
  constexpr double magic = 6755399441055744.0;  // 1.5 * 2^52: rounds to nearest, ties to even
  double r = (v + magic) - magic + zp;
  r = r < lo ? lo : (r > hi ? hi : r);
  return static_cast<int32_t>(r);
}

// A plain 8-bit output's values t[k] (scale[k] each) at y[base + k * stride], as
// requantize_f32 computes them.
void store_plain(const QGemmOutput& o, const int32_t* t, int64_t n, const double* scale, int64_t base, int64_t stride) {
  if (o.type == KILN_U8) {
    uint8_t* y = static_cast<uint8_t*>(o.y) + base;
    for (int64_t k = 0; k < n; ++k)
      y[k * stride] = requantize_f32<uint8_t>(t[k], static_cast<float>(scale[k]), o.y_zero_point);
  } else {
    int8_t* y = static_cast<int8_t*>(o.y) + base;
    for (int64_t k = 0; k < n; ++k)
      y[k * stride] = requantize_f32<int8_t>(t[k], static_cast<float>(scale[k]), o.y_zero_point);
  }
}

// Rows [i0, i0 + m) x columns [j0, j0 + n) of the output from the int32 tile `acc`;
// row_sums[r]: sum of the packed A values of row i0 + r. The per-column terms are gathered
// first so that the loops over a row are straight-line code the compiler vectorizes.
void finish_tile(const Problem& p, const int32_t* acc, const uint32_t* row_sums, int64_t i0, int64_t j0, int64_t m,
                 int64_t n) {
  const QGemmOutput& o = p.out;
  const uint32_t K = static_cast<uint32_t>(p.K);
  uint32_t zb[kNR], fixed[kNR];
  double scale[kNR], offset[kNR];
  for (int64_t c = 0; c < n; ++c) {
    const int64_t j = j0 + c;
    zb[c] = (p.b_zero ? static_cast<uint32_t>(p.b_zero[pick(p.b_zero_count, j)]) : 0u) - p.b_shift;
    // sum (a - za)(b - zb) = sum ab - za sum b - zb sum a + K za zb, modulo 2^32; the terms
    // that do not depend on the row (and the bias) in `fixed`
    fixed[c] = K * p.a_zero * zb[c] - p.a_zero * static_cast<uint32_t>(p.colsums ? p.colsums[j] : 0) +
               (o.bias ? static_cast<uint32_t>(o.bias[pick(o.bias_count, j)]) : 0u);
    scale[c] = o.scale ? static_cast<double>(o.scale[pick(o.scale_count, j)]) : 1.0;
    offset[c] = o.offset ? static_cast<double>(o.offset[pick(o.offset_count, j)]) : 0.0;
  }
  int32_t t[kNR];
  double v[kNR];
  const bool plain = qgemm_plain_8bit_output(o);
  for (int64_t r = 0; r < m; ++r) {
    const uint32_t rs = row_sums[r];
    for (int64_t c = 0; c < n; ++c)
      t[c] = static_cast<int32_t>(static_cast<uint32_t>(acc[r * kNR + c]) - zb[c] * rs + fixed[c]);
    const int64_t base = (i0 + r) * o.row_stride + j0 * o.col_stride;
    if (plain) {
      store_plain(o, t, n, scale, base, o.col_stride);
      continue;
    }
    if (o.type == KILN_I32) {
      int32_t* y = static_cast<int32_t*>(o.y) + base;
      for (int64_t c = 0; c < n; ++c) y[c * o.col_stride] = t[c];
      continue;
    }
    const double lo = o.lo, hi = o.hi;
    for (int64_t c = 0; c < n; ++c) {
      const double x = static_cast<double>(t[c]) * scale[c] + offset[c];
      v[c] = x < lo ? lo : (x > hi ? hi : x);
    }
    if (o.type == KILN_F32) {
      float* y = static_cast<float*>(o.y) + base;
      for (int64_t c = 0; c < n; ++c) y[c * o.col_stride] = static_cast<float>(v[c]);
    } else {
      // Rounded in a loop of its own (vectorized), stored in another (strided).
      int32_t q[kNR];
      if (o.type == KILN_U8) {
        for (int64_t c = 0; c < n; ++c) q[c] = requantize<uint8_t>(v[c], o.y_zero_point);
        uint8_t* y = static_cast<uint8_t*>(o.y) + base;
        for (int64_t c = 0; c < n; ++c) y[c * o.col_stride] = static_cast<uint8_t>(q[c]);
      } else {
        for (int64_t c = 0; c < n; ++c) q[c] = requantize<int8_t>(v[c], o.y_zero_point);
        int8_t* y = static_cast<int8_t*>(o.y) + base;
        for (int64_t c = 0; c < n; ++c) y[c * o.col_stride] = static_cast<int8_t>(q[c]);
      }
    }
  }
}

// Plain loops straight from A and the packed B, for when the buffers cannot be allocated.
void run_unpacked(const Problem& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  alignas(64) int32_t acc[kMR * kNR];
  uint32_t row_sums[kMR];
  const uint32_t flip = p.a_signed ? 0x80u : 0u;
  for (int64_t i = i0; i < i1; i += kMR) {
    const int64_t rows = i1 - i < kMR ? i1 - i : kMR;
    for (int64_t r = 0; r < rows; ++r) {
      row_sums[r] = 0;
      for (int64_t k = 0; k < p.K; ++k) row_sums[r] += p.a[(i + r) * p.lda + k] ^ flip;
    }
    for (int64_t j = j0; j < j1; j += kNR) {
      const int8_t* panel = packed_panel(p.packed_b, p.K, p.N, j);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < kNR; ++c) {
          uint32_t s = 0;
          for (int64_t k = 0; k < p.K; ++k)
            s += static_cast<uint32_t>(static_cast<int32_t>(p.a[(i + r) * p.lda + k] ^ flip) *
                                       static_cast<int32_t>(panel[(k / 4) * 64 + c * 4 + k % 4]));
          acc[r * kNR + c] = static_cast<int32_t>(s);
        }
      finish_tile(p, acc, row_sums, i, j, rows, j1 - j < kNR ? j1 - j : kNR);
    }
  }
}

// Rows [i0, i1) x columns [j0, j1) (j0 a multiple of kNR).
void run_block(const Problem& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const int64_t m = i1 - i0, kq = k_groups(p.K);
  const int64_t panels = (m + kMR - 1) / kMR;
  const size_t apack_bytes = static_cast<size_t>(panels * kq * kMR * 4 + 63) / 64 * 64;
  auto* apack = static_cast<uint8_t*>(
      thread_buffer(ThreadBuffer::qgemm_panels, apack_bytes + static_cast<size_t>(m) * sizeof(uint32_t)));
  if (apack == nullptr) {
    run_unpacked(p, i0, i1, j0, j1);  // out of memory: slow, but the result is the same
    return;
  }
  auto* row_sums = reinterpret_cast<uint32_t*>(apack + apack_bytes);
  pack_a(p.a + i0 * p.lda, p.lda, p.a_signed, m, p.K, apack, row_sums);
#if KILN_QGEMM_X86
  if (m == 1 && p.row_kernel != RowKernel::none) {
    // A single row (a classifier's GEMV): 4 panels at a time on row_kernel, each finished alone.
    alignas(64) int32_t row[4 * kNR];
    const int64_t panel_bytes = kq * 64;
    for (int64_t j = j0; j < j1; j += 4 * kNR) {
      const int panels = static_cast<int>(std::min<int64_t>(4, (j1 - j + kNR - 1) / kNR));
      const int8_t* panel = packed_panel(p.packed_b, p.K, p.N, j);
      row_kernel(p.row_kernel == RowKernel::vnni, kq, apack, panel, panel_bytes, panels, row);
      for (int q = 0; q < panels; ++q) {
        const int64_t jq = j + q * kNR;
        finish_tile(p, row + q * kNR, row_sums, i0, jq, 1, std::min(kNR, j1 - jq));
      }
    }
    return;
  }
#endif
  alignas(64) int32_t acc[kMR * kNR];
  const int64_t block_cols = std::max<int64_t>(kNR, kBlockBytes / (kq * 64) * kNR);
  for (int64_t jb = j0; jb < j1; jb += block_cols) {
    const int64_t jb_end = jb + block_cols < j1 ? jb + block_cols : j1;
    for (int64_t ip = 0; ip < panels; ++ip) {
      const int64_t rows = m - ip * kMR < kMR ? m - ip * kMR : kMR;
      const uint8_t* ap = apack + ip * kq * kMR * 4;
      for (int64_t j = jb; j < jb_end; j += kNR) {
        p.kernel(kq, ap, packed_panel(p.packed_b, p.K, p.N, j), acc, static_cast<int>(rows));
        finish_tile(p, acc, row_sums + ip * kMR, i0 + ip * kMR, j, rows, jb_end - j < kNR ? jb_end - j : kNR);
      }
    }
  }
}

}  // namespace

size_t qgemm_packed_b_bytes(int64_t K, int64_t N) noexcept {
  if (K <= 0 || N <= 0) return 0;
  return static_cast<size_t>(kHeader + colsum_bytes(N) + round_up(N, kNR) * k_groups(K) * 4);
}

void qgemm_pack_b(int64_t K, int64_t N, const int8_t* src, int64_t stride_k, int64_t stride_n,
                  unsigned char* packed) noexcept {
  pack_b_impl<int8_t, from_s8>(K, N, src, stride_k, stride_n, 0, packed);
}

void qgemm_pack_b(int64_t K, int64_t N, const uint8_t* src, int64_t stride_k, int64_t stride_n,
                  unsigned char* packed) noexcept {
  pack_b_impl<uint8_t, from_u8>(K, N, src, stride_k, stride_n, 128, packed);
}

namespace {

#if KILN_QGEMM_X86
// requantize_f32 of n contiguous values acc[k] + add (wrapping) into 8 bits, 16 at a time.
template <bool Signed>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void requantize_avx512(const int32_t* acc, int64_t n,
                                                                            int32_t add, float scale,
                                                                            int32_t zero_point, unsigned char* y) {
  const Requant16 q = requant16<Signed>(zero_point);
  const __m512 vs = _mm512_set1_ps(scale);
  const __m512i va = _mm512_set1_epi32(add);
  for (int64_t k0 = 0; k0 < n; k0 += 16) {
    const __mmask16 mask = n - k0 >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - k0)) - 1);
    store_requantized(q, _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, acc + k0), va), vs, mask, y + k0);
  }
}

// Rows [0, rows) of requantize_avx512: row r from acc + r * acc_stride with add[r], scale[r].
template <bool Signed>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void requantize_rows_avx512(
    const int32_t* acc, int64_t acc_stride, int64_t rows, int64_t n, const int32_t* add, const float* scale,
    int32_t zero_point, unsigned char* y, int64_t y_stride) {
  for (int64_t r = 0; r < rows; ++r)
    requantize_avx512<Signed>(acc + r * acc_stride, n, add[r], scale[r], zero_point, y + r * y_stride);
}

// The same on 8 lanes (AVX2): clamped to the output's range less the zero point, NaN to the
// low end, converted rounding half to even, plus the zero point.
template <bool Signed>
__attribute__((target("avx2"))) void requantize_avx2(const int32_t* acc, int64_t n, int32_t add, float scale,
                                                     int32_t zero_point, unsigned char* y) {
  const __m256 vs = _mm256_set1_ps(scale);
  const __m256 clo = _mm256_set1_ps(static_cast<float>((Signed ? -128 : 0) - zero_point));
  const __m256 chi = _mm256_set1_ps(static_cast<float>((Signed ? 127 : 255) - zero_point));
  const __m256i va = _mm256_set1_epi32(add), vz = _mm256_set1_epi32(zero_point);
  for (int64_t k0 = 0; k0 < n; k0 += 16) {
    const int64_t m = n - k0 < 16 ? n - k0 : 16;
    alignas(32) int32_t tail[16] = {};
    const int32_t* t = acc + k0;
    if (m < 16) {
      std::memcpy(tail, t, static_cast<size_t>(m) * 4);
      t = tail;
    }
    __m256i q[2];
    for (int i = 0; i < 2; ++i) {
      const __m256i ti = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(t + 8 * i)), va);
      __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(ti), vs);
      v = _mm256_min_ps(_mm256_max_ps(v, clo), chi);
      q[i] = _mm256_add_epi32(_mm256_cvtps_epi32(v), vz);
    }
    // int32 -> int16 -> 8 bits, per 128-bit lane; then the lanes back in order
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xD8);
    const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
    const __m128i b = Signed ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
    if (m == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + k0), b);
    } else {
      alignas(16) unsigned char tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), b);
      std::memcpy(y + k0, tmp, static_cast<size_t>(m));
    }
  }
}
#endif

}  // namespace

bool qgemm_plain_8bit_output(const QGemmOutput& o) noexcept {
  const bool no_offset = o.offset == nullptr || (o.offset_count == 1 && o.offset[0] == 0.0f);
  return (o.type == KILN_U8 || o.type == KILN_I8) && no_offset && o.lo <= -3.4028235e38f && o.hi >= 3.4028235e38f;
}

void qgemm_requantize_row(const QGemmOutput& o, const int32_t* acc, int64_t n, int32_t add, float scale,
                          unsigned char* y) noexcept {
#if KILN_QGEMM_X86
  static const QGemmIsa isa = best_isa();
  if (isa == QGemmIsa::avx512_vnni) {
    if (o.type == KILN_U8)
      requantize_avx512<false>(acc, n, add, scale, o.y_zero_point, y);
    else
      requantize_avx512<true>(acc, n, add, scale, o.y_zero_point, y);
    return;
  }
  if (isa == QGemmIsa::avx2) {
    if (o.type == KILN_U8)
      requantize_avx2<false>(acc, n, add, scale, o.y_zero_point, y);
    else
      requantize_avx2<true>(acc, n, add, scale, o.y_zero_point, y);
    return;
  }
#endif
  for (int64_t k = 0; k < n; ++k) {
    const auto t = static_cast<int32_t>(static_cast<uint32_t>(acc[k]) + static_cast<uint32_t>(add));
    y[k] = o.type == KILN_U8 ? requantize_f32<uint8_t>(t, scale, o.y_zero_point)
                             : static_cast<unsigned char>(requantize_f32<int8_t>(t, scale, o.y_zero_point));
  }
}

void qgemm_requantize_rows(const QGemmOutput& o, const int32_t* acc, int64_t acc_stride, int64_t rows, int64_t n,
                           const int32_t* add, const float* scale, unsigned char* y, int64_t y_stride) noexcept {
#if KILN_QGEMM_X86
  static const bool avx512 = best_isa() == QGemmIsa::avx512_vnni;
  if (avx512) {
    if (o.type == KILN_U8)
      requantize_rows_avx512<false>(acc, acc_stride, rows, n, add, scale, o.y_zero_point, y, y_stride);
    else
      requantize_rows_avx512<true>(acc, acc_stride, rows, n, add, scale, o.y_zero_point, y, y_stride);
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r)
    qgemm_requantize_row(o, acc + r * acc_stride, n, add[r], scale[r], y + r * y_stride);
}

void qgemm_finish_column(const QGemmOutput& o, const int32_t* acc, int64_t i0, int64_t n, int64_t j) noexcept {
  const uint32_t bias = o.bias ? static_cast<uint32_t>(o.bias[pick(o.bias_count, j)]) : 0u;
  const double scale = o.scale ? static_cast<double>(o.scale[pick(o.scale_count, j)]) : 1.0;
  const double offset = o.offset ? static_cast<double>(o.offset[pick(o.offset_count, j)]) : 0.0;
  const double lo = o.lo, hi = o.hi;
  const int64_t rs = o.row_stride;
  const int64_t base = i0 * rs + j * o.col_stride;
  if (qgemm_plain_8bit_output(o)) {
    if (rs == 1)
      return qgemm_requantize_row(o, acc, n, static_cast<int32_t>(bias), static_cast<float>(scale),
                                  static_cast<unsigned char*>(o.y) + base);
    for (int64_t k0 = 0; k0 < n; k0 += kNR) {
      const int64_t m = n - k0 < kNR ? n - k0 : kNR;
      int32_t t[kNR];
      double s[kNR];
      for (int64_t k = 0; k < m; ++k) {
        t[k] = static_cast<int32_t>(static_cast<uint32_t>(acc[k0 + k]) + bias);
        s[k] = scale;
      }
      store_plain(o, t, m, s, base + k0 * rs, rs);
    }
    return;
  }
  // In chunks, each through straight loops as in finish_tile.
  for (int64_t k0 = 0; k0 < n; k0 += kNR) {
    const int64_t m = n - k0 < kNR ? n - k0 : kNR;
    int32_t t[kNR], q[kNR];
    double v[kNR];
    for (int64_t k = 0; k < m; ++k) t[k] = static_cast<int32_t>(static_cast<uint32_t>(acc[k0 + k]) + bias);
    const int64_t at = base + k0 * rs;
    if (o.type == KILN_I32) {
      for (int64_t k = 0; k < m; ++k) static_cast<int32_t*>(o.y)[at + k * rs] = t[k];
      continue;
    }
    for (int64_t k = 0; k < m; ++k) {
      const double x = static_cast<double>(t[k]) * scale + offset;
      v[k] = x < lo ? lo : (x > hi ? hi : x);
    }
    if (o.type == KILN_F32) {
      for (int64_t k = 0; k < m; ++k) static_cast<float*>(o.y)[at + k * rs] = static_cast<float>(v[k]);
    } else if (o.type == KILN_U8) {
      for (int64_t k = 0; k < m; ++k) q[k] = requantize<uint8_t>(v[k], o.y_zero_point);
      for (int64_t k = 0; k < m; ++k) static_cast<uint8_t*>(o.y)[at + k * rs] = static_cast<uint8_t>(q[k]);
    } else {
      for (int64_t k = 0; k < m; ++k) q[k] = requantize<int8_t>(v[k], o.y_zero_point);
      for (int64_t k = 0; k < m; ++k) static_cast<int8_t*>(o.y)[at + k * rs] = static_cast<int8_t>(q[k]);
    }
  }
}

bool qgemm_isa_supported(QGemmIsa isa) noexcept { return cpu_has(isa); }

QTileKernel qgemm_tile_kernel(QGemmIsa isa, bool broadcast_signed) noexcept {
  return broadcast_signed ? kernel_for<true>(isa) : kernel_for<false>(isa);
}

QTileRequantKernel qgemm_tile_requant_kernel(QGemmIsa isa) noexcept {
#if KILN_QGEMM_X86
  if (resolved(isa) == QGemmIsa::avx512_vnni) return kernel_vnni_requant_any;
#else
  (void)isa;
#endif
  return nullptr;
}

const char* qgemm_isa_name(QGemmIsa isa) noexcept {
  switch (isa) {
    case QGemmIsa::automatic: return qgemm_isa_name(best_isa());
    case QGemmIsa::portable: return "portable";
    case QGemmIsa::avx2: return "avx2";
    case QGemmIsa::avx512_vnni: return "avx512-vnni";
    case QGemmIsa::avx_vnni: return "avx-vnni";
  }
  return "portable";
}

void qgemm(int64_t M, int64_t N, int64_t K, const QGemmA& a, const unsigned char* packed_b,
           const int32_t* b_zero_point, int64_t b_zero_point_count, const QGemmOutput& out, ThreadPool* pool,
           QGemmIsa isa) noexcept {
  if (M <= 0 || N <= 0) return;
  PackedHeader h{0, 0, 0};
  if (K > 0) std::memcpy(&h, packed_b, sizeof h);
  Problem p{M,
            N,
            K > 0 ? K : 0,
            static_cast<const unsigned char*>(a.data),
            a.lda,
            a.a_signed,
            static_cast<uint32_t>(a.zero_point) + (a.a_signed ? 128u : 0u),
            packed_b,
            b_zero_point,
            b_zero_point_count,
            static_cast<uint32_t>(h.b_shift),
            K > 0 ? packed_colsums(packed_b) : nullptr,
            out,
            kernel_for<false>(isa),
            RowKernel::none};
#if KILN_QGEMM_X86
  const QGemmIsa chosen = resolved(isa);
  if (chosen == QGemmIsa::avx512_vnni)
    p.row_kernel = RowKernel::vnni;
  else if ((chosen == QGemmIsa::avx2 || chosen == QGemmIsa::avx_vnni) && h.pairs_fit == 1)
    p.row_kernel = RowKernel::pairs_avx2;
#endif
  if (K <= 0) {
    // Empty sums: acc = 0; the epilogue still runs (bias, offset, zero point).
    alignas(64) const int32_t zero[kMR * kNR] = {};
    const uint32_t no_sums[kMR] = {};
    for (int64_t i = 0; i < M; i += kMR)
      for (int64_t j = 0; j < N; j += kNR)
        finish_tile(p, zero, no_sums, i, j, M - i < kMR ? M - i : kMR, N - j < kNR ? N - j : kNR);
    return;
  }
  const int threads = pool ? pool->size() : 1;
  const int64_t m_panels = (M + kMR - 1) / kMR, n_panels = (N + kNR - 1) / kNR;
  const double work = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (threads == 1 || work < 1.0e5) {
    run_block(p, 0, M, 0, N);
    return;
  }
  if (m_panels >= 2 * threads || m_panels >= n_panels) {
    pool->parallel_for(m_panels, [&p](int64_t t0, int64_t t1) {
      run_block(p, t0 * kMR, t1 * kMR < p.M ? t1 * kMR : p.M, 0, p.N);
    });
  } else {
    pool->parallel_for(n_panels, [&p](int64_t t0, int64_t t1) {
      run_block(p, 0, p.M, t0 * kNR, t1 * kNR < p.N ? t1 * kNR : p.N);
    });
  }
}

}  // namespace kiln::rt
