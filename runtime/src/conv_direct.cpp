// Direct 3x3 convolution for few input channels: each output row is summed from the few
// input rows under it, kept de-interleaved by stride phase in a small ring of row buffers.
#include "kiln/rt/conv_direct.h"

#include <cstdint>
#include <cstring>

#include "kiln/rt/thread_pool.h"

// The vector kernel runs where cpu_has_avx2_fma().
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

constexpr int64_t kMaxChannels = 4;
constexpr int64_t kMaxTaps = kMaxChannels * 9;
// 1x1 convolutions read directly (measured on Zen 4 against the packed GEMM, one thread):
// at most kMaxPointwiseK input channels (K): from K = 256 the K x 24 input block leaves L1
// (ResNet-50's 256 -> 128 at 56 x 56: 2.02 ms with the GEMM, 2.12 direct) ...
constexpr int64_t kMaxPointwiseK = 192;
// ... planes of at least this many positions: on 7 x 7 planes (three blocks, the last of one
// column) MobileNetV2's 160 -> 960 took 272 us in the model against the transposed GEMM's 194
// (the weights, 600 KiB, are read again for every block) ...
constexpr int64_t kMinPointwisePositions = 96;
// ... and only where the GEMM is at a disadvantage: few output channels (the 6-row tiles leave
// an edge tile, and packing B is paid for few products: 32 -> 16 at 112 x 112, 456 -> 183 us),
// few input channels (a tile's stores weigh as much as its K products: 16 -> 96, 594 -> 481
// us), or few positions (14 x 14: the 16-wide column tiles compute 208 of 196). Elsewhere
// (ResNet-50's 64 -> 256 at 56 x 56, 128 -> 512 at 28 x 28) the direct kernel was faster alone
// but the network 0.5-1 ms slower, so they keep the GEMM.
constexpr int64_t kFewChannels = 32;
constexpr int64_t kFewPositions = 196;
constexpr int64_t kSlots = 4;               // input rows kept: 3 in use, distinct mod 4
constexpr int64_t kRingFloats = 8 * 1024;  // the ring of row buffers (32 KiB on the stack)
constexpr int64_t kNoRow = INT64_MIN;      // a slot that holds no row yet

// Floats of one stored phase of an input row: enough that the kernel's 8-wide loads past the
// last output column (up to a multiple of 8, plus a tap offset of at most 2) stay inside it.
int64_t row_floats(const Conv2dParams& p) { return (p.OW + 7) / 8 * 8 + 8; }

// Floats of one ring slot: every channel's row, one buffer per stride phase.
int64_t slot_floats(const Conv2dParams& p) { return p.C * p.stride_w * row_floats(p); }

// The ring of input rows: slot ih mod 4 holds input row ih (every channel), with phase q of
// a channel's row holding padded columns q, q + S, q + 2S, ... (zero outside the input), so
// tap kw of output column ow reads phase kw % S at ow + kw / S: contiguous for every stride.
struct RowRing {
  const Conv2dParams* p;
  const float* x;  // this image
  float* buf;
  int64_t held[kSlots];

  const float* row(int64_t ih) {
    const int64_t s = ((ih % kSlots) + kSlots) % kSlots;
    float* d = buf + s * slot_floats(*p);
    if (held[s] == ih) return d;
    held[s] = ih;
    const Conv2dParams& q = *p;
    const int64_t rw = row_floats(q), S = q.stride_w;
    for (int64_t c = 0; c < q.C; ++c) {
      const float* xr = ih >= 0 && ih < q.H ? x + (c * q.H + ih) * q.W : nullptr;
      for (int64_t ph = 0; ph < S; ++ph) {
        // o[j] is padded column ph + S * j, input column iw = ph + S * j - pad_left: inside
        // the input for j in [lo, hi).
        float* o = d + (c * S + ph) * rw;
        int64_t lo = 0, hi = 0;
        if (xr != nullptr) {
          lo = q.pad_left > ph ? (q.pad_left - ph + S - 1) / S : 0;
          hi = (q.W + q.pad_left - ph + S - 1) / S;
          hi = hi < rw ? hi : rw;
          lo = lo < hi ? lo : hi;
        }
        for (int64_t j = 0; j < lo; ++j) o[j] = 0.f;
        if (lo < hi) {
          const float* xs = xr + (ph + S * lo - q.pad_left);
          for (int64_t j = lo; j < hi; ++j) o[j] = xs[S * (j - lo)];
        }
        for (int64_t j = hi; j < rw; ++j) o[j] = 0.f;
      }
    }
    return d;
  }
};

