// Depthwise 3x3 on 8 channels at once: channel-interleaved, zero-padded bands of rows.
#include "kiln/rt/depthwise.h"

// The kernel runs where cpu_has_avx2_fma(); elsewhere conv2d_f32 keeps its per-plane kernels.
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

// Floats of the stack buffer a band works in: its interleaved, padded input rows and its
// interleaved output (64 KiB: L1 and a little of L2).
constexpr int64_t kBandFloats = 16 * 1024;
constexpr int64_t kLanes = 8;

// Padded width: the input columns the output's windows cover.
int64_t padded_width(const Conv2dParams& p) { return (p.OW - 1) * p.stride_w + 3; }

// Output rows per band: the most whose input rows ((rows - 1) * S + 3 of them) and output
// fit in kBandFloats, at most OH; 0 if not even one row fits.
int64_t band_rows(const Conv2dParams& p) {
  const int64_t s = p.stride_h, row = padded_width(p) * kLanes;
  const int64_t fixed = (3 - s) * row, per_row = s * row + p.OW * kLanes;
  if (fixed + per_row > kBandFloats) return 0;
  const int64_t r = (kBandFloats - fixed) / per_row;
  return r < p.OH ? r : p.OH;
}

#if KILN_X86_KERNELS

// r[k] (8 values of row k) becomes column k: the 8 x 8 block transposed in registers.
KILN_AVX2_FMA inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

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

// `rows` output rows of the band from its interleaved input into `out` (interleaved,
// rows x OW pixels). Four pixels at a time: four independent chains of 9 FMAs.
template <int64_t S>
KILN_AVX2_FMA void compute_band(const Conv2dParams& p, const float* in, int64_t rows, int64_t wp, const float* wt,
                                const float* bv, const Epilogue& ep, float* out) {
  __m256 wv[9];
  for (int64_t t = 0; t < 9; ++t) wv[t] = _mm256_loadu_ps(wt + t * kLanes);
  const __m256 bias = _mm256_loadu_ps(bv);
  // The epilogue's clamp (fn_is_clamp) in registers; a NaN stays NaN, as in the clamp's fn.
  const bool clamp = epilogue_is_clamp(ep);
  const __m256 lo = _mm256_set1_ps(ep.clamp_lo), hi = _mm256_set1_ps(ep.clamp_hi);
  auto store = [&](float* o, __m256 v) KILN_AVX2_FMA {
    if (clamp) {
      v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
      v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
    }
    _mm256_store_ps(o, v);
  };
  const int64_t ow4 = p.OW / 4 * 4;
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = in + r * S * wp * kLanes;
    float* o = out + r * p.OW * kLanes;
    int64_t ow = 0;
    for (; ow < ow4; ow += 4) {
      __m256 acc0 = bias, acc1 = bias, acc2 = bias, acc3 = bias;
      for (int64_t kh = 0; kh < 3; ++kh)
        for (int64_t kw = 0; kw < 3; ++kw) {
          const float* t = a + ((kh * wp) + ow * S + kw) * kLanes;
          const __m256 w = wv[kh * 3 + kw];
          acc0 = _mm256_fmadd_ps(w, _mm256_load_ps(t), acc0);
          acc1 = _mm256_fmadd_ps(w, _mm256_load_ps(t + S * kLanes), acc1);
          acc2 = _mm256_fmadd_ps(w, _mm256_load_ps(t + 2 * S * kLanes), acc2);
          acc3 = _mm256_fmadd_ps(w, _mm256_load_ps(t + 3 * S * kLanes), acc3);
        }
      store(o + ow * kLanes, acc0);
      store(o + (ow + 1) * kLanes, acc1);
      store(o + (ow + 2) * kLanes, acc2);
      store(o + (ow + 3) * kLanes, acc3);
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

template <int64_t S>
KILN_AVX2_FMA void depthwise3x3_c8_impl(const Conv2dParams& p, int64_t n, int64_t c0, const float* x, const float* w,
                          const float* bias, float* y, const Epilogue& ep) {
  alignas(32) float buf[kBandFloats];
  const int64_t wp = padded_width(p), band = band_rows(p), ohw = p.OH * p.OW;
  const int64_t in_rows_max = (band - 1) * S + 3;
  float* in = buf;
  float* out = buf + in_rows_max * wp * kLanes;
  const float* xs[kLanes];
  float* ys[kLanes];
  float wt[9][kLanes], bv[kLanes];
  for (int64_t k = 0; k < kLanes; ++k) {
    const int64_t c = c0 + k;
    xs[k] = x + (n * p.C + c) * p.H * p.W;
    ys[k] = y + (n * p.M + c) * ohw;
    for (int64_t t = 0; t < 9; ++t) wt[t][k] = w[c * 9 + t];
    bv[k] = bias ? bias[c] : 0.f;
  }
  for (int64_t oh0 = 0; oh0 < p.OH; oh0 += band) {
    const int64_t rows = p.OH - oh0 < band ? p.OH - oh0 : band;
    fill_band(p, xs, oh0 * S, (rows - 1) * S + 3, wp, in);
    compute_band<S>(p, in, rows, wp, &wt[0][0], bv, ep, out);
    store_band(out, rows * p.OW, ys, oh0 * p.OW);
    if (ep.fn && !epilogue_is_clamp(ep))  // a clamp was applied by compute_band
      for (int64_t k = 0; k < kLanes; ++k)
        ep.fn(ep.ctx, ys[k] + oh0 * p.OW, (n * p.M + c0 + k) * ohw + oh0 * p.OW, rows * p.OW);
  }
}

#endif  // KILN_X86_KERNELS

}  // namespace

bool depthwise3x3_c8_supported(const Conv2dParams& p) noexcept {
  if (!cpu_has_avx2_fma()) return false;
  return p.group == p.C && p.group == p.M && p.group > 1 && p.KH == 3 && p.KW == 3 && p.dil_h == 1 &&
         p.dil_w == 1 && p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2) && p.pad_top >= 0 &&
         p.pad_top <= 2 && p.pad_left >= 0 && p.pad_left <= 2 && p.OH > 0 && p.OW > 0 && band_rows(p) > 0;
}

void depthwise3x3_c8(const Conv2dParams& p, int64_t n, int64_t c0, const float* x, const float* w,
                     const float* bias, float* y, const Epilogue& epilogue) noexcept {
#if KILN_X86_KERNELS
  if (p.stride_h == 1)
    depthwise3x3_c8_impl<1>(p, n, c0, x, w, bias, y, epilogue);
  else
    depthwise3x3_c8_impl<2>(p, n, c0, x, w, bias, y, epilogue);
#else
  (void)p, (void)n, (void)c0, (void)x, (void)w, (void)bias, (void)y, (void)epilogue;
#endif
}

}  // namespace kiln::rt
