// Depthwise 3x3 on 8 channels at once: channel-interleaved, zero-padded bands of rows.
#include "kiln/rt/depthwise.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kiln/rt/conv_direct.h"
#include "kiln/rt/thread_pool.h"

// The kernel runs where cpu_has_avx2_fma(); elsewhere conv2d_f32 keeps its per-plane kernels.
#include "kiln/rt/x86_dispatch.h"
#include "kiln/rt/transpose8.h"

namespace kiln::rt {
namespace {

// Floats of the stack buffer a band works in: its interleaved, padded input rows and its
// interleaved output (64 KiB: L1 and a little of L2).
constexpr int64_t kBandFloats = 16 * 1024;
constexpr int64_t kLanes = 8;

// Padded width: the input columns the output's windows cover.
int64_t padded_width(const Conv2dParams& p) { return (p.OW - 1) * p.stride_w + 3; }

// Output rows per band: the most whose input rows ((rows - 1) * S + 3 of them, in each of
// `inputs` buffers) and output fit in kBandFloats, at most OH; 0 if not even one row fits.
int64_t band_rows(const Conv2dParams& p, int64_t inputs = 1) {
  const int64_t s = p.stride_h, row = padded_width(p) * kLanes;
  const int64_t fixed = inputs * (3 - s) * row, per_row = inputs * s * row + p.OW * kLanes;
  if (fixed + per_row > kBandFloats) return 0;
  const int64_t r = (kBandFloats - fixed) / per_row;
  return r < p.OH ? r : p.OH;
}

#if KILN_X86_KERNELS

// The 8 planes' input rows of a band, interleaved (pixel-major, 8 channels a pixel) into
// `in`: `rows` rows of padded width wp starting at padded row pr0. Padding is zero.
KILN_AVX2_FMA void fill_band(const Conv2dParams& p, const float* const xs[kLanes], int64_t pr0, int64_t rows,
                             int64_t wp, float* in) {
  const int64_t wv = p.W < wp - p.pad_left ? p.W : wp - p.pad_left;  // input columns stored
  const __m256 zero = _mm256_setzero_ps();
  int64_t ih_lo = pr0 - p.pad_top, ih_hi = ih_lo + rows;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = pr0 + r - p.pad_top;
    float* d = in + r * wp * kLanes;
    if (ih < 0 || ih >= p.H) {
      for (int64_t c = 0; c < wp; ++c) _mm256_store_ps(d + c * kLanes, zero);
      continue;
    }
    for (int64_t c = 0; c < p.pad_left && c < wp; ++c) _mm256_store_ps(d + c * kLanes, zero);
    for (int64_t c = p.pad_left + wv; c < wp; ++c) _mm256_store_ps(d + c * kLanes, zero);
  }
  if (ih_lo < 0) ih_lo = 0;
  if (ih_hi > p.H) ih_hi = p.H;
  if (ih_lo >= ih_hi) return;
  // The band's input rows are one flat run of each plane: transposed 8 pixels at a time,
  // each pixel stored at its padded position (wherever the run crosses a row). Pixels past
  // column wv are outside every window and not stored.
  const int64_t W = p.W, q_end = ih_hi * W;
  const int64_t next_row = wp * kLanes;
  float* row = in + ((ih_lo + p.pad_top - pr0) * wp + p.pad_left) * kLanes;  // pixel (ih_lo, 0)
  int64_t q = ih_lo * W, iw = 0;
  for (; q + kLanes <= q_end; q += kLanes) {
    __m256 v[kLanes];
    for (int64_t k = 0; k < kLanes; ++k) v[k] = _mm256_loadu_ps(xs[k] + q);
    transpose8(v);
    if (iw + kLanes <= wv) {  // within one row (wv <= W)
      for (int64_t j = 0; j < kLanes; ++j) _mm256_store_ps(row + (iw + j) * kLanes, v[j]);
      iw += kLanes;
      if (iw == W) {
        iw = 0;
        row += next_row;
      }
      continue;
    }
    for (int64_t j = 0; j < kLanes; ++j) {
      if (iw < wv) _mm256_store_ps(row + iw * kLanes, v[j]);
      if (++iw == W) {
        iw = 0;
        row += next_row;
      }
    }
  }
  for (; q < q_end; ++q) {
    if (iw < wv)
      for (int64_t k = 0; k < kLanes; ++k) row[iw * kLanes + k] = xs[k][q];
    if (++iw == W) {
      iw = 0;
      row += next_row;
    }
  }
}

// v with the activation applied: a clamp keeps a NaN (as Clip does: max and min return their
// second operand when either is NaN), Relu makes it 0 (max returns its second operand for a
// NaN, and +0 for -0, as x > 0 ? x : 0). Two instructions for a clamp; the compare-and-blend
// it replaced took four, a quarter of the 16 -> 96 expand's stores at K = 16.
KILN_AVX2_FMA inline __m256 activate(__m256 v, const StoreActivation& act) {
  if (act.kind == StoreActivation::kClamp)
    v = _mm256_min_ps(_mm256_set1_ps(act.hi), _mm256_max_ps(_mm256_set1_ps(act.lo), v));
  else if (act.kind == StoreActivation::kRelu)
    v = _mm256_max_ps(v, _mm256_setzero_ps());
  return v;
}

// `rows` output rows of the band from its interleaved input into `out` (interleaved,
// rows x OW pixels), `act` applied as they are stored (by value: as a reference it was loaded
// again after every store). Four pixels at a time: four independent chains of 9 FMAs; each
// kernel row's 3 * S + 3 input pixels are loaded once for the four (S = 1: 18 loads for 36
// FMAs instead of 36).
template <int64_t S>
KILN_AVX2_FMA void compute_band(const Conv2dParams& p, const float* in, int64_t rows, int64_t wp, const float* wt,
                                const float* bv, const StoreActivation act, float* out) {
  constexpr int kIn = 3 * S + 3;
  __m256 wv[9];
  for (int64_t t = 0; t < 9; ++t) wv[t] = _mm256_loadu_ps(wt + t * kLanes);
  const __m256 bias = _mm256_loadu_ps(bv);
  auto store = [&](float* o, __m256 v) KILN_AVX2_FMA { _mm256_store_ps(o, activate(v, act)); };
  const int64_t ow4 = p.OW / 4 * 4;
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = in + r * S * wp * kLanes;
    float* o = out + r * p.OW * kLanes;
    int64_t ow = 0;
    for (; ow < ow4; ow += 4) {
      __m256 acc[4] = {bias, bias, bias, bias};
#pragma GCC unroll 3
      for (int kh = 0; kh < 3; ++kh) {
        const float* t = a + (kh * wp + ow * S) * kLanes;
        __m256 xv[kIn];
#pragma GCC unroll 9
        for (int i = 0; i < kIn; ++i) xv[i] = _mm256_load_ps(t + i * kLanes);
#pragma GCC unroll 3
        for (int kw = 0; kw < 3; ++kw)
#pragma GCC unroll 4
          for (int j = 0; j < 4; ++j) acc[j] = _mm256_fmadd_ps(wv[kh * 3 + kw], xv[j * S + kw], acc[j]);
      }
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) store(o + (ow + j) * kLanes, acc[j]);
    }
    for (; ow < p.OW; ++ow) {
      __m256 acc = bias;
      for (int64_t kh = 0; kh < 3; ++kh)
        for (int64_t kw = 0; kw < 3; ++kw)
          acc = _mm256_fmadd_ps(wv[kh * 3 + kw], _mm256_load_ps(a + ((kh * wp) + ow * S + kw) * kLanes), acc);
      store(o + ow * kLanes, acc);
    }
  }
}

