// Quantized convolutions in NHWC (qconv_nhwc.h): the 1x1 kernel and the dispatch; the
// depthwise kernel is in qdepthwise_nhwc.cpp.
//
// 1x1: y[j, m] = sum_c x[j, c] w[m, c] for output pixel j. A pixel's channels lie together, so
// 4 of them are one 32-bit broadcast (the u8 operand of vpdpbusd) read straight from x, with
// nothing packed per run, and the weights are packed at compile time in blocks of 16 output
// channels ([block][C / 4][16][4], the s8 operand). A tile is 7 pixels times up to 3 blocks
// (21 sums in registers); its sums are requantized in registers and each pixel's 16 bytes a
// block are one store, at the pixel's row of y.
#include "kiln/rt/qconv_nhwc.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include <cstdint>
#include <cstring>

#include "kiln/rt/dpbusd.h"
#include "kiln/rt/qdepthwise_nhwc.h"
#include "kiln/rt/qlinear.h"
#include "kiln/rt/requant_avx512.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define KILN_QCONV_NHWC_X86 1
#else
#define KILN_QCONV_NHWC_X86 0
#endif

namespace kiln::rt {
namespace {

constexpr int64_t kPixels = 7;   // pixels a tile
constexpr int64_t kBlock = 16;   // output channels a weight block (one vector)
constexpr int kMaxVecs = 3;      // weight blocks a tile
constexpr int64_t kHeader = 64;  // the packed 1x1 weights' header: K and M, for checks

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

bool depthwise(const Conv2dParams& p) { return p.group == p.C && p.M == p.C && p.group > 1; }

bool pointwise(const Conv2dParams& p) {
  return p.group == 1 && p.KH == 1 && p.KW == 1 && p.C % 4 == 0 && p.pad_top == 0 && p.pad_left == 0 &&
         (p.OH - 1) * p.stride_h < p.H && (p.OW - 1) * p.stride_w < p.W;
}

// The packed 1x1 weights: header, each channel's sum of weights (for the input's zero point),
// then the blocks.
int64_t sums_bytes(int64_t M) { return round_up(round_up(M, kBlock) * 4, 64); }

size_t pointwise_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(kHeader + sums_bytes(p.M) + round_up(p.M, kBlock) * p.C);
}

void pack_pointwise(const Conv2dParams& p, const int8_t* w, unsigned char* packed) {
  const int64_t K = p.C, M = p.M, kq = K / 4;
  std::memset(packed, 0, pointwise_bytes(p));
  const int64_t header[2] = {K, M};
  std::memcpy(packed, header, sizeof header);
  auto* sums = reinterpret_cast<int32_t*>(packed + kHeader);
  auto* blocks = reinterpret_cast<int8_t*>(packed + kHeader + sums_bytes(M));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      blocks[(m / kBlock) * kq * 64 + (k / 4) * 64 + (m % kBlock) * 4 + k % 4] = w[m * K + k];
      sums[m] += w[m * K + k];
    }
}

// Per output channel (rounded up to the blocks): the sums' constant term bias - zx sum w
// (wrapping, as the reference's uint32 sums) and the requantization's scale.
struct ChannelTerms {
  int32_t* add;
  float* scale;
};

ChannelTerms channel_terms(const Conv2dParams& p, const QGemmOutput& out, const int32_t* sums, uint32_t zx,
                           void* buffer) {
  const int64_t mb = round_up(p.M, kBlock);
  ChannelTerms t{static_cast<int32_t*>(buffer), reinterpret_cast<float*>(static_cast<int32_t*>(buffer) + mb)};
  for (int64_t m = 0; m < mb; ++m) {
    const bool real = m < p.M;
    const uint32_t bias = real && out.bias ? static_cast<uint32_t>(out.bias[out.bias_count > 1 ? m : 0]) : 0u;
    t.add[m] = real ? static_cast<int32_t>(bias - zx * static_cast<uint32_t>(sums[m])) : 0;
    t.scale[m] = real && out.scale ? out.scale[out.scale_count > 1 ? m : 0] : 1.0f;
  }
  return t;
}

// Where output pixel j's input channels start in x (bytes).
int64_t input_offset(const Conv2dParams& p, int64_t j) {
  const int64_t plane = p.OH * p.OW, n = j / plane, oh = j % plane / p.OW, ow = j % p.OW;
  return ((n * p.H + oh * p.stride_h) * p.W + ow * p.stride_w) * p.C;
}

