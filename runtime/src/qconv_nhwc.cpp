// Quantized convolutions in NHWC (qconv_nhwc.h): the dense kernel (group 1) and the dispatch;
// the depthwise kernel is in qdepthwise_nhwc.cpp.
//
// Dense: y[j, m] = sum over taps t and channels c of x[j at t, c] w[m, c, t] for output pixel
// j. A pixel's channels lie together, so 4 of them are one 32-bit broadcast (the u8 operand of
// vpdpbusd) read straight from x through a table of each tap's address (the pad row outside
// the image), with nothing packed per run, and the weights are packed at compile time in
// blocks of 16 output channels ([block][tap][C / 4][16][4], the s8 operand). A tile is 7
// pixels times up to 3 blocks (21 sums in registers); its sums are requantized in registers
// and each pixel's 16 bytes a block are one store, at the pixel's row of y. A 1x1 is the
// case of one tap. Without VNNI the AVX2 tile does the same on 8 channels and 4 + 3 pixels.
#include "kiln/rt/qconv_nhwc.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/rt/dpbusd.h"
#include "kiln/rt/kernel_log.h"
#include "kiln/rt/qdepthwise_nhwc.h"
#include "kiln/rt/qlinear.h"
#include "kiln/rt/requant_avx2.h"
#include "kiln/rt/requant_avx512.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

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
constexpr int64_t kMaxTaps = 49; // a tile's table of tap addresses lives on the stack
constexpr int64_t kHeader = 64;  // the packed dense weights' header: K, M, pairs_fit_int16, flat patches'

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

bool depthwise(const Conv2dParams& p) { return p.group == p.C && p.M == p.C && p.group > 1; }

// group 1, C a multiple of 4 (a broadcast is 4 channels of one pixel), any kernel up to 7 x 7.
bool dense(const Conv2dParams& p) {
  return p.group == 1 && p.C % 4 == 0 && p.KH >= 1 && p.KW >= 1 && p.KH * p.KW <= kMaxTaps && p.dil_h >= 1 &&
         p.dil_w >= 1 && p.pad_top >= 0 && p.pad_left >= 0;
}

// 1x1 without padding: every tap is the pixel itself, its addresses need no bounds.
bool pointwise(const Conv2dParams& p) {
  return dense(p) && p.KH == 1 && p.KW == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         (p.OH - 1) * p.stride_h < p.H && (p.OW - 1) * p.stride_w < p.W;
}

int64_t taps_of(const Conv2dParams& p) { return p.KH * p.KW; }

// Row patches: a group-1 layer whose channels are not a multiple of 4 (a stem on 3 channels)
// at dilation 1 across. A kernel row's KW taps of a pixel row are then KW x C contiguous bytes
// of x, so the layer runs as the dense kernel on a virtual layer (patch_params) whose channels
// are those bytes (rounded up to 4; the weights past KW x C are 0) and whose taps are the KH
// kernel rows: K grows by under 4 bytes a row where 3 channels alone would need padding to 4
// of each tap's (7x7 on 3 channels: 168 bytes against 196). Each thread first copies the input
// rows its output rows read, padded across with x's zero point (patch_rows), so that no tap
// checks a column: rows outside the image read the pad row.
bool row_patch(const Conv2dParams& p) {
  return p.group == 1 && p.C % 4 != 0 && p.C >= 1 && p.KH >= 1 && p.KW >= 1 && p.KH <= kMaxTaps &&
         p.dil_h >= 1 && p.dil_w == 1 && p.pad_top >= 0 && p.pad_left >= 0;
}

Conv2dParams patch_params(const Conv2dParams& p) {
  Conv2dParams v = p;
  v.C = round_up(p.KW * p.C, 4);
  v.KW = 1;
  return v;
}

// The layer the packed weights and the tiles see: p itself, or its row patches'.
Conv2dParams packed_params(const Conv2dParams& p) { return row_patch(p) ? patch_params(p) : p; }

// The packed dense weights: header, each channel's sum of weights (for the input's zero point),
// then the blocks: [M / 16][taps][C / 4][16][4], K ordered (kh, kw, c) so that a tap's 4
// channels are one broadcast of a pixel's bytes. The header's third int64 is 1 where every
// pair of weights that vpmaddubsw sums (bytes 0-1 and 2-3 of a channel's 4) fits: its positive
// weights sum to at most 128 and its negative ones to at least -128. With x0, x1 in [0, 255],
// x0 w0 + x1 w1 then lies in [-32640, 32640], within int16, and the AVX2 tile multiplies 32
// u8 x s8 pairs an instruction without saturating (kiln's own reduced-range int8 weights are
// quantized so, passes/integer_matmul.h).
int64_t sums_bytes(int64_t M) { return round_up(round_up(M, kBlock) * 4, 64); }

size_t dense_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(kHeader + sums_bytes(p.M) + round_up(p.M, kBlock) * p.C * taps_of(p));
}

bool pair_fits_int16(int32_t w0, int32_t w1) {
  return std::max(w0, 0) + std::max(w1, 0) <= 128 && std::min(w0, 0) + std::min(w1, 0) >= -128;
}

void pack_dense(const Conv2dParams& p, const int8_t* w, unsigned char* packed) {
  const int64_t C = p.C, M = p.M, taps = taps_of(p), kq = C / 4, K = C * taps;
  std::memset(packed, 0, dense_bytes(p));
  auto* sums = reinterpret_cast<int32_t*>(packed + kHeader);
  auto* blocks = reinterpret_cast<int8_t*>(packed + kHeader + sums_bytes(M));
  bool pairs_fit = true;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        const int8_t v = w[(m * C + c) * taps + t];  // W [M, C, KH, KW]
        blocks[(m / kBlock) * taps * kq * 64 + (t * kq + c / 4) * 64 + (m % kBlock) * 4 + c % 4] = v;
        sums[m] += v;
        if (c % 2 == 1) pairs_fit = pairs_fit && pair_fits_int16(w[(m * C + c - 1) * taps + t], v);
      }
  const int64_t header[3] = {K, M, pairs_fit ? 1 : 0};
  std::memcpy(packed, header, sizeof header);
}

bool dense_pairs_fit_int16(const unsigned char* packed) {
  int64_t header[3];
  std::memcpy(header, packed, sizeof header);
  return header[2] == 1;
}

// Flat patches, the AVX2 path of row patches: a window's KH x KW x C bytes side by side in
// (kh, kw, c) order as the channels of a 1x1 (flat_k of them, rounded up to 4), so that a 3x3
// stem on 3 channels multiplies 28 bytes a pixel where its row patches take 3 x 12. Their
// weights follow the row patches' packed ones: [M / 16][flat_k / 4][16][4]; the header's
// fourth int64 is their offset, its fifth 1 where their pairs (bytes 2i, 2i + 1 of the 28)
// fit int16 as dense_pairs_fit_int16's.
int64_t flat_k(const Conv2dParams& p) { return round_up(p.KH * p.KW * p.C, 4); }
size_t flat_blocks_bytes(const Conv2dParams& p) { return static_cast<size_t>(round_up(p.M, kBlock) * flat_k(p)); }

// W [M, C, KH, KW] packed as flat patches' weights at `blocks`; whether their pairs fit.
bool pack_flat(const Conv2dParams& p, const int8_t* w, int8_t* blocks) {
  const int64_t kf = flat_k(p), K = p.KH * p.KW * p.C, kq = kf / 4;
  bool pairs_fit = true;
  int8_t previous = 0;
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t f = 0; f < K; ++f) {
      const int64_t c = f % p.C, kw = f / p.C % p.KW, kh = f / (p.C * p.KW);
      const int8_t v = w[((m * p.C + c) * p.KH + kh) * p.KW + kw];
      blocks[(m / kBlock) * kq * 64 + (f / 4) * 64 + (m % kBlock) * 4 + f % 4] = v;
      if (f % 2 == 1) pairs_fit = pairs_fit && pair_fits_int16(previous, v);
      previous = v;
    }
  return pairs_fit;  // a last byte alone (K odd) pairs with a 0, which fits
}

// The flat weights of a row-patch layer's packing, or nullptr where their pairs do not fit
// (unless any_pairs: the kernel is exact for all, AVX-VNNI's).
const int8_t* flat_blocks(const unsigned char* packed, bool any_pairs = false) {
  int64_t header[5];
  std::memcpy(header, packed, sizeof header);
  return header[3] > 0 && (header[4] == 1 || any_pairs) ? reinterpret_cast<const int8_t*>(packed + header[3]) : nullptr;
}