// The band's interleaved output (n pixels) back into the 8 planes at ys[k] + t0.
KILN_AVX2_FMA void store_band(const float* out, int64_t n, float* const ys[kLanes], int64_t t0) {
  int64_t t = 0;
  for (; t + kLanes <= n; t += kLanes) {
    __m256 v[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) v[j] = _mm256_load_ps(out + (t + j) * kLanes);
    transpose8(v);
    for (int64_t k = 0; k < kLanes; ++k) _mm256_storeu_ps(ys[k] + t0 + t, v[k]);
  }
  for (; t < n; ++t)
    for (int64_t k = 0; k < kLanes; ++k) ys[k][t0 + t] = out[t * kLanes + k];
}

// Output rows [oh_begin, oh_end) of the 8 planes at xs[k] (whole input planes), band by band:
// output row oh of plane k goes to ys[k] + (oh - row0) * OW; done(oh0, rows) after each band.
template <int64_t S, class Done>
KILN_AVX2_FMA void depthwise_bands(const Conv2dParams& p, const float* const xs[kLanes], const float* wt,
                                   const float* bv, const StoreActivation act, int64_t oh_begin, int64_t oh_end,
                                   float* const ys[kLanes], int64_t row0, Done done) {
  alignas(32) float buf[kBandFloats];
  const int64_t wp = padded_width(p), band = band_rows(p);
  float* in = buf;
  float* out = buf + ((band - 1) * S + 3) * wp * kLanes;
  for (int64_t oh0 = oh_begin; oh0 < oh_end; oh0 += band) {
    const int64_t rows = oh_end - oh0 < band ? oh_end - oh0 : band;
    fill_band(p, xs, oh0 * S, (rows - 1) * S + 3, wp, in);
    compute_band<S>(p, in, rows, wp, wt, bv, act, out);
    store_band(out, rows * p.OW, ys, (oh0 - row0) * p.OW);
    done(oh0, rows);
  }
}

// Channels [c0, c0 + 8)'s input planes of image n, and their weights and biases channel-
// interleaved (wt: 9 x 8, bv: 8).
void gather_group(const Conv2dParams& p, int64_t n, int64_t c0, const float* x, const float* w, const float* bias,
                  const float* xs[kLanes], float* wt, float* bv) {
  for (int64_t k = 0; k < kLanes; ++k) {
    const int64_t c = c0 + k;
    xs[k] = x + (n * p.C + c) * p.H * p.W;
    for (int64_t t = 0; t < 9; ++t) wt[t * kLanes + k] = w[c * 9 + t];
    bv[k] = bias ? bias[c] : 0.f;
  }
}

template <int64_t S>
KILN_AVX2_FMA void depthwise3x3_c8_impl(const Conv2dParams& p, int64_t n, int64_t c0, int64_t oh_begin, int64_t oh_end,
                                        const float* x, const float* w, const float* bias, float* y, const Epilogue& ep) {
  const int64_t ohw = p.OH * p.OW;
  const float* xs[kLanes];
  float* ys[kLanes];
  float wt[9 * kLanes], bv[kLanes];
  gather_group(p, n, c0, x, w, bias, xs, wt, bv);
  for (int64_t k = 0; k < kLanes; ++k) ys[k] = y + (n * p.M + c0 + k) * ohw;
  // The epilogue's clamp (fn_is_clamp) in registers; any other epilogue on the stored planes.
  StoreActivation act;
  if (epilogue_is_clamp(ep)) act = StoreActivation{StoreActivation::kClamp, ep.clamp_lo, ep.clamp_hi};
  depthwise_bands<S>(p, xs, wt, bv, act, oh_begin, oh_end, ys, 0, [&](int64_t oh0, int64_t rows) {
    if (ep.fn && !epilogue_is_clamp(ep))  // a clamp was applied by compute_band
      for (int64_t k = 0; k < kLanes; ++k)
        ep.fn(ep.ctx, ys[k] + oh0 * p.OW, (n * p.M + c0 + k) * ohw + oh0 * p.OW, rows * p.OW);
  });
}

#endif  // KILN_X86_KERNELS

// ---- The expand 1x1 feeding the depthwise ---------------------------------------------------

// Output rows are taken in chunks whose input rows (all C channels) take about this many bytes,
// so that they stay in L2 while every group of 8 expanded channels is computed from them.
constexpr int64_t kChunkBytes = 192 * 1024;
constexpr int64_t kMaxExpandK = 512;
constexpr int64_t kMinFusedPositions = 100;  // expand_depthwise3x3_pays

