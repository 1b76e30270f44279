// conv_nchwc_f32's register tile on ARM64, with NEON intrinsics: one output block (F = 1) of 16
// channels is four 4-float quarters, so P = 6 positions keep 24 accumulators, the 4 weight
// registers of an input channel and its broadcast value in NEON's 32 registers (per input
// channel: 4 weight loads and 6 scalar loads for 24 FMAs, `fmla v.4s, v.4s, v.s[0]`).
//
// Written with intrinsics because GCC lowers vector_tile's 16-float vector type to four
// quarters it keeps on the stack on ARM64, as it did with two halves on AVX2: each fmla's
// accumulator was loaded from and stored to memory (`aarch64-linux-gnu-objdump -d` of the
// vector_tile<1, 6> instance: 1900 stack accesses against 768 fmla). Same taps, channel order
// and epilogue as vector_tile and portable_tile. `objdump -d` of this file's tile_neon<6, false>
// should show the inner loops' fmla with no [sp] access between them.
#include "kiln/rt/conv_nchwc_tile.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt::nchwc {

#if KILN_NEON_KERNELS
namespace {

constexpr int64_t kB = kNchwcBlock;

// One input channel: its 16 weights against the P positions' values (x + off[p]).
template <int P, bool kAll>
KILN_TILE_NO_POINTER_CHECKS __attribute__((always_inline)) inline void step_neon(const float* __restrict x,
                                                                              const float* __restrict wk,
                                                                              const int64_t (&off)[P], int lo, int hi,
                                                                              float32x4_t (&acc)[P][4]) {
  const float32x4_t w0 = vld1q_f32(wk), w1 = vld1q_f32(wk + 4), w2 = vld1q_f32(wk + 8), w3 = vld1q_f32(wk + 12);
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p) {
    if (!kAll && (p < lo || p >= hi)) continue;
    const float xv = x[off[p]];
    acc[p][0] = vfmaq_n_f32(acc[p][0], w0, xv);
    acc[p][1] = vfmaq_n_f32(acc[p][1], w1, xv);
    acc[p][2] = vfmaq_n_f32(acc[p][2], w2, xv);
    acc[p][3] = vfmaq_n_f32(acc[p][3], w3, xv);
  }
}

template <int P, bool kAll, bool kPlain>
KILN_TILE_NO_POINTER_CHECKS __attribute__((always_inline)) inline void tap_neon(const Tile& t, const float* __restrict row,
                                                                             int64_t iw, const float* __restrict w,
                                                                             int lo, int hi, float32x4_t (&acc)[P][4]) {
  int64_t off[P];
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p) off[p] = (iw + p * t.sw) * (kPlain ? 1 : kB);
  if constexpr (kPlain) {
    for (int64_t c = t.k0; c < t.k1; ++c) step_neon<P, kAll>(row + c * t.x_block, w + c * kB, off, lo, hi, acc);
    return;
  }
  for (int64_t kb = t.k0; kb < t.k1; kb += kB) {
    const float* __restrict xb = row + kb / kB * t.x_block;
    const float* __restrict wb = w + kb * kB;
#pragma GCC unroll 16
    for (int k = 0; k < kB; ++k) step_neon<P, kAll>(xb + k, wb + k * kB, off, lo, hi, acc);
  }
}

template <int P, bool kPlain>
KILN_TILE_NO_POINTER_CHECKS KILN_NEON_NO_SCHEDULE void tile_neon(const Tile& t) {
  float32x4_t acc[P][4];
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) acc[p][q] = t.first ? vdupq_n_f32(0.f) : vld1q_f32(t.y + p * kB + q * 4);
  for (int64_t kh = 0; kh < t.KH; ++kh) {
    const int64_t ih = t.ih0 + kh;
    if (ih < 0 || ih >= t.H) continue;
    const float* row = t.x + ih * t.W * (kPlain ? 1 : kB);
    for (int64_t kw = 0; kw < t.KW; ++kw) {
      int lo, hi;
      valid_positions(t.iw0 + kw, t.sw, t.W, P, lo, hi);
      const float* w = t.w + (kh * t.KW + kw) * t.K * kB;
      if (lo == 0 && hi == P)
        tap_neon<P, true, kPlain>(t, row, t.iw0 + kw, w, lo, hi, acc);
      else if (lo < hi)
        tap_neon<P, false, kPlain>(t, row, t.iw0 + kw, w, lo, hi, acc);
    }
  }
  if (!t.last) {
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) vst1q_f32(t.y + p * kB + q * 4, acc[p][q]);
    return;
  }
  const float32x4_t zero = vdupq_n_f32(0.f), lo = vdupq_n_f32(t.act.lo), hi = vdupq_n_f32(t.act.hi);
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const float32x4_t bv = t.bias ? vld1q_f32(t.bias + q * 4) : zero;
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p) {
      float32x4_t v = acc[p][q];
      if (t.bias) v = vaddq_f32(v, bv);  // act(conv + bias + z), in kiln.FusedConv's order
      if (t.z) v = vaddq_f32(v, vld1q_f32(t.z + p * kB + q * 4));
      // Selects on comparisons, as vector_tile's ?: (NEON's fmax/fmin would turn a clamp's NaN
      // into NaN either way but +0 and -0 into +0): a clamp keeps NaN and -0, Relu makes NaN 0.
      if (t.act.kind == StoreActivation::kClamp) {
        v = vbslq_f32(vcltq_f32(v, lo), lo, v);
        v = vbslq_f32(vcgtq_f32(v, hi), hi, v);
      } else if (t.act.kind == StoreActivation::kRelu) {
        v = vbslq_f32(vcgtq_f32(v, zero), v, zero);
      }
      vst1q_f32(t.y + p * kB + q * 4, v);
    }
  }
}

template <bool kPlain>
void fill_plain_or_blocked(Kernels& k) {
  TileFn* fns = k.fns[kPlain][0];
  fns[0] = tile_neon<1, kPlain>;
  fns[1] = tile_neon<2, kPlain>;
  fns[2] = tile_neon<3, kPlain>;
  fns[3] = tile_neon<4, kPlain>;
  fns[4] = tile_neon<5, kPlain>;
  fns[5] = tile_neon<6, kPlain>;
}

}  // namespace

void fill_neon(Kernels& k) {
  fill_plain_or_blocked<false>(k);
  fill_plain_or_blocked<true>(k);
  k.max_f = 1;
}
#else
void fill_neon(Kernels&) {}
#endif

}  // namespace kiln::rt::nchwc