// Each tap's (c, kh, kw) input for output row oh, as a pointer at output column 0.
void tap_sources(const Conv2dParams& p, RowRing& ring, int64_t oh, const float* src[kMaxTaps]) {
  const int64_t rw = row_floats(p), S = p.stride_w;
  for (int64_t kh = 0; kh < 3; ++kh) {
    const float* slot = ring.row(oh * p.stride_h - p.pad_top + kh);
    for (int64_t c = 0; c < p.C; ++c)
      for (int64_t kw = 0; kw < 3; ++kw) src[c * 9 + kh * 3 + kw] = slot + (c * S + kw % S) * rw + kw / S;
  }
}


// What the kernels apply as they store, from the epilogue's promises (Epilogue::fn_is_clamp,
// fn_is_relu).
struct StoreOps {
  bool clamp;
  float lo, hi;
  bool relu;
};

// columns_avx2 in plain loops (CPUs without AVX2+FMA).
void columns_plain(const float* const* src, int64_t s0, int64_t K, const float* w, const float* bias, int64_t M,
                   int64_t n, float* y, int64_t ldy, const float* res, const StoreOps& ops) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < n; ++j) {
      float s = bias ? bias[m] : 0.f;
      for (int64_t t = 0; t < K; ++t) s += w[m * K + t] * src[t][s0 + j];
      if (res) s += res[m * ldy + j];
      if (ops.relu) s = relu_of(s);
      y[m * ldy + j] = ops.clamp ? clamp_to(s, ops.lo, ops.hi) : s;
    }
}

#if KILN_X86_KERNELS

// MB output channels (weights w, ldw apart) x NV * 8 columns: the K taps' products summed in
// registers (tap t's columns at src[t] + s0, readable for NV * 8 floats), then the bias, the
// residual (res: rows as y's, or nullptr), the clamp, and a store of the first n columns at y
// (n > (NV - 1) * 8; rows ldy apart).
template <int MB, int NV>
KILN_AVX2_FMA void tile(const float* const* src, int64_t s0, int64_t K, const float* w, int64_t ldw,
                        const float* bias, int64_t n, float* y, int64_t ldy, const float* res, const StoreOps& ops) {
  __m256 acc[MB][NV];
#pragma GCC unroll 4
  for (int mi = 0; mi < MB; ++mi) {
    const __m256 b = _mm256_set1_ps(bias ? bias[mi] : 0.f);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[mi][v] = b;
  }
  for (int64_t t = 0; t < K; ++t) {
    __m256 xv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) xv[v] = _mm256_loadu_ps(src[t] + s0 + 8 * v);
#pragma GCC unroll 4
    for (int mi = 0; mi < MB; ++mi) {
      const __m256 wv = _mm256_broadcast_ss(w + mi * ldw + t);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[mi][v] = _mm256_fmadd_ps(wv, xv[v], acc[mi][v]);
    }
  }
  const __m256 vlo = _mm256_set1_ps(ops.lo), vhi = _mm256_set1_ps(ops.hi);
#pragma GCC unroll 4
  for (int mi = 0; mi < MB; ++mi) {
    float* ym = y + mi * ldy;
    const float* rm = res ? res + mi * ldy : nullptr;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const int64_t left = n - 8 * v;  // columns of this vector to store
      alignas(32) float t[8];
      __m256 a = acc[mi][v];
      if (rm != nullptr && left >= 8) {
        a = _mm256_add_ps(a, _mm256_loadu_ps(rm + 8 * v));
      } else if (rm != nullptr) {
        for (int64_t i = 0; i < 8; ++i) t[i] = i < left ? rm[8 * v + i] : 0.f;
        a = _mm256_add_ps(a, _mm256_load_ps(t));
      }
      // max/min return their second operand when either is NaN: a NaN stays NaN, as in fn.
      if (ops.clamp) a = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a));
      // Relu: max returns its second operand (0) for a NaN, and +0 for -0, as x > 0 ? x : 0.
      if (ops.relu) a = _mm256_max_ps(a, _mm256_setzero_ps());
      if (left >= 8) {
        _mm256_storeu_ps(ym + 8 * v, a);
      } else {
        _mm256_store_ps(t, a);
        for (int64_t i = 0; i < left; ++i) ym[8 * v + i] = t[i];
      }
    }
  }
}

// MB channels x n columns (n <= 24).
template <int MB>
KILN_AVX2_FMA void tile_any(const float* const* src, int64_t s0, int64_t K, const float* w, int64_t ldw,
                            const float* bias, int64_t n, float* y, int64_t ldy, const float* res,
                            const StoreOps& ops) {
  if (n > 16)
    tile<MB, 3>(src, s0, K, w, ldw, bias, n, y, ldy, res, ops);
  else if (n > 8)
    tile<MB, 2>(src, s0, K, w, ldw, bias, n, y, ldy, res, ops);
  else
    tile<MB, 1>(src, s0, K, w, ldw, bias, n, y, ldy, res, ops);
}