// Up to kMaxGroups groups of 8 expanded channels computed together (the expand's inputs
// are then read once for both): a unit of work. A unit's weights, channel-interleaved, are
// packed (pack_unit) as w1: C x G x 8 (the expand's), w2: G x 9 x 8 (the depthwise's), b1:
// G x 8, b2: G x 8. Every unit but the last holds the same number of groups (kMaxGroups, or
// one where a band has no room for two: groups_per_unit), so the units follow each other
// (8 * (C + 11) floats a group) and unit u starts at group u * groups_per_unit's offset.
constexpr int kMaxGroups = 2;
constexpr int64_t kUnitExtraFloats = 11 * kLanes;  // w2, b1 and b2 of one group

// The weights of a unit of G groups as pack_unit lays them out.
struct UnitWeights {
  const float *w1, *w2, *b1, *b2;  // w2 and b2: group gi's at + gi * 72 and + gi * 8
};

UnitWeights unit_weights(const float* packed, int64_t C, int G) {
  const float* w2 = packed + C * G * kLanes;
  return UnitWeights{packed, w2, w2 + G * 9 * kLanes, w2 + G * 10 * kLanes};
}

// Groups [g0, g0 + G) of the expand's w1 (M x C) and b1 and the depthwise's w2 (M x 9) and b2
// (M; either bias nullptr: zeros) into `dst`, laid out as above.
void pack_unit(int64_t C, const float* w1, const float* b1, const float* w2, const float* b2, int64_t g0, int G,
               float* dst) {
  float* d2 = dst + C * G * kLanes;
  float* db1 = d2 + G * 9 * kLanes;
  float* db2 = db1 + G * kLanes;
  for (int gi = 0; gi < G; ++gi)
    for (int64_t k = 0; k < kLanes; ++k) {
      const int64_t m = (g0 + gi) * kLanes + k;
      for (int64_t c = 0; c < C; ++c) dst[(c * G + gi) * kLanes + k] = w1[m * C + c];
      for (int64_t t = 0; t < 9; ++t) d2[(gi * 9 + t) * kLanes + k] = w2[m * 9 + t];
      db1[gi * kLanes + k] = b1 ? b1[m] : 0.f;
      db2[gi * kLanes + k] = b2 ? b2[m] : 0.f;
    }
}

struct ExpandDepthwiseArgs {
  const ExpandDepthwiseParams* p;
  Conv2dParams dw;  // the depthwise's geometry, for the band kernels
  const float* x;
  const float* packed;                // expand_depthwise3x3_pack's layout, or nullptr:
  const float *w1, *b1, *w2, *b2;     // each unit packs its weights from these
  StoreActivation act1, act2;
  float* y;
  bool avx2;
  bool avx512 = false;  // the expand on AVX-512 (expand_rows_avx512)
};

float activate_plain(float v, const StoreActivation& act) {
  if (act.kind == StoreActivation::kClamp) return clamp_to(v, act.lo, act.hi);
  if (act.kind == StoreActivation::kRelu) return relu_of(v);
  return v;
}

// Expanded input row of the band for G groups (8 channels interleaved, wp padded columns, the
// group's row at d[gi]) from input row xr (channel 0's): padded column iw + 1 is the 1x1 at
// column iw, with bias and activation; column 0 and those past W are zero (the depthwise's
// padding). Channels in blocks of L (1: planes hw apart; 16: NCHW16c), pixels L apart.
void expand_row_plain(const float* xr, int64_t hw, int64_t L, int64_t K, int64_t W, int64_t wp,
                      const UnitWeights& g, int G, const StoreActivation& act, float* const d[]) {
  for (int gi = 0; gi < G; ++gi) {
    std::fill(d[gi], d[gi] + wp * kLanes, 0.f);
    for (int64_t iw = 0; iw < W; ++iw)
      for (int64_t k = 0; k < kLanes; ++k) {
        float s = g.b1[gi * kLanes + k];
        for (int64_t c = 0; c < K; ++c)
          s += g.w1[(c * G + gi) * kLanes + k] * xr[(c / L) * hw * L + c % L + iw * L];
        d[gi][(iw + 1) * kLanes + k] = activate_plain(s, act);
      }
  }
}

// compute_band and store_band in plain loops.
void compute_band_plain(const Conv2dParams& p, const float* in, int64_t rows, int64_t wp, const float* wt,
                        const float* bv, const StoreActivation& act, float* out) {
  const int64_t S = p.stride_h;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ow = 0; ow < p.OW; ++ow)
      for (int64_t k = 0; k < kLanes; ++k) {
        float s = bv[k];
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw)
            s += wt[(kh * 3 + kw) * kLanes + k] * in[((r * S + kh) * wp + ow * S + kw) * kLanes + k];
        out[(r * p.OW + ow) * kLanes + k] = activate_plain(s, act);
      }
}

void store_band_plain(const float* out, int64_t n, float* const ys[kLanes], int64_t t0) {
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k = 0; k < kLanes; ++k) ys[k][t0 + t] = out[t * kLanes + k];
}

// The band's interleaved output (n pixels of 8 channels) into half a block of an NCHW16c
// tensor: pixel t's 8 channels at yb + (t0 + t) * 16. No transpose: the band's layout is the
// block's, 8 of its 16 lanes.
void store_band_nchw16c(const float* out, int64_t n, float* yb, int64_t t0) {
  for (int64_t t = 0; t < n; ++t) std::memcpy(yb + (t0 + t) * 2 * kLanes, out + t * kLanes, kLanes * sizeof(float));
}