// Per output channel (rounded up to the blocks): the sums' constant term bias - zx sum w
// (wrapping, as the reference's uint32 sums) and the requantization's scale; then a row of C
// bytes of x's zero point as stored, which taps in the padding read (they add (zx - zx) w).
// `clamp` is false where no sum times its scale can reach 2^30 (|add| + K x 255 x 128 bounds a
// sum; a NaN or infinite scale keeps it true): requant8 may then leave out its clamp.
struct ChannelTerms {
  int32_t* add;
  float* scale;
  unsigned char* pad;
  bool clamp;
};

size_t channel_terms_bytes(const Conv2dParams& p) {
  return static_cast<size_t>(round_up(p.M, kBlock) * 8 + round_up(p.C, 64));
}

ChannelTerms channel_terms(const Conv2dParams& p, const QGemmOutput& out, const int32_t* sums, uint32_t zx,
                           int32_t x_zero_point, void* buffer) {
  const int64_t mb = round_up(p.M, kBlock);
  auto* add = static_cast<int32_t*>(buffer);
  ChannelTerms t{add, reinterpret_cast<float*>(add + mb), reinterpret_cast<unsigned char*>(add + 2 * mb), false};
  for (int64_t m = 0; m < mb; ++m) {
    const bool real = m < p.M;
    const uint32_t bias = real && out.bias ? static_cast<uint32_t>(out.bias[out.bias_count > 1 ? m : 0]) : 0u;
    t.add[m] = real ? static_cast<int32_t>(bias - zx * static_cast<uint32_t>(sums[m])) : 0;
    t.scale[m] = real && out.scale ? out.scale[out.scale_count > 1 ? m : 0] : 1.0f;
    t.clamp = t.clamp || requant_top_reachable(t.add[m], p.C * taps_of(p), t.scale[m]);
  }
  std::memset(t.pad, static_cast<unsigned char>(x_zero_point), static_cast<size_t>(p.C));
  return t;
}

// Where output pixel j's input channels start in x (bytes), for a 1x1 without padding.
int64_t input_offset(const Conv2dParams& p, int64_t j) {
  const int64_t plane = p.OH * p.OW, n = j / plane, oh = j % plane / p.OW, ow = j % p.OW;
  return ((n * p.H + oh * p.stride_h) * p.W + ow * p.stride_w) * p.C;
}

// The addresses of a tile's taps, src[t * kPixels + r] for pixel j + r (r < kPixels; rows past
// n_pix repeat the last pixel), the pad row for taps outside the image. One division for the
// tile (a division per pixel took as long as the multiplies of a 16-channel 1x1).
void tile_sources(const Conv2dParams& p, const unsigned char* x, const unsigned char* pad, int64_t j,
                  int64_t n_pix, const unsigned char** src) {
  if (pointwise(p)) {
    if (p.stride_h == 1 && p.stride_w == 1 && p.OH == p.H && p.OW == p.W) {
      for (int64_t r = 0; r < kPixels; ++r) src[r] = x + (j + std::min(r, n_pix - 1)) * p.C;
      return;
    }
    int64_t ow = j % p.OW, o = input_offset(p, j);
    for (int64_t r = 0; r < kPixels; ++r) {
      src[r] = x + o;
      if (r + 1 >= n_pix) continue;
      if (++ow < p.OW) {
        o += p.stride_w * p.C;
      } else {
        ow = 0;
        o = input_offset(p, j + r + 1);
      }
    }
    return;
  }
  const int64_t plane = p.OH * p.OW;
  int64_t n = j / plane, oh = j % plane / p.OW, ow = j % p.OW;
  for (int64_t r = 0; r < kPixels; ++r) {
    const int64_t ih0 = oh * p.stride_h - p.pad_top, iw0 = ow * p.stride_w - p.pad_left;
    const unsigned char* image = x + n * p.H * p.W * p.C;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = ih0 + kh * p.dil_h;
      const bool row_in = ih >= 0 && ih < p.H;
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t iw = iw0 + kw * p.dil_w;
        src[(kh * p.KW + kw) * kPixels + r] = row_in && iw >= 0 && iw < p.W ? image + (ih * p.W + iw) * p.C : pad;
      }
    }
    if (r >= n_pix) break;
    if (++ow == p.OW) {
      ow = 0;
      if (++oh == p.OH) oh = 0, ++n;
    }
  }
  const int64_t taps = taps_of(p);
  for (int64_t r = n_pix; r < kPixels; ++r)
    for (int64_t t = 0; t < taps; ++t) src[t * kPixels + r] = src[t * kPixels + n_pix - 1];
}

// A thread's copy of the input rows its row-patch tiles read: global rows (n H + ih) from
// `first` on, each `row_bytes` long: pad_left pixels of x's zero point, the row, then more of
// them up to the last column a window reads and the bytes a patch is rounded up by.
struct PatchRows {
  const unsigned char* rows = nullptr;
  int64_t first = 0, row_bytes = 0;
};

int64_t patch_row_bytes(const Conv2dParams& p) {
  const int64_t last_window_end = (p.OW - 1) * p.stride_w - p.pad_left + p.KW;  // one past its last column
  const int64_t columns = p.pad_left + std::max(p.W, last_window_end) + (3 + p.C - 1) / p.C;
  return round_up(columns * p.C, 4);
}

// The global input rows [first, last] that output rows [r0, r1) of all images read (clamped to
// the images; rows in between images included).
std::pair<int64_t, int64_t> patch_row_range(const Conv2dParams& p, int64_t r0, int64_t r1) {
  const int64_t n0 = r0 / p.OH, oh0 = r0 % p.OH, n1 = (r1 - 1) / p.OH, oh1 = (r1 - 1) % p.OH;
  const int64_t first = n0 * p.H + std::clamp<int64_t>(oh0 * p.stride_h - p.pad_top, 0, p.H - 1);
  const int64_t last = n1 * p.H + std::clamp<int64_t>(oh1 * p.stride_h - p.pad_top + (p.KH - 1) * p.dil_h, 0, p.H - 1);
  return {first, last};
}

// Copies rows [first, last] of x (NHWC) into `rows`, padded.
void fill_patch_rows(const Conv2dParams& p, const unsigned char* x, int32_t x_zero_point, int64_t first, int64_t last,
                     int64_t row_bytes, unsigned char* rows) {
  const int64_t left = p.pad_left * p.C, width = p.W * p.C;
  const auto zp = static_cast<unsigned char>(x_zero_point);
  for (int64_t g = first; g <= last; ++g) {
    unsigned char* row = rows + (g - first) * row_bytes;
    std::memset(row, zp, static_cast<size_t>(left));
    std::memcpy(row + left, x + g * width, static_cast<size_t>(width));
    std::memset(row + left + width, zp, static_cast<size_t>(row_bytes - left - width));
  }
}

// tile_sources for the row patches of p: tap kh of pixel (n, oh, ow) is the patch at column
// ow stride_w (of the padded row) of input row oh stride_h - pad_top + kh dil_h.
void patch_sources(const Conv2dParams& p, const PatchRows& pr, const unsigned char* pad, int64_t j, int64_t n_pix,
                   const unsigned char** src) {
  const int64_t plane = p.OH * p.OW;
  int64_t n = j / plane, oh = j % plane / p.OW, ow = j % p.OW;
  for (int64_t r = 0; r < n_pix; ++r) {
    const int64_t ih0 = oh * p.stride_h - p.pad_top;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = ih0 + kh * p.dil_h;
      src[kh * kPixels + r] = ih >= 0 && ih < p.H ? pr.rows + (n * p.H + ih - pr.first) * pr.row_bytes + ow * p.stride_w * p.C
                                                  : pad;
    }
    if (++ow == p.OW) {
      ow = 0;
      if (++oh == p.OH) oh = 0, ++n;
    }
  }
  for (int64_t r = n_pix; r < kPixels; ++r)
    for (int64_t kh = 0; kh < p.KH; ++kh) src[kh * kPixels + r] = src[kh * kPixels + n_pix - 1];
}

// The padded input rows that output row r's kernel rows read (src[kh]; nullptr outside the
// image, where the pad row is read).
void kernel_rows(const Conv2dParams& p, const PatchRows& pr, int64_t r, const unsigned char** src) {
  const int64_t n = r / p.OH, oh = r % p.OH;
  for (int64_t kh = 0; kh < p.KH; ++kh) {
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
    src[kh] = ih >= 0 && ih < p.H ? pr.rows + (n * p.H + ih - pr.first) * pr.row_bytes : nullptr;
  }
}

