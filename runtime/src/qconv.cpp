// Quantized convolution (qconv.h). Everything but depthwise is a GEMM with the weights on the
// left: y[m, j] = sum_k w[m, k] x[k, j], with j the output pixel, so that x in NCHW is the
// right operand as it lies (1x1, stride 1) or after a row-wise im2col, and each output
// channel's plane is written contiguously. The weights are packed at compile time in panels
// of kMR channels (K in groups of 4 bytes, the unit of vpdpbusd) with their sums over K; the
// activations per run in panels of kNR pixels (4 rows interleaved, as u8).
#include "kiln/rt/qconv.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kiln/rt/dpbusd.h"
#include "kiln/rt/requant_avx512.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define KILN_QCONV_X86 1
#else
#define KILN_QCONV_X86 0
#endif

namespace kiln::rt {
namespace {

constexpr int64_t kMR = 6;   // output channels per weight panel
constexpr int64_t kNR = 16;  // output pixels per activation panel
constexpr int64_t kHeader = 64;
// Bytes of packed activations worked on against each weight panel: stays in L2.
constexpr int64_t kBlockBytes = 256 * 1024;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t k_groups(int64_t K) { return (K + 3) / 4; }
int64_t patch_len(const Conv2dParams& p) { return p.C / p.group * p.KH * p.KW; }

// Depthwise (one input and one output channel per group, small kernel): a direct loop over
// rows of output pixels, the weights stored plainly as s8 (u8 shifted by 128) after a header
// that records the shift.
constexpr int64_t kMaxDepthwiseTaps = 64;
bool depthwise(const Conv2dParams& p) {
  return p.group == p.C && p.group == p.M && p.KH * p.KW <= kMaxDepthwiseTaps;
}

// ---- the packed weights of one group: header, row sums, panels ------------------------------

struct WeightHeader {
  int64_t K, M;      // patch length, output channels of the group
  int32_t shift;     // 128 when the weights were u8 (stored as w - 128)
};

int64_t rowsum_bytes(int64_t M) { return round_up(round_up(M, kMR) * 4, 64); }

size_t group_bytes(const Conv2dParams& p) {
  const int64_t K = patch_len(p), mg = p.M / p.group;
  return static_cast<size_t>(kHeader + rowsum_bytes(mg) + round_up(mg, kMR) * k_groups(K) * 4);
}

template <class T>
void pack_group(int64_t K, int64_t M, const T* w, unsigned char* packed) {
  const int32_t shift = std::is_same_v<T, uint8_t> ? 128 : 0;
  std::memset(packed, 0, static_cast<size_t>(kHeader + rowsum_bytes(M)));
  const WeightHeader h{K, M, shift};
  std::memcpy(packed, &h, sizeof h);
  int32_t* sums = reinterpret_cast<int32_t*>(packed + kHeader);
  int8_t* panels = reinterpret_cast<int8_t*>(packed + kHeader + rowsum_bytes(M));
  const int64_t kq = k_groups(K);
  for (int64_t m0 = 0; m0 < M; m0 += kMR)
    for (int64_t g = 0; g < kq; ++g)
      for (int64_t r = 0; r < kMR; ++r)
        for (int64_t t = 0; t < 4; ++t) {
          const int64_t m = m0 + r, k = g * 4 + t;
          const int32_t v = m < M && k < K ? static_cast<int32_t>(w[m * K + k]) - shift : 0;
          panels[(m0 / kMR) * kq * kMR * 4 + g * kMR * 4 + r * 4 + t] = static_cast<int8_t>(v);
          if (m < M) sums[m] += v;
        }
}

// ---- the activations: im2col rows, then panels ----------------------------------------------

// n bytes from s to d: overlapping 16-, 8- or 4-byte moves. im2col copies rows of 7 to 112
// bytes, thousands per convolution, for which a memcpy call cost more than the copy.
inline void copy_row(unsigned char* d, const unsigned char* s, int64_t n) {
#if KILN_QCONV_X86
  if (n >= 16) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    if (i < n)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + n - 16),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + n - 16)));
    return;
  }
#endif
  if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

#if KILN_QCONV_X86
// d[i] = s[2 i] for i < n with AVX-512 (BW, VL), 16 at a time: a masked load of the 31 bytes
// those span (none past the last), truncated from 16-bit lanes (vpmovwb), a masked store.
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) void even_bytes_avx512(unsigned char* d,
                                                                                 const unsigned char* s, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t m = std::min<int64_t>(16, n - i);
    const auto load = static_cast<__mmask32>((uint64_t{1} << (2 * m - 1)) - 1);
    const __m128i e = _mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(load, s + 2 * i));
    _mm_mask_storeu_epi8(d + i, static_cast<__mmask16>((1u << m) - 1), e);
  }
}
#endif

// Rows [k0, k1) of the column matrix of image n, group g: cols[k * OH*OW + oh * OW + ow] for
// k = (c * KH + kh) * KW + kw; padding holds `pad` (x's zero point, so it adds nothing).
void im2col(const Conv2dParams& p, const unsigned char* x, int64_t n, int64_t g, unsigned char pad,
            unsigned char* cols, int64_t k0, int64_t k1, bool wide) {
  const int64_t cg = p.C / p.group, plane = p.OH * p.OW;
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t kw = k % p.KW, kh = k / p.KW % p.KH, c = k / (p.KW * p.KH);
    const unsigned char* src = x + (n * p.C + g * cg + c) * p.H * p.W;
    unsigned char* dst = cols + k * plane;
    // Output columns whose input column ow * stride_w + off lies inside the row: [lo, hi).
    const int64_t off = kw * p.dil_w - p.pad_left;
    int64_t lo = off >= 0 ? 0 : (-off + p.stride_w - 1) / p.stride_w;
    int64_t hi = p.W - 1 - off >= 0 ? (p.W - 1 - off) / p.stride_w + 1 : 0;
    lo = std::min(lo, p.OW);
    hi = std::max(lo, std::min(hi, p.OW));
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      unsigned char* d = dst + oh * p.OW;
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) {
        std::memset(d, pad, static_cast<size_t>(p.OW));
        continue;
      }
      const unsigned char* s = src + ih * p.W + off;
      // The padded ends are a few bytes: plain loops (memset calls cost more than they write).
      for (int64_t ow = 0; ow < lo; ++ow) d[ow] = pad;
      if (p.stride_w == 1) {
        copy_row(d + lo, s + lo, hi - lo);
      } else {
        int64_t ow = lo;
#if KILN_QCONV_X86
        if (p.stride_w == 2 && wide) {
          even_bytes_avx512(d + lo, s + 2 * lo, hi - lo);
          ow = hi;
        } else if (p.stride_w == 2) {
          // Even bytes of 32, 16 outputs at a time (SSE2), while the 32 lie inside the row.
          const __m128i even = _mm_set1_epi16(0x00FF);
          for (; ow + 16 <= hi && 2 * ow + 32 + off <= p.W; ow += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * ow));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * ow + 16));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ow),
                             _mm_packus_epi16(_mm_and_si128(a, even), _mm_and_si128(b, even)));
          }
        }
#else
        (void)wide;
#endif
        for (; ow < hi; ++ow) d[ow] = s[ow * p.stride_w];
      }
      for (int64_t ow = hi; ow < p.OW; ++ow) d[ow] = pad;
    }
  }
}

#if KILN_QCONV_X86
// pack_x's groups of 4 rows for 4 whole panels at once (64 columns from j0): 4 loads, the
// byte and word unpacks (within 128-bit lanes: lane L of the results holds columns 16 L + ...),
// then a 4 x 4 transpose of the 128-bit lanes so that each panel's 64 bytes are one store.
__attribute__((target("avx2,avx512f,avx512bw"))) void pack_x_4panels(const unsigned char* src, int64_t ld,
                                                                   int64_t groups, uint8_t flip, uint8_t* out,
                                                                   int64_t panel_bytes, int64_t j0) {
  const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
  for (int64_t g = 0; g < groups; ++g) {
    __m512i r[4];
    for (int t = 0; t < 4; ++t) r[t] = _mm512_xor_si512(_mm512_loadu_si512(src + (g * 4 + t) * ld + j0), f);
    const __m512i a_lo = _mm512_unpacklo_epi8(r[0], r[1]), a_hi = _mm512_unpackhi_epi8(r[0], r[1]);
    const __m512i b_lo = _mm512_unpacklo_epi8(r[2], r[3]), b_hi = _mm512_unpackhi_epi8(r[2], r[3]);
    // d[q], lane L: columns 16 L + 4 q .. + 3, 4 bytes each
    const __m512i d0 = _mm512_unpacklo_epi16(a_lo, b_lo), d1 = _mm512_unpackhi_epi16(a_lo, b_lo);
    const __m512i d2 = _mm512_unpacklo_epi16(a_hi, b_hi), d3 = _mm512_unpackhi_epi16(a_hi, b_hi);
    // Transpose the 4 x 4 lanes: panel L = (d0, d1, d2, d3) lane L.
    const __m512i e0 = _mm512_shuffle_i64x2(d0, d1, 0x44), e1 = _mm512_shuffle_i64x2(d0, d1, 0xEE);
    const __m512i e2 = _mm512_shuffle_i64x2(d2, d3, 0x44), e3 = _mm512_shuffle_i64x2(d2, d3, 0xEE);
    // e0 = d0.0 d0.1 d1.0 d1.1, e2 = d2.0 d2.1 d3.0 d3.1, e1/e3 lanes 2, 3 likewise
    uint8_t* d = out + g * 64;
    _mm512_storeu_si512(d, _mm512_shuffle_i64x2(e0, e2, 0x88));
    _mm512_storeu_si512(d + panel_bytes, _mm512_shuffle_i64x2(e0, e2, 0xDD));
    _mm512_storeu_si512(d + 2 * panel_bytes, _mm512_shuffle_i64x2(e1, e3, 0x88));
    _mm512_storeu_si512(d + 3 * panel_bytes, _mm512_shuffle_i64x2(e1, e3, 0xDD));
  }
}
#endif

// Panels [p0, p1) of the K x N matrix src (row k at src + k * ld), as u8 (s8 flipped by
// 128): panel[g * 64 + j * 4 + t] = src[4g + t, 16 panel + j], zero beyond K and N, panel pn
// at out + (pn - base) * kq * 64. With `sums`, also sums[j] = the sum over k of the stored
// values of column j. `wide`: AVX-512 (BW) may be used.
void pack_x(const unsigned char* src, int64_t ld, int64_t K, int64_t N, uint8_t flip, uint8_t* out, int64_t base,
            int32_t* sums, int64_t p0, int64_t p1, bool wide) {
  const int64_t kq = k_groups(K);
#if KILN_QCONV_X86
  // Runs of 4 whole panels: their whole groups of 4 rows at once (the rest below).
  if (wide && sums == nullptr && K >= 4)
    for (; p0 + 4 <= p1 && (p0 + 4) * kNR <= N; p0 += 4) {
      pack_x_4panels(src, ld, K / 4, flip, out + (p0 - base) * kq * 64, kq * 64, p0 * kNR);
      if (K % 4 == 0) continue;
      const int64_t g = K / 4;  // the last group, zero beyond K
      for (int64_t pn = p0; pn < p0 + 4; ++pn)
        for (int64_t j = 0; j < kNR; ++j)
          for (int64_t t = 0; t < 4; ++t) {
            const int64_t k = g * 4 + t;
            out[(pn - base) * kq * 64 + g * 64 + j * 4 + t] =
                k < K ? static_cast<uint8_t>(src[k * ld + pn * kNR + j] ^ flip) : uint8_t{0};
          }
    }
#else
  (void)wide;
#endif
  for (int64_t pn = p0; pn < p1; ++pn) {
    const int64_t j0 = pn * kNR, nj = std::min(kNR, N - j0);
    uint8_t* panel = out + (pn - base) * kq * 64;
    for (int64_t g = 0; g < kq; ++g) {
      uint8_t* d = panel + g * 64;
#if KILN_QCONV_X86
      if (nj == kNR && g * 4 + 4 <= K) {
        const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
        __m128i r[4];
        for (int t = 0; t < 4; ++t)
          r[t] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (g * 4 + t) * ld + j0)), f);
        const __m128i a_lo = _mm_unpacklo_epi8(r[0], r[1]), a_hi = _mm_unpackhi_epi8(r[0], r[1]);
        const __m128i b_lo = _mm_unpacklo_epi8(r[2], r[3]), b_hi = _mm_unpackhi_epi8(r[2], r[3]);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi16(a_lo, b_lo));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16), _mm_unpackhi_epi16(a_lo, b_lo));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 32), _mm_unpacklo_epi16(a_hi, b_hi));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 48), _mm_unpackhi_epi16(a_hi, b_hi));
        continue;
      }