// fill_band from half a block of an NCHW16c tensor (pixel (ih, iw)'s 8 channels at
// xb + (ih * W + iw) * 16): the same zero-padded rows, each pixel a copy.
void fill_band_nchw16c(const Conv2dParams& p, const float* xb, int64_t pr0, int64_t rows, int64_t wp, float* in) {
  const int64_t wv = p.W < wp - p.pad_left ? p.W : wp - p.pad_left;  // input columns stored
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = pr0 + r - p.pad_top;
    float* d = in + r * wp * kLanes;
    if (ih < 0 || ih >= p.H) {
      std::fill(d, d + wp * kLanes, 0.f);
      continue;
    }
    std::fill(d, d + p.pad_left * kLanes, 0.f);
    const float* src = xb + ih * p.W * 2 * kLanes;
    for (int64_t iw = 0; iw < wv; ++iw)
      std::memcpy(d + (p.pad_left + iw) * kLanes, src + iw * 2 * kLanes, kLanes * sizeof(float));
    std::fill(d + (p.pad_left + wv) * kLanes, d + wp * kLanes, 0.f);
  }
}

#if KILN_X86_KERNELS

// Pixels [q, q + P) of the run (channel 0's at xq, channels hw apart) of G groups into their
// padded places: pixel q is at column `col` of the rows at d[gi]. `act` by value: as a
// reference it was loaded again after every store (4% of the 16 -> 96 expand at 112 x 112).
template <int L, int G, int P>
KILN_AVX2_FMA inline void expand_block(const float* xq, int64_t hw, int64_t K, const UnitWeights& g,
                                       const StoreActivation act, int64_t W, int64_t row, float* const d0[],
                                       int64_t col) {
  __m256 acc[G][P];
  float* d[G];
#pragma GCC unroll 2
  for (int gi = 0; gi < G; ++gi) {
    d[gi] = d0[gi];
    const __m256 b = _mm256_loadu_ps(g.b1 + gi * kLanes);
#pragma GCC unroll 8
    for (int j = 0; j < P; ++j) acc[gi][j] = b;
  }
  for (int64_t c0 = 0; c0 < K; c0 += L) {
    const float* xb = xq + c0 * hw;
#pragma GCC unroll 1
    for (int ci = 0; ci < L; ++ci) {
      const int64_t c = c0 + ci;
      __m256 w[G];
#pragma GCC unroll 2
      for (int gi = 0; gi < G; ++gi) w[gi] = _mm256_loadu_ps(g.w1 + (c * G + gi) * kLanes);
      const float* xc = xb + ci;
#pragma GCC unroll 8
      for (int j = 0; j < P; ++j) {
        const __m256 xv = _mm256_broadcast_ss(xc + j * L);
#pragma GCC unroll 2
        for (int gi = 0; gi < G; ++gi) acc[gi][j] = _mm256_fmadd_ps(xv, w[gi], acc[gi][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < P; ++j) {
#pragma GCC unroll 2
    for (int gi = 0; gi < G; ++gi) _mm256_store_ps(d[gi] + (col + 1) * kLanes, activate(acc[gi][j], act));
    if (++col == W) {
      col = 0;
#pragma GCC unroll 2
      for (int gi = 0; gi < G; ++gi) d[gi] += row;
    }
  }
}

// The padding columns of the G groups' rows d[gi] zeroed (W + 1 <= wp: see padded_width), then
// `block(pixels, q)` over the rows' pixels [ih0 * W, (ih0 + rows) * W) as one run: blocks of
// kBlock pixels (std::integral_constant), the last block again ending at the run's end, single
// pixels where the run is shorter than a block. Shared by the AVX2 and AVX-512 expands.
template <int kBlock, class Block>
__attribute__((always_inline)) inline void expand_pixels(int G, int64_t W, int64_t ih0, int64_t rows, int64_t wp,
                                                         float* const d[], Block&& block) {
  const int64_t row = wp * kLanes;
  for (int gi = 0; gi < G; ++gi)
    for (int64_t r = 0; r < rows; ++r) {
      float* dr = d[gi] + r * row;
      std::fill(dr, dr + kLanes, 0.f);
      std::fill(dr + (W + 1) * kLanes, dr + wp * kLanes, 0.f);
    }
  const int64_t q0 = ih0 * W, q_end = q0 + rows * W;
  int64_t q = q0;
  for (; q + kBlock <= q_end; q += kBlock) block(std::integral_constant<int, kBlock>{}, q);
  if (q < q_end && q_end - q0 >= kBlock) {
    block(std::integral_constant<int, kBlock>{}, q_end - kBlock);
    q = q_end;
  }
  for (; q < q_end; ++q) block(std::integral_constant<int, 1>{}, q);
}

// expand_row_plain for input rows [ih0, ih0 + rows) at once (their pixels are one run of each
// plane), P pixels x G groups of 8 channels in registers: per input channel, G vectors of
// weights and P broadcast pixels. One group: 8 pixels (12 or 16 measured slower: 603 and 1663
// against 564 us for 16 -> 96 at 112 x 112, 16 spilling); two groups: 6 pixels, 12 products
// for 8 loads instead of 8 for 9.
template <int L, int G>
KILN_AVX2_FMA void expand_rows_avx2(const float* x, int64_t hw, int64_t K, int64_t W, int64_t ih0, int64_t rows,
                                    int64_t wp, const UnitWeights& g, const StoreActivation& act,
                                    float* const d[]) {
  const int64_t row = wp * kLanes, q0 = ih0 * W;
  expand_pixels<G == 1 ? 8 : 6>(G, W, ih0, rows, wp, d, [&](auto pixels, int64_t q) KILN_AVX2_FMA {
    float* dq[G];
    for (int gi = 0; gi < G; ++gi) dq[gi] = d[gi] + (q - q0) / W * row;
    expand_block<L, G, decltype(pixels)::value>(x + q * L, hw, K, g, act, W, row, dq, (q - q0) % W);
  });
}

// The two-group expand with AVX-512: a pixel's 16 expanded channels are one zmm (the unit's
// weights of an input channel are 16 consecutive floats, pack_unit's layout), so 12 pixels keep
// 12 accumulators, with one weight load and 12 broadcasts an input channel; each result's halves
// go to the two groups' rows. On an AVX-512 machine the AVX2 expand was half of MobileNetV2's
// time in these fused nodes. The same sums, in the same order, as expand_block.
//
// GCC 12 warns that the placeholder inside _mm512_max_ps, _mm512_min_ps and
// _mm512_extractf64x4_pd (_mm512_undefined_*) "may be used uninitialized" (GCC bug 105593): a
// false positive of the header itself.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
KILN_AVX512F inline __m512 activate512(__m512 v, const StoreActivation act) {
  if (act.kind == StoreActivation::kClamp)
    v = _mm512_min_ps(_mm512_set1_ps(act.hi), _mm512_max_ps(_mm512_set1_ps(act.lo), v));
  else if (act.kind == StoreActivation::kRelu)
    v = _mm512_max_ps(v, _mm512_setzero_ps());
  return v;
}

template <int L, int P>
KILN_AVX512F inline void expand_block512(const float* xq, int64_t hw, int64_t K, const UnitWeights& g,
                                         const StoreActivation act, int64_t W, int64_t row, float* const d0[],
                                         int64_t col) {
  __m512 acc[P];
  const __m512 b = _mm512_loadu_ps(g.b1);
#pragma GCC unroll 12
  for (int j = 0; j < P; ++j) acc[j] = b;
  for (int64_t c0 = 0; c0 < K; c0 += L) {
    const float* xb = xq + c0 * hw;
#pragma GCC unroll 1
    for (int ci = 0; ci < L; ++ci) {
      const __m512 w = _mm512_loadu_ps(g.w1 + (c0 + ci) * 2 * kLanes);
      const float* xc = xb + ci;
#pragma GCC unroll 12
      for (int j = 0; j < P; ++j) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(xc[j * L]), w, acc[j]);
    }
  }
  float* d[2] = {d0[0], d0[1]};
#pragma GCC unroll 12
  for (int j = 0; j < P; ++j) {
    const __m512 v = activate512(acc[j], act);
    _mm256_store_ps(d[0] + (col + 1) * kLanes, _mm512_castps512_ps256(v));
    _mm256_store_ps(d[1] + (col + 1) * kLanes, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    if (++col == W) {
      col = 0;
      d[0] += row;
      d[1] += row;
    }
  }
}

// expand_rows_avx2<L, 2> with expand_block512: blocks of 12 pixels.
template <int L>
KILN_AVX512F void expand_rows_avx512(const float* x, int64_t hw, int64_t K, int64_t W, int64_t ih0, int64_t rows,
                                     int64_t wp, const UnitWeights& g, const StoreActivation& act, float* const d[]) {
  const int64_t row = wp * kLanes, q0 = ih0 * W;
  expand_pixels<12>(2, W, ih0, rows, wp, d, [&](auto pixels, int64_t q) KILN_AVX512F {
    float* dq[2] = {d[0] + (q - q0) / W * row, d[1] + (q - q0) / W * row};
    expand_block512<L, decltype(pixels)::value>(x + q * L, hw, K, g, act, W, row, dq, (q - q0) % W);
  });
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // KILN_X86_KERNELS

// Expanded input rows [ih0, ih0 + rows) of image x, G groups, into padded rows d[gi] on (wp
// columns each).
void expand_rows(const ExpandDepthwiseArgs& a, const float* x, int64_t ih0, int64_t rows, int64_t wp,
                 const UnitWeights& gw, int G, float* const d[]) {
  const ExpandDepthwiseParams& p = *a.p;
  const int64_t hw = p.H * p.W;
#if KILN_X86_KERNELS
  if (a.avx2) {
    // The kernels by channel layout (plain planes, or NCHW16c) and groups.
    auto run = [&](auto layout) {
      constexpr int L = decltype(layout)::value;
      if (a.avx512 && G == 2)
        expand_rows_avx512<L>(x, hw, p.C, p.W, ih0, rows, wp, gw, a.act1, d);
      else if (G == 2)
        expand_rows_avx2<L, 2>(x, hw, p.C, p.W, ih0, rows, wp, gw, a.act1, d);
      else
        expand_rows_avx2<L, 1>(x, hw, p.C, p.W, ih0, rows, wp, gw, a.act1, d);
    };
    if (p.x_nchw16c)
      run(std::integral_constant<int, 16>{});
    else
      run(std::integral_constant<int, 1>{});
    return;
  }
#endif
  const int64_t L = p.x_nchw16c ? 16 : 1;
  for (int64_t r = 0; r < rows; ++r) {
    float* dr[kMaxGroups];
    for (int gi = 0; gi < G; ++gi) dr[gi] = d[gi] + r * wp * kLanes;
    expand_row_plain(x + (ih0 + r) * p.W * L, hw, L, p.C, p.W, wp, gw, G, a.act1, dr);
  }
}

// Groups [g0, g0 + G) of 8 expanded channels over output rows [oh_begin, oh_end) of image n,
// band by band in `buf` (kBandFloats: G input bands, one output band); each band keeps the
// expanded rows it shares with the one before.
template <int64_t S>
void expand_depthwise_rows(const ExpandDepthwiseArgs& a, int64_t n, int64_t g0, int G, int64_t oh_begin,
                           int64_t oh_end, const UnitWeights& gw, float* buf) {
  const ExpandDepthwiseParams& p = *a.p;
  const Conv2dParams& dp = a.dw;
  const int64_t wp = padded_width(dp), band = band_rows(dp, G), row = wp * kLanes;
  float* in[kMaxGroups];
  for (int gi = 0; gi < G; ++gi) in[gi] = buf + gi * ((band - 1) * S + 3) * row;
  float* out = buf + G * ((band - 1) * S + 3) * row;
  // Where each group's output goes: 8 planes, or half of an NCHW16c block (group g's channels
  // 8g.. are lanes 8g % 16.. of block 8g / 16; image n's blocks start at n * M * OH * OW).
  float* ys[kMaxGroups][kLanes];
  float* yb[kMaxGroups];
  for (int gi = 0; gi < G; ++gi) {
    const int64_t c = (g0 + gi) * kLanes;
    yb[gi] = a.y + (n * p.M + c / 16 * 16) * p.OH * p.OW + c % 16;
    for (int64_t k = 0; k < kLanes; ++k) ys[gi][k] = a.y + (n * p.M + c + k) * p.OH * p.OW;
  }
  const float* x = a.x + n * p.C * p.H * p.W;
  int64_t held_lo = 0, held_hi = 0;  // padded input rows in `in`, from its first row
  for (int64_t oh0 = oh_begin; oh0 < oh_end; oh0 += band) {
    const int64_t rows = oh_end - oh0 < band ? oh_end - oh0 : band;
    const int64_t lo = oh0 * S, hi = lo + (rows - 1) * S + 3;
    int64_t keep = 0;
    if (held_lo <= lo && lo < held_hi) {
      keep = held_hi - lo;
      for (int gi = 0; gi < G; ++gi)
        std::memmove(in[gi], in[gi] + (lo - held_lo) * row, static_cast<size_t>(keep * row) * sizeof(float));
    }
    // Padded row pr is input row pr - 1: rows outside the input are zero.
    const int64_t ih0 = std::max<int64_t>(lo + keep - 1, 0), ih1 = std::min<int64_t>(hi - 1, p.H);
    for (int64_t pr = lo + keep; pr < hi; ++pr)
      if (pr - 1 < ih0 || pr - 1 >= ih1)
        for (int gi = 0; gi < G; ++gi) std::fill(in[gi] + (pr - lo) * row, in[gi] + (pr - lo + 1) * row, 0.f);
    if (ih0 < ih1) {
      float* d[kMaxGroups];
      for (int gi = 0; gi < G; ++gi) d[gi] = in[gi] + (ih0 + 1 - lo) * row;
      expand_rows(a, x, ih0, ih1 - ih0, wp, gw, G, d);
    }
    held_lo = lo;
    held_hi = hi;
    for (int gi = 0; gi < G; ++gi) {
#if KILN_X86_KERNELS
      if (a.avx2) {
        compute_band<S>(dp, in[gi], rows, wp, gw.w2 + gi * 9 * kLanes, gw.b2 + gi * kLanes, a.act2, out);
        if (p.y_nchw16c)
          store_band_nchw16c(out, rows * p.OW, yb[gi], oh0 * p.OW);
        else
          store_band(out, rows * p.OW, ys[gi], oh0 * p.OW);
        continue;
      }
#endif
      compute_band_plain(dp, in[gi], rows, wp, gw.w2 + gi * 9 * kLanes, gw.b2 + gi * kLanes, a.act2, out);
      if (p.y_nchw16c)
        store_band_nchw16c(out, rows * p.OW, yb[gi], oh0 * p.OW);
      else
        store_band_plain(out, rows * p.OW, ys[gi], oh0 * p.OW);
    }
  }
}

Conv2dParams depthwise_of(const ExpandDepthwiseParams& p) {
  return Conv2dParams{p.N, p.M, p.H, p.W, p.M, 3, 3, p.OH, p.OW, p.stride, p.stride, 1, 1, 1, 1, p.M};
}

// ---- The depthwise feeding a 1x1 -----------------------------------------------------------

// Output rows are taken in chunks whose depthwise result (all C channels) takes about this many
// bytes, written into a stack buffer of kPointwiseScratchFloats and read back by the 1x1 while it
// is in L2.
constexpr int64_t kPointwiseChunkBytes = 96 * 1024;
constexpr int64_t kPointwiseScratchFloats = 32 * 1024;
constexpr int64_t kMinPointwisePositions = 56 * 56;  // depthwise3x3_pointwise_pays

Conv2dParams depthwise_of(const DepthwisePointwiseParams& p) {
  return Conv2dParams{p.N, p.C, p.H, p.W, p.C, 3, 3, p.OH, p.OW, p.stride, p.stride, 1, 1, 1, 1, p.C};
}

// Floats between two channels' rows in the scratch buffer for `rows` output rows: a multiple of
// 8 (the 1x1 reads whole vectors), and not of 1 KiB (channels 4 KiB apart share L1's sets).
int64_t scratch_stride(int64_t rows, int64_t OW) {
  const int64_t n = (rows * OW + 7) / 8 * 8;
  return n % 256 == 0 ? n + 8 : n;
}

// Output rows per chunk: about kPointwiseChunkBytes of depthwise result, within the buffer.
int64_t pointwise_chunk_rows(const DepthwisePointwiseParams& p) {
  int64_t rows = kPointwiseChunkBytes / (p.C * p.OW * static_cast<int64_t>(sizeof(float)));
  rows = std::clamp<int64_t>(rows, 1, p.OH);
  while (rows > 0 && p.C * scratch_stride(rows, p.OW) > kPointwiseScratchFloats) --rows;
  return rows;
}

// The depthwise (pads 1) of output rows [oh0, oh1) of image plane set xn into rows of scratch
// (channel c's at scratch + c * ld), in plain loops.
void depthwise_rows_plain(const Conv2dParams& p, const float* xn, const float* w, const float* b,
                          const StoreActivation& act, int64_t oh0, int64_t oh1, float* scratch, int64_t ld) {
  const int64_t S = p.stride_h;
  for (int64_t c = 0; c < p.C; ++c)
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        float s = b ? b[c] : 0.f;
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            const int64_t ih = oh * S - 1 + kh, iw = ow * S - 1 + kw;
            if (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W) s += w[c * 9 + kh * 3 + kw] * xn[(c * p.H + ih) * p.W + iw];
          }
        scratch[c * ld + (oh - oh0) * p.OW + ow] = activate_plain(s, act);
      }
}


}  // namespace

bool depthwise3x3_c8_supported(const Conv2dParams& p) noexcept {
  if (!cpu_has_avx2_fma()) return false;
  return p.group == p.C && p.group == p.M && p.group > 1 && p.KH == 3 && p.KW == 3 && p.dil_h == 1 &&
         p.dil_w == 1 && p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2) && p.pad_top >= 0 &&
         p.pad_top <= 2 && p.pad_left >= 0 && p.pad_left <= 2 && p.OH > 0 && p.OW > 0 && band_rows(p) > 0;
}

void depthwise3x3_c8(const Conv2dParams& p, int64_t n, int64_t c0, const float* x, const float* w,
                     const float* bias, float* y, const Epilogue& epilogue) noexcept {
  depthwise3x3_c8_rows(p, n, c0, 0, p.OH, x, w, bias, y, epilogue);
}

void depthwise3x3_c8_rows(const Conv2dParams& p, int64_t n, int64_t c0, int64_t oh_begin, int64_t oh_end,
                          const float* x, const float* w, const float* bias, float* y,
                          const Epilogue& epilogue) noexcept {
#if KILN_X86_KERNELS
  if (p.stride_h == 1)
    depthwise3x3_c8_impl<1>(p, n, c0, oh_begin, oh_end, x, w, bias, y, epilogue);
  else
    depthwise3x3_c8_impl<2>(p, n, c0, oh_begin, oh_end, x, w, bias, y, epilogue);
#else
  (void)p, (void)n, (void)c0, (void)oh_begin, (void)oh_end, (void)x, (void)w, (void)bias, (void)y, (void)epilogue;
#endif
}

bool depthwise3x3_nchw16c_applicable(const Conv2dParams& p) noexcept {
  return p.N > 0 && p.C > 0 && p.C % 16 == 0 && p.group == p.C && p.M == p.C && p.KH == 3 && p.KW == 3 &&
         p.dil_h == 1 && p.dil_w == 1 && p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2) &&
         p.pad_top >= 0 && p.pad_top <= 2 && p.pad_left >= 0 && p.pad_left <= 2 && p.H > 0 && p.W > 0 && p.OH > 0 &&
         p.OW > 0 && band_rows(p) > 0;
}