// n columns (src[t] + s0 on; n <= 24, readable to a multiple of 8) of all M channels:
// y[m][j] = bias[m] + sum_t w[m][t] src[t][s0 + j] (w is M x K; y's and res's rows ldy apart),
// 4 channels at a time.
KILN_AVX2_FMA void columns_avx2(const float* const* src, int64_t s0, int64_t K, const float* w, const float* bias,
                                int64_t M, int64_t n, float* y, int64_t ldy, const float* res,
                                const StoreOps& ops) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4)
    tile_any<4>(src, s0, K, w + m * K, K, bias ? bias + m : nullptr, n, y + m * ldy, ldy,
                res ? res + m * ldy : nullptr, ops);
  for (; m < M; ++m)
    tile_any<1>(src, s0, K, w + m * K, K, bias ? bias + m : nullptr, n, y + m * ldy, ldy,
                res ? res + m * ldy : nullptr, ops);
}

#endif  // KILN_X86_KERNELS

struct DirectArgs {
  const Conv2dParams* p;
  const float* x;
  const float* w;
  const float* bias;
  float* y;
  const Epilogue* ep;
  bool avx2;
};

// The epilogue's clamp or Relu and residual, applied in registers when fn promises no more
// (Epilogue::fn_is_clamp, fn_is_relu, residual); otherwise fn is called on the stored rows.
bool in_kernel(const Epilogue& ep) {
  return ep.fn != nullptr && (ep.fn_is_clamp || ep.fn_is_relu || ep.residual != nullptr);
}

StoreOps store_ops(const Epilogue& ep) {
  const bool clamp = in_kernel(ep) && ep.fn_is_clamp;
  return StoreOps{clamp, clamp ? ep.clamp_lo : 0.f, clamp ? ep.clamp_hi : 0.f, in_kernel(ep) && !clamp && ep.fn_is_relu};
}

// n columns of output channels [m0, m1), 24 at a time: y at output element `offset` of
// channel 0 (rows ohw apart), the taps' columns at src[t] + s0 on (readable to a multiple of 8
// past n).
void columns(const DirectArgs& a, const float* const* src, int64_t s0, int64_t K, int64_t n, int64_t offset,
             int64_t m0, int64_t m1) {
  const Conv2dParams& p = *a.p;
  const int64_t ohw = p.OH * p.OW;
  const Epilogue& ep = *a.ep;
  const StoreOps ops = store_ops(ep);
  offset += m0 * ohw;
  const float* res = in_kernel(ep) && ep.residual ? ep.residual + offset : nullptr;
  const float* w = a.w + m0 * K;
  const float* bias = a.bias ? a.bias + m0 : nullptr;
  for (int64_t j = 0; j < n; j += 24) {
    const int64_t nb = n - j < 24 ? n - j : 24;
    float* y = a.y + offset + j;
    const float* r = res ? res + j : nullptr;
#if KILN_X86_KERNELS
    if (a.avx2)
      columns_avx2(src, s0 + j, K, w, bias, m1 - m0, nb, y, ohw, r, ops);
    else
#endif
      columns_plain(src, s0 + j, K, w, bias, m1 - m0, nb, y, ohw, r, ops);
  }
  if (ep.fn && !in_kernel(ep))
    for (int64_t m = 0; m < m1 - m0; ++m) ep.fn(ep.ctx, a.y + offset + m * ohw, offset + m * ohw, n);
}

// Output rows [r0, r1) of a 3x3 convolution, counted over images and rows (r = n * OH + oh).
void rows(const DirectArgs& a, int64_t r0, int64_t r1) {
  const Conv2dParams& p = *a.p;
  const int64_t ohw = p.OH * p.OW;
  float buf[kRingFloats];
  RowRing ring{&p, nullptr, buf, {}};
  const float* src[kMaxTaps];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / p.OH, oh = r % p.OH;
    if (r == r0 || oh == 0) ring = RowRing{&p, a.x + n * p.C * p.H * p.W, buf, {kNoRow, kNoRow, kNoRow, kNoRow}};
    tap_sources(p, ring, oh, src);
    columns(a, src, 0, p.C * 9, p.OW, n * p.M * ohw + oh * p.OW, 0, p.M);
  }
}