// The KH row patches of output row r (of all images: n OH + oh), each v.C bytes
// (patch_params(p)), pixel by pixel: pixel ow's at out + ow KH v.C, the layout of a 1x1 on
// KH v.C channels (an im2col of the patches), so that the AVX2 pointwise kernel runs the layer.
// Copied 16 bytes at a time, which reads up to 12 bytes past a patch (the rows and the pad row
// have that slack) and writes as far past it, into the next patch, written after it, or into
// out's 16 bytes of slack: a call to memcpy per patch took longer than the products.
void gather_patches(const Conv2dParams& p, const PatchRows& pr, const unsigned char* pad, int64_t r,
                    unsigned char* out) {
  const int64_t bytes = patch_params(p).C, step = p.stride_w * p.C;
  const unsigned char* src[kMaxTaps];
  kernel_rows(p, pr, r, src);
  for (int64_t ow = 0; ow < p.OW; ++ow)
    for (int64_t kh = 0; kh < p.KH; ++kh, out += bytes) {
      const unsigned char* s = src[kh] ? src[kh] + ow * step : pad;
      for (int64_t k = 0; k < bytes; k += 16) std::memcpy(out + k, s + k, 16);
    }
}

// Output row r's windows as flat patches (flat_k bytes a pixel, at out + ow flat_k), for the
// AVX2 pointwise kernel. Each kernel row's KW x C bytes are copied 16 at a time, kh in turn,
// so that a copy's overrun is overwritten by the next kernel row or pixel, or lands in out's
// 16 bytes of slack; the bytes past K (at most 3) are what the copies left there, against
// weights of 0. The reads overrun as gather_patches' do.
void gather_flat(const Conv2dParams& p, const PatchRows& pr, const unsigned char* pad, int64_t r,
                 unsigned char* out) {
  const int64_t kf = flat_k(p), row = p.KW * p.C, step = p.stride_w * p.C;
  const unsigned char* src[kMaxTaps];
  kernel_rows(p, pr, r, src);
  for (int64_t ow = 0; ow < p.OW; ++ow, out += kf)
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const unsigned char* s = src[kh] ? src[kh] + ow * step : pad;
      for (int64_t k = 0; k < row; k += 16) std::memcpy(out + kh * row + k, s + k, 16);
    }
}

// Output pixels [j0, j1) of a row-patch layer p read straight from x (NHWC), each tap's column
// checked: for a thread whose row buffer cannot grow.
template <class Y>
void patch_direct(const Conv2dParams& p, const unsigned char* x, int32_t x_zero_point, uint8_t flip,
                  const int8_t* blocks, const ChannelTerms& t, int32_t y_zero_point, Y* y, int64_t j0, int64_t j1) {
  const int64_t kq = patch_params(p).C / 4, plane = p.OH * p.OW;
  const auto zp = static_cast<unsigned char>(x_zero_point);
  for (int64_t j = j0; j < j1; ++j) {
    const int64_t n = j / plane, oh = j % plane / p.OW, ow = j % p.OW;
    for (int64_t m = 0; m < p.M; ++m) {
      const int8_t* w = blocks + (m / kBlock) * p.KH * kq * 64 + (m % kBlock) * 4;
      uint32_t s = static_cast<uint32_t>(t.add[m]);
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          const int64_t iw = ow * p.stride_w - p.pad_left + kw;
          const bool in = ih >= 0 && ih < p.H && iw >= 0 && iw < p.W;
          for (int64_t c = 0; c < p.C; ++c) {
            const unsigned char b = in ? x[((n * p.H + ih) * p.W + iw) * p.C + c] : zp;
            const int64_t k = kw * p.C + c;
            s += static_cast<uint32_t>(b ^ flip) * static_cast<uint32_t>(int32_t{w[(kh * kq + k / 4) * 64 + k % 4]});
          }
        }
      }
      y[j * p.M + m] = requantize_f32<Y>(static_cast<int32_t>(s), t.scale[m], y_zero_point);
    }
  }
}

// Output pixels [j0, j1) with plain loops; p is the packed layer (packed_params), `sources`
// tile_sources or patch_sources for one pixel.
template <class Y, class Sources>
void dense_portable(const Conv2dParams& p, const Sources& sources, uint8_t flip, const int8_t* blocks,
                    const ChannelTerms& t, int32_t y_zero_point, Y* y, int64_t j0, int64_t j1) {
  const int64_t kq = p.C / 4, taps = taps_of(p);
  const unsigned char* src[kMaxTaps * kPixels];
  for (int64_t j = j0; j < j1; ++j) {
    sources(j, 1, src);
    for (int64_t m = 0; m < p.M; ++m) {
      const int8_t* w = blocks + (m / kBlock) * taps * kq * 64 + (m % kBlock) * 4;
      uint32_t s = static_cast<uint32_t>(t.add[m]);
      for (int64_t tap = 0; tap < taps; ++tap) {
        const unsigned char* xj = src[tap * kPixels];
        for (int64_t k = 0; k < p.C; ++k)
          s += static_cast<uint32_t>(xj[k] ^ flip) *
               static_cast<uint32_t>(int32_t{w[(tap * kq + k / 4) * 64 + k % 4]});
      }
      y[j * p.M + m] = requantize_f32<Y>(static_cast<int32_t>(s), t.scale[m], y_zero_point);
    }
  }
}

#if KILN_QCONV_NHWC_X86
bool vnni_supported() {
  static const bool ok = qgemm_isa_supported(QGemmIsa::avx512_vnni) && cpu_has_avx512_vbmi();
  return ok;
}

// One tile: pixel r's tap t at src[t * 7 + r] (rows past the range repeat its last pixel), V
// blocks from w (w_block bytes apart), requantized to y + j * M for the first n_pix pixels,
// n_ch <= 16 V channels.
template <int V, bool Signed>
__attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512vnni"))) void tile(
    const unsigned char* const* src, int64_t taps, int64_t kq, uint32_t flip, const int8_t* w, int64_t w_block,
    const int32_t* add, const float* scale, int32_t y_zero_point, unsigned char* y, int64_t M, int64_t n_pix,
    int64_t n_ch) {
  __m512i acc[kPixels][V];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < kPixels; ++r) {
    _Pragma("GCC unroll 4")
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_loadu_si512(add + v * kBlock);
  }
  const __m512i flips = _mm512_set1_epi32(static_cast<int32_t>(flip));
  for (int64_t t = 0; t < taps; ++t, src += kPixels) {
    const unsigned char* xr[kPixels];
    _Pragma("GCC unroll 8")
    for (int r = 0; r < kPixels; ++r) xr[r] = src[r];
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

// The first n_ch of a pixel's `width` output bytes (8 or 16, the low ones of b) to y.
__attribute__((target("avx2,fma"))) inline void store_channels(unsigned char* y, __m128i b, int64_t n_ch,
                                                                int64_t width) {
  if (n_ch >= width) {
    if (width == 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y), b);
    else
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y), b);
  } else {
    alignas(16) unsigned char tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), b);
    std::memcpy(y, tmp, static_cast<size_t>(n_ch));
  }
}

// A pixel's 4 bytes at `at` in every dword, their sign bits flipped for an s8 input (XSigned,
// read as u8). The AVX2 tiles' broadcast operand; the signedness a template parameter, as a
// run-time flag cost a test and a branch at every broadcast.
template <bool XSigned>
__attribute__((target("avx2,fma"), always_inline)) inline __m256i quad_of(const unsigned char* at) {
  int32_t quad;
  std::memcpy(&quad, at, 4);
  const __m256i b = _mm256_set1_epi32(quad);
  return XSigned ? _mm256_xor_si256(b, _mm256_set1_epi8(static_cast<char>(0x80))) : b;
}

// AVX2 (no VNNI): the products widened to int16 and summed in pairs by vpmaddwd, exact (a u8 x
// s8 product fits int16, a sum of two does not: vpmaddubsw would saturate). R <= 4 pixels
// (src[t * 7 + r0 + r]) times 8 output channels: 2R sums in registers, of 16. w: the 8
// channels' bytes in the packed blocks (the block's half), 64 bytes per group of 4 input
// channels; add, scale: those 8 channels'. Requantized as requantize_f32 (clamped in float,
// then rounded half to even by vcvtps2dq).
template <int R, bool Signed, bool XSigned>
__attribute__((target("avx2,fma"))) void tile_avx2(const unsigned char* const* src, int64_t r0, int64_t taps,
                                                   int64_t kq, const int8_t* w, const int32_t* add,
                                                   const float* scale, int32_t y_zero_point, unsigned char* y,
                                                   int64_t M, int64_t n_pix, int64_t n_ch) {
  __m256i acc[R][2];
  _Pragma("GCC unroll 4")
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  // A pixel's 4 bytes (broadcast to every dword) as 4 int16, in every 64-bit quarter.
  const __m256i widen = _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1,
                                         3, -1, 0, -1, 1, -1, 2, -1, 3, -1);
  for (int64_t t = 0; t < taps; ++t) {
    const unsigned char* xr[R];
    _Pragma("GCC unroll 4")
    for (int r = 0; r < R; ++r) xr[r] = src[t * kPixels + r0 + r];
    const int8_t* wt = w + t * kq * 64;
    for (int64_t g = 0; g < kq; ++g) {
      const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wt + g * 64)));
      const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wt + g * 64 + 16)));
      _Pragma("GCC unroll 4")
      for (int r = 0; r < R; ++r) {
        const __m256i b = _mm256_shuffle_epi8(quad_of<XSigned>(xr[r] + g * 4), widen);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(b, w0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(b, w1));
      }
    }
  }
  const __m256 vs = _mm256_loadu_ps(scale);
  const Requant8Bounds q8 = requant8_bounds<Signed>(y_zero_point);
  const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(add));
  for (int r = 0; r < R && r < n_pix; ++r) {
    // acc0 = [c0 c0 c1 c1 | c2 c2 c3 c3], acc1 = [c4 c4 c5 c5 | c6 c6 c7 c7] (pair sums)
    const __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
    const __m256i q = requant8(_mm256_add_epi32(s, va), vs, q8.hi);
    const __m128i w16 = _mm_adds_epi16(_mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)),
                                       _mm256_castsi256_si128(q8.zero_point));
    store_channels(y + (r0 + r) * M, Signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16), n_ch, 8);
  }
}