void depthwise3x3_nchw16c_f32(const Conv2dParams& p, const float* x, const float* w, const float* bias,
                              const StoreActivation& act, float* y, ThreadPool* pool) noexcept {
  // Units: (image, group of 8 channels, band of output rows), each filling its band afresh.
  const int64_t groups = p.C / kLanes, band = band_rows(p), bands = (p.OH + band - 1) / band;
  const bool avx2 = cpu_has_avx2_fma();
  parallel_for(pool, p.N * groups * bands, [&, groups, band, bands, avx2](int64_t u0, int64_t u1) {
    (void)avx2;  // without x86 kernels, the plain loops only
    alignas(32) float buf[kBandFloats];
    const int64_t wp = padded_width(p);
    float* in = buf;
    float* out = buf + ((band - 1) * p.stride_h + 3) * wp * kLanes;
    float wt[9 * kLanes], bv[kLanes];
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / (groups * bands), g = u / bands % groups, oh0 = u % bands * band;
      const int64_t rows = std::min(band, p.OH - oh0), c = g * kLanes;
      for (int64_t k = 0; k < kLanes; ++k) {
        for (int64_t t = 0; t < 9; ++t) wt[t * kLanes + k] = w[(c + k) * 9 + t];
        bv[k] = bias ? bias[c + k] : 0.f;
      }
      const int64_t block = (n * p.C + c / 16 * 16), lane = c % 16;
      fill_band_nchw16c(p, x + block * p.H * p.W + lane, oh0 * p.stride_h, (rows - 1) * p.stride_h + 3, wp, in);
#if KILN_X86_KERNELS
      if (avx2 && p.stride_h == 1)
        compute_band<1>(p, in, rows, wp, wt, bv, act, out);
      else if (avx2)
        compute_band<2>(p, in, rows, wp, wt, bv, act, out);
      else
#endif
        compute_band_plain(p, in, rows, wp, wt, bv, act, out);
      store_band_nchw16c(out, rows * p.OW, y + block * p.OH * p.OW + lane, oh0 * p.OW);
    }
  });
}