// The input offsets of a tile's pixels j..j + n_pix - 1, then the last one repeated: one
// division for the tile (a division per pixel took as long as the multiplies of a 16-channel 1x1).
void tile_offsets(const Conv2dParams& p, int64_t j, int64_t n_pix, int64_t* off) {
  if (p.stride_h == 1 && p.stride_w == 1 && p.OH == p.H && p.OW == p.W) {
    for (int64_t r = 0; r < kPixels; ++r) off[r] = (j + std::min(r, n_pix - 1)) * p.C;
    return;
  }
  int64_t ow = j % p.OW, o = input_offset(p, j);
  for (int64_t r = 0; r < kPixels; ++r) {
    off[r] = o;
    if (r + 1 >= n_pix) continue;
    if (++ow < p.OW) {
      o += p.stride_w * p.C;
    } else {
      ow = 0;
      o = input_offset(p, j + r + 1);
    }
  }
}

// Output pixels [j0, j1) with plain loops.
template <class Y>
void pointwise_portable(const Conv2dParams& p, const unsigned char* x, uint8_t flip, const int8_t* blocks,
                        const ChannelTerms& t, int32_t y_zero_point, Y* y, int64_t j0, int64_t j1) {
  const int64_t kq = p.C / 4;
  for (int64_t j = j0; j < j1; ++j) {
    const unsigned char* xj = x + input_offset(p, j);
    for (int64_t m = 0; m < p.M; ++m) {
      const int8_t* w = blocks + (m / kBlock) * kq * 64 + (m % kBlock) * 4;
      uint32_t s = static_cast<uint32_t>(t.add[m]);
      for (int64_t k = 0; k < p.C; ++k)
        s += static_cast<uint32_t>(xj[k] ^ flip) * static_cast<uint32_t>(int32_t{w[(k / 4) * 64 + k % 4]});
      y[j * p.M + m] = requantize_f32<Y>(static_cast<int32_t>(s), t.scale[m], y_zero_point);
    }
  }
}

#if KILN_QCONV_NHWC_X86
bool vnni_supported() {
  static const bool ok = qgemm_isa_supported(QGemmIsa::avx512_vnni) && __builtin_cpu_supports("avx512vbmi");
  return ok;
}


// One tile: pixels at x + off[r] (r < 7; rows past the range repeat its last pixel), V blocks
// from w (w_block bytes apart), requantized to y + j * M for the first n_pix pixels, n_ch <=
// 16 V channels.
template <int V, bool Signed>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void tile(
    const unsigned char* x, const int64_t* off, int64_t kq, uint32_t flip, const int8_t* w, int64_t w_block,
    const int32_t* add, const float* scale, int32_t y_zero_point, unsigned char* y, int64_t M, int64_t n_pix,
    int64_t n_ch) {
  __m512i acc[kPixels][V];
  const unsigned char* xr[kPixels];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < kPixels; ++r) {
    xr[r] = x + off[r];
    _Pragma("GCC unroll 4")
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_loadu_si512(add + v * kBlock);
  }
  const __m512i flips = _mm512_set1_epi32(static_cast<int32_t>(flip));
  for (int64_t g = 0; g < kq; ++g, w += 64) {
    __m512i wv[V];
    _Pragma("GCC unroll 4")
    for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_si512(w + v * w_block);
    _Pragma("GCC unroll 8")
    for (int r = 0; r < kPixels; ++r) {
      int32_t quad;
      std::memcpy(&quad, xr[r] + g * 4, 4);
      __m512i b = _mm512_set1_epi32(quad);
      if (flip) b = _mm512_xor_si512(b, flips);
      _Pragma("GCC unroll 4")
      for (int v = 0; v < V; ++v) acc[r][v] = dpbusd_reg(acc[r][v], b, wv[v]);
    }
  }
  const Requant16 q = requant16<Signed>(y_zero_point);
  _Pragma("GCC unroll 4")
  for (int v = 0; v < V; ++v) {
    const __m512 sc = _mm512_loadu_ps(scale + v * kBlock);
    const int64_t nc = std::min<int64_t>(kBlock, n_ch - v * kBlock);
    if (nc <= 0) break;
    const auto mask = static_cast<__mmask16>(nc >= 16 ? 0xFFFF : (1u << nc) - 1);
    for (int64_t r = 0; r < n_pix; ++r) store_requantized(q, acc[r][v], sc, mask, y + r * M + v * kBlock);
  }
}