// acc + one group of 4 input channels of a pixel (b) times 8 channels' weights (w): vpmaddubsw's
// int16 pair sums, widened and summed into int32 by vpmaddwd by ones.
__attribute__((target("avx2,fma"), always_inline)) inline __m256i pairs_mac(__m256i acc, __m256i b, __m256i w,
                                                                            __m256i ones) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(b, w), ones));
}

// One group of 4 input channels for R pixels (their bytes at xr[r] + offset) against a block's
// 16 channels (w0, w1), pairs_mac's. The step of tile_avx2_pairs.
template <int R, bool XSigned>
__attribute__((target("avx2,fma"), always_inline)) inline void pairs_step(__m256i (&acc)[R][2],
                                                                           const unsigned char* const* xr,
                                                                           int64_t offset, __m256i w0, __m256i w1,
                                                                           __m256i ones) {
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    const __m256i b = quad_of<XSigned>(xr[r] + offset);
    acc[r][0] = pairs_mac(acc[r][0], b, w0, ones);
    acc[r][1] = pairs_mac(acc[r][1], b, w1, ones);
  }
}

// A pixel's 16 sums of a block (acc0: channels 0-7, acc1: 8-15; the channel terms included)
// requantized and stored, the first n_ch bytes at y.
template <bool Signed, bool Clamp = true>
__attribute__((target("avx2,fma"), always_inline)) inline void store_pairs_pixel(__m256i acc0, __m256i acc1,
                                                                                  __m256 vs0, __m256 vs1,
                                                                                  const Requant8Bounds& q8,
                                                                                  unsigned char* y, int64_t n_ch) {
  const __m256i q0 = requant8<Clamp>(acc0, vs0, q8.hi), q1 = requant8<Clamp>(acc1, vs1, q8.hi);
  // [c0-3 c8-11 | c4-7 c12-15] as int16 with the zero point, then the quarters in channel order.
  const __m256i w16 = _mm256_permute4x64_epi64(_mm256_adds_epi16(_mm256_packs_epi32(q0, q1), q8.zero_point), 0xD8);
  const __m128i lo16 = _mm256_castsi256_si128(w16), hi16 = _mm256_extracti128_si256(w16, 1);
  store_channels(y, Signed ? _mm_packs_epi16(lo16, hi16) : _mm_packus_epi16(lo16, hi16), n_ch, 16);
}

// store_pairs_pixel for two pixels whose 16 channels are all stored (n_ch 16): their int16
// packs share one byte pack and one dword permutation, 7 shuffles and adds for the two where
// store_pairs_pixel takes 5 a pixel (the small-K expansions spend a third of their time here).
template <bool Signed, bool Clamp>
__attribute__((target("avx2,fma"), always_inline)) inline void store_pairs_two(__m256i a0, __m256i a1, __m256i b0,
                                                                                __m256i b1, __m256 vs0, __m256 vs1,
                                                                                const Requant8Bounds& q8,
                                                                                unsigned char* ya, unsigned char* yb) {
  // [c0-3 c8-11 | c4-7 c12-15] as int16 with the zero point, for each pixel
  const __m256i a16 = _mm256_adds_epi16(
      _mm256_packs_epi32(requant8<Clamp>(a0, vs0, q8.hi), requant8<Clamp>(a1, vs1, q8.hi)), q8.zero_point);
  const __m256i b16 = _mm256_adds_epi16(
      _mm256_packs_epi32(requant8<Clamp>(b0, vs0, q8.hi), requant8<Clamp>(b1, vs1, q8.hi)), q8.zero_point);
  // bytes, dwords [a0-3 a8-11 b0-3 b8-11 | a4-7 a12-15 b4-7 b12-15], then a's 16 and b's 16
  const __m256i packed = Signed ? _mm256_packs_epi16(a16, b16) : _mm256_packus_epi16(a16, b16);
  const __m256i ordered = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(ya), _mm256_castsi256_si128(ordered));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(yb), _mm256_extracti128_si256(ordered, 1));
}

// AVX2 where the weights' pairs fit int16 (dense_pairs_fit_int16): vpmaddubsw multiplies the
// u8 pixel bytes by the s8 weights and sums each pair in int16, exact here; vpmaddwd by ones
// sums the two pairs of a channel into its int32. A whole block, 16 output channels (two
// vectors of 8 channels x 4 bytes, no widening), times R <= 4 pixels: 2R sums in registers.
// Half the instructions of tile_avx2 for the same products.
template <int R, bool Signed, bool XSigned>
__attribute__((target("avx2,fma"))) void tile_avx2_pairs(const unsigned char* const* src, int64_t r0, int64_t taps,
                                                         int64_t kq, const int8_t* w,
                                                         const int32_t* add, const float* scale,
                                                         int32_t y_zero_point, unsigned char* y, int64_t M,
                                                         int64_t n_pix, int64_t n_ch) {
  // The sums start at the channel terms (wrapping int32, as the reference's sums).
  const __m256i va0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(add));
  const __m256i va1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(add + 8));
  __m256i acc[R][2];
  _Pragma("GCC unroll 4")
  for (int r = 0; r < R; ++r) acc[r][0] = va0, acc[r][1] = va1;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t t = 0; t < taps; ++t) {
    const unsigned char* xr[R];
    _Pragma("GCC unroll 4")
    for (int r = 0; r < R; ++r) xr[r] = src[t * kPixels + r0 + r];
    const int8_t* wt = w + t * kq * 64;
    for (int64_t g = 0; g < kq; ++g) {
      const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + g * 64));
      const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + g * 64 + 32));
      pairs_step<R, XSigned>(acc, xr, g * 4, w0, w1, ones);
    }
  }
  const __m256 vs0 = _mm256_loadu_ps(scale), vs1 = _mm256_loadu_ps(scale + 8);
  const Requant8Bounds q8 = requant8_bounds<Signed>(y_zero_point);
  for (int r = 0; r < R && r < n_pix; ++r)
    store_pairs_pixel<Signed>(acc[r][0], acc[r][1], vs0, vs1, q8, y + (r0 + r) * M, n_ch);
}

// tile_avx2_pairs with AVX-VNNI for a whole unit of 7 pixels (src[t * 7 + r]) times a block of 16
// channels: 14 sums. vpdpbusd takes 5 cycles and two issue a cycle, so the 4 + 3 pixel tiles
// (8 and 6 chains) left the multiply pipes idle a quarter of the time. 14 sums, a broadcast and
// the block's two weight vectors do not fit 16 ymm registers: the first weight vector is in the
// last register, the second vpdpbusd's memory operand (with both from memory, 21 loads for 14
// multiplies kept the load ports busier than the multiply pipes: ResNet-50's int8 3x3s took
// 14.2 ms against 12.1). A group of 4 input channels is written as assembly (two statements):
// as intrinsics on an array of sums, GCC kept every sum on the stack, a load and a store around
// each multiply. XSigned: s8 pixels flipped to u8 by the xor with kFlip, as quad_of does.
// AddressSanitizer does not see the assembly's loads; the tests run this tile over every shape
// against the reference (test_qconv_nhwc.cpp, QGemmIsa::avx_vnni).
alignas(32) constexpr unsigned char kFlip[32] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

#define KILN_VNNI_PIXEL(X, A0, A1)                          \
  "vpbroadcastd (%[" X "],%[off]), %[b]\n\t"              \
  ".if " "%c[flip]" "\n\t"                                \
  "vpxor %[fl], %[b], %[b]\n\t"                           \
  ".endif\n\t"                                            \
  "%{vex%} vpdpbusd %[w0], %[b], %[" A0 "]\n\t"            \
  "%{vex%} vpdpbusd %[w1], %[b], %[" A1 "]\n\t"

