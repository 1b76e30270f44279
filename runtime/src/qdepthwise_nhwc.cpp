// Depthwise int8 convolution in channels-last layout (qdepthwise_nhwc.h, for qconv2d_nhwc).
//
// A pixel's channels lie contiguously, so one 512-bit load takes one tap's input for 64
// channels. vpdpbusd wants 4 bytes of one channel in each 32-bit lane: the loads of 4 taps are
// interleaved (bytes of taps 0/1 and 2/3 into 16-bit pairs, then the pairs into quads), giving
// 16 channels a vector in natural order against weights packed the same way. A tap outside the
// image reads a row of x's zero point, so that every tap adds (x - zx) w with x' = zx there and
// the zero point leaves a per-channel constant, bias - zx sum w, instead of a per-pixel one.
#include "kiln/rt/qdepthwise_nhwc.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kiln/rt/qlinear.h"
#include "kiln/rt/requant_avx2.h"
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

namespace kiln::rt::nhwc {
namespace {

// ---- the packed weights ----------------------------------------------------------------------
//
// [header: 64 bytes] [sums: c_pad int32, sum over taps of w[c]] [groups: ceil(taps / 4) blocks
// of c_pad x 4 s8, channel c's taps 4g..4g+3 at bytes 4c..4c+3 of block g, 0 past the last tap]
// with c_pad = C rounded up to 64 (zero weights above C): a 64-channel block of a group is one
// cache line per vector, 4 vectors.

constexpr int64_t kHeader = 64;
constexpr int64_t kBlock = 64;  // channels a block of the fast kernel (4 vectors of 16)

struct PackedHeader {
  int64_t C, taps, c_pad;
};

int64_t padded_channels(const Conv2dParams& p) { return (p.C + kBlock - 1) / kBlock * kBlock; }
int64_t tap_count(const Conv2dParams& p) { return p.KH * p.KW; }
int64_t tap_groups(const Conv2dParams& p) { return (tap_count(p) + 3) / 4; }

const int32_t* weight_sums(const unsigned char* packed) {
  return reinterpret_cast<const int32_t*>(packed + kHeader);
}
const int8_t* weight_groups(const Conv2dParams& p, const unsigned char* packed) {
  return reinterpret_cast<const int8_t*>(packed + kHeader + padded_channels(p) * 4);
}

// ---- portable loops ----------------------------------------------------------------------------

int32_t bias_of(const QGemmOutput& out, int64_t c) { return out.bias ? out.bias[out.bias_count > 1 ? c : 0] : 0; }
float scale_of(const QGemmOutput& out, int64_t c) { return out.scale ? out.scale[out.scale_count > 1 ? c : 0] : 1.0f; }

// Output rows [r0, r1) of the N * OH, in uint32 sums (wrapping as the reference's int32).
template <class X, class Y>
void portable_rows(const Conv2dParams& p, const X* x, int32_t zx, const unsigned char* packed, const QGemmOutput& out,
                   int64_t r0, int64_t r1) {
  const int8_t* groups = weight_groups(p, packed);
  const int64_t c_pad = padded_channels(p), C = p.C;
  Y* y = static_cast<Y*>(out.y);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / p.OH, oh = r % p.OH;
    for (int64_t ow = 0; ow < p.OW; ++ow) {
      Y* yp = y + (r * p.OW + ow) * C;
      for (int64_t c = 0; c < C; ++c) {
        uint32_t acc = static_cast<uint32_t>(bias_of(out, c));
        for (int64_t kh = 0; kh < p.KH; ++kh) {
          const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
          if (ih < 0 || ih >= p.H) continue;
          for (int64_t kw = 0; kw < p.KW; ++kw) {
            const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
            if (iw < 0 || iw >= p.W) continue;
            const int64_t k = kh * p.KW + kw;
            const int32_t xv = static_cast<int32_t>(x[((n * p.H + ih) * p.W + iw) * C + c]) - zx;
            const int32_t wv = groups[(k / 4) * c_pad * 4 + c * 4 + k % 4];
            acc += static_cast<uint32_t>(xv) * static_cast<uint32_t>(wv);
          }
        }
        yp[c] = requantize_f32<Y>(static_cast<int32_t>(acc), scale_of(out, c), out.y_zero_point);
      }
    }
  }
}

// Per channel (count of them, c_pad for the kernels' blocks): add = bias - zx sum w, the sums' constant once the taps read x
// as stored (u8, or s8 with its sign bit flipped; the padding reads zx), and the scale; 0 and 1
// past C.
void channel_constants_n(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                         int64_t count, int32_t* add, float* scale) {
  const int32_t* sums = weight_sums(packed);
  const uint32_t zx = static_cast<uint32_t>(x.zero_point + (x.a_signed ? 128 : 0));  // as u8
  for (int64_t c = 0; c < count; ++c) {
    const uint32_t t = c < p.C ? static_cast<uint32_t>(bias_of(out, c)) - zx * static_cast<uint32_t>(sums[c]) : 0;
    add[c] = static_cast<int32_t>(t);  // wrapping, as the reference's sum
    scale[c] = c < p.C ? scale_of(out, c) : 1.0f;
  }
}
void channel_constants(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                       int32_t* add, float* scale) {
  channel_constants_n(p, x, packed, out, padded_channels(p), add, scale);
}

void portable(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
              int64_t r0, int64_t r1) {
  const bool y_signed = out.type == KILN_I8;
  if (x.a_signed && y_signed)
    portable_rows<int8_t, int8_t>(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, out, r0, r1);
  else if (x.a_signed)
    portable_rows<int8_t, uint8_t>(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, out, r0, r1);
  else if (y_signed)
    portable_rows<uint8_t, int8_t>(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, out, r0, r1);
  else
    portable_rows<uint8_t, uint8_t>(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, out, r0, r1);
}

// The layers the AVX2 3x3 kernel below runs (rolling), and the weights packed for it: on every
// host, so that packed weights do not depend on the compiling machine.
bool rolling3x3(const Conv2dParams& p) {
  return p.KH == 3 && p.KW == 3 && p.dil_h == 1 && p.dil_w == 1 && (p.stride_w == 1 || p.stride_w == 2) &&
         p.C % 8 == 0;
}

constexpr int64_t kTerms3x3 = 5;
constexpr int64_t kTaps3x3 = 9;

int64_t pairs3x3_offset(const Conv2dParams& p) { return kHeader + padded_channels(p) * 4 * (1 + tap_groups(p)); }
int64_t pairs3x3_bytes(const Conv2dParams& p) { return rolling3x3(p) ? p.C * kTerms3x3 * 2 : 0; }

// ---- AVX-512 VNNI + VBMI -------------------------------------------------------------------------

#if KILN_QCONV_X86

// Where the taps of the window whose first pixel is (n, ih0, iw0) read, as base + tap[k]: for a
// window inside the image (`inside`) base is that pixel's address and tap the precomputed
// offsets; at the border base is 0 and `border` gets each tap's address, the pad row outside.
template <class D>
const uintptr_t* window_taps(const D& d, int64_t n, int64_t ih0, int64_t iw0, bool inside, const uintptr_t* offset,
                             uintptr_t* border, uintptr_t& base) {
  if (inside) {
    base = reinterpret_cast<uintptr_t>(d.x + ((n * d.H + ih0) * d.W + iw0) * d.C);
    return offset;
  }
  base = 0;
  for (int64_t kh = 0; kh < d.KH; ++kh) {
    const int64_t ih = ih0 + kh * d.dil_h;
    const bool row_in = ih >= 0 && ih < d.H;
    for (int64_t kw = 0; kw < d.KW; ++kw) {
      const int64_t iw = iw0 + kw * d.dil_w;
      border[kh * d.KW + kw] =
          reinterpret_cast<uintptr_t>(row_in && iw >= 0 && iw < d.W ? d.x + ((n * d.H + ih) * d.W + iw) * d.C : d.pad);
    }
  }
  return border;
}

bool fast_supported() {
  static const bool ok = qgemm_isa_supported(QGemmIsa::avx512_vnni) && cpu_has_avx512_vbmi();
  return ok;
}

#define KILN_DW_TARGET __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

// What a thread's rows read: the shape, the weights, its per-channel constants (c_pad each,
// in its thread buffer), the interleaving indices and the requantization.
struct Fast {
  int64_t C, H, W, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
  int64_t c_pad, full, rem;  // groups of 4 taps, taps after them (0 to 3)
  const unsigned char* x;
  const unsigned char* pad;  // c_pad bytes of x's zero point as stored
  const int8_t* groups;
  const int32_t* add;  // bias - zx sum w
  const float* scale;
  unsigned char* y;
  // With C <= 32 and stride_w 1, `run` (64 / C) neighbouring pixels inside the image are one
  // block: the channels of pixel ow + 1 follow those of ow in every tap's row. Their tables
  // repeat add, scale and each group's weights from lane to lane (64 lanes, 0 past run * C).
  int64_t run;
  const int32_t* run_add;
  const float* run_scale;
  const int8_t* run_groups;
  __m512i pairs_lo, pairs_hi, quads_lo, quads_hi;
  Requant16 rq;
};

// 64 channel bytes of a tap at `at`; a tail block loads only `mask`'s (the rest need not exist).
template <bool Tail, bool XSigned>
KILN_DW_TARGET inline __m512i load_tap(const unsigned char* at, __mmask64 mask) {
  const __m512i v = Tail ? _mm512_maskz_loadu_epi8(mask, at) : _mm512_loadu_si512(at);
  return XSigned ? _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))) : v;
}