#endif
      for (int64_t j = 0; j < kNR; ++j)
        for (int64_t t = 0; t < 4; ++t) {
          const int64_t k = g * 4 + t;
          d[j * 4 + t] = k < K && j < nj ? static_cast<uint8_t>(src[k * ld + j0 + j] ^ flip) : uint8_t{0};
        }
    }
    if (sums == nullptr) continue;
    uint32_t s[kNR] = {};
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < nj; ++j) s[j] += static_cast<uint8_t>(src[k * ld + j0 + j] ^ flip);
    for (int64_t j = 0; j < kNR; ++j) sums[j0 + j] = static_cast<int32_t>(s[j]);
  }
}

// ---- convolutions from a channel-interleaved copy of the input ------------------------------
//
// With K ordered (kh, kw, c) instead of (c, kh, kw) and C a multiple of 4, a group of 4 rows of
// the column matrix is 4 consecutive channels at one tap. The input is stored once per run as
// XP[C / 4][Hp][stride_w][Wq][4]: padded with its zero point, 4 channels interleaved, each row's
// padded columns split by their remainder modulo the stride (column c at phase c % stride_w,
// index c / stride_w). For 16 output pixels of one row, tap (kh, kw) then reads 64 consecutive
// bytes (phase kw % stride_w, from index ow + kw / stride_w): each group of a panel is one copy
// of 64 bytes (or of one run per output row the panel touches), and no column matrix is built
// (it was a quarter of ResNet-50's int8 3x3 layers' time). The weights are packed in that order.
bool interleaved(const Conv2dParams& p) {
  return p.group == 1 && p.C % 4 == 0 && p.KH * p.KW > 1 && p.stride_w <= 2 && p.dil_h == 1 && p.dil_w == 1;
}

struct XpLayout {
  int64_t hp, wq;  // padded rows; columns per phase
  int64_t row;     // bytes per padded row (all phases)
};

// Output (oh, ow) at tap (kh, kw) reads padded row oh * stride_h + kh, column ow * stride_w + kw.
XpLayout xp_layout(const Conv2dParams& p) {
  const int64_t hp = (p.OH - 1) * p.stride_h + p.KH, wp = (p.OW - 1) * p.stride_w + p.KW;
  const int64_t wq = (wp + p.stride_w - 1) / p.stride_w;
  return {hp, wq, p.stride_w * wq * 4};
}

// XP's offset of tap (kh, kw), channel block cb, for output pixel (0, 0).
int64_t xp_offset(const Conv2dParams& p, const XpLayout& L, int64_t kh, int64_t kw, int64_t cb) {
  return (cb * L.hp + kh) * L.row + (kw % p.stride_w * L.wq + kw / p.stride_w) * 4;
}

// Bytes of XP plus 64 on either side (copies address lanes through pointers shifted by up to
// 60 bytes).
size_t xp_bytes(const Conv2dParams& p) {
  const XpLayout L = xp_layout(p);
  return static_cast<size_t>(p.C / 4 * L.hp * L.row + 128);
}

#if KILN_QCONV_X86
// 16 columns of 4 rows (v[t]: row t's bytes) as groups of 4 bytes: o[q] holds columns 4q .. 4q + 3.
inline void interleave4(const __m128i* v, __m128i* o) {
  const __m128i a_lo = _mm_unpacklo_epi8(v[0], v[1]), a_hi = _mm_unpackhi_epi8(v[0], v[1]);
  const __m128i b_lo = _mm_unpacklo_epi8(v[2], v[3]), b_hi = _mm_unpackhi_epi8(v[2], v[3]);
  o[0] = _mm_unpacklo_epi16(a_lo, b_lo);
  o[1] = _mm_unpackhi_epi16(a_lo, b_lo);
  o[2] = _mm_unpacklo_epi16(a_hi, b_hi);
  o[3] = _mm_unpackhi_epi16(a_hi, b_hi);
}

// The first n (< 16) groups of o (interleave4's) at d, by masked stores.
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) inline void store_groups(const __m128i* o, int64_t n,
                                                                                 uint8_t* d) {
  for (int64_t q = 0; q < 4; ++q) {
    const int64_t k = std::clamp<int64_t>(n - 4 * q, 0, 4);
    if (k > 0) _mm_mask_storeu_epi8(d + 16 * q, static_cast<__mmask16>((1u << (4 * k)) - 1), o[q]);
  }
}

// build_xp's last n < 16 input columns of a row (from column iw of the rows s[t], to padded
// column c on) with AVX-512 (BW, VL): masked loads, masked stores. A 7- or 14-wide row (ResNet's
// layer4) has only these.
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) void xp_tail_avx512(const unsigned char* const* s,
                                                                             int64_t iw, int64_t n, uint8_t flip,
                                                                             uint8_t* d, int64_t sw, int64_t wq,
                                                                             int64_t c) {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  const auto in = static_cast<__mmask16>((1u << n) - 1);
  __m128i v[4], o[4];
  for (int t = 0; t < 4; ++t) v[t] = _mm_xor_si128(_mm_maskz_loadu_epi8(in, s[t] + iw), f);
  interleave4(v, o);
  if (sw == 1) return store_groups(o, n, d + c * 4);
  // stride 2: columns c, c + 2, ... to phase c % 2 from c / 2 on, c + 1, c + 3, ... to the other
  __m128i phase[2][4];  // [c's, c + 1's][groups]
  for (int h = 0; h < 2; ++h) {
    const __m128 x0 = _mm_castsi128_ps(o[2 * h]), x1 = _mm_castsi128_ps(o[2 * h + 1]);
    phase[0][h] = _mm_castps_si128(_mm_shuffle_ps(x0, x1, _MM_SHUFFLE(2, 0, 2, 0)));
    phase[1][h] = _mm_castps_si128(_mm_shuffle_ps(x0, x1, _MM_SHUFFLE(3, 1, 3, 1)));
  }
  for (int e = 0; e < 2; ++e) {
    const int64_t cc = c + e, count = (n + 1 - e) / 2;
    phase[e][2] = phase[e][3] = _mm_setzero_si128();
    store_groups(phase[e], count, d + (cc % 2 * wq + cc / 2) * 4);
  }
}
#endif

// Channel blocks [cb0, cb1) of XP (at xp + 64) from image n's input: padding holds `pad`.
// Input column iw lands at padded column iw + pad_left (those beyond the last output's reach
// are not stored).
// `wide`: AVX-512 (BW, VL) may be used.
void build_xp(const Conv2dParams& p, const unsigned char* x, int64_t n, unsigned char pad, uint8_t flip,
              unsigned char* xp, int64_t cb0, int64_t cb1, bool wide) {
  const XpLayout L = xp_layout(p);
  const int64_t sw = p.stride_w, wp = sw * L.wq;
  const int64_t iw0 = std::max<int64_t>(0, -p.pad_left), iw1 = std::min(p.W, wp - p.pad_left);
  const auto fill = static_cast<uint8_t>(pad ^ flip);
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const unsigned char* planes = x + (n * p.C + cb * 4) * p.H * p.W;
    for (int64_t r = 0; r < L.hp; ++r) {
      uint8_t* d = xp + 64 + (cb * L.hp + r) * L.row;
      const int64_t ih = r - p.pad_top;
      if (ih < 0 || ih >= p.H || iw1 <= iw0) {
        std::memset(d, fill, static_cast<size_t>(L.row));
        continue;
      }
      const unsigned char* s[4];
      for (int t = 0; t < 4; ++t) s[t] = planes + t * p.H * p.W + ih * p.W;
      // padded column c's 4 bytes
      auto at = [&](int64_t c) { return sw == 1 ? d + c * 4 : d + (c % 2 * L.wq + c / 2) * 4; };
      // The padding columns only (the whole row was 2% of layer1's 3x3): before the input's
      // first column and after its last
      for (int64_t c = 0; c < iw0 + p.pad_left; ++c) std::memset(at(c), fill, 4);
      for (int64_t c = iw1 + p.pad_left; c < wp; ++c) std::memset(at(c), fill, 4);
      int64_t iw = iw0;
#if KILN_QCONV_X86
      const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
      for (; iw + 16 <= iw1; iw += 16) {
        __m128i v[4];
        for (int t = 0; t < 4; ++t)
          v[t] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[t] + iw)), f);
        __m128i o[4];  // o[q]: columns iw + 4q .. + 3, 4 bytes each
        interleave4(v, o);
        const int64_t c = iw + p.pad_left;
        if (sw == 1) {
          for (int q = 0; q < 4; ++q) _mm_storeu_si128(reinterpret_cast<__m128i*>(at(c) + q * 16), o[q]);
          continue;
        }
        // stride 2: the even columns of the 16 to one phase, the odd ones to the other
        for (int h = 0; h < 2; ++h) {
          const __m128 x0 = _mm_castsi128_ps(o[2 * h]), x1 = _mm_castsi128_ps(o[2 * h + 1]);
          const __m128i even = _mm_castps_si128(_mm_shuffle_ps(x0, x1, _MM_SHUFFLE(2, 0, 2, 0)));
          const __m128i odd = _mm_castps_si128(_mm_shuffle_ps(x0, x1, _MM_SHUFFLE(3, 1, 3, 1)));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(at(c + 8 * h)), even);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(at(c + 8 * h + 1)), odd);
        }
      }
      if (wide && iw < iw1) {
        xp_tail_avx512(s, iw, iw1 - iw, flip, d, sw, L.wq, iw + p.pad_left);
        iw = iw1;
      }
#else
      (void)wide;
#endif
      for (; iw < iw1; ++iw)
        for (int t = 0; t < 4; ++t) at(iw + p.pad_left)[t] = static_cast<uint8_t>(s[t][iw] ^ flip);
    }
  }
}

#if KILN_QCONV_X86
// pack_from_xp's groups with AVX-512: each run one masked load of 32-bit lanes into the panel's
// register, one store a group.
__attribute__((target("avx2,avx512f,avx512bw"))) void pack_from_xp_wide(const Conv2dParams& p, const uint8_t* xp,
                                                                       const int64_t* run_src, const __mmask16* run_mask,
                                                                       int runs, uint8_t* panel) {
  const XpLayout L = xp_layout(p);
  const int64_t cbs = p.C / 4;
  uint8_t* d = panel;
  for (int64_t kh = 0; kh < p.KH; ++kh)
    for (int64_t kw = 0; kw < p.KW; ++kw) {
      const int64_t tap = xp_offset(p, L, kh, kw, 0);
      for (int64_t cb = 0; cb < cbs; ++cb, d += 64) {
        const int64_t off = tap + cb * L.hp * L.row;
        __m512i v = _mm512_setzero_si512();
        for (int r = 0; r < runs; ++r) v = _mm512_mask_loadu_epi32(v, run_mask[r], xp + run_src[r] + off);
        _mm512_storeu_si512(d, v);
      }
    }
}
#endif

// Panels [p0, p1) (pack_x's layout, K in (kh, kw, c) order) from XP (at xp + 64, flipped as
// the panels store it). A panel's pixels are runs of consecutive columns of an output row; lane
// j of a run starting at lane l0 of output row oh, column ow0, reads output pixel
// (oh, ow0 + j - l0)'s bytes at each tap. Lanes beyond the plane hold 0. Panel pn is at
// out + (pn - base) * kq * 64.
void pack_from_xp(const Conv2dParams& p, const uint8_t* xp, uint8_t* out, int64_t base, int64_t p0, int64_t p1,
                  bool wide) {
  const XpLayout L = xp_layout(p);
  const int64_t N = p.OH * p.OW, kq = k_groups(patch_len(p)), cbs = p.C / 4;
  for (int64_t pn = p0; pn < p1; ++pn) {
    uint8_t* panel = out + (pn - base) * kq * 64;
    // The runs: lanes [l0, l1) from output row oh, columns from ow0.
    int64_t run_src[kNR];  // xp + 64 + run_src[r] + lane * 4 is lane's byte at tap (0, 0), channel block 0
    int64_t run_l0[kNR], run_l1[kNR];
    int runs = 0;
    for (int64_t j = pn * kNR, end = std::min(N, pn * kNR + kNR); j < end; ++runs) {
      const int64_t oh = j / p.OW, ow = j % p.OW, len = std::min(end - j, p.OW - ow);
      const int64_t l0 = j - pn * kNR;
      run_src[runs] = 64 + oh * p.stride_h * L.row + (ow - l0) * 4;
      run_l0[runs] = l0;
      run_l1[runs] = l0 + len;
      j += len;
    }
#if KILN_QCONV_X86
    if (wide) {
      __mmask16 mask[kNR];
      for (int r = 0; r < runs; ++r)
        mask[r] = static_cast<__mmask16>(((1u << run_l1[r]) - 1) & ~((1u << run_l0[r]) - 1));
      pack_from_xp_wide(p, xp, run_src, mask, runs, panel);
      continue;
    }
#else
    (void)wide;
#endif
    uint8_t* d = panel;
    for (int64_t kh = 0; kh < p.KH; ++kh)
      for (int64_t kw = 0; kw < p.KW; ++kw)
        for (int64_t cb = 0; cb < cbs; ++cb, d += 64) {
          const int64_t off = xp_offset(p, L, kh, kw, cb);
          std::memset(d, 0, 64);
          for (int r = 0; r < runs; ++r)
            std::memcpy(d + run_l0[r] * 4, xp + run_src[r] + off + run_l0[r] * 4,
                        static_cast<size_t>((run_l1[r] - run_l0[r]) * 4));
        }
  }
}