bool expand_depthwise3x3_applicable(const ExpandDepthwiseParams& p) noexcept {
  return p.N > 0 && p.C >= 1 && p.C <= kMaxExpandK && p.M > 0 && p.M % kLanes == 0 && p.H > 0 && p.W > 0 &&
         (p.stride == 1 || p.stride == 2) && p.OH == (p.H - 1) / p.stride + 1 &&
         p.OW == (p.W - 1) / p.stride + 1 && band_rows(depthwise_of(p)) > 0 && (!p.x_nchw16c || p.C % 16 == 0) &&
         (!p.y_nchw16c || p.M % 16 == 0);
}

bool expand_depthwise3x3_pays(const ExpandDepthwiseParams& p) noexcept { return p.H * p.W >= kMinFusedPositions; }

bool depthwise3x3_pointwise_applicable(const DepthwisePointwiseParams& p) noexcept {
  return p.N > 0 && p.C > 0 && p.C % kLanes == 0 && p.M > 0 && p.H > 0 && p.W > 0 &&
         (p.stride == 1 || p.stride == 2) && p.OH == (p.H - 1) / p.stride + 1 &&
         p.OW == (p.W - 1) / p.stride + 1 && band_rows(depthwise_of(p)) > 0 && pointwise_chunk_rows(p) > 0;
}