// acc[j] += the 4 taps a0..a3 of channels 16j..16j+15 (from c0) times their weights wg.
template <int NV>
KILN_DW_TARGET inline void add_quads(const Fast& d, __m512i a0, __m512i a1, __m512i a2, __m512i a3, const int8_t* wg,
                                     __m512i* acc) {
  const __m512i lo01 = _mm512_permutex2var_epi8(a0, d.pairs_lo, a1);
  const __m512i lo23 = _mm512_permutex2var_epi8(a2, d.pairs_lo, a3);
  acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_permutex2var_epi16(lo01, d.quads_lo, lo23), _mm512_loadu_si512(wg));
  if constexpr (NV > 1)
    acc[1] =
        _mm512_dpbusd_epi32(acc[1], _mm512_permutex2var_epi16(lo01, d.quads_hi, lo23), _mm512_loadu_si512(wg + 64));
  if constexpr (NV > 2) {
    const __m512i hi01 = _mm512_permutex2var_epi8(a0, d.pairs_hi, a1);
    const __m512i hi23 = _mm512_permutex2var_epi8(a2, d.pairs_hi, a3);
    acc[2] =
        _mm512_dpbusd_epi32(acc[2], _mm512_permutex2var_epi16(hi01, d.quads_lo, hi23), _mm512_loadu_si512(wg + 128));
    if constexpr (NV > 3)
      acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_permutex2var_epi16(hi01, d.quads_hi, hi23),
                                   _mm512_loadu_si512(wg + 192));
  }
}

// Channels [c0, c0 + 16 NV) of one output pixel (those of `mask` in a tail block), tap k's
// channels at address base + tap[k] (the pad row for taps outside the image); base includes c0.
template <int NV, bool Tail, bool XSigned>
KILN_DW_TARGET inline void pixel_block(const Fast& d, uintptr_t base, const uintptr_t* tap, int64_t c0,
                                       __mmask64 mask, unsigned char* y) {
  const auto at = [base, &tap](int64_t k) { return reinterpret_cast<const unsigned char*>(base + tap[k]); };
  __m512i acc[NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) acc[j] = _mm512_load_si512(d.add + c0 + 16 * j);
  const int64_t stride = d.c_pad * 4;
  const int8_t* wg = d.groups + c0 * 4;
  for (int64_t g = 0; g < d.full; ++g, tap += 4, wg += stride)
    add_quads<NV>(d, load_tap<Tail, XSigned>(at(0), mask), load_tap<Tail, XSigned>(at(1), mask),
                  load_tap<Tail, XSigned>(at(2), mask), load_tap<Tail, XSigned>(at(3), mask), wg, acc);
  if (d.rem == 1) {
    // One tap: its bytes widened to the lanes' low byte (the packed taps above it are 0).
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const unsigned char* src = at(0) + 16 * j;
      __m128i b = Tail ? _mm_maskz_loadu_epi8(static_cast<__mmask16>(mask >> (16 * j)), src)
                       : _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      if (XSigned) b = _mm_xor_si128(b, _mm_set1_epi8(static_cast<char>(0x80)));
      acc[j] = _mm512_dpbusd_epi32(acc[j], _mm512_cvtepu8_epi32(b), _mm512_loadu_si512(wg + 64 * j));
    }
  } else if (d.rem > 1) {
    // Two or three taps: the missing ones' weights are 0, any bytes do.
    const __m512i zero = _mm512_setzero_si512();
    add_quads<NV>(d, load_tap<Tail, XSigned>(at(0), mask), load_tap<Tail, XSigned>(at(1), mask),
                  d.rem > 2 ? load_tap<Tail, XSigned>(at(2), mask) : zero, zero, wg, acc);
  }
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j)
    store_requantized(d.rq, acc[j], _mm512_load_ps(d.scale + c0 + 16 * j),
                      Tail ? static_cast<__mmask16>(mask >> (16 * j)) : __mmask16(0xFFFF), y + c0 + 16 * j);
}