// sums[j] of panels [p0, p1) of packed activations: the sum over K of column j's stored
// values (pack_x's sums, for panels built otherwise; zero beyond K and N). Panel pn is at
// packed + (pn - base) * kq * 64.
void panel_sums(const uint8_t* packed, int64_t base, int64_t K, int64_t N, int32_t* sums, int64_t p0, int64_t p1) {
  const int64_t kq = k_groups(K);
  for (int64_t pn = p0; pn < p1; ++pn) {
    const uint8_t* panel = packed + (pn - base) * kq * 64;
    uint32_t t[kNR] = {};
    for (int64_t i = 0; i < kq * 64; ++i) t[i % 64 / 4] += panel[i];
    for (int64_t j = 0; j < kNR && pn * kNR + j < N; ++j) sums[pn * kNR + j] = static_cast<int32_t>(t[j]);
  }
}

// ---- one image and group ---------------------------------------------------------------------

struct GroupProblem {
  int64_t K, M, N;           // patch length, channels of the group, output pixels
  const int8_t* panels;      // packed weights
  const int32_t* row_sums;
  const uint8_t* x;          // packed activations, from panel x_panel0 on
  const int32_t* col_sums;   // null when every weight zero point is 0
  uint32_t x_zero;           // of the stored (u8) activations
  const int32_t* w_zero;     // per channel of the whole conv (1 or all), or null
  int64_t w_zero_count;
  uint32_t w_shift;
  int64_t channel0;          // the group's first output channel
  QGemmOutput out;           // row_stride 1, col_stride N: channel m's plane at m * N
  QTileKernel kernel;        // weights (s8) broadcast, activations (u8) as vectors
  QTileRequantKernel requant_kernel;  // with `add`: the kernel requantizing its tile, or null
  // With a plain 8-bit output (qgemm_plain_8bit_output) and no column sums: per channel of the
  // group, what is added to the sums (zero-point terms and bias) and the scale; else null.
  const int32_t* add;
  const float* scale;
  int64_t x_panel0 = 0;
};

uint32_t w_zero_of(const GroupProblem& q, int64_t m) {
  const int64_t c = q.channel0 + m;
  return (q.w_zero ? static_cast<uint32_t>(q.w_zero[q.w_zero_count > 1 ? c : 0]) : 0u) - q.w_shift;
}

// The tile's sums corrected for the zero points, then qgemm's epilogue along each channel's row:
// sum (x - zx)(w - zw) = sum xw - zx sum_k w - zw sum_k x + K zx zw (modulo 2^32).
uint32_t fixed_terms(const GroupProblem& q, int64_t m) {
  return static_cast<uint32_t>(q.K) * q.x_zero * w_zero_of(q, m) - q.x_zero * static_cast<uint32_t>(q.row_sums[m]);
}

void finish(const GroupProblem& q, int32_t* acc, int64_t m0, int64_t rows, int64_t j0, int64_t n) {
  if (q.add)
    return qgemm_requantize_rows(q.out, acc, kNR, rows, n, q.add + m0, q.scale + m0,
                                 static_cast<unsigned char*>(q.out.y) + (q.channel0 + m0) * q.N + j0, q.N);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t m = m0 + r;
    const uint32_t zw = w_zero_of(q, m);
    const uint32_t fixed = fixed_terms(q, m);
    int32_t* t = acc + r * kNR;
    if (q.col_sums)
      for (int64_t j = 0; j < n; ++j)
        t[j] = static_cast<int32_t>(static_cast<uint32_t>(t[j]) + fixed -
                                    zw * static_cast<uint32_t>(q.col_sums[j0 + j]));
    else
      for (int64_t j = 0; j < n; ++j) t[j] = static_cast<int32_t>(static_cast<uint32_t>(t[j]) + fixed);
    qgemm_finish_column(q.out, t, j0, n, q.channel0 + m);
  }
}

// Weight panels [mp0, mp1) x activation panels [np0, np1).
void run_tiles(const GroupProblem& q, int64_t mp0, int64_t mp1, int64_t np0, int64_t np1) {
  const int64_t kq = k_groups(q.K);
  const int64_t block = std::max<int64_t>(1, kBlockBytes / (kq * 64));
  alignas(64) int32_t acc[kMR * kNR];
  for (int64_t nb = np0; nb < np1; nb += block) {
    const int64_t nb_end = std::min(np1, nb + block);
    for (int64_t mp = mp0; mp < mp1; ++mp) {
      const int64_t m0 = mp * kMR, rows = std::min(kMR, q.M - m0);
      const int8_t* w = q.panels + mp * kq * kMR * 4;
      for (int64_t pn = nb; pn < nb_end; ++pn) {
        const int64_t j0 = pn * kNR;
        if (q.requant_kernel && q.add) {
          q.requant_kernel(kq, w, q.x + (pn - q.x_panel0) * kq * 64, static_cast<int>(rows), std::min(kNR, q.N - j0),
                           q.add + m0, q.scale + m0, q.out,
                           static_cast<unsigned char*>(q.out.y) + (q.channel0 + m0) * q.N + j0, q.N);
          continue;
        }
        q.kernel(kq, w, q.x + (pn - q.x_panel0) * kq * 64, acc, static_cast<int>(rows));
        finish(q, acc, m0, rows, j0, std::min(kNR, q.N - j0));
      }
    }
  }
}

void run_group(const GroupProblem& q, ThreadPool* pool) {
  const int64_t m_panels = (q.M + kMR - 1) / kMR, n_panels = (q.N + kNR - 1) / kNR;
  const int threads = pool ? pool->size() : 1;
  if (threads == 1 || m_panels * n_panels < 2) return run_tiles(q, 0, m_panels, 0, n_panels);
  if (n_panels >= 2 * threads || n_panels >= m_panels)
    parallel_for(pool, n_panels, [&](int64_t a, int64_t b) { run_tiles(q, 0, m_panels, a, b); });
  else
    parallel_for(pool, m_panels, [&](int64_t a, int64_t b) { run_tiles(q, a, b, 0, n_panels); });
}

bool direct_1x1(const Conv2dParams& p) {
  return p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         p.OH == p.H && p.OW == p.W;
}

// Scratch: the packed activations, their column sums, the column matrix (unless direct).
size_t packed_x_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(round_up(p.OH * p.OW, kNR) * k_groups(patch_len(p)) * 4);
}
size_t col_sum_bytes(const Conv2dParams& p) { return static_cast<size_t>(round_up(p.OH * p.OW, kNR) * 4); }
size_t channel_terms_bytes(const Conv2dParams& p) { return static_cast<size_t>(round_up(p.M / p.group * 12, 64)); }

// Whether a 1x1 convolution read directly (`packable`: no column sums either) splits its output
// channels between the threads rather than its pixels: one that widens its input at least
// four times (an inverted residual block's expansion, which a depthwise layer reads), on a plane
// small enough that every thread packing all of it costs little. MobileNetV2 int8 at 2 threads:
// the 14 x 14 expansions and the depthwise layers after them 5-7 us faster each; at 112 x 112
// the expansion was 6 us slower.
bool channel_split(const Conv2dParams& p, bool packable, int64_t m_panels, int64_t n_panels, int threads) {
  const int64_t K = patch_len(p);
  return packable && p.M / p.group >= 4 * K && p.OH * p.OW <= 4096 && m_panels >= 2 * threads && n_panels >= threads;
}

void gemm_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const int32_t* w_zero_point,
               int64_t w_zero_point_count, const QGemmOutput& out, unsigned char* scratch, ThreadPool* pool,
               QGemmIsa isa) {
  const int64_t K = patch_len(p), mg = p.M / p.group, plane = p.OH * p.OW, cg = p.C / p.group;
  const size_t elem = out.type == KILN_I32 || out.type == KILN_F32 ? 4 : 1;
  const uint8_t flip = x.a_signed ? 0x80 : 0;
  uint8_t* xpack = scratch;
  int32_t* sums = reinterpret_cast<int32_t*>(scratch + packed_x_bytes(p));
  int32_t* add = reinterpret_cast<int32_t*>(scratch + packed_x_bytes(p) + col_sum_bytes(p));
  float* scale = reinterpret_cast<float*>(scratch + packed_x_bytes(p) + col_sum_bytes(p) + round_up(mg * 4, 8));
  unsigned char* cols = scratch + packed_x_bytes(p) + col_sum_bytes(p) + channel_terms_bytes(p);
  const bool direct = direct_1x1(p), xp_path = interleaved(p);
  // AVX-512 packing where the kernels may use AVX-512 (a test asking for avx2 gets the SSE2 one)
  const bool wide = (isa == QGemmIsa::automatic || isa == QGemmIsa::avx512_vnni) &&
                    qgemm_isa_supported(QGemmIsa::avx512_vnni);
  const int64_t n_panels = (plane + kNR - 1) / kNR;
  const auto* xs = static_cast<const unsigned char*>(x.data);
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      const unsigned char* wg = packed_w + static_cast<size_t>(g) * group_bytes(p);
      WeightHeader h;
      std::memcpy(&h, wg, sizeof h);
      GroupProblem q{K, mg, plane, reinterpret_cast<const int8_t*>(wg + kHeader + rowsum_bytes(mg)),
                     reinterpret_cast<const int32_t*>(wg + kHeader), xpack, nullptr,
                     static_cast<uint32_t>(x.zero_point) + (x.a_signed ? 128u : 0u), w_zero_point,
                     w_zero_point_count, static_cast<uint32_t>(h.shift), g * mg, out, qgemm_tile_kernel(isa, true),
                     qgemm_tile_requant_kernel(isa), nullptr, nullptr};
      q.out.y = static_cast<unsigned char*>(out.y) + static_cast<size_t>(n * p.M * plane) * elem;
      q.out.row_stride = 1;
      q.out.col_stride = plane;
      for (int64_t m = 0; m < mg && !q.col_sums; ++m)
        if (w_zero_of(q, m) != 0) q.col_sums = sums;
      if (!q.col_sums && qgemm_plain_8bit_output(out)) {
        for (int64_t m = 0; m < mg; ++m) {
          const int64_t c = g * mg + m;
          const uint32_t bias = out.bias ? static_cast<uint32_t>(out.bias[out.bias_count > 1 ? c : 0]) : 0u;
          add[m] = static_cast<int32_t>(fixed_terms(q, m) + bias);
          scale[m] = out.scale ? out.scale[out.scale_count > 1 ? c : 0] : 1.0f;
        }
        q.add = add;
        q.scale = scale;
      }
      const unsigned char* src = xs + (n * p.C + g * cg) * p.H * p.W;
      const auto pad = static_cast<unsigned char>(x.zero_point);
      if (xp_path) {
        parallel_for(pool, p.C / 4, [&](int64_t c0, int64_t c1) { build_xp(p, xs, n, pad, flip, cols, c0, c1, wide); });
      } else if (!direct) {
        parallel_for(pool, K, [&](int64_t k0, int64_t k1) { im2col(p, xs, n, g, pad, cols, k0, k1, wide); });
        src = cols;
      }
      int32_t* s = q.col_sums ? sums : nullptr;
      // Activation panels [a, b), with their column sums when needed, into `to` (which holds
      // panels from `base` on).
      auto pack = [&](uint8_t* to, int64_t base, int64_t a, int64_t b) {
        if (!xp_path) return pack_x(src, plane, K, plane, flip, to, base, s, a, b, wide);
        pack_from_xp(p, cols, to, base, a, b, wide);
        if (s) panel_sums(to, base, K, plane, s, a, b);
      };
      const int64_t m_panels = (mg + kMR - 1) / kMR;
      const int threads = pool ? pool->size() : 1;
      const int64_t block = std::max<int64_t>(1, kBlockBytes / (k_groups(K) * 64));
      if (threads > 1 && channel_split(p, direct && s == nullptr, m_panels, n_panels, threads)) {
        // Each thread packs every panel itself, a block at a time into its own buffer, and
        // multiplies them by its share of the weight panels: it writes a contiguous part of the
        // output's channels, the part of them that its share of the depthwise layer after reads
        // (both split channels in halves), instead of a piece of every channel's plane. Whole
        // shares are claimed (a piece of one would pack everything again).
        parallel_for_balanced_slots(
            pool, m_panels,
            [&](int64_t a, int64_t b, int t) {
              const int64_t kq = k_groups(K);
              auto* own = static_cast<uint8_t*>(
                  thread_buffer(ThreadBuffer::qconv_panels, static_cast<size_t>(std::min(block, n_panels) * kq * 64)));
              // Out of memory: a panel at a time in the shared scratch's panel t, this thread's.
              const int64_t step = own ? block : 1;
              if (own == nullptr) own = xpack + t * kq * 64;
              GroupProblem qt = q;
              qt.x = own;
              for (int64_t c = 0; c < n_panels; c += step) {
                const int64_t e = std::min(n_panels, c + step);
                pack(own, c, c, e);
                qt.x_panel0 = c;
                run_tiles(qt, a, b, c, e);
              }
            },
            m_panels);
        continue;
      }
      if (threads == 1 || n_panels >= 2 * threads || n_panels >= m_panels) {
        // Split by pixel panels (as run_group would): each thread packs the panels it then
        // multiplies, in one parallel loop (one wait for the threads instead of two), a block
        // at a time into a buffer of its own, which stays in its core's cache from one layer
        // to the next (the shared scratch did not: its lines moved between the cores).
        parallel_for_balanced(pool, n_panels, [&](int64_t a, int64_t b) {
          const auto own_bytes = static_cast<size_t>(std::min(block, b - a) * k_groups(K) * 64);
          auto* own = static_cast<uint8_t*>(thread_buffer(ThreadBuffer::qconv_panels, own_bytes));
          if (own == nullptr) {
            pack(xpack, 0, a, b);
            return run_tiles(q, 0, m_panels, a, b);
          }
          GroupProblem qt = q;
          qt.x = own;
          for (int64_t c = a; c < b; c += block) {
            const int64_t e = std::min(b, c + block);
            pack(own, c, c, e);
            qt.x_panel0 = c;
            run_tiles(qt, 0, m_panels, c, e);
          }
        });
        continue;
      }
      parallel_for(pool, n_panels, [&](int64_t a, int64_t b) { pack(xpack, 0, a, b); });
      run_group(q, pool);
    }
}