bool depthwise3x3_pointwise_pays(const DepthwisePointwiseParams& p) noexcept {
  return p.OH * p.OW >= kMinPointwisePositions;
}

void depthwise3x3_pointwise_f32(const DepthwisePointwiseParams& p, const float* x, const float* w1, const float* b1,
                                const StoreActivation& act1, const float* w2, const float* b2,
                                const StoreActivation& act2, float* y, ThreadPool* pool) noexcept {
  const Conv2dParams dw = depthwise_of(p);
  // Chunks of near-equal rows (chunk k: rows [k * OH / chunks, (k + 1) * OH / chunks)), as
  // many for every thread of one image (19 chunks of MobileNetV2's 112 rows would leave one of
  // 2 threads 10).
  const int64_t threads = pool ? pool->size() : 1, most = pointwise_chunk_rows(p);
  int64_t chunks = (p.OH + most - 1) / most;
  if (p.N == 1) chunks = std::min((chunks + threads - 1) / threads * threads, p.OH);
  const bool avx2 = cpu_has_avx2_fma();
  parallel_for(pool, p.N * chunks, [&](int64_t u0, int64_t u1) {
    alignas(32) float scratch[kPointwiseScratchFloats];
    const float* src[kPointwiseScratchFloats / 8];
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / chunks, k = u % chunks, oh0 = k * p.OH / chunks, oh1 = (k + 1) * p.OH / chunks;
      const int64_t ld = scratch_stride(oh1 - oh0, p.OW), positions = (oh1 - oh0) * p.OW;
      // The 1x1 reads whole vectors: the floats past the chunk's positions are zero.
      for (int64_t c = 0; c < p.C; ++c) {
        src[c] = scratch + c * ld;
        std::fill(scratch + c * ld + positions, scratch + (c + 1) * ld, 0.f);
      }
#if KILN_X86_KERNELS
      if (avx2) {
        for (int64_t c0 = 0; c0 < p.C; c0 += kLanes) {
          const float* xs[kLanes];
          float* ys[kLanes];
          float wt[9 * kLanes], bv[kLanes];
          gather_group(dw, n, c0, x, w1, b1, xs, wt, bv);
          for (int64_t k = 0; k < kLanes; ++k) ys[k] = scratch + (c0 + k) * ld;
          if (p.stride == 1)
            depthwise_bands<1>(dw, xs, wt, bv, act1, oh0, oh1, ys, oh0, [](int64_t, int64_t) {});
          else
            depthwise_bands<2>(dw, xs, wt, bv, act1, oh0, oh1, ys, oh0, [](int64_t, int64_t) {});
        }
      } else
#endif
        depthwise_rows_plain(dw, x + n * p.C * p.H * p.W, w1, b1, act1, oh0, oh1, scratch, ld);
      conv1x1_direct_rows(src, p.C, positions, w2, b2, p.M, y + (n * p.M * p.OH + oh0) * p.OW, p.OH * p.OW, act2);
    }
  });
  (void)avx2;
}