// Output rows [r0, r1) of the N * OH. offset: each tap's offset in bytes from its window's first
// pixel (for windows inside the image: no per-pixel work); border: room for the taps' addresses.
template <bool XSigned>
KILN_DW_TARGET void fast_rows(const Fast& dp, const uintptr_t* offset, uintptr_t* border, int64_t r0, int64_t r1) {
  const Fast d = dp;  // a copy: the stores through y (bytes) could alias the caller's
  const int64_t C = d.C;
  // Output columns whose windows lie inside the rows: [ow_lo, ow_hi).
  const int64_t span_w = (d.KW - 1) * d.dil_w;
  const int64_t ow_lo = std::min(d.OW, (d.pad_left + d.stride_w - 1) / d.stride_w);
  const int64_t ow_hi =
      d.W - span_w + d.pad_left <= 0 ? 0 : std::min(d.OW, (d.W - span_w + d.pad_left - 1) / d.stride_w + 1);
  Fast m = d;
  m.add = d.run_add, m.scale = d.run_scale, m.groups = d.run_groups, m.c_pad = kBlock;
  const int64_t run = d.run, run_bytes = run * C;
  const __mmask64 run_mask = run_bytes >= 64 ? ~__mmask64(0) : (__mmask64(1) << run_bytes) - 1;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / d.OH, oh = r % d.OH, ih0 = oh * d.stride_h - d.pad_top;
    const bool rows_in = ih0 >= 0 && ih0 + (d.KH - 1) * d.dil_h < d.H;
    for (int64_t ow = 0; ow < d.OW; ++ow) {
      const int64_t iw0 = ow * d.stride_w - d.pad_left;
      if (run > 1 && rows_in && ow >= ow_lo && ow + run <= ow_hi) {
        const auto first = reinterpret_cast<uintptr_t>(d.x + ((n * d.H + ih0) * d.W + iw0) * C);
        unsigned char* y = d.y + (r * d.OW + ow) * C;
        if (run_bytes == kBlock)
          pixel_block<4, false, XSigned>(m, first, offset, 0, run_mask, y);
        else
          pixel_block<4, true, XSigned>(m, first, offset, 0, run_mask, y);
        ow += run - 1;
        continue;
      }
      uintptr_t base;
      const uintptr_t* tap = window_taps(d, n, ih0, iw0, rows_in && ow >= ow_lo && ow < ow_hi, offset, border, base);
      unsigned char* y = d.y + (r * d.OW + ow) * C;
      int64_t c0 = 0;
      for (; c0 + kBlock <= C; c0 += kBlock)
        pixel_block<4, false, XSigned>(d, base + static_cast<uintptr_t>(c0), tap, c0, ~__mmask64(0), y);
      const int64_t left = C - c0;
      if (left == 0) continue;
      const __mmask64 mask = (__mmask64(1) << left) - 1;
      const uintptr_t tail_base = base + static_cast<uintptr_t>(c0);
      switch ((left + 15) / 16) {
        case 1: pixel_block<1, true, XSigned>(d, tail_base, tap, c0, mask, y); break;
        case 2: pixel_block<2, true, XSigned>(d, tail_base, tap, c0, mask, y); break;
        case 3: pixel_block<3, true, XSigned>(d, tail_base, tap, c0, mask, y); break;
        default: pixel_block<4, true, XSigned>(d, tail_base, tap, c0, mask, y); break;
      }
    }
  }
}

// Bytes of a thread's buffer (laid out in fast).
size_t fast_buffer_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(padded_channels(p) * 9 + tap_count(p) * 16 + kBlock * 8 + tap_groups(p) * kBlock * 4);
}

// Rows [r0, r1) on the fast kernel; false (nothing written) when the thread's buffer cannot grow.
KILN_DW_TARGET bool fast(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                         int64_t r0, int64_t r1) {
  auto* buffer = static_cast<unsigned char*>(thread_buffer(ThreadBuffer::qdepthwise_sums, fast_buffer_bytes(p)));
  if (buffer == nullptr) return false;
  const int64_t c_pad = padded_channels(p), taps = tap_count(p);
  Fast d;
  d.C = p.C, d.H = p.H, d.W = p.W, d.OH = p.OH, d.OW = p.OW, d.KH = p.KH, d.KW = p.KW;
  d.stride_h = p.stride_h, d.stride_w = p.stride_w, d.pad_top = p.pad_top, d.pad_left = p.pad_left;
  d.dil_h = p.dil_h, d.dil_w = p.dil_w;
  d.c_pad = c_pad, d.full = taps / 4, d.rem = taps % 4;
  d.x = static_cast<const unsigned char*>(x.data);
  d.groups = weight_groups(p, packed);
  d.y = static_cast<unsigned char*>(out.y);
  // The buffer: add, scale (c_pad each), the run's tables, the pad row, the taps' offsets and
  // addresses (all 64-byte aligned but the last two).
  auto* add = reinterpret_cast<int32_t*>(buffer);
  auto* scale = reinterpret_cast<float*>(add + c_pad);
  auto* run_add = reinterpret_cast<int32_t*>(scale + c_pad);
  auto* run_scale = reinterpret_cast<float*>(run_add + kBlock);
  auto* run_groups = reinterpret_cast<int8_t*>(run_scale + kBlock);
  auto* pad = reinterpret_cast<unsigned char*>(run_groups + tap_groups(p) * kBlock * 4);
  channel_constants(p, x, packed, out, add, scale);
  std::memset(pad, static_cast<unsigned char>(x.zero_point), static_cast<size_t>(c_pad));
  d.add = add, d.scale = scale, d.pad = pad;
  // pairs_*: bytes 2i, 2i + 1 = byte i (i < 32, of the low half or the high one) of the first
  // operand, then the second; quads_*: words 2i, 2i + 1 = word i (i < 16, low or high half) of the
  // first, then the second. Quad lane j of channels 16v.. is then [t0, t1, t2, t3] of channel j.
  alignas(64) uint8_t b[64];
  alignas(64) uint16_t w[32];
  for (int i = 0; i < 64; ++i) b[i] = static_cast<uint8_t>((i % 2) * 64 + i / 2);
  d.pairs_lo = _mm512_load_si512(b);
  for (int i = 0; i < 64; ++i) b[i] = static_cast<uint8_t>((i % 2) * 64 + 32 + i / 2);
  d.pairs_hi = _mm512_load_si512(b);
  for (int i = 0; i < 32; ++i) w[i] = static_cast<uint16_t>((i % 2) * 32 + i / 2);
  d.quads_lo = _mm512_load_si512(w);
  for (int i = 0; i < 32; ++i) w[i] = static_cast<uint16_t>((i % 2) * 32 + 16 + i / 2);
  d.quads_hi = _mm512_load_si512(w);
  auto* offset = reinterpret_cast<uintptr_t*>(pad + c_pad);
  auto* border = offset + taps;
  for (int64_t k = 0; k < taps; ++k)
    offset[k] = static_cast<uintptr_t>(((k / p.KW) * p.dil_h * p.W + (k % p.KW) * p.dil_w) * p.C);
  d.run = p.C <= kBlock / 2 && p.stride_w == 1 ? kBlock / p.C : 0;
  if (d.run > 1) {
    const int64_t lanes = d.run * p.C;
    for (int64_t l = 0; l < kBlock; ++l) {
      run_add[l] = l < lanes ? add[l % p.C] : 0;
      run_scale[l] = l < lanes ? scale[l % p.C] : 1.0f;
    }
    for (int64_t g = 0; g < tap_groups(p); ++g)
      for (int64_t l = 0; l < kBlock; ++l) {
        int8_t* to = run_groups + (g * kBlock + l) * 4;
        if (l < lanes)
          std::memcpy(to, d.groups + (g * c_pad + l % p.C) * 4, 4);
        else
          std::memset(to, 0, 4);
      }
  }
  d.run_add = run_add, d.run_scale = run_scale, d.run_groups = run_groups;
  // The output's type is only its range, in rq.
  d.rq = out.type == KILN_I8 ? requant16<true>(out.y_zero_point) : requant16<false>(out.y_zero_point);
  if (x.a_signed)
    fast_rows<true>(d, offset, border, r0, r1);
  else
    fast_rows<false>(d, offset, border, r0, r1);
  return true;
}