template <bool Signed, bool XSigned>
__attribute__((target("avx2,fma"))) void tile_vnni7(const unsigned char* const* src, int64_t /*r0: 0*/,
                                                    int64_t taps, int64_t kq, const int8_t* w, const int32_t* add,
                                                    const float* scale, int32_t y_zero_point, unsigned char* y,
                                                    int64_t M, int64_t n_pix, int64_t n_ch) {
  using Bytes32 = long long __attribute__((vector_size(32), may_alias, aligned(1)));
  const __m256i va0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(add));
  const __m256i va1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(add + 8));
  __m256i a00 = va0, a01 = va1, a10 = va0, a11 = va1, a20 = va0, a21 = va1, a30 = va0, a31 = va1;
  __m256i a40 = va0, a41 = va1, a50 = va0, a51 = va1, a60 = va0, a61 = va1;
  const Bytes32& flip = *reinterpret_cast<const Bytes32*>(kFlip);
  for (int64_t t = 0; t < taps; ++t) {
    const unsigned char* const* ts = src + t * kPixels;
    const unsigned char *x0 = ts[0], *x1 = ts[1], *x2 = ts[2], *x3 = ts[3], *x4 = ts[4], *x5 = ts[5], *x6 = ts[6];
    const int8_t* wt = w + t * kq * 64;
    for (int64_t g = 0; g < kq; ++g) {
      const __m256i w0r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + g * 64));
      const Bytes32& w1 = *reinterpret_cast<const Bytes32*>(wt + g * 64 + 32);
      // Two blocks: an asm statement takes at most 30 operands, each sum counting twice.
      __m256i b;
      __asm__(KILN_VNNI_PIXEL("x0", "a00", "a01") KILN_VNNI_PIXEL("x1", "a10", "a11")
                  KILN_VNNI_PIXEL("x2", "a20", "a21") KILN_VNNI_PIXEL("x3", "a30", "a31")
              : [a00] "+x"(a00), [a01] "+x"(a01), [a10] "+x"(a10), [a11] "+x"(a11), [a20] "+x"(a20),
                [a21] "+x"(a21), [a30] "+x"(a30), [a31] "+x"(a31), [b] "=&x"(b)
              : [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [x3] "r"(x3), [off] "r"(g * 4), [w0] "x"(w0r),
                [w1] "m"(w1), [fl] "m"(flip), [flip] "i"(XSigned ? 1 : 0));
      __asm__(KILN_VNNI_PIXEL("x4", "a40", "a41") KILN_VNNI_PIXEL("x5", "a50", "a51")
                  KILN_VNNI_PIXEL("x6", "a60", "a61")
              : [a40] "+x"(a40), [a41] "+x"(a41), [a50] "+x"(a50), [a51] "+x"(a51), [a60] "+x"(a60),
                [a61] "+x"(a61), [b] "=&x"(b)
              : [x4] "r"(x4), [x5] "r"(x5), [x6] "r"(x6), [off] "r"(g * 4), [w0] "x"(w0r), [w1] "m"(w1),
                [fl] "m"(flip), [flip] "i"(XSigned ? 1 : 0));
    }
  }
  const __m256 vs0 = _mm256_loadu_ps(scale), vs1 = _mm256_loadu_ps(scale + 8);
  const Requant8Bounds q8 = requant8_bounds<Signed>(y_zero_point);
  const __m256i sums[7][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}, {a60, a61}};
  for (int64_t r = 0; r < n_pix && r < 7; ++r)
    store_pairs_pixel<Signed>(sums[r][0], sums[r][1], vs0, vs1, q8, y + r * M, n_ch);
}
#undef KILN_VNNI_PIXEL

// pointwise_pairs with AVX-VNNI, any weights: tiles of 7 pixels on tile_vnni7 (one tap; pixels
// past n_pix repeat the last), chunks of 56 pixels whose input stays in L1 while the blocks pass.
template <bool Signed, bool XSigned>
__attribute__((target("avx2,fma"))) void pointwise_vnni(const unsigned char* x, int64_t C, int64_t M, int64_t j0,
                                                        int64_t j1, int64_t b0, int64_t b1, const int8_t* blocks,
                                                        const ChannelTerms& t, int32_t y_zero_point, unsigned char* y) {
  constexpr int64_t kChunk = 8 * kPixels;
  const int64_t kq = C / 4, w_block = kq * 64;
  for (int64_t c0 = j0; c0 < j1; c0 += kChunk) {
    const int64_t c1 = std::min(j1, c0 + kChunk);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = b * kBlock, n_ch = std::min<int64_t>(kBlock, M - m0);
      for (int64_t j = c0; j < c1; j += kPixels) {
        const int64_t n_pix = std::min(kPixels, c1 - j);
        const unsigned char* src[kPixels];
        for (int64_t r = 0; r < kPixels; ++r) src[r] = x + (j + std::min(r, n_pix - 1)) * C;
        tile_vnni7<Signed, XSigned>(src, 0, 1, kq, blocks + b * w_block, t.add + m0, t.scale + m0, y_zero_point,
                                    y + j * M + m0, M, n_pix, n_ch);
      }
    }
  }
}

// tile_avx2_pairs for a 1x1 with stride 1 and no padding: pixels [j, j + 4) (pixel j's channels
// at x + j C; pixels past n_pix repeat the last) times one block of 16 output channels. The 8
// sums are named locals, not an array: GCC kept an array of them on the stack, and branched on
// a run-time flip at every broadcast (3-14% of MobileNetV2's 1x1s). KQ, when not 0, is kq
// as a constant (MobileNetV2's expansions have 4 to 40 groups).
template <bool Signed, bool XSigned, int KQ, bool Clamp>
__attribute__((target("avx2,fma"), always_inline)) inline void pointwise_pairs_tile(
    const unsigned char* x, int64_t C, int64_t j, int64_t n_pix, int64_t kq_runtime, const int8_t* w, __m256i va0,
    __m256i va1, __m256 vs0, __m256 vs1, const Requant8Bounds& q8, unsigned char* y, int64_t M, int64_t n_ch) {
  const int64_t kq = KQ ? KQ : kq_runtime;
  const unsigned char* x0 = x + j * C;
  const unsigned char* x1 = x + (j + std::min<int64_t>(1, n_pix - 1)) * C;
  const unsigned char* x2 = x + (j + std::min<int64_t>(2, n_pix - 1)) * C;
  const unsigned char* x3 = x + (j + std::min<int64_t>(3, n_pix - 1)) * C;
  // From the channel terms, as in tile_avx2_pairs; aRV: pixel R, channels 8V..8V+7.
  __m256i a00 = va0, a01 = va1, a10 = va0, a11 = va1, a20 = va0, a21 = va1, a30 = va0, a31 = va1;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < kq; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64 + 32));
    __m256i b = quad_of<XSigned>(x0 + g * 4);
    a00 = pairs_mac(a00, b, w0, ones), a01 = pairs_mac(a01, b, w1, ones);
    b = quad_of<XSigned>(x1 + g * 4);
    a10 = pairs_mac(a10, b, w0, ones), a11 = pairs_mac(a11, b, w1, ones);
    b = quad_of<XSigned>(x2 + g * 4);
    a20 = pairs_mac(a20, b, w0, ones), a21 = pairs_mac(a21, b, w1, ones);
    b = quad_of<XSigned>(x3 + g * 4);
    a30 = pairs_mac(a30, b, w0, ones), a31 = pairs_mac(a31, b, w1, ones);
  }
  unsigned char* yj = y + j * M;
  if (n_pix == 4 && n_ch == kBlock) {
    store_pairs_two<Signed, Clamp>(a00, a01, a10, a11, vs0, vs1, q8, yj, yj + M);
    store_pairs_two<Signed, Clamp>(a20, a21, a30, a31, vs0, vs1, q8, yj + 2 * M, yj + 3 * M);
    return;
  }
  store_pairs_pixel<Signed, Clamp>(a00, a01, vs0, vs1, q8, yj, n_ch);
  if (n_pix > 1) store_pairs_pixel<Signed, Clamp>(a10, a11, vs0, vs1, q8, yj + M, n_ch);
  if (n_pix > 2) store_pairs_pixel<Signed, Clamp>(a20, a21, vs0, vs1, q8, yj + 2 * M, n_ch);
  if (n_pix > 3) store_pairs_pixel<Signed, Clamp>(a30, a31, vs0, vs1, q8, yj + 3 * M, n_ch);
}