// Channels [m0, m1) of image n: the int32 sums of one channel's output plane in plane_acc, then
// qgemm's epilogue on the plane.
template <class X>
void depthwise_rows(const Conv2dParams& p, const X* x, int32_t x_zero_point, const unsigned char* packed,
                    const int32_t* w_zero_point, int64_t w_zero_point_count, const QGemmOutput& out, int64_t n,
                    int64_t m0, int64_t m1, int32_t* plane_acc) {
  int32_t shift;
  std::memcpy(&shift, packed, sizeof shift);
  const int8_t* weights = reinterpret_cast<const int8_t*>(packed + 64);
  const int64_t taps = p.KH * p.KW;
  for (int64_t m = m0; m < m1; ++m) {
    const int32_t zw = (w_zero_point ? w_zero_point[w_zero_point_count > 1 ? m : 0] : 0) - shift;
    int32_t w[kMaxDepthwiseTaps];
    for (int64_t t = 0; t < taps; ++t) w[t] = static_cast<int32_t>(weights[m * taps + t]) - zw;
    const X* plane = x + (n * p.C + m) * p.H * p.W;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int32_t* __restrict acc = plane_acc + oh * p.OW;
      for (int64_t ow = 0; ow < p.OW; ++ow) acc[ow] = 0;
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        if (ih < 0 || ih >= p.H) continue;
        const X* row = plane + ih * p.W;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          const int64_t off = kw * p.dil_w - p.pad_left;
          // Output columns whose input column ow * stride + off lies inside the row.
          int64_t lo = 0, hi = p.OW;
          while (lo < hi && lo * p.stride_w + off < 0) ++lo;
          while (hi > lo && (hi - 1) * p.stride_w + off >= p.W) --hi;
          const int32_t wk = w[kh * p.KW + kw];
          if (p.stride_w == 1) {
            const X* __restrict src = row + off;
            for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += (static_cast<int32_t>(src[ow]) - x_zero_point) * wk;
          } else {
            for (int64_t ow = lo; ow < hi; ++ow)
              acc[ow] += (static_cast<int32_t>(row[ow * p.stride_w + off]) - x_zero_point) * wk;
          }
        }
      }
    }
    qgemm_finish_column(out, plane_acc, 0, p.OH * p.OW, m);
  }
}

#if KILN_QCONV_X86
// Vectorized depthwise (dilation 1, stride_w 1 or 2): per channel, the input minus its zero
// point in a zero-padded plane of int16 pairs, P[r][i] = (x[r][s i], x[r][s i + 1]) (padded
// columns), so that taps kw = 2j and 2j + 1 of 8 consecutive outputs are one load and one
// vpmaddwd against the pair of weights (w[2j], w[2j + 1]) (0 past the kernel). Both factors
// lie in [-255, 255]: the products and their sums are exact in int32.
struct PairLayout {
  int64_t rows, width;  // of the plane, in pairs
};

PairLayout pair_layout(const Conv2dParams& p) {
  const int64_t rows = std::max(p.H + p.pad_top, (p.OH - 1) * p.stride_h + p.KH);
  return {rows, round_up(round_up(p.OW, 8) + p.KW + 1, 16)};
}

bool depthwise_vectorizable(const Conv2dParams& p) {
  return p.dil_h == 1 && p.dil_w == 1 && (p.stride_w == 1 || p.stride_w == 2);
}

// int32s of buffer per thread: two pair planes (the next channel's is filled before this one's
// sums are taken: loads from stores still in flight, offset from them, would wait for them),
// one padded row of int16 (stride 1) and the plane of sums (32 to spare).
size_t depthwise_buffer_ints(const Conv2dParams& p) {
  const PairLayout L = pair_layout(p);
  return static_cast<size_t>(2 * L.rows * L.width + L.width + 16 + p.OH * p.OW + 32);
}

// Padded row r of the pair plane from input row `src` (stride 1: through `row16`, the padded
// row as int16).
template <class X>
__attribute__((target("avx2"))) void fill_pairs(const Conv2dParams& p, const PairLayout& L, const X* src,
                                                int32_t x_zero_point, int32_t* pairs, int16_t* row16) {
  const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(x_zero_point));
  // Input columns that land in the plane: padded column iw + pad_left < 2 * width (stride 2),
  // < width + 1 (stride 1).
  const int64_t cols = p.stride_w == 2 ? 2 * L.width : L.width + 1;
  const int64_t w_end = std::min(p.W, cols - p.pad_left);
  int16_t* row = p.stride_w == 2 ? reinterpret_cast<int16_t*>(pairs) : row16;
  const int64_t row_len = p.stride_w == 2 ? 2 * L.width : L.width + 16;
  // The padding: columns before pad_left and from pad_left + w_end on.
  std::memset(row, 0, static_cast<size_t>(p.pad_left) * sizeof(int16_t));
  std::memset(row + p.pad_left + w_end, 0, static_cast<size_t>(row_len - p.pad_left - w_end) * sizeof(int16_t));
  int16_t* d = row + p.pad_left;
  int64_t iw = 0;
  for (; iw + 16 <= w_end; iw += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + iw));
    const __m256i v = std::is_signed_v<X> ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + iw), _mm256_sub_epi16(v, z));
  }
  for (; iw < w_end; ++iw) d[iw] = static_cast<int16_t>(static_cast<int32_t>(src[iw]) - x_zero_point);
  if (p.stride_w == 2) return;
  // Stride 1: pairs[i] = (row16[i], row16[i + 1]), 16 at a time (width is a multiple of 16).
  for (int64_t i = 0; i < L.width; i += 16) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row16 + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row16 + i + 1));
    const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + i), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

// Stride 1 with AVX-512 (BW, VL): the pairs straight from the input bytes, padded element e
// (input column e - pad_left) and e + 1 read by masked loads that touch only the row's columns
// (no int16 row written and read back unaligned, which stalled on store forwarding).
template <class X>
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) void fill_pairs_s1_avx512(const Conv2dParams& p,
                                                                                   const PairLayout& L,
                                                                                   const X* src,
                                                                                   int32_t x_zero_point,
                                                                                   int32_t* pairs) {
  const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(x_zero_point));
  // Columns in [0, W) of the 17 that block i reads from i - pad_left on.
  auto mask_at = [&](int64_t c0) {
    const int64_t lo = std::clamp<int64_t>(-c0, 0, 16), hi = std::clamp<int64_t>(p.W - c0, 0, 16);
    return static_cast<__mmask16>(hi > lo ? ((1u << hi) - 1) & ~((1u << lo) - 1) : 0u);
  };
  for (int64_t i = 0; i < L.width; i += 16) {
    const int64_t c0 = i - p.pad_left;
    const __mmask16 ma = mask_at(c0), mb = mask_at(c0 + 1);
    // Masked-off lanes are not read (they may lie before or after the row: the address is
    // formed as an integer, never dereferenced there).
    const auto at = [&](int64_t c) {
      return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(src) + static_cast<uintptr_t>(c));
    };
    const __m128i ba = _mm_maskz_loadu_epi8(ma, at(c0)), bb = _mm_maskz_loadu_epi8(mb, at(c0 + 1));
    const __m256i a = _mm256_maskz_sub_epi16(
        ma, std::is_signed_v<X> ? _mm256_cvtepi8_epi16(ba) : _mm256_cvtepu8_epi16(ba), z);
    const __m256i b = _mm256_maskz_sub_epi16(
        mb, std::is_signed_v<X> ? _mm256_cvtepi8_epi16(bb) : _mm256_cvtepu8_epi16(bb), z);
    const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + i), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

// Channel m's pair plane (padding rows, then each input row).
template <class X>
__attribute__((target("avx2"))) void fill_plane(const Conv2dParams& p, const PairLayout& L, const X* plane,
                                                int32_t x_zero_point, int32_t* plane_pairs, int16_t* row16,
                                                bool avx512) {
  std::memset(plane_pairs, 0, static_cast<size_t>(p.pad_top * L.width) * sizeof(int32_t));
  std::memset(plane_pairs + (p.pad_top + p.H) * L.width, 0,
              static_cast<size_t>((L.rows - p.pad_top - p.H) * L.width) * sizeof(int32_t));
  for (int64_t ih = 0; ih < p.H; ++ih) {
    int32_t* row = plane_pairs + (ih + p.pad_top) * L.width;
    if (avx512 && p.stride_w == 1)
      fill_pairs_s1_avx512(p, L, plane + ih * p.W, x_zero_point, row);
    else
      fill_pairs(p, L, plane + ih * p.W, x_zero_point, row, row16);
  }
}

// The plane of sums of one channel from its pair plane: nt pairs of taps (NT when not 0, a
// constant the loop is unrolled for), 8 outputs at a time (the blocks' sums are independent:
// out-of-order execution overlaps them; wider blocks wasted most of the work on 7- and 14-wide
// rows). Past a row's end this writes into the next row's sums, computed after it.
template <int NT>
__attribute__((target("avx2"))) void depthwise_sums(const Conv2dParams& p, const int32_t* plane_pairs,
                                                    const int64_t* offset_in, const __m256i* wv_in, int64_t nt,
                                                    int32_t* acc) {
  constexpr int64_t kMax = NT > 0 ? NT : kMaxDepthwiseTaps;
  const int64_t n = NT > 0 ? NT : nt;
  __m256i wv[kMax];
  int64_t offset[kMax];
  for (int64_t t = 0; t < n; ++t) {
    wv[t] = wv_in[t];
    offset[t] = offset_in[t];
  }
  const int64_t width = pair_layout(p).width;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    const int32_t* corner = plane_pairs + oh * p.stride_h * width;
    for (int64_t ow0 = 0; ow0 < p.OW; ow0 += 8) {
      __m256i a = _mm256_setzero_si256();
      for (int64_t t = 0; t < n; ++t) {
        const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corner + ow0 + offset[t]));
        a = _mm256_add_epi32(a, _mm256_madd_epi16(pairs, wv[t]));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + oh * p.OW + ow0), a);
    }
  }
}