// ---- AVX2 ----------------------------------------------------------------------------------------
//
// No byte dot product that is exact here (vpmaddubsw saturates a pair's sum): the bytes of two
// taps are interleaved and widened to 16 bits (u8 x s8 products fit, their pair sums do not) and
// vpmaddwd adds each pair into 32 bits, exactly, against int16 weights built per call in the
// thread's buffer: pair q's table holds channel c's weights of taps 2q, 2q + 1 in its words
// 2c, 2c + 1 (c_pad channels, 0 past C and for the missing tap of an odd count). The zero point
// is the per-channel constant of the fast kernel; the odd count's missing tap reads the window's
// first tap (or the pad row), times 0.

#define KILN_DW_AVX2 __attribute__((target("avx2,fma")))
#define KILN_DW_AVX2_LAMBDA __attribute__((target("avx2,fma"), always_inline))

struct Avx2 {
  int64_t C, H, W, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
  int64_t c_pad, pairs;  // taps 2q and 2q + 1 a pair (the second of the last one 0 for odd counts)
  const unsigned char* x;
  const unsigned char* pad;  // c_pad bytes of x's zero point as stored
  const int16_t* w16;        // [pairs][c_pad][2]
  const int32_t* add;        // bias - zx sum w
  const float* scale;
  unsigned char* y;
  int32_t y_zero_point;
};

// 16 channel bytes at `at` (only `left` of them in a tail: the rest are read from a copy).
template <bool Tail, bool XSigned>
KILN_DW_AVX2 inline __m128i load16(const unsigned char* at, int64_t left) {
  __m128i v;
  if constexpr (Tail) {
    alignas(16) unsigned char b[16] = {};
    std::memcpy(b, at, static_cast<size_t>(left));
    v = _mm_load_si128(reinterpret_cast<const __m128i*>(b));
  } else {
    v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  }
  return XSigned ? _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80))) : v;
}

// requantize_f32 of 8 lanes, in int32 (within the output's range).
KILN_DW_AVX2 inline __m256i requant8(__m256i a, const float* s, __m256 clo, __m256 chi, __m256i vz) {
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(s));
  v = _mm256_min_ps(_mm256_max_ps(v, clo), chi);  // max(NaN, lo) is lo, as requantize_f32's
  return _mm256_add_epi32(_mm256_cvtps_epi32(v), vz);
}

// requantize_f32 of channels c0..c0 + 15 (acc lo: the first 8, hi: the next), to y (left of them).
template <bool Tail, bool YSigned>
KILN_DW_AVX2 inline void store16(const Avx2& d, __m256i lo, __m256i hi, int64_t c0, int64_t left, unsigned char* y) {
  const __m256 clo = _mm256_set1_ps(static_cast<float>((YSigned ? -128 : 0) - d.y_zero_point));
  const __m256 chi = _mm256_set1_ps(static_cast<float>((YSigned ? 127 : 255) - d.y_zero_point));
  const __m256i vz = _mm256_set1_epi32(d.y_zero_point);
  const __m256i q0 = requant8(lo, d.scale + c0, clo, chi, vz), q1 = requant8(hi, d.scale + c0 + 8, clo, chi, vz);
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);
  const __m128i a = _mm256_castsi256_si128(w), b = _mm256_extracti128_si256(w, 1);
  const __m128i r = YSigned ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b);
  if constexpr (Tail) {
    alignas(16) unsigned char t[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(t), r);
    std::memcpy(y + c0, t, static_cast<size_t>(left));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + c0), r);
  }
}