using TileFn = void (*)(const unsigned char*, const int64_t*, int64_t, uint32_t, const int8_t*, int64_t,
                        const int32_t*, const float*, int32_t, unsigned char*, int64_t, int64_t, int64_t);

template <bool Signed>
TileFn tile_kernel(int vecs) {
  return vecs == 1 ? tile<1, Signed> : vecs == 2 ? tile<2, Signed> : tile<3, Signed>;
}
#endif

// Weight blocks of a tile: 3, or 2 + 2 rather than 3 + 1.
int tile_vecs(int64_t remaining) { return remaining == 4 || remaining == 2 ? 2 : remaining == 1 ? 1 : kMaxVecs; }

void pointwise_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                    ThreadPool* pool, QGemmIsa isa) {
  const int64_t M = p.M, kq = p.C / 4, mb = round_up(M, kBlock), n_b = mb / kBlock;
  const auto* sums = reinterpret_cast<const int32_t*>(packed + kHeader);
  const auto* blocks = reinterpret_cast<const int8_t*>(packed + kHeader + sums_bytes(M));
  const uint8_t flip = x.a_signed ? 0x80 : 0;
  const uint32_t zx = static_cast<uint32_t>(x.zero_point) + (x.a_signed ? 128u : 0u);
  // The channel terms are the caller's; every thread reads them (a few KB).
  static thread_local std::vector<int32_t> fallback;
  void* buffer = thread_buffer(ThreadBuffer::qgemm_panels, static_cast<size_t>(mb) * 8);
  if (buffer == nullptr) {
    fallback.assign(static_cast<size_t>(mb) * 2, 0);
    buffer = fallback.data();
  }
  const ChannelTerms t = channel_terms(p, out, sums, zx, buffer);
  const auto* xs = static_cast<const unsigned char*>(x.data);
  auto* y = static_cast<unsigned char*>(out.y);
  const bool is_signed = out.type == KILN_I8;
#if KILN_QCONV_NHWC_X86
  const bool vnni = (isa == QGemmIsa::automatic || isa == QGemmIsa::avx512_vnni) && vnni_supported();
#else
  const bool vnni = false;
  (void)isa;
#endif
  // Output rows [r0, r1) of all images: their pixels, weight blocks outermost (a tile's
  // weights stay in L1/L2 while the thread's pixels pass).
  auto run = [&](int64_t r0, int64_t r1) {
    const int64_t j0 = r0 * p.OW, j1 = r1 * p.OW;
    if (!vnni) {
      if (is_signed)
        pointwise_portable(p, xs, flip, blocks, t, out.y_zero_point, reinterpret_cast<int8_t*>(y), j0, j1);
      else
        pointwise_portable(p, xs, flip, blocks, t, out.y_zero_point, y, j0, j1);
      return;
    }
#if KILN_QCONV_NHWC_X86
    for (int64_t b = 0; b < n_b;) {
      const int vecs = tile_vecs(n_b - b);
      const TileFn fn = is_signed ? tile_kernel<true>(vecs) : tile_kernel<false>(vecs);
      const int64_t m0 = b * kBlock, n_ch = std::min<int64_t>(kBlock * vecs, M - m0);
      for (int64_t j = j0; j < j1; j += kPixels) {
        const int64_t n_pix = std::min(kPixels, j1 - j);
        int64_t off[kPixels];
        tile_offsets(p, j, n_pix, off);
        fn(xs, off, kq, flip ? 0x80808080u : 0u, blocks + b * kq * 64, kq * 64, t.add + m0, t.scale + m0,
           out.y_zero_point, y + j * M + m0, M, n_pix, n_ch);
      }
      b += vecs;
    }
#endif
  };
  parallel_for(pool, p.N * p.OH, run);
}

// transpose_planes_8bit's unit: 16 x 16 bytes transposed in SSE2 registers (x86-64's baseline):
// four rounds of unpacks, from byte pairs to 8-byte halves. Scalar at the edges and elsewhere.
constexpr int64_t kTransposeTile = 16;