template <class X>
__attribute__((target("avx2"))) void depthwise_avx2(const Conv2dParams& p, const X* x, int32_t x_zero_point,
                                                    const unsigned char* packed, const int32_t* w_zero_point,
                                                    int64_t w_zero_point_count, const QGemmOutput& out, int64_t n,
                                                    int64_t m0, int64_t m1, int32_t* buffer, bool avx512) {
  int32_t shift;
  std::memcpy(&shift, packed, sizeof shift);
  const int8_t* weights = reinterpret_cast<const int8_t*>(packed + 64);
  const int64_t taps = p.KH * p.KW, npairs = (p.KW + 1) / 2, s = p.stride_w;
  const PairLayout L = pair_layout(p);
  int32_t* planes[2] = {buffer, buffer + L.rows * L.width};
  int16_t* row16 = reinterpret_cast<int16_t*>(buffer + 2 * L.rows * L.width);
  int32_t* acc = buffer + 2 * L.rows * L.width + L.width + 16;
  __m256i wv[kMaxDepthwiseTaps];
  int64_t offset[kMaxDepthwiseTaps];  // of each pair of taps in the plane, from the window's corner
  for (int64_t kh = 0; kh < p.KH; ++kh)
    for (int64_t j = 0; j < npairs; ++j) offset[kh * npairs + j] = kh * L.width + 2 * j / s;
  const int64_t nt = p.KH * npairs;
  const X* xn = x + n * p.C * p.H * p.W;
  if (m0 < m1) fill_plane(p, L, xn + m0 * p.H * p.W, x_zero_point, planes[m0 & 1], row16, avx512);
  for (int64_t m = m0; m < m1; ++m) {
    const int32_t zw = (w_zero_point ? w_zero_point[w_zero_point_count > 1 ? m : 0] : 0) - shift;
    for (int64_t kh = 0; kh < p.KH; ++kh)
      for (int64_t j = 0; j < npairs; ++j) {
        const int64_t k0 = kh * p.KW + 2 * j;
        const int32_t w0 = static_cast<int32_t>(weights[m * taps + k0]) - zw;
        const int32_t w1 = 2 * j + 1 < p.KW ? static_cast<int32_t>(weights[m * taps + k0 + 1]) - zw : 0;
        wv[kh * npairs + j] = _mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(w1) << 16) |
                                                                     (static_cast<uint32_t>(w0) & 0xFFFFu)));
      }
    if (m + 1 < m1) fill_plane(p, L, xn + (m + 1) * p.H * p.W, x_zero_point, planes[(m + 1) & 1], row16, avx512);
    const int32_t* plane_pairs = planes[m & 1];
    if (nt == 6)  // 3x3: the taps unrolled, weights and offsets in registers
      depthwise_sums<6>(p, plane_pairs, offset, wv, nt, acc);
    else
      depthwise_sums<0>(p, plane_pairs, offset, wv, nt, acc);
    qgemm_finish_column(out, acc, 0, p.OH * p.OW, m);
  }
}

// Depthwise with AVX-512 VNNI and VBMI, straight from the 8-bit input (no int16 planes): for a
// block of 16 outputs of a row (of two rows when OW <= 8), each kernel row's input bytes are
// one masked load (columns outside the row read as x's zero point), vpermb spreads them into
// 16 groups of 4 consecutive taps (x[s j + 4q + t], t < 4) and one vpdpbusd multiplies each
// group by the weights w[kh][4q + t] (0 past KW). Rows outside the input are the zero point
// broadcast. The sums are then sum over all KH x KW taps of x' w, x' = x inside the input and
// zx outside, and sum (x' - zx) w = that - zx sum w (exact in int32: at most 64 taps of
// 255 x 128). Needs weights whose zero point is 0 as stored (s8 with zero point 0, u8 with 128).
bool depthwise_vbmi_fits(const Conv2dParams& p) {
  if (p.dil_h != 1 || p.dil_w != 1 || (p.stride_w != 1 && p.stride_w != 2)) return false;
  const int64_t lanes = p.OW <= 8 ? p.OW : 16;  // outputs of one row in a block
  return (lanes - 1) * p.stride_w + p.KW <= 64;
}

bool depthwise_vbmi_supported() {
  static const bool ok = qgemm_isa_supported(QGemmIsa::avx512_vnni) && cpu_has_avx512_vbmi();
  return ok;
}

// Bits [lo, hi) of a 64-bit mask (clamped to [0, 64]).
inline uint64_t bit_range(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 64);
  hi = std::clamp<int64_t>(hi, 0, 64);
  if (hi <= lo) return 0;
  const uint64_t upper = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upper & ~((uint64_t{1} << lo) - 1);
}

// Row `row`'s bytes from column c0 on under `mask`, as u8 (s8 flipped by 128), x's zero point
// (`zx_raw` as stored) elsewhere; with `narrow` (the mask within 32 bytes) a 256-bit load,
// zero above (half the cost of a 512-bit one). The address is formed as an integer: masked-off
// lanes, which may lie outside the row, are not read.
template <class X>
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) inline __m512i load_row_u8(const X* row, int64_t c0,
                                                                                   __mmask64 mask, __m512i zx_raw,
                                                                                   bool narrow) {
  const auto* at = reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(c0));
  const __m512i v =
      narrow ? _mm512_zextsi256_si512(_mm256_mask_loadu_epi8(_mm512_castsi512_si256(zx_raw),
                                                             static_cast<__mmask32>(mask), at))
             : _mm512_mask_loadu_epi8(zx_raw, mask, at);
  return std::is_signed_v<X> ? _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))) : v;
}

// What depthwise_vbmi_plane reads of a call: the shape, the group vectors' byte indices, the zero
// point (as stored, and as u8 for rows outside), the requantization of a plain 8-bit output.
struct VbmiDepthwise {
  const Conv2dParams* p;
  int64_t nq, lanes, span;  // groups of 4 taps a kernel row, outputs of a row a block, bytes a block's row reads
  bool narrow;              // span <= 32: 256-bit loads
  bool plain;
  __m512i index[16];
  __m512i zx_raw;  // x's zero point as stored
  Requant16 rq;
};

// One channel's output plane from its input plane xm, block by block (any kernel size): weights
// wv_in[kh * nq + q] (4 taps each), init = the sums' start (-zx sum w, plus the bias when plain).
template <class X, bool TwoRows>
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void depthwise_vbmi_plane(
    const VbmiDepthwise& d, const X* xm, const __m512i* wv_in, __m512i init, __m512 scale, unsigned char* ym,
    int32_t* plane_acc) {
  // Everything in locals: the stores through ym (bytes) could alias d and p otherwise.
  const Conv2dParams& p = *d.p;
  const int64_t kh_n = p.KH, nq = d.nq, s = p.stride_w;
  const int64_t H = p.H, W = p.W, OH = p.OH, OW = p.OW, stride_h = p.stride_h, pad_top = p.pad_top,
                pad_left = p.pad_left, lanes = d.lanes, span = d.span;
  const bool plain = d.plain, narrow = d.narrow;
  const __m512i zx_raw = d.zx_raw;
  const Requant16 rq = d.rq;
  const __m512i* wv = wv_in;
  const __m512i* index = d.index;
  // Per output row (pair): each kernel row's input row and whether it lies inside (else its
  // loads are masked off entirely and read as the zero point, without touching memory).
  const X* row_a[kMaxDepthwiseTaps];
  const X* row_b[kMaxDepthwiseTaps];
  uint64_t on_a[kMaxDepthwiseTaps], on_b[kMaxDepthwiseTaps];
  for (int64_t oh = 0; oh < OH; oh += TwoRows ? 2 : 1) {
    for (int64_t kh = 0; kh < kh_n; ++kh) {
      const int64_t ih = oh * stride_h - pad_top + kh, ih2 = ih + stride_h;
      on_a[kh] = ih >= 0 && ih < H ? ~uint64_t{0} : 0;
      row_a[kh] = xm + (on_a[kh] ? ih * W : 0);
      on_b[kh] = TwoRows && ih2 >= 0 && ih2 < H ? ~uint64_t{0} : 0;
      row_b[kh] = xm + (on_b[kh] ? ih2 * W : 0);
    }
    for (int64_t ow0 = 0; ow0 < OW; ow0 += lanes) {
      const int64_t c0 = ow0 * s - pad_left;
      const uint64_t mask = bit_range(-c0, std::min(span, W - c0));
      __m512i acc = init;
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        const __m512i a = load_row_u8(row_a[kh], c0, mask & on_a[kh], zx_raw, narrow);
        if (TwoRows) {
          const __m512i b = load_row_u8(row_b[kh], c0, mask & on_b[kh], zx_raw, narrow);
          for (int64_t q = 0; q < nq; ++q)
            acc = _mm512_dpbusd_epi32(acc, _mm512_permutex2var_epi8(a, index[q], b), wv[kh * nq + q]);
        } else {
          for (int64_t q = 0; q < nq; ++q)
            acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(index[q], a), wv[kh * nq + q]);
        }
      }
      // Outputs of the block: the rest of the row, or the two rows' (one at the last odd row).
      const int64_t count = TwoRows ? std::min<int64_t>(2, OH - oh) * OW : std::min<int64_t>(16, OW - ow0);
      const __mmask16 out_mask = static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1);
      const int64_t at_out = oh * OW + ow0;
      if (plain)
        store_requantized(rq, acc, scale, out_mask, ym + at_out);
      else
        _mm512_mask_storeu_epi32(plane_acc + at_out, out_mask, acc);
    }
  }
}

// The 3x3 case (3 x 1, 3 x 2 alike) without two-row blocks, a vertical strip of blocks at a time:
// the spread (vpermb) input row of a block serves the 3 output rows that read it, so that an
// output row takes one new input row (two at stride 2) instead of three.
template <class X>
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) inline __m512i spread_row(
    const X* xm, int64_t ih, int64_t H, int64_t W, int64_t c0, uint64_t mask, __m512i zx_raw, bool narrow,
    __m512i index) {
  const bool on = ih >= 0 && ih < H;
  return _mm512_permutexvar_epi8(index, load_row_u8(xm + (on ? ih * W : 0), c0, on ? mask : 0, zx_raw, narrow));
}

template <class X>
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void depthwise_vbmi_strips3(
    const VbmiDepthwise& d, const X* xm, const __m512i* wv, __m512i init, __m512 scale, unsigned char* ym,
    int32_t* plane_acc) {
  const Conv2dParams& p = *d.p;  // in locals: stores through ym (bytes) could alias d and p
  const int64_t s = p.stride_w, H = p.H, W = p.W, OH = p.OH, OW = p.OW, sh = p.stride_h, pad_top = p.pad_top,
                pad_left = p.pad_left, lanes = d.lanes, span = d.span;
  const bool plain = d.plain, narrow = d.narrow;
  const __m512i zx_raw = d.zx_raw, index = d.index[0], w0 = wv[0], w1 = wv[1], w2 = wv[2];
  const Requant16 rq = d.rq;
  for (int64_t ow0 = 0; ow0 < OW; ow0 += lanes) {
    const int64_t c0 = ow0 * s - pad_left;
    const uint64_t mask = bit_range(-c0, std::min(span, W - c0));
    const int64_t count = std::min<int64_t>(lanes, OW - ow0);
    const __mmask16 out_mask = static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1);
    // r0, r1: the spread rows oh sh - pad_top and the next.
    __m512i r0 = spread_row(xm, -pad_top, H, W, c0, mask, zx_raw, narrow, index);
    __m512i r1 = spread_row(xm, 1 - pad_top, H, W, c0, mask, zx_raw, narrow, index);
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t ih = oh * sh - pad_top;
      const __m512i r2 = spread_row(xm, ih + 2, H, W, c0, mask, zx_raw, narrow, index);
      __m512i acc = _mm512_dpbusd_epi32(init, r0, w0);
      acc = _mm512_dpbusd_epi32(acc, r1, w1);
      acc = _mm512_dpbusd_epi32(acc, r2, w2);
      if (plain)
        store_requantized(rq, acc, scale, out_mask, ym + oh * OW + ow0);
      else
        _mm512_mask_storeu_epi32(plane_acc + oh * OW + ow0, out_mask, acc);
      if (sh == 1) {
        r0 = r1;
        r1 = r2;
      } else if (sh == 2) {
        r0 = r2;
        r1 = spread_row(xm, ih + 3, H, W, c0, mask, zx_raw, narrow, index);
      } else {
        r0 = spread_row(xm, ih + sh, H, W, c0, mask, zx_raw, narrow, index);
        r1 = spread_row(xm, ih + sh + 1, H, W, c0, mask, zx_raw, narrow, index);
      }
    }
  }
}