// Channels [c0, c0 + 16 NV) of one output pixel (c0 + left in a tail, NV 1), tap k's channels at
// base + tap[k] (2 pairs entries; the pad row for taps outside the image); base includes c0.
template <int NV, bool Tail, bool XSigned, bool YSigned>
KILN_DW_AVX2 inline void avx2_block(const Avx2& d, uintptr_t base, const uintptr_t* tap, int64_t c0, int64_t left,
                                    unsigned char* y) {
  __m256i acc[2 * NV];
#pragma GCC unroll 4
  for (int j = 0; j < 2 * NV; ++j)
    acc[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d.add + c0 + 8 * j));
  const int16_t* wq = d.w16 + c0 * 2;
  const int64_t stride = d.c_pad * 2;
  for (int64_t q = 0; q < d.pairs; ++q, tap += 2, wq += stride) {
    const auto* t0 = reinterpret_cast<const unsigned char*>(base + tap[0]);
    const auto* t1 = reinterpret_cast<const unsigned char*>(base + tap[1]);
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) {
      const __m128i a = load16<Tail, XSigned>(t0 + 16 * j, left), b = load16<Tail, XSigned>(t1 + 16 * j, left);
      const __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b));  // channels 0..7: [tap 0, tap 1]
      const __m256i hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(a, b));  // 8..15
      const auto* w = reinterpret_cast<const __m256i*>(wq + 32 * j);
      acc[2 * j] = _mm256_add_epi32(acc[2 * j], _mm256_madd_epi16(lo, _mm256_loadu_si256(w)));
      acc[2 * j + 1] = _mm256_add_epi32(acc[2 * j + 1], _mm256_madd_epi16(hi, _mm256_loadu_si256(w + 1)));
    }
  }
#pragma GCC unroll 2
  for (int j = 0; j < NV; ++j) store16<Tail, YSigned>(d, acc[2 * j], acc[2 * j + 1], c0 + 16 * j, left, y);
}

// Output rows [r0, r1) of the N * OH; offset and border as in fast_rows, 2 pairs entries each.
template <bool XSigned, bool YSigned>
KILN_DW_AVX2 void avx2_rows(const Avx2& dp, const uintptr_t* offset, uintptr_t* border, int64_t r0, int64_t r1) {
  const Avx2 d = dp;
  const int64_t C = d.C, taps = d.KH * d.KW;
  const int64_t span_w = (d.KW - 1) * d.dil_w;
  const int64_t ow_lo = std::min(d.OW, (d.pad_left + d.stride_w - 1) / d.stride_w);
  const int64_t ow_hi =
      d.W - span_w + d.pad_left <= 0 ? 0 : std::min(d.OW, (d.W - span_w + d.pad_left - 1) / d.stride_w + 1);
  if (taps % 2) border[taps] = reinterpret_cast<uintptr_t>(d.pad);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / d.OH, oh = r % d.OH, ih0 = oh * d.stride_h - d.pad_top;
    const bool rows_in = ih0 >= 0 && ih0 + (d.KH - 1) * d.dil_h < d.H;
    for (int64_t ow = 0; ow < d.OW; ++ow) {
      const int64_t iw0 = ow * d.stride_w - d.pad_left;
      uintptr_t base;
      const uintptr_t* tap = window_taps(d, n, ih0, iw0, rows_in && ow >= ow_lo && ow < ow_hi, offset, border, base);
      unsigned char* y = d.y + (r * d.OW + ow) * C;
      int64_t c0 = 0;
      for (; c0 + 32 <= C; c0 += 32)
        avx2_block<2, false, XSigned, YSigned>(d, base + static_cast<uintptr_t>(c0), tap, c0, 32, y);
      if (c0 + 16 <= C) {
        avx2_block<1, false, XSigned, YSigned>(d, base + static_cast<uintptr_t>(c0), tap, c0, 16, y);
        c0 += 16;
      }
      if (c0 < C) avx2_block<1, true, XSigned, YSigned>(d, base + static_cast<uintptr_t>(c0), tap, c0, C - c0, y);
    }
  }
}

int64_t tap_pairs(const Conv2dParams& p) { return (tap_count(p) + 1) / 2; }

// Bytes of a thread's buffer (laid out in avx2).
size_t avx2_buffer_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(padded_channels(p) * (9 + tap_pairs(p) * 4) + tap_pairs(p) * 2 * 16);
}

// Rows [r0, r1) on the AVX2 kernel; false (nothing written) when the thread's buffer cannot grow.
KILN_DW_AVX2 bool avx2(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                       int64_t r0, int64_t r1) {
  auto* buffer = static_cast<unsigned char*>(thread_buffer(ThreadBuffer::qdepthwise_sums, avx2_buffer_bytes(p)));
  if (buffer == nullptr) return false;
  const int64_t c_pad = padded_channels(p), taps = tap_count(p), pairs = tap_pairs(p);
  Avx2 d;
  d.C = p.C, d.H = p.H, d.W = p.W, d.OH = p.OH, d.OW = p.OW, d.KH = p.KH, d.KW = p.KW;
  d.stride_h = p.stride_h, d.stride_w = p.stride_w, d.pad_top = p.pad_top, d.pad_left = p.pad_left;
  d.dil_h = p.dil_h, d.dil_w = p.dil_w;
  d.c_pad = c_pad, d.pairs = pairs;
  d.x = static_cast<const unsigned char*>(x.data);
  d.y = static_cast<unsigned char*>(out.y);
  d.y_zero_point = out.y_zero_point;
  // The buffer: add, scale (c_pad each), the int16 weights, the pad row, the taps' offsets and
  // addresses (2 pairs each).
  auto* add = reinterpret_cast<int32_t*>(buffer);
  auto* scale = reinterpret_cast<float*>(add + c_pad);
  auto* w16 = reinterpret_cast<int16_t*>(scale + c_pad);
  auto* pad = reinterpret_cast<unsigned char*>(w16 + pairs * c_pad * 2);
  channel_constants(p, x, packed, out, add, scale);
  const int8_t* groups = weight_groups(p, packed);
  // Pair q is half q % 2 of group q / 2 (whose taps past the last are 0 already).
  for (int64_t q = 0; q < pairs; ++q) {
    const int8_t* g = groups + (q / 2) * c_pad * 4 + (q % 2) * 2;
    int16_t* to = w16 + q * c_pad * 2;
    for (int64_t c = 0; c < c_pad; ++c) to[2 * c] = g[4 * c], to[2 * c + 1] = g[4 * c + 1];
  }
  std::memset(pad, static_cast<unsigned char>(x.zero_point), static_cast<size_t>(c_pad));
  d.w16 = w16, d.add = add, d.scale = scale, d.pad = pad;
  auto* offset = reinterpret_cast<uintptr_t*>(pad + c_pad);
  auto* border = offset + 2 * pairs;
  for (int64_t k = 0; k < taps; ++k)
    offset[k] = static_cast<uintptr_t>(((k / p.KW) * p.dil_h * p.W + (k % p.KW) * p.dil_w) * p.C);
  if (taps % 2) offset[taps] = 0;  // the window's first tap, times 0
  const bool y_signed = out.type == KILN_I8;
  if (x.a_signed && y_signed)
    avx2_rows<true, true>(d, offset, border, r0, r1);
  else if (x.a_signed)
    avx2_rows<true, false>(d, offset, border, r0, r1);
  else if (y_signed)
    avx2_rows<false, true>(d, offset, border, r0, r1);
  else
    avx2_rows<false, false>(d, offset, border, r0, r1);
  return true;
}