namespace {

// Groups of 8 expanded channels a unit of work takes: two, or one where a band has no room
// for two.
int64_t groups_per_unit(const ExpandDepthwiseParams& p) {
  return band_rows(depthwise_of(p), kMaxGroups) > 0 ? kMaxGroups : 1;
}

void run_expand_depthwise(const ExpandDepthwiseArgs& args, ThreadPool* pool) {
  const ExpandDepthwiseParams& p = *args.p;
  // Work units: a pair of groups (one where the band has no room for two, or the last of an
  // odd number) of chunk k of image n, groups innermost, so that a thread's units share their
  // chunk's input rows. Chunks of near-equal rows (chunk k: rows [k * OH / chunks,
  // (k + 1) * OH / chunks)).
  const int64_t groups = p.M / kLanes, per_row = p.C * p.W * p.stride * static_cast<int64_t>(sizeof(float));
  const int64_t per_unit = groups_per_unit(p), units = (groups + per_unit - 1) / per_unit;
  const int64_t most = std::clamp<int64_t>(kChunkBytes / per_row, 1, p.OH);
  const int64_t chunks = (p.OH + most - 1) / most;
  parallel_for(pool, p.N * chunks * units, [a = &args, groups, per_unit, units, chunks](int64_t u0, int64_t u1) {
    const ExpandDepthwiseParams& q = *a->p;
    alignas(32) float buf[kBandFloats];
    // A unit's weights, when they are not packed already.
    alignas(32) float own[(kMaxExpandK * kLanes + kUnitExtraFloats) * kMaxGroups];
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / (chunks * units), k = u / units % chunks;
      const int64_t oh0 = k * q.OH / chunks, oh1 = (k + 1) * q.OH / chunks;
      const int64_t unit = u % units, g0 = unit * per_unit;
      const int G = static_cast<int>(std::min(per_unit, groups - g0));
      const float* packed = own;
      if (a->packed)
        packed = a->packed + unit * per_unit * (q.C * kLanes + kUnitExtraFloats);
      else
        pack_unit(q.C, a->w1, a->b1, a->w2, a->b2, g0, G, own);
      const UnitWeights gw = unit_weights(packed, q.C, G);
      if (q.stride == 1)
        expand_depthwise_rows<1>(*a, n, g0, G, oh0, oh1, gw, buf);
      else
        expand_depthwise_rows<2>(*a, n, g0, G, oh0, oh1, gw, buf);
    }
  });
}

}  // namespace

int64_t expand_depthwise3x3_packed_floats(const ExpandDepthwiseParams& p) noexcept {
  return p.M * p.C + (p.M / kLanes) * kUnitExtraFloats;
}

void expand_depthwise3x3_pack(const ExpandDepthwiseParams& p, const float* w1, const float* b1, const float* w2,
                              const float* b2, float* packed) noexcept {
  const int64_t groups = p.M / kLanes, per_unit = groups_per_unit(p);
  for (int64_t g0 = 0; g0 < groups; g0 += per_unit) {
    const int G = static_cast<int>(std::min(per_unit, groups - g0));
    pack_unit(p.C, w1, b1, w2, b2, g0, G, packed + g0 * (p.C * kLanes + kUnitExtraFloats));
  }
}

void expand_depthwise3x3_f32(const ExpandDepthwiseParams& p, const float* x, const float* w1, const float* b1,
                             const StoreActivation& act1, const float* w2, const float* b2,
                             const StoreActivation& act2, float* y, ThreadPool* pool) noexcept {
  run_expand_depthwise(ExpandDepthwiseArgs{&p, depthwise_of(p), x, nullptr, w1, b1, w2, b2, act1, act2, y,
                                           cpu_has_avx2_fma(), cpu_has_avx512f()},
                       pool);
}

void expand_depthwise3x3_f32_prepacked(const ExpandDepthwiseParams& p, const float* x, const float* packed,
                                       const StoreActivation& act1, const StoreActivation& act2, float* y,
                                       ThreadPool* pool) noexcept {
  run_expand_depthwise(ExpandDepthwiseArgs{&p, depthwise_of(p), x, packed, nullptr, nullptr, nullptr, nullptr, act1,
                                           act2, y, cpu_has_avx2_fma(), cpu_has_avx512f()},
                       pool);
}

}  // namespace kiln::rt