// A pixel's 8 sums (one vector) requantized and stored, the first n_ch bytes at y.
template <bool Signed, bool Clamp>
__attribute__((target("avx2,fma"), always_inline)) inline void store_half_pixel(__m256i acc, __m256 vs,
                                                                                 const Requant8Bounds& q8,
                                                                                 unsigned char* y, int64_t n_ch) {
  const __m256i q = requant8<Clamp>(acc, vs, q8.hi);
  const __m128i w16 = _mm_adds_epi16(_mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)),
                                     _mm256_castsi256_si128(q8.zero_point));
  store_channels(y, Signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16), n_ch, 8);
}

// pointwise_pairs_tile for a last block of at most 8 channels (M = 24: MobileNetV2's 56 x 56
// projections): only the block's first weight vector, so no products are spent on the 8
// channels past M, and 8 pixels share each weight load.
template <bool Signed, bool XSigned, int KQ, bool Clamp>
__attribute__((target("avx2,fma"), always_inline)) inline void pointwise_half_tile(
    const unsigned char* x, int64_t C, int64_t j, int64_t n_pix, int64_t kq_runtime, const int8_t* w, __m256i va,
    __m256 vs, const Requant8Bounds& q8, unsigned char* y, int64_t M, int64_t n_ch) {
  const int64_t kq = KQ ? KQ : kq_runtime;
  const auto px = [&](int64_t r) { return x + (j + std::min<int64_t>(r, n_pix - 1)) * C; };
  const unsigned char *x0 = px(0), *x1 = px(1), *x2 = px(2), *x3 = px(3);
  const unsigned char *x4 = px(4), *x5 = px(5), *x6 = px(6), *x7 = px(7);
  __m256i a0 = va, a1 = va, a2 = va, a3 = va, a4 = va, a5 = va, a6 = va, a7 = va;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < kq; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64));
    a0 = pairs_mac(a0, quad_of<XSigned>(x0 + g * 4), w0, ones);
    a1 = pairs_mac(a1, quad_of<XSigned>(x1 + g * 4), w0, ones);
    a2 = pairs_mac(a2, quad_of<XSigned>(x2 + g * 4), w0, ones);
    a3 = pairs_mac(a3, quad_of<XSigned>(x3 + g * 4), w0, ones);
    a4 = pairs_mac(a4, quad_of<XSigned>(x4 + g * 4), w0, ones);
    a5 = pairs_mac(a5, quad_of<XSigned>(x5 + g * 4), w0, ones);
    a6 = pairs_mac(a6, quad_of<XSigned>(x6 + g * 4), w0, ones);
    a7 = pairs_mac(a7, quad_of<XSigned>(x7 + g * 4), w0, ones);
  }
  unsigned char* yj = y + j * M;
  const __m256i a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
  for (int64_t r = 0; r < n_pix; ++r) store_half_pixel<Signed, Clamp>(a[r], vs, q8, yj + r * M, n_ch);
}

// Output pixels [j0, j1) of a 1x1 with stride 1 and no padding whose weight pairs fit int16,
// blocks [b0, b1) of 16 output channels: chunks of 64 pixels (their input stays in L1), each
// block in turn over the chunk's tiles of 4 pixels (8 for a last block of 8 channels or fewer),
// all in one call.
template <bool Signed, bool XSigned, int KQ, bool Clamp>
__attribute__((target("avx2,fma"))) void pointwise_pairs(const unsigned char* x, int64_t C, int64_t M, int64_t j0,
                                                         int64_t j1, int64_t b0, int64_t b1, const int8_t* blocks,
                                                         const ChannelTerms& t, int32_t y_zero_point,
                                                         unsigned char* y) {
  constexpr int64_t kChunk = 64;
  constexpr int kTileR = 4, kHalfTileR = 8;
  const int64_t kq = C / 4, w_block = kq * 64;
  const Requant8Bounds q8 = requant8_bounds<Signed>(y_zero_point);
  for (int64_t c0 = j0; c0 < j1; c0 += kChunk) {
    const int64_t c1 = std::min(j1, c0 + kChunk);
    for (int64_t b = b0; b < b1; ++b) {
      const int8_t* w = blocks + b * w_block;
      const int64_t m0 = b * kBlock, n_ch = std::min<int64_t>(kBlock, M - m0);
      const __m256 vs0 = _mm256_loadu_ps(t.scale + m0), vs1 = _mm256_loadu_ps(t.scale + m0 + 8);
      const __m256i va0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.add + m0));
      const __m256i va1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.add + m0 + 8));
      unsigned char* yb = y + m0;
      if (n_ch <= 8) {
        for (int64_t j = c0; j < c1; j += kHalfTileR)
          pointwise_half_tile<Signed, XSigned, KQ, Clamp>(x, C, j, std::min<int64_t>(kHalfTileR, c1 - j), kq, w, va0,
                                                          vs0, q8, yb, M, n_ch);
        continue;
      }
      for (int64_t j = c0; j < c1; j += kTileR)
        pointwise_pairs_tile<Signed, XSigned, KQ, Clamp>(x, C, j, std::min<int64_t>(kTileR, c1 - j), kq, w, va0, va1,
                                                         vs0, vs1, q8, yb, M, n_ch);
    }
  }
}

using PointwisePairsFn = void (*)(const unsigned char*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  const int8_t*, const ChannelTerms&, int32_t, unsigned char*);

template <bool Signed, bool Clamp>
PointwisePairsFn pointwise_pairs_kernel(int64_t kq) {
  switch (kq) {
    case 4: return pointwise_pairs<Signed, false, 4, Clamp>;
    case 6: return pointwise_pairs<Signed, false, 6, Clamp>;
    case 7: return pointwise_pairs<Signed, false, 7, Clamp>;  // a 3x3 stem's flat patches on 3 channels
    case 8: return pointwise_pairs<Signed, false, 8, Clamp>;
    case 9: return pointwise_pairs<Signed, false, 9, Clamp>;  // a 3x3 stem's row patches on 3 channels
    case 16: return pointwise_pairs<Signed, false, 16, Clamp>;
    case 24: return pointwise_pairs<Signed, false, 24, Clamp>;
    default: return pointwise_pairs<Signed, false, 0, Clamp>;
  }
}

template <bool Signed>
PointwisePairsFn pointwise_pairs_kernel(int64_t kq, bool clamp, bool x_signed) {
  if (x_signed) return clamp ? pointwise_pairs<Signed, true, 0, true> : pointwise_pairs<Signed, true, 0, false>;
  return clamp ? pointwise_pairs_kernel<Signed, true>(kq) : pointwise_pairs_kernel<Signed, false>(kq);
}

// The kernel for the layer: K as a constant where a u8 input has few groups (s8 inputs, rare
// in kiln's own quantization, take the general one); with AVX-VNNI (vnni) pointwise_vnni.
PointwisePairsFn pointwise_pairs_kernel(int64_t kq, bool y_signed, bool clamp, bool x_signed, bool vnni) {
  if (vnni)
    return y_signed ? (x_signed ? pointwise_vnni<true, true> : pointwise_vnni<true, false>)
                    : (x_signed ? pointwise_vnni<false, true> : pointwise_vnni<false, false>);
  return y_signed ? pointwise_pairs_kernel<true>(kq, clamp, x_signed) : pointwise_pairs_kernel<false>(kq, clamp, x_signed);
}

// The AVX2 tiles of R pixels (tile_avx2_pairs where the weights' pairs fit int16, else
// tile_avx2) for the output's and the input's signedness.
using Avx2TileFn = void (*)(const unsigned char* const*, int64_t, int64_t, int64_t, const int8_t*, const int32_t*,
                            const float*, int32_t, unsigned char*, int64_t, int64_t, int64_t);

template <int R>
Avx2TileFn avx2_tile(bool pairs, bool y_signed, bool x_signed) {
  if (pairs)
    return y_signed ? (x_signed ? tile_avx2_pairs<R, true, true> : tile_avx2_pairs<R, true, false>)
                    : (x_signed ? tile_avx2_pairs<R, false, true> : tile_avx2_pairs<R, false, false>);
  return y_signed ? (x_signed ? tile_avx2<R, true, true> : tile_avx2<R, true, false>)
                  : (x_signed ? tile_avx2<R, false, true> : tile_avx2<R, false, false>);
}

// With AVX-VNNI, the tile of a whole unit of 7 pixels (tile_vnni7).
Avx2TileFn vnni_tile7(bool y_signed, bool x_signed) {
  return y_signed ? (x_signed ? tile_vnni7<true, true> : tile_vnni7<true, false>)
                  : (x_signed ? tile_vnni7<false, true> : tile_vnni7<false, false>);
}

using TileFn = void (*)(const unsigned char* const*, int64_t, int64_t, uint32_t, const int8_t*, int64_t,
                        const int32_t*, const float*, int32_t, unsigned char*, int64_t, int64_t, int64_t);

template <bool Signed>
TileFn tile_kernel(int vecs) {
  return vecs == 1 ? tile<1, Signed> : vecs == 2 ? tile<2, Signed> : tile<3, Signed>;
}
#endif