// ---- AVX2, 3x3 at stride_w 1 or 2 ---------------------------------------------------------------
//
// The kernel above interleaves both taps of every pair for every output pixel. Here the
// interleaving is shared: kernel rows 0 and 1 are paired vertically, V(j) = (row 0, row 1) at
// column j, and row 2 horizontally, H(j) = (column j, column j + 1) of row 2, so that output
// pixel ow (window columns j = s ow .. s ow + 2) is V(j) w(0, 1 at kw 0..2) + H(s ow) w(20, 21) +
// H(s ow + 2) w(22, 0): five vpmaddwd per 8 channels, against weights packed at compile time
// ([C / 8][5 terms][8 channels][2] s8, widened per run). Along a row, V and H roll through
// registers: each is built once (two 8-byte loads, an interleave and a widening) and used by
// up to 3 (V) or 2 (H) pixels, one vector of 8 channels at a time with its 5 weights held.
// The sums go to a row of int32 in the thread's buffer, requantized 32 channels at a time.
// Columns outside the image read the pad row (x's zero point), as above.


struct Rolling {
  int64_t C, H, W, OH, OW, stride_h, stride_w, pad_top, pad_left;
  const unsigned char* x;
  const unsigned char* pad;  // W x C bytes of x's zero point as stored: a row of pad pixels
  const int16_t* w16;        // [C / 8][5][8][2]
  const int32_t* add;        // bias - zx sum w
  const float* scale;
  int32_t* sums;  // OW x 32: a row's sums of one block
  unsigned char* y;
  int32_t y_zero_point;
};

// Channels c..c + 7 of (row a, row b) pairs, widened: a, b 8 bytes each.
template <bool XSigned>
KILN_DW_AVX2 inline __m256i pair8(const unsigned char* a, const unsigned char* b) {
  __m128i v = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
  if (XSigned) v = _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80)));
  return _mm256_cvtepu8_epi16(v);
}

// Sums of channels c..c + 7 of every output pixel of a row, whose kernel rows read rows[0..2]
// (nullptr: the pad row), to d.sums + 32 ow + (c - c0).
template <int S, bool XSigned>
KILN_DW_AVX2 void rolling_row(const Rolling& d, const unsigned char* const* rows, int64_t c, int32_t* sums) {
  const auto* wv = reinterpret_cast<const __m256i*>(d.w16 + c * kTerms3x3 * 2);
  const __m256i w0 = _mm256_load_si256(wv), w1 = _mm256_load_si256(wv + 1), w2 = _mm256_load_si256(wv + 2);
  const __m256i w3 = _mm256_load_si256(wv + 3), w4 = _mm256_load_si256(wv + 4);
  const __m256i add = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d.add + c));
  const unsigned char* pad = d.pad + c;
  const int64_t C = d.C, OW = d.OW, pl = d.pad_left, W = d.W;
  // Column j of the windows (input column j - pad_left) of kernel row k: base[k] + j C inside
  // the image's columns (rows outside the image read a row of pad pixels), else the pad pixel.
  const unsigned char* base[3];
  for (int k = 0; k < 3; ++k) base[k] = (rows[k] != nullptr ? rows[k] : d.pad) + c - pl * C;
  const auto at = [&](int k, int64_t j, auto checked) {
    if (checked && static_cast<uint64_t>(j - pl) >= static_cast<uint64_t>(W)) return pad;
    return base[k] + j * C;
  };
  const auto V = [&](int64_t j, auto checked) KILN_DW_AVX2_LAMBDA {
    return pair8<XSigned>(at(0, j, checked), at(1, j, checked));
  };
  const auto Hp = [&](int64_t j, auto checked) KILN_DW_AVX2_LAMBDA {
    return pair8<XSigned>(at(2, j, checked), at(2, j + 1, checked));
  };
  const auto sum = [&](__m256i v0, __m256i v1, __m256i v2, __m256i h0, __m256i h2) KILN_DW_AVX2_LAMBDA {
    const __m256i a = _mm256_add_epi32(_mm256_madd_epi16(v0, w0), _mm256_madd_epi16(v1, w1));
    const __m256i b = _mm256_add_epi32(_mm256_madd_epi16(v2, w2), _mm256_madd_epi16(h0, w3));
    return _mm256_add_epi32(_mm256_add_epi32(a, add), _mm256_add_epi32(b, _mm256_madd_epi16(h2, w4)));
  };
  const std::true_type checked;
  const std::false_type inside;
  // Pixels whose new columns (S ow + 1 .. S ow + 3) all lie in the image: [lo, hi).
  const int64_t lo = std::clamp<int64_t>((pl - 1 + S - 1) / S, 0, OW);
  const int64_t hi = std::clamp<int64_t>(pl + W - 4 < 0 ? 0 : (pl + W - 4) / S + 1, lo, OW);
  // Inside the image the columns are walked by pointers (q[k]: column j of kernel row k) and
  // the pixels unrolled by 3 (stride 1) or 2 (stride 2), the registers' roles rotating with
  // them: the dwarf kernel ran at the front end's limit of ~5 instructions a cycle, a third of
  // them moves and address arithmetic (callgrind: 43 instructions a pixel of 8 channels).
  const auto pair_at = [&](const unsigned char* a, const unsigned char* b) KILN_DW_AVX2_LAMBDA {
    return pair8<XSigned>(a, b);
  };
  const auto store = [&](int64_t ow, __m256i v) KILN_DW_AVX2_LAMBDA {
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 32 * ow), v);
  };
  if constexpr (S == 1) {
    __m256i v0 = V(0, checked), v1 = V(1, checked), h0 = Hp(0, checked), h1 = Hp(1, checked);
    const auto pixel = [&](int64_t ow, auto chk) KILN_DW_AVX2_LAMBDA {
      const __m256i v2 = V(ow + 2, chk), h2 = Hp(ow + 2, chk);
      store(ow, sum(v0, v1, v2, h0, h2));
      v0 = v1, v1 = v2, h0 = h1, h1 = h2;
    };
    int64_t ow = 0;
    for (; ow < lo; ++ow) pixel(ow, checked);
    if (ow + 3 <= hi) {
      // Window columns ow + 2 on: q0, q1, q2 at column ow + 2 of rows 0, 1, 2.
      const unsigned char* q0 = base[0] + (ow + 2) * C;
      const unsigned char* q1 = base[1] + (ow + 2) * C;
      const unsigned char* q2 = base[2] + (ow + 2) * C;
      for (; ow + 3 <= hi; ow += 3, q0 += 3 * C, q1 += 3 * C, q2 += 3 * C) {
        const __m256i v2 = pair_at(q0, q1), h2 = pair_at(q2, q2 + C);
        store(ow, sum(v0, v1, v2, h0, h2));
        const __m256i v3 = pair_at(q0 + C, q1 + C), h3 = pair_at(q2 + C, q2 + 2 * C);
        store(ow + 1, sum(v1, v2, v3, h1, h3));
        const __m256i v4 = pair_at(q0 + 2 * C, q1 + 2 * C), h4 = pair_at(q2 + 2 * C, q2 + 3 * C);
        store(ow + 2, sum(v2, v3, v4, h2, h4));
        v0 = v3, v1 = v4, h0 = h3, h1 = h4;
      }
    }
    for (; ow < hi; ++ow) pixel(ow, inside);
    for (; ow < OW; ++ow) pixel(ow, checked);
  } else {
    __m256i v0 = V(0, checked), h0 = Hp(0, checked);
    const auto pixel = [&](int64_t ow, auto chk) KILN_DW_AVX2_LAMBDA {
      const __m256i v1 = V(2 * ow + 1, chk), v2 = V(2 * ow + 2, chk), h2 = Hp(2 * ow + 2, chk);
      store(ow, sum(v0, v1, v2, h0, h2));
      v0 = v2, h0 = h2;
    };
    int64_t ow = 0;
    for (; ow < lo; ++ow) pixel(ow, checked);
    if (ow + 2 <= hi) {
      // q0, q1, q2 at window column 2 ow + 1 of rows 0, 1, 2.
      const unsigned char* q0 = base[0] + (2 * ow + 1) * C;
      const unsigned char* q1 = base[1] + (2 * ow + 1) * C;
      const unsigned char* q2 = base[2] + (2 * ow + 2) * C;
      for (; ow + 2 <= hi; ow += 2, q0 += 4 * C, q1 += 4 * C, q2 += 4 * C) {
        const __m256i v1 = pair_at(q0, q1), v2 = pair_at(q0 + C, q1 + C), h2 = pair_at(q2, q2 + C);
        store(ow, sum(v0, v1, v2, h0, h2));
        const __m256i v3 = pair_at(q0 + 2 * C, q1 + 2 * C), v4 = pair_at(q0 + 3 * C, q1 + 3 * C);
        const __m256i h4 = pair_at(q2 + 2 * C, q2 + 3 * C);
        store(ow + 1, sum(v2, v3, v4, h2, h4));
        v0 = v4, h0 = h4;
      }
    }
    for (; ow < hi; ++ow) pixel(ow, inside);
    for (; ow < OW; ++ow) pixel(ow, checked);
  }
}