// Channels [m0, m1) of image n. A plain 8-bit output (qgemm_plain_8bit_output) is requantized
// in registers; any other gets each channel's corrected sums in plane_acc and qgemm's epilogue.
template <class X, bool Signed>
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void depthwise_vbmi(
    const Conv2dParams& p, const X* x, int32_t x_zero_point, const unsigned char* packed, const QGemmOutput& out,
    int64_t n, int64_t m0, int64_t m1, int32_t* plane_acc) {
  const int8_t* weights = reinterpret_cast<const int8_t*>(packed + 64);
  const int64_t s = p.stride_w, taps = p.KH * p.KW, nq = (p.KW + 3) / 4, plane = p.OH * p.OW;
  // 3x3 (and 3 x 1, 3 x 2): vertical strips of blocks (depthwise_vbmi_strips3); other kernels
  // with rows of at most 8 outputs: two rows a block.
  const bool k3x3 = p.KH == 3 && nq == 1;
  const bool two_rows = p.OW <= 8 && !k3x3;
  VbmiDepthwise d;
  d.p = &p;
  d.nq = nq;
  d.lanes = two_rows ? p.OW : 16;
  // Blocks of 15 outputs at stride 2 (3 taps): 31 bytes a row, 256-bit loads.
  if (!two_rows && 15 * s + p.KW > 32 && (32 - p.KW) / s + 1 >= 12) d.lanes = (32 - p.KW) / s + 1;
  d.span = (d.lanes - 1) * s + p.KW;
  d.narrow = d.span <= 32;
  d.plain = qgemm_plain_8bit_output(out);
  const int32_t zx = x_zero_point + (std::is_signed_v<X> ? 128 : 0);  // of the input as u8
  d.zx_raw = _mm512_set1_epi8(static_cast<char>(x_zero_point));
  d.rq = requant16<Signed>(out.y_zero_point);
  // index[q]: byte 4j + t of a group vector is byte j s + 4q + t of the row's load (of the
  // second row's, 64 on, for lanes OW <= j < 2 OW of a two-row block); clamped where the
  // weight is 0.
  for (int64_t q = 0; q < nq; ++q) {
    alignas(64) uint8_t b[64];
    for (int64_t j = 0; j < 16; ++j)
      for (int64_t t = 0; t < 4; ++t) {
        const bool second = two_rows && j >= p.OW && j < 2 * p.OW;
        const int64_t jj = second ? j - p.OW : (two_rows && j >= p.OW ? 0 : j);
        b[j * 4 + t] = static_cast<uint8_t>((second ? 64 : 0) + std::min<int64_t>(jj * s + 4 * q + t, 63));
      }
    d.index[q] = _mm512_load_si512(b);
  }
  __m512i wv[kMaxDepthwiseTaps];
  for (int64_t m = m0; m < m1; ++m) {
    int32_t wsum = 0;
    for (int64_t kh = 0; kh < p.KH; ++kh)
      for (int64_t q = 0; q < nq; ++q) {
        uint32_t quad = 0;
        for (int64_t t = 0; t < 4 && 4 * q + t < p.KW; ++t) {
          const int8_t w = weights[m * taps + kh * p.KW + 4 * q + t];
          wsum += w;
          quad |= static_cast<uint32_t>(static_cast<uint8_t>(w)) << (8 * t);
        }
        wv[kh * nq + q] = _mm512_set1_epi32(static_cast<int32_t>(quad));
      }
    const int32_t bias = out.bias ? out.bias[out.bias_count > 1 ? m : 0] : 0;
    // -zx sum w, plus the bias when requantizing here (qgemm's epilogue adds it otherwise);
    // wrapping as the epilogue's sum does.
    const __m512i init = _mm512_set1_epi32(static_cast<int32_t>(
        (d.plain ? static_cast<uint32_t>(bias) : 0u) - static_cast<uint32_t>(zx) * static_cast<uint32_t>(wsum)));
    const __m512 scale = _mm512_set1_ps(out.scale ? out.scale[out.scale_count > 1 ? m : 0] : 1.0f);
    const X* xm = x + (n * p.C + m) * p.H * p.W;
    unsigned char* ym = static_cast<unsigned char*>(out.y) + m * plane;
    if (k3x3)
      depthwise_vbmi_strips3<X>(d, xm, wv, init, scale, ym, plane_acc);
    else if (two_rows)
      depthwise_vbmi_plane<X, true>(d, xm, wv, init, scale, ym, plane_acc);
    else
      depthwise_vbmi_plane<X, false>(d, xm, wv, init, scale, ym, plane_acc);
    if (!d.plain) qgemm_finish_column(out, plane_acc, 0, plane, m);
  }
}
#endif

void depthwise_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const int32_t* w_zero_point,
                    int64_t w_zero_point_count, const QGemmOutput& out, ThreadPool* pool, QGemmIsa isa) {
  const int64_t plane = p.OH * p.OW;
  const size_t elem = out.type == KILN_I32 || out.type == KILN_F32 ? 4 : 1;
#if KILN_QCONV_X86
  const bool vectorized =
      isa != QGemmIsa::portable && qgemm_isa_supported(QGemmIsa::avx2) && depthwise_vectorizable(p);
  const bool avx2_only = isa == QGemmIsa::avx2 || isa == QGemmIsa::avx_vnni;  // a test asking for those
  const bool avx512 = vectorized && !avx2_only && qgemm_isa_supported(QGemmIsa::avx512_vnni);
  bool vbmi = isa != QGemmIsa::portable && !avx2_only && depthwise_vbmi_supported() &&
              depthwise_vbmi_fits(p);
  if (vbmi) {  // the weights' zero points must be 0 as stored
    int32_t shift;
    std::memcpy(&shift, packed, sizeof shift);
    for (int64_t m = 0; m < p.M && vbmi; ++m)
      vbmi = (w_zero_point ? w_zero_point[w_zero_point_count > 1 ? m : 0] : 0) == shift;
  }
  const bool plain = qgemm_plain_8bit_output(out);
#else
  (void)isa;
#endif
  for (int64_t n = 0; n < p.N; ++n) {
    QGemmOutput o = out;
    o.y = static_cast<unsigned char*>(out.y) + static_cast<size_t>(n * p.M * plane) * elem;
    o.row_stride = 1;
    o.col_stride = plane;
    parallel_for_balanced(pool, p.M, [&](int64_t m0, int64_t m1) {
#if KILN_QCONV_X86
      if (vbmi) {
        // Sums of a plane for an output other than plain 8 bits (qgemm's epilogue), 16 to spare.
        auto* acc = plain ? nullptr
                          : static_cast<int32_t*>(thread_buffer(ThreadBuffer::qdepthwise_sums,
                                                                static_cast<size_t>(plane + 16) * sizeof(int32_t)));
        if (!plain && acc == nullptr) return;  // out of memory: the output stays unwritten
        const bool s8_out = out.type == KILN_I8;
        if (x.a_signed && s8_out)
          depthwise_vbmi<int8_t, true>(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, o, n, m0, m1, acc);
        else if (x.a_signed)
          depthwise_vbmi<int8_t, false>(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, o, n, m0, m1, acc);
        else if (s8_out)
          depthwise_vbmi<uint8_t, true>(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, o, n, m0, m1, acc);
        else
          depthwise_vbmi<uint8_t, false>(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, o, n, m0, m1, acc);
        return;
      }
      if (vectorized) {
        auto* buffer = static_cast<int32_t*>(
            thread_buffer(ThreadBuffer::qdepthwise_sums, depthwise_buffer_ints(p) * sizeof(int32_t)));
        if (buffer == nullptr) return;  // out of memory: the output stays unwritten
        if (x.a_signed)
          depthwise_avx2(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, w_zero_point,
                         w_zero_point_count, o, n, m0, m1, buffer, avx512);
        else
          depthwise_avx2(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, w_zero_point,
                         w_zero_point_count, o, n, m0, m1, buffer, avx512);
        return;
      }
#endif
      auto* acc = static_cast<int32_t*>(
          thread_buffer(ThreadBuffer::qdepthwise_sums, static_cast<size_t>(plane) * sizeof(int32_t)));
      if (acc == nullptr) return;  // out of memory: the output stays unwritten
      if (x.a_signed)
        depthwise_rows(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, w_zero_point, w_zero_point_count,
                       o, n, m0, m1, acc);
      else
        depthwise_rows(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, w_zero_point,
                       w_zero_point_count, o, n, m0, m1, acc);
    });
  }
}


// ---- pixels as the broadcast operand ---------------------------------------------------------
//
// Layers with few output pixels (ResNet-50's layer4: 7 x 7 planes) waste lanes in 16-pixel
// panels (49 pixels fill 3.5), and packing the panels copies the input once per tap. For those
// the tile is turned round, as ONNX Runtime's MLAS does it: its rows are kPbPixels consecutive
// output pixels whose k-groups (4 channels at one tap) are broadcast straight from the
// channel-interleaved copy XP (no panels), its columns 16 output channels a vector, from weights
// packed at compile time in blocks of 16 channels ([block][kq][16][4], K in (kh, kw, c) order).
// 1x1 convolutions without padding read a compact XP instead, [C / 4][OH][OW][4]: the pixels
// they read, whatever the stride. The 7 x 16 V int32 sums are requantized in registers and
// transposed (vpermt2b) so that each channel's 7 bytes are one store.
constexpr int64_t kPbPixels = 7;  // output pixels a tile (ResNet's planes are 7 k wide)
constexpr int64_t kPbBlock = 16;  // output channels a weight block (one vector)
constexpr int kPbMaxVecs = 3;     // weight blocks a tile: 21 sums and 3 weight vectors in registers
constexpr int64_t kPbMaxTaps = 25;

bool pb_compact(const Conv2dParams& p) {
  return p.KH == 1 && p.KW == 1 && p.pad_top == 0 && p.pad_left == 0 && (p.OH - 1) * p.stride_h < p.H &&
         (p.OW - 1) * p.stride_w < p.W;
}

// The shapes that run with pixels as the broadcast operand, chosen by shape alone (the weights'
// packing depends on it), where it measured faster on Zen 4 (one thread, us, panels -> this):
// ResNet-50's 3x3s of 28 x 28 outputs and fewer (layer2 551 -> 528, layer3 547 -> 513, layer4
// 610 -> 506, the stride-2 ones 618 / 624 / 708 -> 560 / 532 / 515; layer1's 56 x 56 one is
// level, 564 -> 556) and 1x1s of at most 49 pixels with at least 256 input channels (layer4's
// 2048 -> 512 282 -> 241, its downsample 568 -> 477). With fewer channels, or more pixels, the
// sums of a tile are too few for its transposing epilogue (MobileNetV2's 7 x 7 160 -> 960:
// 44 -> 46; ResNet's layer2 downsample, 28 x 28, K = 256: 495 -> 542).
bool pixel_broadcast(const Conv2dParams& p) {
  if (p.group != 1 || p.C % 4 != 0 || p.dil_h != 1 || p.dil_w != 1) return false;
  const int64_t pixels = p.OH * p.OW;
  if (pb_compact(p)) return pixels <= 49 && p.C >= 256;
  return interleaved(p) && p.KH * p.KW <= kPbMaxTaps && pixels <= 28 * 28;
}

struct PbGeometry {
  int64_t taps, cbs, cb_stride;  // taps, channel blocks of 4, XP bytes from block to block
  int64_t row_step, col_step;    // XP bytes from one output row, column to the next
  int64_t tap_off[kPbMaxTaps];   // of each tap (kh, kw) for output pixel (0, 0), channel block 0
};

PbGeometry pb_geometry(const Conv2dParams& p) {
  PbGeometry g{};
  g.cbs = p.C / 4;
  g.col_step = 4;
  if (pb_compact(p)) {
    g.taps = 1;
    g.cb_stride = p.OH * p.OW * 4;
    g.row_step = p.OW * 4;
    return g;
  }
  const XpLayout L = xp_layout(p);
  g.taps = p.KH * p.KW;
  g.cb_stride = L.hp * L.row;
  g.row_step = p.stride_h * L.row;
  for (int64_t kh = 0; kh < p.KH; ++kh)
    for (int64_t kw = 0; kw < p.KW; ++kw) g.tap_off[kh * p.KW + kw] = xp_offset(p, L, kh, kw, 0);
  return g;
}

size_t pb_xp_bytes(const Conv2dParams& p) {
  return pb_compact(p) ? static_cast<size_t>(p.C * p.OH * p.OW + 128) : xp_bytes(p);
}