// Weight blocks of a tile: 3, or 2 + 2 rather than 3 + 1.
int tile_vecs(int64_t remaining) { return remaining == 4 || remaining == 2 ? 2 : remaining == 1 ? 1 : kMaxVecs; }

// The layer's own p; its packed weights and tiles are those of v = packed_params(p).
void dense_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                ThreadPool* pool, QGemmIsa isa) {
  const bool patch = row_patch(p);
  const Conv2dParams v = packed_params(p);
  // kq, n_b, pairs, flat, contiguous, im2col: only the x86 tiles' (KILN_QCONV_NHWC_X86).
  [[maybe_unused]] const int64_t M = p.M, kq = v.C / 4, taps = taps_of(v), mb = round_up(M, kBlock), n_b = mb / kBlock;
  const auto* sums = reinterpret_cast<const int32_t*>(packed + kHeader);
  const auto* blocks = reinterpret_cast<const int8_t*>(packed + kHeader + sums_bytes(M));
  const uint8_t flip = x.a_signed ? 0x80 : 0;
  const uint32_t zx = static_cast<uint32_t>(x.zero_point) + (x.a_signed ? 128u : 0u);
  // The channel terms are the caller's; every thread reads them (a few KB).
  static thread_local std::vector<int32_t> fallback;
  const size_t terms_bytes = channel_terms_bytes(v);
  void* buffer = thread_buffer(ThreadBuffer::qgemm_panels, terms_bytes);
  if (buffer == nullptr) {
    fallback.assign(terms_bytes / 4 + 1, 0);
    buffer = fallback.data();
  }
  const ChannelTerms t = channel_terms(v, out, sums, zx, x.zero_point, buffer);
  const auto* xs = static_cast<const unsigned char*>(x.data);
  auto* y = static_cast<unsigned char*>(out.y);
  const bool is_signed = out.type == KILN_I8;
#if KILN_QCONV_NHWC_X86
  const bool vnni = (isa == QGemmIsa::automatic || isa == QGemmIsa::avx512_vnni) && vnni_supported();
  const bool avx2 = !vnni && (isa == QGemmIsa::automatic || isa == QGemmIsa::avx2 || isa == QGemmIsa::avx_vnni) &&
                    qgemm_isa_supported(QGemmIsa::avx2);
  // AVX-VNNI: the pairs family on vpdpbusd, whatever the weights.
  const bool avx_vnni = avx2 && (isa == QGemmIsa::automatic || isa == QGemmIsa::avx_vnni) &&
                        qgemm_isa_supported(QGemmIsa::avx_vnni);
#else
  [[maybe_unused]] const bool vnni = false, avx2 = false, avx_vnni = false;
  (void)isa;
#endif
  // The pairs family runs: vpmaddubsw where the weights' pairs fit int16, vpdpbusd with AVX-VNNI.
  [[maybe_unused]] const bool pairs = avx_vnni || dense_pairs_fit_int16(packed);
  if (kernel_log_enabled())  // avx2-int16: pairs that do not fit, products widened (tile_avx2)
    log_conv_kernel("qconv_nhwc",
                    vnni ? "avx512-vnni" : avx_vnni ? "avx-vnni" : avx2 ? (pairs ? "avx2" : "avx2-int16") : "portable",
                    p.C, p.H, p.W, p.M, p.KH, p.KW, p.stride_w);
  [[maybe_unused]] const int8_t* flat = patch ? flat_blocks(packed, avx_vnni) : nullptr;
  // A 1x1 whose output pixel j reads input pixel j.
  [[maybe_unused]] const bool contiguous = !patch && pointwise(p) && p.stride_h == 1 && p.stride_w == 1 && p.OH == p.H && p.OW == p.W;
  const int64_t row_bytes = patch ? patch_row_bytes(p) : 0;
  // Output rows [r0, r1) of all images: their pixels, weight blocks outermost (a tile's
  // weights stay in L1/L2 while the thread's pixels pass).
  auto run = [&](int64_t r0, int64_t r1) {
    const int64_t j0 = r0 * p.OW, j1 = r1 * p.OW;
    PatchRows pr;
    [[maybe_unused]] unsigned char* im2col = nullptr;  // a row patch layer's gather_patches, an output row's
    if (patch) {
      const auto [first, last] = patch_row_range(p, r0, r1);
      // 16 bytes of slack after the rows and after the patches, for gather_patches
      const int64_t rows_bytes = round_up((last - first + 1) * row_bytes + 16, 64);
      auto* rows = static_cast<unsigned char*>(thread_buffer(
          ThreadBuffer::qconv_patch_rows, static_cast<size_t>(rows_bytes + p.OW * taps * v.C + 16)));
      if (rows == nullptr) {
        if (is_signed)
          patch_direct(p, xs, x.zero_point, flip, blocks, t, out.y_zero_point, reinterpret_cast<int8_t*>(y), j0, j1);
        else
          patch_direct(p, xs, x.zero_point, flip, blocks, t, out.y_zero_point, y, j0, j1);
        return;
      }
      fill_patch_rows(p, xs, x.zero_point, first, last, row_bytes, rows);
      pr = {rows, first, row_bytes};
      im2col = rows + rows_bytes;
    }
    auto sources = [&](int64_t j, int64_t n_pix, const unsigned char** src) {
      if (patch)
        patch_sources(p, pr, t.pad, j, n_pix, src);
      else
        tile_sources(p, xs, t.pad, j, n_pix, src);
    };
#if KILN_QCONV_NHWC_X86
    if (avx2 && pairs && contiguous) {
      const PointwisePairsFn fn = pointwise_pairs_kernel(kq, is_signed, t.clamp, x.a_signed, avx_vnni);
      fn(xs, p.C, M, j0, j1, 0, n_b, blocks, t, out.y_zero_point, y);
      return;
    }
    if (avx2 && flat != nullptr) {
      // An output row's windows gathered as flat patches, then the pointwise kernel on them.
      const int64_t kf = flat_k(p);
      const PointwisePairsFn fn = pointwise_pairs_kernel(kf / 4, is_signed, t.clamp, x.a_signed, avx_vnni);
      for (int64_t r = r0; r < r1; ++r) {
        gather_flat(p, pr, t.pad, r, im2col);
        fn(im2col, kf, M, 0, p.OW, 0, n_b, flat, t, out.y_zero_point, y + r * p.OW * M);
      }
      return;
    }
    if (avx2 && pairs && patch) {
      // An output row's patches gathered side by side, then the pointwise kernel on them as a
      // 1x1 of taps x kq groups (the packed blocks' order): no tap table, and the stem's 4-pixel
      // tiles run straight through K (MobileNetV2's 3x3 stem: 296 -> ~190 us, one thread).
      const int64_t kp = taps * v.C;
      const PointwisePairsFn fn = pointwise_pairs_kernel(kp / 4, is_signed, t.clamp, x.a_signed, avx_vnni);
      for (int64_t r = r0; r < r1; ++r) {
        gather_patches(p, pr, t.pad, r, im2col);
        fn(im2col, kp, M, 0, p.OW, 0, n_b, blocks, t, out.y_zero_point, y + r * p.OW * M);
      }
      return;
    }
    if (avx2) {
      // Tiles a chunk: their tap addresses are found once for all the weight blocks (finding a
      // 3x3 tile's 63 took about as long as its multiplies on 64 channels, per block).
      constexpr int64_t kChunk = 8;
      const unsigned char* src[kChunk * kMaxTaps * kPixels];
      const int64_t w_block = taps * kq * 64, tile_src = taps * kPixels;
      const Avx2TileFn four = avx2_tile<4>(pairs, is_signed, x.a_signed);
      const Avx2TileFn three = avx2_tile<3>(pairs, is_signed, x.a_signed);
      // With AVX-VNNI a tile is the whole unit of 7 pixels (tile_vnni7).
      const Avx2TileFn seven = avx_vnni ? vnni_tile7(is_signed, x.a_signed) : nullptr;
      for (int64_t c0 = j0; c0 < j1; c0 += kChunk * kPixels) {
        const int64_t c1 = std::min(j1, c0 + kChunk * kPixels);
        for (int64_t j = c0; j < c1; j += kPixels)
          sources(j, std::min(kPixels, c1 - j), src + (j - c0) / kPixels * tile_src);
        if (pairs) {
          // Blocks of 16 channels, then the chunk's tiles: a block's weights stay in L1/L2
          // while the tiles pass.
          for (int64_t b = 0; b < n_b; ++b) {
            const int8_t* w = blocks + b * w_block;
            const int64_t m0 = b * kBlock, n_ch = std::min<int64_t>(kBlock, M - m0);
            for (int64_t j = c0; j < c1; j += kPixels) {
              const int64_t n_pix = std::min(kPixels, c1 - j);
              const unsigned char* const* ts = src + (j - c0) / kPixels * tile_src;
              unsigned char* yj = y + j * M + m0;
              if (seven != nullptr) {
                seven(ts, 0, taps, kq, w, t.add + m0, t.scale + m0, out.y_zero_point, yj, M, n_pix, n_ch);
                continue;
              }
              four(ts, 0, taps, kq, w, t.add + m0, t.scale + m0, out.y_zero_point, yj, M, n_pix, n_ch);
              if (n_pix > 4)
                three(ts, 4, taps, kq, w, t.add + m0, t.scale + m0, out.y_zero_point, yj, M, n_pix - 4, n_ch);
            }
          }
          continue;
        }
        // Half blocks of 8 channels, then the chunk's tiles: a half block's weights (8 K bytes)
        // stay in L1/L2 while the tiles pass.
        for (int64_t m0 = 0; m0 < M; m0 += 8) {
          const int8_t* w = blocks + (m0 / kBlock) * w_block + (m0 % kBlock) * 4;
          const int64_t n_ch = std::min<int64_t>(8, M - m0);
          for (int64_t j = c0; j < c1; j += kPixels) {
            const int64_t n_pix = std::min(kPixels, c1 - j);
            const unsigned char* const* ts = src + (j - c0) / kPixels * tile_src;
            unsigned char* yj = y + j * M + m0;
            four(ts, 0, taps, kq, w, t.add + m0, t.scale + m0, out.y_zero_point, yj, M, n_pix, n_ch);
            if (n_pix > 4)
              three(ts, 4, taps, kq, w, t.add + m0, t.scale + m0, out.y_zero_point, yj, M, n_pix - 4, n_ch);
          }
        }
      }
      return;
    }
#endif
    if (!vnni) {
      if (is_signed)
        dense_portable(v, sources, flip, blocks, t, out.y_zero_point, reinterpret_cast<int8_t*>(y), j0, j1);
      else
        dense_portable(v, sources, flip, blocks, t, out.y_zero_point, y, j0, j1);
      return;
    }
#if KILN_QCONV_NHWC_X86
    const unsigned char* src[kMaxTaps * kPixels];
    for (int64_t b = 0; b < n_b;) {
      const int vecs = tile_vecs(n_b - b);
      const TileFn fn = is_signed ? tile_kernel<true>(vecs) : tile_kernel<false>(vecs);
      const int64_t m0 = b * kBlock, n_ch = std::min<int64_t>(kBlock * vecs, M - m0), w_block = taps * kq * 64;
      for (int64_t j = j0; j < j1; j += kPixels) {
        const int64_t n_pix = std::min(kPixels, j1 - j);
        sources(j, n_pix, src);
        fn(src, taps, kq, flip ? 0x80808080u : 0u, blocks + b * w_block, w_block, t.add + m0, t.scale + m0,
           out.y_zero_point, y + j * M + m0, M, n_pix, n_ch);
      }
      b += vecs;
    }
#endif
  };
#if KILN_QCONV_NHWC_X86
  // A small plane whose rows do not split evenly (7 x 7: 4 rows against 3, one thread idle a
  // seventh of the layer) splits the pointwise kernel's channel blocks instead: each thread
  // then reads all of the layer's input (a few KB at this size) and writes its own channels.
  const int threads = pool ? pool->size() : 1;
  if (avx2 && pairs && contiguous && threads > 1 && (p.N * p.OH) % threads != 0 && p.N * p.OH * p.OW <= 256 &&
      n_b >= 2 * threads) {
    const PointwisePairsFn fn = pointwise_pairs_kernel(kq, is_signed, t.clamp, x.a_signed, avx_vnni);
    parallel_for(pool, n_b, [&](int64_t b0, int64_t b1) {
      fn(xs, p.C, M, 0, p.N * p.OH * p.OW, b0, b1, blocks, t, out.y_zero_point, y);
    });
    return;
  }
#endif
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

#if KILN_QCONV_NHWC_X86
// 16 columns of 3 rows (an RGB image's planes into its pixels, for a stem's row patches): the
// 48 bytes out, each a pshufb of every row's 16 ORed; byte k of the output is row k % 3's
// column k / 3. Scalar, these stores of single bytes took 52 us of MobileNetV2's 2.4 ms.
struct Interleave3Masks {
  alignas(16) int8_t m[3][3][16];  // [output vector][row][byte]
};

constexpr Interleave3Masks interleave3_masks() {
  Interleave3Masks t{};
  for (int v = 0; v < 3; ++v)
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 16; ++i) {
        const int k = 16 * v + i;
        t.m[v][r][i] = static_cast<int8_t>(k % 3 == r ? k / 3 : -128);
      }
  return t;
}