// Requantizes a row's sums of the block at c0 (n = 8, 16, 24 or 32 channels: Full for 32) to y;
// Clamp as requant8's (false where no sum times its scale reaches the top, Rolling::clamp).
template <bool Full, bool YSigned, bool Clamp>
KILN_DW_AVX2 void store_sums(const Rolling& d, int64_t c0, int64_t n, unsigned char* y) {
  const Requant8Bounds q8 = requant8_bounds<YSigned>(d.y_zero_point);
  __m256 sc[4];
  for (int v = 0; v < 4; ++v) sc[v] = Full || 8 * v < n ? _mm256_loadu_ps(d.scale + c0 + 8 * v) : _mm256_setzero_ps();
  // The packs work within 128-bit lanes: their dwords 0, 4, 1, 5, ... hold channels 0-3, 4-7, ...
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t ow = 0; ow < d.OW; ++ow, y += d.C) {
    const auto* s = reinterpret_cast<const __m256i*>(d.sums + 32 * ow);
    __m256i q[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      q[v] = Full || 8 * v < n ? ::kiln::rt::requant8<Clamp>(_mm256_load_si256(s + v), sc[v], q8.hi) : _mm256_setzero_si256();
    const __m256i w01 = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), q8.zero_point);
    const __m256i w23 = _mm256_adds_epi16(_mm256_packs_epi32(q[2], q[3]), q8.zero_point);
    const __m256i b = _mm256_permutevar8x32_epi32(
        YSigned ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23), order);
    if (Full) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), b);
    } else {
      alignas(32) unsigned char t[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(t), b);
      std::memcpy(y, t, static_cast<size_t>(n));
    }
  }
}

// Output rows [r0, r1) of the N * OH.
template <bool XSigned, bool YSigned, bool Clamp>
KILN_DW_AVX2 void rolling_rows(const Rolling& dp, int64_t r0, int64_t r1) {
  const Rolling d = dp;  // a copy: the stores through y (bytes) could alias the caller's
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / d.OH, ih0 = (r % d.OH) * d.stride_h - d.pad_top;
    const unsigned char* rows[3];
    for (int k = 0; k < 3; ++k) {
      const int64_t ih = ih0 + k;
      rows[k] = ih >= 0 && ih < d.H ? d.x + (n * d.H + ih) * d.W * d.C : nullptr;
    }
    unsigned char* y = d.y + r * d.OW * d.C;
    for (int64_t c0 = 0; c0 < d.C; c0 += 32) {
      const int64_t count = std::min<int64_t>(32, d.C - c0);
      for (int64_t c = c0; c < c0 + count; c += 8) {
        if (d.stride_w == 1)
          rolling_row<1, XSigned>(d, rows, c, d.sums + (c - c0));
        else
          rolling_row<2, XSigned>(d, rows, c, d.sums + (c - c0));
      }
      if (count == 32)
        store_sums<true, YSigned, Clamp>(d, c0, count, y + c0);
      else
        store_sums<false, YSigned, Clamp>(d, c0, count, y + c0);
    }
  }
}

template <bool XSigned, bool YSigned>
KILN_DW_AVX2 void rolling_rows(const Rolling& d, int64_t r0, int64_t r1, bool clamp) {
  if (clamp)
    rolling_rows<XSigned, YSigned, true>(d, r0, r1);
  else
    rolling_rows<XSigned, YSigned, false>(d, r0, r1);
}