// Compact XP (at xp + 64) of channel blocks [cb0, cb1): pixel (oh, ow)'s 4 channels at
// ((cb * OH + oh) * OW + ow) * 4, flipped as the panels store them.
#if KILN_QCONV_X86
// build_compact_xp's last n < 16 output columns of a row (from ow, stride sw <= 2) with AVX-512
// (BW, VL): masked loads of the bytes read (stride 2: the even bytes, vpmovwb), masked stores.
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) void compact_tail_avx512(const unsigned char* const* s,
                                                                                  int64_t ow, int64_t n, int64_t sw,
                                                                                  uint8_t flip, uint8_t* d) {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  __m128i v[4], o[4];
  for (int t = 0; t < 4; ++t) {
    v[t] = sw == 1 ? _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1), s[t] + ow)
                   : _mm256_cvtepi16_epi8(
                         _mm256_maskz_loadu_epi8(static_cast<__mmask32>((1u << (2 * n - 1)) - 1), s[t] + 2 * ow));
    v[t] = _mm_xor_si128(v[t], f);
  }
  interleave4(v, o);
  store_groups(o, n, d);
}
#endif

// `wide`: AVX-512 (BW, VL) may be used.
void build_compact_xp(const Conv2dParams& p, const unsigned char* x, int64_t n, uint8_t flip, unsigned char* xp,
                      int64_t cb0, int64_t cb1, bool wide) {
  const int64_t sw = p.stride_w;
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const unsigned char* planes = x + (n * p.C + cb * 4) * p.H * p.W;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      uint8_t* d = xp + 64 + (cb * p.OH + oh) * p.OW * 4;
      const unsigned char* s[4];
      for (int t = 0; t < 4; ++t) s[t] = planes + t * p.H * p.W + oh * p.stride_h * p.W;
      int64_t ow = 0;
#if KILN_QCONV_X86
      const __m128i f = _mm_set1_epi8(static_cast<char>(flip)), even = _mm_set1_epi16(0x00FF);
      // 16 outputs at a time while their 16 (stride 1) or 32 (stride 2) bytes lie in the row
      for (; ow + 16 <= p.OW && (sw == 1 || (sw == 2 && 2 * ow + 32 <= p.W)); ow += 16) {
        __m128i v[4];
        for (int t = 0; t < 4; ++t) {
          const auto* at = reinterpret_cast<const __m128i*>(s[t] + sw * ow);
          v[t] = sw == 1 ? _mm_loadu_si128(at)
                         : _mm_packus_epi16(_mm_and_si128(_mm_loadu_si128(at), even),
                                            _mm_and_si128(_mm_loadu_si128(at + 1), even));
          v[t] = _mm_xor_si128(v[t], f);
        }
        __m128i o[4];
        interleave4(v, o);
        for (int q = 0; q < 4; ++q) _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ow * 4 + 16 * q), o[q]);
      }
      if (wide && ow < p.OW && sw <= 2) {
        compact_tail_avx512(s, ow, p.OW - ow, sw, flip, d + ow * 4);
        ow = p.OW;
      }
#else
      (void)wide;
#endif
      for (; ow < p.OW; ++ow)
        for (int t = 0; t < 4; ++t) d[ow * 4 + t] = static_cast<uint8_t>(s[t][ow * sw] ^ flip);
    }
  }
}

// The packed weights: header, the channels' sums, blocks of 16 channels ([kq][16][4]).
int64_t pb_sum_bytes(int64_t M) { return round_up(round_up(M, kPbBlock) * 4, 64); }

size_t pb_weight_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(kHeader + pb_sum_bytes(p.M) + round_up(p.M, kPbBlock) * k_groups(patch_len(p)) * 4);
}

// w: [M][K], K in (kh, kw, c) order.
template <class T>
void pack_pb(int64_t K, int64_t M, const T* w, unsigned char* packed) {
  const int32_t shift = std::is_same_v<T, uint8_t> ? 128 : 0;
  const int64_t kq = k_groups(K), mb = round_up(M, kPbBlock);
  std::memset(packed, 0, static_cast<size_t>(kHeader + pb_sum_bytes(M)));
  const WeightHeader h{K, M, shift};
  std::memcpy(packed, &h, sizeof h);
  int32_t* sums = reinterpret_cast<int32_t*>(packed + kHeader);
  int8_t* blocks = reinterpret_cast<int8_t*>(packed + kHeader + pb_sum_bytes(M));
  for (int64_t m = 0; m < mb; ++m)
    for (int64_t g = 0; g < kq; ++g)
      for (int64_t t = 0; t < 4; ++t) {
        const int64_t k = g * 4 + t;
        const int32_t v = m < M && k < K ? static_cast<int32_t>(w[m * K + k]) - shift : 0;
        blocks[(m / kPbBlock) * kq * 64 + g * 64 + (m % kPbBlock) * 4 + t] = static_cast<int8_t>(v);
        if (m < M) sums[m] += v;
      }
}

// One tile's operands: XP, its geometry, the tile's first weight block and the distance
// between blocks.
struct PbTile {
  const uint8_t* xp;
  const PbGeometry* g;
  const int8_t* w;
  int64_t w_block;
};

// Weight blocks of a tile: 3, or 2 + 2 rather than 3 + 1.
int pb_vecs(int64_t remaining) { return remaining == 4 || remaining == 2 ? 2 : remaining == 1 ? 1 : kPbMaxVecs; }

// c[r * 48 + j] = the int32 sum of pixel r (XP offset pix[r]) and channel j < 16 vecs, plain loops.
void pb_sums_portable(const PbTile& a, const int64_t* pix, int vecs, int32_t* c) {
  const PbGeometry& g = *a.g;
  for (int64_t r = 0; r < kPbPixels; ++r)
    for (int64_t j = 0; j < kPbBlock * vecs; ++j) {
      const int8_t* w = a.w + (j / kPbBlock) * a.w_block + (j % kPbBlock) * 4;
      uint32_t s = 0;
      for (int64_t t = 0; t < g.taps; ++t)
        for (int64_t cb = 0; cb < g.cbs; ++cb, w += 64) {
          const uint8_t* x = a.xp + pix[r] + g.tap_off[t] + cb * g.cb_stride;
          for (int i = 0; i < 4; ++i) s += static_cast<uint32_t>(x[i]) * static_cast<uint32_t>(int32_t{w[i]});
        }
      c[r * kPbBlock * kPbMaxVecs + j] = static_cast<int32_t>(s);
    }
}

#if KILN_QCONV_X86
// pb_sums_portable's sums of rows [0, R) of pix and weight block v with AVX2 alone (no VNNI).
// A k-group's 4 bytes are split into its even and odd bytes as int16 (pixel: and / shift of its
// broadcast; weights, one channel a 32-bit lane: shifts) and vpmaddwd adds x0 w0 + x2 w2 and
// x1 w1 + x3 w3 into int32, exact: vpmaddubsw's int16 pair sums would saturate (255 x -128 twice).
template <int R>
__attribute__((target("avx2"))) void pb_rows_avx2(const PbTile& a, const int64_t* pix, int v, int32_t* c) {
  const PbGeometry& g = *a.g;
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  __m256i acc[R][2];
  _Pragma("GCC unroll 4")
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const int8_t* w = a.w + v * a.w_block;
  for (int64_t t = 0; t < g.taps; ++t) {
    int64_t o = g.tap_off[t];
    for (int64_t cb = 0; cb < g.cbs; ++cb, o += g.cb_stride, w += 64) {
      __m256i we[2], wo[2];
      for (int h = 0; h < 2; ++h) {
        const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * h));
        we[h] = _mm256_srai_epi16(_mm256_slli_epi16(wv, 8), 8);
        wo[h] = _mm256_srai_epi16(wv, 8);
      }
      _Pragma("GCC unroll 4")
      for (int r = 0; r < R; ++r) {
        int32_t quad;
        std::memcpy(&quad, a.xp + pix[r] + o, 4);
        const __m256i b = _mm256_set1_epi32(quad);
        const __m256i xe = _mm256_and_si256(b, low_bytes), xo = _mm256_srli_epi16(b, 8);
        for (int h = 0; h < 2; ++h)
          acc[r][h] = _mm256_add_epi32(
              acc[r][h], _mm256_add_epi32(_mm256_madd_epi16(xe, we[h]), _mm256_madd_epi16(xo, wo[h])));
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kPbBlock * kPbMaxVecs + v * kPbBlock + h * 8),
                          acc[r][h]);
}

// As pb_sums_portable: 16 channels x 4 rows, then x 3 (8 sums, 4 weight and 3 pixel registers).
void pb_sums_avx2(const PbTile& a, const int64_t* pix, int vecs, int32_t* c) {
  static_assert(kPbPixels == 7, "pb_sums_avx2 runs rows 0-3 and 4-6");
  for (int v = 0; v < vecs; ++v) {
    pb_rows_avx2<4>(a, pix, v, c);
    pb_rows_avx2<3>(a, pix + 4, v, c + 4 * kPbBlock * kPbMaxVecs);
  }
}


// The sums of a tile in registers: acc[r][v] = init[v] + sum over k-groups of pixel r's 4 bytes
// (broadcast) times block v's 16 x 4 weights.
template <int V>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"), always_inline)) inline void pb_sums_vnni(
    const PbTile& a, const int64_t* pix, const __m512i* init, __m512i (&acc)[kPbPixels][V]) {
  const PbGeometry& g = *a.g;
  const int64_t taps = g.taps, cbs = g.cbs, cb_stride = g.cb_stride, w_block = a.w_block;
  const uint8_t* x[kPbPixels];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < kPbPixels; ++r) {
    x[r] = a.xp + pix[r];
    _Pragma("GCC unroll 4")
    for (int v = 0; v < V; ++v) acc[r][v] = init[v];
  }
  const int8_t* w = a.w;
  for (int64_t t = 0; t < taps; ++t) {
    int64_t o = g.tap_off[t];
    for (int64_t cb = 0; cb < cbs; ++cb, o += cb_stride, w += 64) {
      __m512i wv[V];
      _Pragma("GCC unroll 4")
      for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_si512(w + v * w_block);
      _Pragma("GCC unroll 8")
      for (int r = 0; r < kPbPixels; ++r) {
        int32_t quad;
        std::memcpy(&quad, x[r] + o, 4);
        const __m512i b = _mm512_set1_epi32(quad);
        _Pragma("GCC unroll 4")
        for (int v = 0; v < V; ++v) acc[r][v] = dpbusd_reg(acc[r][v], b, wv[v]);
      }
    }
  }
}

template <int V>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void pb_tile_vnni(const PbTile& a,
                                                                                       const int64_t* pix,
                                                                                       int32_t* c) {
  __m512i init[V], acc[kPbPixels][V];
  for (int v = 0; v < V; ++v) init[v] = _mm512_setzero_si512();
  pb_sums_vnni<V>(a, pix, init, acc);
  for (int r = 0; r < kPbPixels; ++r)
    for (int v = 0; v < V; ++v) _mm512_storeu_si512(c + r * kPbBlock * kPbMaxVecs + v * kPbBlock, acc[r][v]);
}

// vpermt2b indices turning 8 rows of 16 channel bytes (rows 0-3 in the first table, 4-7 in
// the second) into channels: byte 8 m + r of `lo` is row r's channel m, of `hi` channel m + 8.
struct PbTranspose {
  alignas(64) uint8_t lo[64];
  alignas(64) uint8_t hi[64];
};
constexpr PbTranspose pb_transpose() {
  PbTranspose t{};
  for (int i = 0; i < 64; ++i) {
    const int m = i / 8, r = i % 8;
    t.lo[i] = static_cast<uint8_t>(r < 4 ? r * 16 + m : 64 + (r - 4) * 16 + m);
    t.hi[i] = static_cast<uint8_t>(t.lo[i] + 8);
  }
  return t;
}
constexpr PbTranspose kPbTranspose = pb_transpose();

// The tile requantized (a plain 8-bit output): the sums start at add[j], channel j's n_pix
// bytes go to y + j * plane (j < n_ch).
template <int V, bool Signed>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni,avx512vbmi"))) void pb_tile_requant(
    const PbTile& a, const int64_t* pix, const int32_t* add, const float* scale, int32_t zero_point,
    unsigned char* y, int64_t plane, int64_t n_pix, int64_t n_ch) {
  __m512i init[V], acc[kPbPixels][V];
  for (int v = 0; v < V; ++v) init[v] = _mm512_loadu_si512(add + v * kPbBlock);
  pb_sums_vnni<V>(a, pix, init, acc);
  const Requant16 q = requant16<Signed>(zero_point);
  const __m512i lo_index = _mm512_load_si512(kPbTranspose.lo), hi_index = _mm512_load_si512(kPbTranspose.hi);
  const auto pix_mask = static_cast<__mmask64>((uint64_t{1} << n_pix) - 1);
  _Pragma("GCC unroll 4")
  for (int v = 0; v < V; ++v) {
    const __m512 sc = _mm512_loadu_ps(scale + v * kPbBlock);
    __m128i b[8];
    _Pragma("GCC unroll 8")
    for (int r = 0; r < kPbPixels; ++r) b[r] = requantized(q, acc[r][v], sc);
    b[7] = _mm_setzero_si128();
    const __m512i z0 = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_inserti128_si256(_mm256_castsi128_si256(b[0]), b[1], 1)),
        _mm256_inserti128_si256(_mm256_castsi128_si256(b[2]), b[3], 1), 1);
    const __m512i z1 = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_inserti128_si256(_mm256_castsi128_si256(b[4]), b[5], 1)),
        _mm256_inserti128_si256(_mm256_castsi128_si256(b[6]), b[7], 1), 1);
    const __m512i half[2] = {_mm512_permutex2var_epi8(z0, lo_index, z1), _mm512_permutex2var_epi8(z0, hi_index, z1)};
    const int64_t nc = std::min<int64_t>(kPbBlock, n_ch - v * kPbBlock);
    for (int64_t m = 0; m < nc; ++m) {
      // channel m's bytes are lane m % 8 of its half: stored through an address 8 (m % 8)
      // bytes before its plane's (formed as an integer; the bytes masked off are not touched)
      const int64_t lane = m % 8;
      const auto at = reinterpret_cast<uintptr_t>(y + (v * kPbBlock + m) * plane) - static_cast<uintptr_t>(8 * lane);
      _mm512_mask_storeu_epi8(reinterpret_cast<void*>(at), pix_mask << (8 * lane), half[m / 8]);
    }
  }
}