#if KILN_QCONV_NHWC_X86
void transpose16(const unsigned char* s, int64_t ls, unsigned char* d, int64_t ld) {
  __m128i r[16], a[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * ls));
  for (int k = 0; k < 8; ++k) {  // a[2k], a[2k + 1]: rows 2k, 2k + 1 as byte pairs, columns 0-7, 8-15
    a[2 * k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    a[2 * k + 1] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
  }
  for (int m = 0; m < 4; ++m) {  // r[4m + q]: rows 4m..4m+3 as 4-byte groups, columns 4q..4q+3
    r[4 * m] = _mm_unpacklo_epi16(a[4 * m], a[4 * m + 2]);
    r[4 * m + 1] = _mm_unpackhi_epi16(a[4 * m], a[4 * m + 2]);
    r[4 * m + 2] = _mm_unpacklo_epi16(a[4 * m + 1], a[4 * m + 3]);
    r[4 * m + 3] = _mm_unpackhi_epi16(a[4 * m + 1], a[4 * m + 3]);
  }
  for (int p = 0; p < 2; ++p)  // a[8p + 2q + h]: rows 8p..8p+7, columns 4q + 2h, 4q + 2h + 1
    for (int q = 0; q < 4; ++q) {
      a[8 * p + 2 * q] = _mm_unpacklo_epi32(r[8 * p + q], r[8 * p + 4 + q]);
      a[8 * p + 2 * q + 1] = _mm_unpackhi_epi32(r[8 * p + q], r[8 * p + 4 + q]);
    }
  for (int c = 0; c < 8; ++c) {  // columns 2c, 2c + 1: all 16 rows
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * c) * ld), _mm_unpacklo_epi64(a[c], a[8 + c]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * c + 1) * ld), _mm_unpackhi_epi64(a[c], a[8 + c]));
  }
}
#endif

// Columns [c0, c1) of one image's [rows][cols] into [cols][rows].
void transpose_tile(const unsigned char* s, unsigned char* d, int64_t rows, int64_t cols, int64_t c0, int64_t c1) {
  int64_t r0 = 0;
#if KILN_QCONV_NHWC_X86
  if (c1 - c0 == kTransposeTile)
    for (; r0 + kTransposeTile <= rows; r0 += kTransposeTile) transpose16(s + r0 * cols + c0, cols, d + c0 * rows + r0, rows);
#endif
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t r = r0; r < rows; ++r) d[c * rows + r] = s[r * cols + c];
}

}  // namespace

bool qconv2d_nhwc_supported(const Conv2dParams& p) noexcept {
  if (p.N < 1 || p.OH < 1 || p.OW < 1 || p.stride_h < 1 || p.stride_w < 1) return false;
  return pointwise(p) || (depthwise(p) && p.dil_h >= 1 && p.dil_w >= 1);
}

size_t qconv2d_nhwc_packed_weight_bytes(const Conv2dParams& p) noexcept {
  return depthwise(p) ? nhwc::depthwise_packed_bytes(p) : pointwise_bytes(p);
}

void qconv2d_nhwc_pack_weights(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept {
  if (depthwise(p))
    nhwc::depthwise_pack(p, w, packed);
  else
    pack_pointwise(p, w, packed);
}

void qconv2d_nhwc_pack_weights(const Conv2dParams& p, const uint8_t* w, unsigned char* packed) noexcept {
  const int64_t n = p.M * (p.C / p.group) * p.KH * p.KW;
  std::vector<int8_t> shifted(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) shifted[static_cast<size_t>(i)] = static_cast<int8_t>(int32_t{w[i]} - 128);
  qconv2d_nhwc_pack_weights(p, shifted.data(), packed);
}

void transpose_planes_8bit(int64_t N, int64_t rows, int64_t cols, const void* x, void* y, ThreadPool* pool) noexcept {
  const auto* src = static_cast<const unsigned char*>(x);
  auto* dst = static_cast<unsigned char*>(y);
  const int64_t tiles = (cols + kTransposeTile - 1) / kTransposeTile;
  parallel_for(pool, N * tiles, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / tiles, c0 = t % tiles * kTransposeTile;
      const int64_t c1 = std::min(cols, c0 + kTransposeTile);
      transpose_tile(src + n * rows * cols, dst + n * rows * cols, rows, cols, c0, c1);
    }
  });
}

void qconv2d_nhwc(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const QGemmOutput& out,
                  ThreadPool* pool, QGemmIsa isa) noexcept {
  if (depthwise(p)) return nhwc::depthwise_conv(p, x, packed_w, out, pool, isa);
  pointwise_conv(p, x, packed_w, out, pool, isa);
}

}  // namespace kiln::rt