constexpr Interleave3Masks kInterleave3 = interleave3_masks();

__attribute__((target("ssse3"))) void interleave3x16(const unsigned char* s, int64_t ls, unsigned char* d) {
  const __m128i row[3] = {_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + ls)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * ls))};
  for (int v = 0; v < 3; ++v) {
    __m128i out = _mm_setzero_si128();
    for (int r = 0; r < 3; ++r)
      out = _mm_or_si128(out, _mm_shuffle_epi8(row[r], _mm_load_si128(reinterpret_cast<const __m128i*>(kInterleave3.m[v][r]))));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16 * v), out);
  }
}
#endif

// Columns [c0, c1) of one image's [rows][cols] into [cols][rows].
void transpose_tile(const unsigned char* s, unsigned char* d, int64_t rows, int64_t cols, int64_t c0, int64_t c1) {
  int64_t r0 = 0;
#if KILN_QCONV_NHWC_X86
  if (c1 - c0 == kTransposeTile && rows == 3 && cpu_has_avx2_fma()) {  // AVX2 implies SSSE3; KILN_CPU_ISA caps both
    interleave3x16(s + c0, cols, d + c0 * 3);
    return;
  }
  if (c1 - c0 == kTransposeTile)
    for (; r0 + kTransposeTile <= rows; r0 += kTransposeTile) transpose16(s + r0 * cols + c0, cols, d + c0 * rows + r0, rows);
#endif
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t r = r0; r < rows; ++r) d[c * rows + r] = s[r * cols + c];
}

}  // namespace

bool qconv2d_nhwc_supported(const Conv2dParams& p) noexcept {
  if (p.N < 1 || p.OH < 1 || p.OW < 1 || p.stride_h < 1 || p.stride_w < 1) return false;
  return dense(p) || row_patch(p) || (depthwise(p) && p.dil_h >= 1 && p.dil_w >= 1);
}

bool qconv2d_nhwc_narrow_depthwise_fast(const Conv2dParams& p) noexcept {
  return depthwise(p) && nhwc::depthwise_narrow_fast(p);
}

bool qconv2d_nhwc_pairs_fit_int16(const Conv2dParams& p, const unsigned char* packed_w) noexcept {
  if (depthwise(p)) return false;
  return row_patch(p) ? flat_blocks(packed_w) != nullptr : dense_pairs_fit_int16(packed_w);
}

size_t qconv2d_nhwc_packed_weight_bytes(const Conv2dParams& p) noexcept {
  if (depthwise(p)) return nhwc::depthwise_packed_bytes(p);
  return dense_bytes(packed_params(p)) + (row_patch(p) ? flat_blocks_bytes(p) : 0);
}

void qconv2d_nhwc_pack_weights(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept {
  if (depthwise(p)) {
    nhwc::depthwise_pack(p, w, packed);
  } else if (row_patch(p)) {
    // W [M, C, KH, KW] as the virtual layer's [M, (kw, c) rounded up, KH, 1].
    const Conv2dParams v = patch_params(p);
    std::vector<int8_t> rows(static_cast<size_t>(v.M * v.C * v.KH), int8_t{0});
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t c = 0; c < p.C; ++c)
        for (int64_t kh = 0; kh < p.KH; ++kh)
          for (int64_t kw = 0; kw < p.KW; ++kw)
            rows[static_cast<size_t>((m * v.C + kw * p.C + c) * v.KH + kh)] = w[((m * p.C + c) * p.KH + kh) * p.KW + kw];
    pack_dense(v, rows.data(), packed);
    const auto offset = static_cast<int64_t>(dense_bytes(v));
    std::memset(packed + offset, 0, flat_blocks_bytes(p));
    const int64_t flat_header[2] = {offset, pack_flat(p, w, reinterpret_cast<int8_t*>(packed + offset)) ? 1 : 0};
    std::memcpy(packed + 3 * sizeof(int64_t), flat_header, sizeof flat_header);
  } else {
    pack_dense(p, w, packed);
  }
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
  dense_conv(p, x, packed_w, out, pool, isa);
}

}  // namespace kiln::rt