using PbRequantFn = void (*)(const PbTile&, const int64_t*, const int32_t*, const float*, int32_t, unsigned char*,
                             int64_t, int64_t, int64_t);
template <bool Signed>
PbRequantFn pb_requant_kernel(int vecs) {
  return vecs == 1 ? pb_tile_requant<1, Signed> : vecs == 2 ? pb_tile_requant<2, Signed> : pb_tile_requant<3, Signed>;
}
#endif

void pb_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const int32_t* w_zero_point,
             int64_t w_zero_point_count, const QGemmOutput& out, unsigned char* scratch, ThreadPool* pool,
             QGemmIsa isa) {
  const int64_t K = patch_len(p), M = p.M, plane = p.OH * p.OW, kq = k_groups(K), mb = round_up(M, kPbBlock);
  const size_t elem = out.type == KILN_I32 || out.type == KILN_F32 ? 4 : 1;
  const uint8_t flip = x.a_signed ? 0x80 : 0;
  WeightHeader h;
  std::memcpy(&h, packed_w, sizeof h);
  const auto* blocks = reinterpret_cast<const int8_t*>(packed_w + kHeader + pb_sum_bytes(M));
  uint8_t* xp = scratch;
  auto* add = reinterpret_cast<int32_t*>(scratch + round_up(static_cast<int64_t>(pb_xp_bytes(p)), 64));
  auto* scale = reinterpret_cast<float*>(add + mb);
  int32_t* col_sums = reinterpret_cast<int32_t*>(scale + mb);
  GroupProblem q{K, M, plane, nullptr, reinterpret_cast<const int32_t*>(packed_w + kHeader), nullptr, nullptr,
                 static_cast<uint32_t>(x.zero_point) + (x.a_signed ? 128u : 0u), w_zero_point, w_zero_point_count,
                 static_cast<uint32_t>(h.shift), 0, out, nullptr, nullptr, nullptr, nullptr};
  q.out.row_stride = 1;
  q.out.col_stride = plane;
  bool col = false;  // some weight zero point is not 0: the pixels' sums are needed
  for (int64_t m = 0; m < M && !col; ++m) col = w_zero_of(q, m) != 0;
  const bool vnni = (isa == QGemmIsa::automatic || isa == QGemmIsa::avx512_vnni) &&
                    qgemm_isa_supported(QGemmIsa::avx512_vnni);
  const bool avx2 = !vnni && isa != QGemmIsa::portable && qgemm_isa_supported(QGemmIsa::avx2);
#if KILN_QCONV_X86
  const bool fused = vnni && !col && qgemm_plain_8bit_output(out) && depthwise_vbmi_supported();
#else
  const bool fused = false;
  (void)vnni;
  (void)avx2;
#endif
  if (fused)
    for (int64_t m = 0; m < mb; ++m) {
      const uint32_t bias = m < M && out.bias ? static_cast<uint32_t>(out.bias[out.bias_count > 1 ? m : 0]) : 0u;
      add[m] = m < M ? static_cast<int32_t>(fixed_terms(q, m) + bias) : 0;
      scale[m] = m < M ? (out.scale ? out.scale[out.scale_count > 1 ? m : 0] : 1.0f) : 0.0f;
    }
  const PbGeometry g = pb_geometry(p);
  const auto* xs = static_cast<const unsigned char*>(x.data);
  const auto pad = static_cast<unsigned char>(x.zero_point);
  const bool compact = pb_compact(p);
  const int64_t n_pt = (plane + kPbPixels - 1) / kPbPixels, n_b = mb / kPbBlock;
  for (int64_t n = 0; n < p.N; ++n) {
    unsigned char* y = static_cast<unsigned char*>(out.y) + static_cast<size_t>(n * M * plane) * elem;
    q.out.y = y;
    parallel_for_balanced(pool, p.C / 4, [&](int64_t c0, int64_t c1) {
      if (compact)
        build_compact_xp(p, xs, n, flip, xp, c0, c1, vnni);
      else
        build_xp(p, xs, n, pad, flip, xp, c0, c1, vnni);
    });
    if (col)
      for (int64_t j = 0; j < plane; ++j) {
        const int64_t base = 64 + j / p.OW * g.row_step + j % p.OW * g.col_step;
        uint32_t s = 0;
        for (int64_t t = 0; t < g.taps; ++t)
          for (int64_t cb = 0; cb < g.cbs; ++cb)
            for (int i = 0; i < 4; ++i) s += xp[base + g.tap_off[t] + cb * g.cb_stride + i];
        col_sums[j] = static_cast<int32_t>(s);
      }
    // Tiles of pixel tiles [pt0, pt1) x weight blocks [b0, b1), blocks outermost (their weights
    // stay in L2 while the pixel tiles pass).
    auto run = [&](int64_t pt0, int64_t pt1, int64_t b0, int64_t b1) {
      alignas(64) int32_t c[kPbPixels * kPbBlock * kPbMaxVecs];
      for (int64_t b = b0; b < b1;) {
        const int vecs = pb_vecs(b1 - b);
        const PbTile tile{xp, &g, blocks + b * kq * 64, kq * 64};
        const int64_t m0 = b * kPbBlock, n_ch = std::min<int64_t>(kPbBlock * vecs, M - m0);
        for (int64_t pt = pt0; pt < pt1; ++pt) {
          const int64_t j0 = pt * kPbPixels, n_pix = std::min(kPbPixels, plane - j0);
          int64_t pix[kPbPixels];  // rows past the plane repeat its last pixel
          for (int64_t r = 0; r < kPbPixels; ++r) {
            const int64_t j = j0 + std::min(r, n_pix - 1);
            pix[r] = 64 + j / p.OW * g.row_step + j % p.OW * g.col_step;
          }
#if KILN_QCONV_X86
          if (fused) {
            (out.type == KILN_U8 ? pb_requant_kernel<false>(vecs) : pb_requant_kernel<true>(vecs))(
                tile, pix, add + m0, scale + m0, out.y_zero_point, y + m0 * plane + j0, plane, n_pix, n_ch);
            continue;
          }
          if (vnni)
            (vecs == 1 ? pb_tile_vnni<1> : vecs == 2 ? pb_tile_vnni<2> : pb_tile_vnni<3>)(tile, pix, c);
          else if (avx2)
            pb_sums_avx2(tile, pix, vecs, c);
          else
            pb_sums_portable(tile, pix, vecs, c);
#else
          pb_sums_portable(tile, pix, vecs, c);
#endif
          int32_t t[kPbPixels];
          for (int64_t m = 0; m < n_ch; ++m) {
            const uint32_t zw = w_zero_of(q, m0 + m), fixed = fixed_terms(q, m0 + m);
            for (int64_t r = 0; r < n_pix; ++r)
              t[r] = static_cast<int32_t>(static_cast<uint32_t>(c[r * kPbBlock * kPbMaxVecs + m]) + fixed -
                                          (col ? zw * static_cast<uint32_t>(col_sums[j0 + r]) : 0u));
            qgemm_finish_column(q.out, t, j0, n_pix, m0 + m);
          }
        }
        b += vecs;
      }
    };
    // On threads: each its pixel tiles (reading all the weights and its part of XP) or each its
    // weight blocks (reading its part of the weights and all of XP), whichever reads less, unless
    // the blocks would leave short tiles (fewer than 6 a thread: layer2's 8, 2 + 2 a thread) or
    // the pixel tiles are too few to share (7 x 7: 7 of them). Layer3's 3x3 (590 KB of weights,
    // 65 KB of XP) by weight blocks, 2 threads: 366-394 -> 333 us (the cores far apart).
    const int threads = pool ? pool->size() : 1;
    const bool by_pixels = n_pt >= 4 * threads && (mb * kq * 4 <= static_cast<int64_t>(pb_xp_bytes(p)) ||
                                                   n_b < 6 * threads);
    if (threads == 1)
      run(0, n_pt, 0, n_b);
    else if (by_pixels)  // (balanced: a slow thread's share does not hold up the loop)
      parallel_for_balanced(pool, n_pt, [&](int64_t a, int64_t b) { run(a, b, 0, n_b); });
    else
      parallel_for_balanced(pool, n_b, [&](int64_t a, int64_t b) { run(0, n_pt, a, b); });
  }
}

template <class T>
void pack(const Conv2dParams& p, const T* w, unsigned char* packed) {
  if (depthwise(p)) {
    const int32_t shift = std::is_same_v<T, uint8_t> ? 128 : 0;
    std::memset(packed, 0, 64);
    std::memcpy(packed, &shift, sizeof shift);
    for (int64_t i = 0; i < p.M * p.KH * p.KW; ++i)
      packed[64 + i] = static_cast<unsigned char>(static_cast<int32_t>(w[i]) - shift);
    return;
  }
  const int64_t K = patch_len(p), mg = p.M / p.group;
  if (pixel_broadcast(p) || interleaved(p)) {  // K in (kh, kw, c) order
    const int64_t taps = p.KH * p.KW;
    std::vector<T> t(static_cast<size_t>(p.M * K));
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t c = 0; c < p.C; ++c)
        for (int64_t k = 0; k < taps; ++k) t[(m * taps + k) * p.C + c] = w[(m * p.C + c) * taps + k];
    return pixel_broadcast(p) ? pack_pb(K, p.M, t.data(), packed) : pack_group(K, p.M, t.data(), packed);
  }
  for (int64_t g = 0; g < p.group; ++g) pack_group(K, mg, w + g * mg * K, packed + static_cast<size_t>(g) * group_bytes(p));
}

}  // namespace

size_t qconv2d_packed_weight_bytes(const Conv2dParams& p) noexcept {
  if (depthwise(p)) return static_cast<size_t>(64 + p.M * p.KH * p.KW);
  if (pixel_broadcast(p)) return pb_weight_bytes(p);
  return static_cast<size_t>(p.group) * group_bytes(p);
}

void qconv2d_pack_weights(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept {
  pack(p, w, packed);
}

void qconv2d_pack_weights(const Conv2dParams& p, const uint8_t* w, unsigned char* packed) noexcept {
  pack(p, w, packed);
}

size_t qconv2d_scratch_bytes(const Conv2dParams& p) noexcept {
  if (depthwise(p)) return 0;
  if (pixel_broadcast(p))  // XP, the channels' terms and scales, the pixels' sums
    return static_cast<size_t>(round_up(static_cast<int64_t>(pb_xp_bytes(p)), 64) + round_up(p.M, kPbBlock) * 8 +
                               round_up(p.OH * p.OW, 16) * 4);
  const size_t cols = direct_1x1(p)     ? 0
                      : interleaved(p) ? xp_bytes(p)
                                       : static_cast<size_t>(patch_len(p) * p.OH * p.OW);
  return packed_x_bytes(p) + col_sum_bytes(p) + channel_terms_bytes(p) + cols;
}

void qconv2d(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const int32_t* w_zero_point,
             int64_t w_zero_point_count, const QGemmOutput& out, unsigned char* scratch, ThreadPool* pool,
             QGemmIsa isa) noexcept {
  if (depthwise(p)) return depthwise_conv(p, x, packed_w, w_zero_point, w_zero_point_count, out, pool, isa);
  if (pixel_broadcast(p)) return pb_conv(p, x, packed_w, w_zero_point, w_zero_point_count, out, scratch, pool, isa);
  gemm_conv(p, x, packed_w, w_zero_point, w_zero_point_count, out, scratch, pool, isa);
}

}  // namespace kiln::rt