// Bytes of a thread's buffer (laid out in rolling).
size_t rolling_buffer_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(p.OW * 128 + p.C * (kTerms3x3 * 4 + 8) + p.W * p.C);
}

// Rows [r0, r1) on the 3x3 kernel; false (nothing written) when the thread's buffer cannot grow.
KILN_DW_AVX2 bool rolling(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                          int64_t r0, int64_t r1) {
  auto* buffer = static_cast<unsigned char*>(thread_buffer(ThreadBuffer::qdepthwise_sums, rolling_buffer_bytes(p)));
  if (buffer == nullptr) return false;
  Rolling d;
  d.C = p.C, d.H = p.H, d.W = p.W, d.OH = p.OH, d.OW = p.OW;
  d.stride_h = p.stride_h, d.stride_w = p.stride_w, d.pad_top = p.pad_top, d.pad_left = p.pad_left;
  d.x = static_cast<const unsigned char*>(x.data);
  d.y = static_cast<unsigned char*>(out.y);
  d.y_zero_point = out.y_zero_point;
  // The buffer (32-byte aligned): the row's sums, the int16 weights, add, scale, the pad row.
  auto* sums = reinterpret_cast<int32_t*>(buffer);
  auto* w16 = reinterpret_cast<int16_t*>(sums + p.OW * 32);
  auto* add = reinterpret_cast<int32_t*>(w16 + p.C * kTerms3x3 * 2);
  auto* scale = reinterpret_cast<float*>(add + p.C);
  auto* pad = reinterpret_cast<unsigned char*>(scale + p.C);
  const auto* w8 = reinterpret_cast<const int8_t*>(packed + pairs3x3_offset(p));
  for (int64_t i = 0; i < p.C * kTerms3x3 * 2; i += 16)  // a multiple of 16 (C of 8)
    _mm256_store_si256(reinterpret_cast<__m256i*>(w16 + i),
                       _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w8 + i))));
  channel_constants_n(p, x, packed, out, p.C, add, scale);
  bool clamp = false;  // requant8's, where a sum of the 9 taps times its scale can reach the top
  for (int64_t c = 0; c < p.C; ++c) clamp = clamp || requant_top_reachable(add[c], kTaps3x3, scale[c]);
  std::memset(pad, static_cast<unsigned char>(x.zero_point), static_cast<size_t>(p.W * p.C));
  d.sums = sums, d.w16 = w16, d.add = add, d.scale = scale, d.pad = pad;
  const bool y_signed = out.type == KILN_I8;
  if (x.a_signed && y_signed)
    rolling_rows<true, true>(d, r0, r1, clamp);
  else if (x.a_signed)
    rolling_rows<true, false>(d, r0, r1, clamp);
  else if (y_signed)
    rolling_rows<false, true>(d, r0, r1, clamp);
  else
    rolling_rows<false, false>(d, r0, r1, clamp);
  return true;
}

bool avx2_supported() {
  static const bool ok = qgemm_isa_supported(QGemmIsa::avx2);
  return ok;
}

#endif

}  // namespace

size_t depthwise_packed_bytes(const Conv2dParams& p) noexcept {
  return static_cast<size_t>(kHeader + padded_channels(p) * 4 * (1 + tap_groups(p)) + pairs3x3_bytes(p));
}

void depthwise_pack(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept {
  std::memset(packed, 0, depthwise_packed_bytes(p));
  const int64_t c_pad = padded_channels(p), taps = tap_count(p);
  const PackedHeader h{p.C, taps, c_pad};
  std::memcpy(packed, &h, sizeof h);
  auto* sums = reinterpret_cast<int32_t*>(packed + kHeader);
  auto* groups = reinterpret_cast<int8_t*>(packed + kHeader + c_pad * 4);
  for (int64_t c = 0; c < p.C; ++c)
    for (int64_t k = 0; k < taps; ++k) {
      const int8_t v = w[c * taps + k];
      groups[(k / 4) * c_pad * 4 + c * 4 + k % 4] = v;
      sums[c] += v;
    }
  if (pairs3x3_bytes(p) > 0) {
    // The 3x3 kernel's terms: rows 0 and 1 at columns 0, 1, 2; row 2's columns 0 and 1; its 2.
    static constexpr int8_t kFirst[kTerms3x3] = {0, 1, 2, 6, 8}, kSecond[kTerms3x3] = {3, 4, 5, 7, -1};
    auto* pairs = reinterpret_cast<int8_t*>(packed + pairs3x3_offset(p));
    for (int64_t c = 0; c < p.C; ++c)
      for (int64_t t = 0; t < kTerms3x3; ++t) {
        int8_t* to = pairs + ((c / 8 * kTerms3x3 + t) * 8 + c % 8) * 2;
        to[0] = w[c * taps + kFirst[t]];
        to[1] = kSecond[t] >= 0 ? w[c * taps + kSecond[t]] : int8_t(0);
      }
  }
}

bool depthwise_narrow_fast(const Conv2dParams& p) noexcept { return rolling3x3(p); }

void depthwise_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                    ThreadPool* pool, QGemmIsa isa) noexcept {
  const int64_t rows = p.N * p.OH;
  if (rows <= 0 || p.OW <= 0 || p.C <= 0) return;
#if KILN_QCONV_X86
  const bool use_fast = (isa == QGemmIsa::automatic || isa == QGemmIsa::avx512_vnni) && fast_supported();
  const bool use_avx2 = !use_fast && (isa == QGemmIsa::automatic || isa == QGemmIsa::avx2 || isa == QGemmIsa::avx_vnni) &&
                        avx2_supported();
  // 32 channels or fewer leave half of the VNNI kernel's 64-channel block empty: the AVX2 3x3
  // kernel is faster there (MobileNetV2's 32 at 112 x 112, one thread: 99 us against 110).
  const bool narrow_rolling = use_fast && rolling3x3(p) && p.C <= 32;
#else
  (void)isa;
#endif
  // Equal shares, not balanced ones: a thread gets the same rows in every layer of the chain.
  parallel_for(pool, rows, [&](int64_t r0, int64_t r1) {
#if KILN_QCONV_X86
    if (narrow_rolling && rolling(p, x, packed, out, r0, r1)) return;
    if (use_fast && fast(p, x, packed, out, r0, r1)) return;
    if (use_avx2 && rolling3x3(p) && rolling(p, x, packed, out, r0, r1)) return;
    if (use_avx2 && avx2(p, x, packed, out, r0, r1)) return;
#endif
    portable(p, x, packed, out, r0, r1);
  });
}

}  // namespace kiln::rt::nhwc