// Work units [u0, u1) of a 1x1 convolution: unit u is channel group u % groups (of `group`
// channels) of block u / groups of 24 output positions, blocks counted over images. Each
// block's K x 24 inputs are first copied together (zero-padded past the plane's end): read in
// place, the K rows of a 112 x 112 plane, 49 KiB apart, fell into 4 of L1's 64 sets and were
// evicted between the 4-channel tiles.
void pointwise_units(const DirectArgs& a, int64_t groups, int64_t group, int64_t u0, int64_t u1) {
  const Conv2dParams& p = *a.p;
  const int64_t hw = p.H * p.W, per_image = (hw + 23) / 24;
  const float* src[kMaxPointwiseK];
  alignas(32) float block[kMaxPointwiseK * 24];
  for (int64_t c = 0; c < p.C; ++c) src[c] = block + c * 24;
  int64_t held = -1;
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t b = u / groups, m0 = u % groups * group, m1 = m0 + group < p.M ? m0 + group : p.M;
    const int64_t n = b / per_image, j0 = b % per_image * 24, nb = hw - j0 < 24 ? hw - j0 : 24;
    if (held != b) {
      held = b;
      const float* x = a.x + n * p.C * hw + j0;
      for (int64_t c = 0; c < p.C; ++c) {
        float* d = block + c * 24;
        if (nb == 24) {
          std::memcpy(d, x + c * hw, 24 * sizeof(float));
        } else {
          for (int64_t j = 0; j < 24; ++j) d[j] = j < nb ? x[c * hw + j] : 0.f;
        }
      }
    }
    columns(a, src, 0, p.C, nb, n * p.M * hw + j0, m0, m1);
  }
}

}  // namespace

void conv1x1_direct_rows(const float* const* src, int64_t K, int64_t n, const float* w, const float* bias, int64_t M,
                         float* y, int64_t ldy, const StoreActivation& act) noexcept {
  const bool clamp = act.kind == StoreActivation::kClamp;
  const StoreOps ops{clamp, clamp ? act.lo : 0.f, clamp ? act.hi : 0.f, act.kind == StoreActivation::kRelu};
  [[maybe_unused]] const bool avx2 = cpu_has_avx2_fma();
  for (int64_t j = 0; j < n; j += 24) {
    const int64_t nb = n - j < 24 ? n - j : 24;
#if KILN_X86_KERNELS
    if (avx2) {
      columns_avx2(src, j, K, w, bias, M, nb, y + j, ldy, nullptr, ops);
      continue;
    }
#endif
    columns_plain(src, j, K, w, bias, M, nb, y + j, ldy, nullptr, ops);
  }
}

bool conv3x3_direct_applicable(const Conv2dParams& p) noexcept {
  return p.group == 1 && p.C >= 1 && p.C <= kMaxChannels && p.KH == 3 && p.KW == 3 && p.dil_h == 1 &&
         p.dil_w == 1 && p.stride_h == p.stride_w && (p.stride_w == 1 || p.stride_w == 2) && p.pad_top >= 0 &&
         p.pad_top <= 2 && p.pad_left >= 0 && p.pad_left <= 2 && p.OH > 0 && p.OW > 0 && p.M > 0 &&
         kSlots * slot_floats(p) <= kRingFloats;
}

void conv3x3_direct(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                    const Epilogue& epilogue, ThreadPool* pool) noexcept {
  const bool avx2 = cpu_has_avx2_fma();
  const DirectArgs args{&p, x, w, bias, y, &epilogue, avx2};
  parallel_for(pool, p.N * p.OH, [a = &args](int64_t r0, int64_t r1) { rows(*a, r0, r1); });
}

bool conv1x1_direct_applicable(const Conv2dParams& p) noexcept {
  return p.group == 1 && p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.dil_h == 1 && p.dil_w == 1 && p.OH == p.H && p.OW == p.W && p.H > 0 && p.W > 0 &&
         p.C >= 1 && p.C <= kMaxPointwiseK && p.M >= 1 &&
         p.H * p.W >= kMinPointwisePositions &&
         (p.C <= kFewChannels || p.M <= kFewChannels || p.H * p.W <= kFewPositions);
}

void conv1x1_direct(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                    const Epilogue& epilogue, ThreadPool* pool) noexcept {
  const bool avx2 = cpu_has_avx2_fma();
  const DirectArgs args{&p, x, w, bias, y, &epilogue, avx2};
  const int64_t blocks = p.N * ((p.H * p.W + 23) / 24);
  // Few blocks (14 x 14 and 7 x 7 planes) are not enough to share: their output channels are
  // split too, in groups of a multiple of 4, to give each thread about 8 units.
  const int64_t threads = pool ? pool->size() : 1;
  int64_t groups = 1, group = p.M;
  if (threads > 1 && blocks < 8 * threads) {
    const int64_t want = (8 * threads + blocks - 1) / blocks;
    group = ((p.M + want - 1) / want + 3) / 4 * 4;
    groups = (p.M + group - 1) / group;
  }
  parallel_for(pool, blocks * groups, [a = &args, groups, group](int64_t u0, int64_t u1) {
    pointwise_units(*a, groups, group, u0, u1);
  });
}

}  // namespace kiln::rt
