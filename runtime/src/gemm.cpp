// Goto-style blocked GEMM: B is packed into KC x NR panels, A into MR x KC
// panels, and an MR x NR register tile is accumulated by a micro-kernel
// written with GCC/Clang vector extensions (lowered to whatever vector ISA
// the flags allow, or to AVX2+FMA chosen at run time), with a plain-loop fallback.
#include "kiln/rt/gemm.h"

#include <cstdlib>
#include <cstring>

#include "kiln/rt/gemm_bf16.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

// The register tile is kMR rows by kNR = 16 columns: with AVX2 there are 16 ymm registers
// (12 accumulators + 2 for B + 1 for A).
//
// Run-time dispatch on x86-64: unless the flags already promise AVX2 and FMA (--cpu native on
// such a machine, x86-64-v3), the binary carries the vector micro-kernel compiled for AVX2+FMA
// and a portable one, and picks one once by CPU feature (`kiln compile --cpu generic`, the
// default, thus runs fast on AVX2 machines and correctly everywhere). Elsewhere (ARM, other
// compilers) the vector kernel is lowered to whatever the flags allow, or plain loops are used.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !(defined(__AVX2__) && defined(__FMA__))
#define KILN_GEMM_DISPATCH 1
#else
#define KILN_GEMM_DISPATCH 0
#endif
constexpr int64_t kMR = kGemmF32PanelA;
constexpr int64_t kNR = kGemmF32PanelB;
// Blocking measured on AMD Zen 4 (32 KiB L1d, 1 MiB L2), 1024^3, one core: kc 256 -> 512
// raised the kernel from ~86 to ~93 GFLOP/s (the B micro-panel, kc x kNR floats, fills L1).
constexpr int64_t kKC = kGemmF32BlockK;
constexpr int64_t kMC = 72;              // multiple of kMR; kMC x kKC floats of A stay in L2
constexpr int64_t kNC = kGemmF32BlockN;  // multiple of kNR
// Finished tiles get their bias and epilogue in groups this many columns wide (kMC x 128
// floats: 36 KiB): per tile, the epilogue's call overhead on 16-float rows cost more than
// the work itself (about a fifth of MobileNetV2's time).
constexpr int64_t kFinishCols = 128;  // multiple of kNR

// Packed layouts (gemm_f32_pack_a / gemm_f32_pack_b), the order the loops below read them in:
// A (M x K): for each K block of kKC (the last may be shorter, kc), all rows in panels of kMR
//   rows (M rounded up to kMR, zero rows below M), each panel kc steps of kMR values;
//   block pc starts at pc * Mpad, the panel of row i (a multiple of kMR) at i * kc within it.
// B (K x N): for each column block of kNC (width nc rounded up to kNR: ncp), each K block
//   holds panels of kNR columns, kc steps of kNR values; block (jc, pc) starts at
//   jc * K + pc * ncp, the panel of column j at ((j - jc) / kNR) * kc * kNR within it.
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

const float* packed_a_panel(const float* p, int64_t M, int64_t i, int64_t pc, int64_t kc) {
  return p + pc * round_up(M, kMR) + i * kc;
}

const float* packed_b_panel(const float* p, int64_t K, int64_t N, int64_t j, int64_t pc, int64_t kc) {
  const int64_t jc = j / kNC * kNC;
  const int64_t ncp = round_up(N - jc < kNC ? N - jc : kNC, kNR);
  return p + jc * K + pc * ncp + (j - jc) / kNR * kc * kNR;
}

// An operand: plain (p, ld, trans) or packed (then rows x cols is op(X)'s shape, needed to
// find panels; ld and trans are unused).
struct Matrix {
  const float* p;
  int64_t ld;
  bool trans;
  bool packed = false;
  bool is_a = false;
  int64_t rows = 0, cols = 0;
  // Element (r, c) of op(X).
  float at(int64_t r, int64_t c) const {
    if (!packed) return trans ? p[c * ld + r] : p[r * ld + c];
    if (is_a) {  // rows x cols = M x K
      const int64_t pc = c / kKC * kKC, kc = cols - pc < kKC ? cols - pc : kKC, i0 = r / kMR * kMR;
      return packed_a_panel(p, rows, i0, pc, kc)[(c - pc) * kMR + (r - i0)];
    }
    // rows x cols = K x N
    const int64_t pc = r / kKC * kKC, kc = rows - pc < kKC ? rows - pc : kKC, j0 = c / kNR * kNR;
    return packed_b_panel(p, rows, cols, j0, pc, kc)[(r - pc) * kNR + (c - j0)];
  }
};

// Packs rows [0, m) x cols [0, kc) of op(A) (already offset) into panels of kMR rows:
// panel p, step k holds kMR values. Rows past m are zero.
void pack_a(const Matrix& a, int64_t m, int64_t kc, float* out) {
  for (int64_t i0 = 0; i0 < m; i0 += kMR) {
    const int64_t mr = m - i0 < kMR ? m - i0 : kMR;
    if (!a.trans) {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kMR;
        for (int64_t i = 0; i < mr; ++i) o[i] = a.p[(i0 + i) * a.ld + k];
        for (int64_t i = mr; i < kMR; ++i) o[i] = 0.f;
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kMR;
        const float* src = a.p + k * a.ld + i0;
        for (int64_t i = 0; i < mr; ++i) o[i] = src[i];
        for (int64_t i = mr; i < kMR; ++i) o[i] = 0.f;
      }
    }
    out += kc * kMR;
  }
}

// Packs rows [0, kc) x cols [0, n) of op(B) into panels of kNR columns.
void pack_b(const Matrix& b, int64_t kc, int64_t n, float* out) {
  for (int64_t j0 = 0; j0 < n; j0 += kNR) {
    const int64_t nr = n - j0 < kNR ? n - j0 : kNR;
    if (!b.trans) {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kNR;
        const float* src = b.p + k * b.ld + j0;
        if (nr == kNR) {
          std::memcpy(o, src, sizeof(float) * kNR);
        } else {
          for (int64_t j = 0; j < nr; ++j) o[j] = src[j];
          for (int64_t j = nr; j < kNR; ++j) o[j] = 0.f;
        }
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kNR;
        for (int64_t j = 0; j < nr; ++j) o[j] = b.p[(j0 + j) * b.ld + k];
        for (int64_t j = nr; j < kNR; ++j) o[j] = 0.f;
      }
    }
    out += kc * kNR;
  }
}

// What a tile gets as it is stored after its last K block, while in registers: the bias of
// each of its rows (kMR floats, or nullptr), a residual (the tile's part of it, rows add_ld
// apart, or nullptr), then a clamp to [lo, hi] or a ReLU (the epilogue's promises,
// Epilogue::fn_is_clamp, fn_is_relu and residual). nullptr: nothing.
struct StoreOps {
  const float* bias;
  bool clamp;
  float lo, hi;
  const float* add;
  int64_t add_ld;
  bool relu = false;
};

// C[0:kMR, 0:kNR] = alpha * sum_k a[k][i] * b[k][j] + beta * C over kc steps of packed panels
// (beta == 0: C is not read), then `ops`. Partial edge tiles go through a kMR x kNR buffer
// (store_tile).
using KernelFn = void (*)(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c,
                          int64_t ldc, const StoreOps* ops);

#if defined(__GNUC__) || defined(__clang__)
typedef float vec8 __attribute__((vector_size(8 * sizeof(float))));

// Stores R rows of a tile from registers: C[0:R, 0:kNR] = alpha * rows + beta * C (beta == 0:
// C not read), then `ops` (kOps; else ops is nullptr). Both loops are unrolled and `ops` read
// once, so that the rows stay in registers: as a loop over rows they went through the stack,
// each operation tested per row.
// V: the 8-float vector type (two per row), or on ARM64 the 4-float one (four per row).
template <int R, bool kOps, class V>
__attribute__((always_inline)) inline void store_rows(const V (&rows)[R][kNR * sizeof(float) / sizeof(V)], float alpha,
                                                      float beta, float* __restrict c, int64_t ldc,
                                                      const StoreOps* ops) {
  constexpr int W = sizeof(V) / sizeof(float), H = kNR / W;
  const float* const bias = kOps ? ops->bias : nullptr;
  const float* const add = kOps ? ops->add : nullptr;
  const int64_t add_ld = kOps ? ops->add_ld : 0;
  const bool clamp = kOps && ops->clamp;  // lo <= hi (Epilogue::fn_is_clamp): the same as clamp_to
  const V lo = V{} + (clamp ? ops->lo : 0.f), hi = V{} + (clamp ? ops->hi : 0.f);
  const bool relu = kOps && ops->relu;
  const V zero = {};
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    float* row = c + i * ldc;
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
      V v = rows[i][h];
      if (alpha != 1.f) v = alpha * v;
      if (beta != 0.f) {
        V old;
        std::memcpy(&old, row + h * W, sizeof old);
        v = beta == 1.f ? v + old : v + beta * old;
      }
      if (bias) v += bias[i];
      if (add) {
        V r;
        std::memcpy(&r, add + i * add_ld + h * W, sizeof r);
        v += r;
      }
      if (clamp) {
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
      }
      if (relu) v = v > zero ? v : zero;  // relu_of: NaN becomes 0
      std::memcpy(row + h * W, &v, sizeof v);
    }
  }
}

// The vector tile, written once; the wrappers below compile it for each target.
// kOps false: ops is nullptr and the store has no code for it (the plain products of Winograd
// and unfused GEMMs: with the checks in the loop of stores, K = 64 products ran 17% slower).
template <bool kOps>
__attribute__((always_inline)) inline void vector_tile(int64_t kc, const float* __restrict a,
                                                       const float* __restrict b, float alpha, float beta,
                                                       float* __restrict c, int64_t ldc, const StoreOps* ops) {
  vec8 c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {};
  vec8 c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {}, c51 = {};
  for (int64_t k = 0; k < kc; ++k) {
    vec8 b0, b1;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + 8, sizeof b1);
    float av;
    av = a[0]; c00 += av * b0; c01 += av * b1;
    av = a[1]; c10 += av * b0; c11 += av * b1;
    av = a[2]; c20 += av * b0; c21 += av * b1;
    av = a[3]; c30 += av * b0; c31 += av * b1;
    av = a[4]; c40 += av * b0; c41 += av * b1;
    av = a[5]; c50 += av * b0; c51 += av * b1;
    a += kMR;
    b += kNR;
  }
  // Stored straight from the registers: no round trip through a tile buffer.
  const vec8 rows[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  store_rows<kMR, kOps>(rows, alpha, beta, c, ldc, ops);
}

// With AVX-512 (32 zmm registers), a panel row of B is one 16-wide vector: 6 accumulators, one
// load of B and 6 FMAs per step, each A value broadcast from memory inside its FMA (the 8-wide
// tile needs 2 loads, 6 broadcasts and 12 FMAs for the same work). Zen 4 runs a 16-wide FMA at
// half the rate of an 8-wide one, so the peak is the same, but with fewer instructions per step
// ResNet-50's convolutions ran 3-5% faster (1x1s 98-100 -> 104-108 GFLOP/s alone). Same sums in
// the same order as vector_tile: the results are identical.
typedef float vec16 __attribute__((vector_size(16 * sizeof(float))));

template <bool kOps>
__attribute__((always_inline)) inline void vector_tile16(int64_t kc, const float* __restrict a,
                                                         const float* __restrict b, float alpha, float beta,
                                                         float* __restrict c, int64_t ldc, const StoreOps* ops) {
  vec16 acc[kMR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    vec16 bv;
    std::memcpy(&bv, b, sizeof bv);
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) acc[i] += a[i] * bv;
    a += kMR;
    b += kNR;
  }
  vec8 rows[kMR][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    rows[i][0] = __builtin_shufflevector(acc[i], acc[i], 0, 1, 2, 3, 4, 5, 6, 7);
    rows[i][1] = __builtin_shufflevector(acc[i], acc[i], 8, 9, 10, 11, 12, 13, 14, 15);
  }
  store_rows<kMR, kOps>(rows, alpha, beta, c, ldc, ops);
}

// The first R < kMR rows of a tile (the bottom edge of C, M not a multiple of kMR), stored as
// vector_tile stores, without the FMAs of the missing rows: BERT's M = 128 leaves 2 rows, for
// which the whole tile did three times the work. Stored from registers too: through a tile
// buffer and store_tile, the edge rows of convolutions with a bias (M = 64: 10 tiles and 4
// rows) took 40% of the time of the other 60 rows.
template <int R>
__attribute__((always_inline)) inline void vector_edge(int64_t kc, const float* __restrict a,
                                                       const float* __restrict b, float alpha, float beta,
                                                       float* __restrict c, int64_t ldc, const StoreOps* ops) {
  // One or two rows are 2 or 4 chains of dependent FMAs, too few to hide the FMA's latency
  // (the 1-row edge of the 7 x 7 stages' 49 positions ran at a quarter of the peak): they keep
  // kS sums per accumulator, over every kS-th step, added at the end.
  constexpr int kS = R == 1 ? 4 : (R == 2 ? 2 : 1);
  vec8 acc[kS][R][2] = {};
  int64_t k = 0;
  for (; k + kS <= kc; k += kS) {
#pragma GCC unroll 4
    for (int s = 0; s < kS; ++s) {
      vec8 b0, b1;
      std::memcpy(&b0, b + s * kNR, sizeof b0);
      std::memcpy(&b1, b + s * kNR + 8, sizeof b1);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const float av = a[s * kMR + i];
        acc[s][i][0] += av * b0;
        acc[s][i][1] += av * b1;
      }
    }
    a += kS * kMR;
    b += kS * kNR;
  }
  for (; k < kc; ++k) {
    vec8 b0, b1;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + 8, sizeof b1);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const float av = a[i];
      acc[0][i][0] += av * b0;
      acc[0][i][1] += av * b1;
    }
    a += kMR;
    b += kNR;
  }
  if constexpr (kS == 4) {
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
      for (int h = 0; h < 2; ++h) acc[0][i][h] = (acc[0][i][h] + acc[1][i][h]) + (acc[2][i][h] + acc[3][i][h]);
  } else if constexpr (kS == 2) {
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
      for (int h = 0; h < 2; ++h) acc[0][i][h] += acc[1][i][h];
  }
  if (ops == nullptr)
    store_rows<R, false>(acc[0], alpha, beta, c, ldc, ops);
  else
    store_rows<R, true>(acc[0], alpha, beta, c, ldc, ops);
}

// vector_edge with a panel row of B in one 16-wide vector (as vector_tile16): the same sums in
// the same order, so the same results.
template <int R>
__attribute__((always_inline)) inline void vector_edge16(int64_t kc, const float* __restrict a,
                                                         const float* __restrict b, float alpha, float beta,
                                                         float* __restrict c, int64_t ldc, const StoreOps* ops) {
  constexpr int kS = R == 1 ? 4 : (R == 2 ? 2 : 1);
  vec16 acc[kS][R] = {};
  int64_t k = 0;
  for (; k + kS <= kc; k += kS) {
#pragma GCC unroll 4
    for (int s = 0; s < kS; ++s) {
      vec16 bv;
      std::memcpy(&bv, b + s * kNR, sizeof bv);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) acc[s][i] += a[s * kMR + i] * bv;
    }
    a += kS * kMR;
    b += kS * kNR;
  }
  for (; k < kc; ++k) {
    vec16 bv;
    std::memcpy(&bv, b, sizeof bv);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc[0][i] += a[i] * bv;
    a += kMR;
    b += kNR;
  }
  if constexpr (kS == 4) {
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc[0][i] = (acc[0][i] + acc[1][i]) + (acc[2][i] + acc[3][i]);
  } else if constexpr (kS == 2) {
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc[0][i] += acc[1][i];
  }
  vec8 rows[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    rows[i][0] = __builtin_shufflevector(acc[0][i], acc[0][i], 0, 1, 2, 3, 4, 5, 6, 7);
    rows[i][1] = __builtin_shufflevector(acc[0][i], acc[0][i], 8, 9, 10, 11, 12, 13, 14, 15);
  }
  if (ops == nullptr)
    store_rows<R, false>(rows, alpha, beta, c, ldc, ops);
  else
    store_rows<R, true>(rows, alpha, beta, c, ldc, ops);
}

// The left half (8 of the kNR columns) of a tile's kMR rows, for the last panel of a product
// whose N leaves at most 8 columns there (14 x 14 = 196 positions: 12 panels and 4 columns;
// Winograd's chunks of 56 tiles: 3 panels and 8), where the whole tile did twice the FMAs
// needed. Two sums per accumulator (even and odd steps) keep 12 chains of FMAs in flight, as
// the whole tile does. Into t, a kMR x kNR buffer as store_tile reads it (its columns 8 to 15
// are left as they are). Unused on ARM64 (neon_half).
[[maybe_unused]] __attribute__((always_inline)) inline void vector_half(int64_t kc, const float* __restrict a,
                                                                        const float* __restrict b,
                                                                        float* __restrict t) {
  vec8 acc[2][kMR] = {};
  int64_t k = 0;
  for (; k + 2 <= kc; k += 2) {
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      vec8 b0;
      std::memcpy(&b0, b + s * kNR, sizeof b0);
#pragma GCC unroll 6
      for (int i = 0; i < kMR; ++i) acc[s][i] += a[s * kMR + i] * b0;
    }
    a += 2 * kMR;
    b += 2 * kNR;
  }
  if (k < kc) {
    vec8 b0;
    std::memcpy(&b0, b, sizeof b0);
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) acc[0][i] += a[i] * b0;
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    const vec8 v = acc[0][i] + acc[1][i];
    std::memcpy(t + i * kNR, &v, sizeof v);
  }
}
#endif

#if KILN_NEON_KERNELS
// ARM64. NEON's registers hold 4 floats, and GCC keeps the 8-float vectors of the tiles above in
// pairs it moves through the stack there (each fmla loaded and stored its accumulators), so the
// tile, its edges and its half are written again on 4-float vectors: a row of the tile is four
// quarters, the whole tile 24 accumulators, 4 registers of B and the A values used from their
// lanes (fmla by element) in NEON's 32. The same sums in the same order as vector_tile,
// vector_edge and vector_half: the results are the same as theirs.
typedef float vec4 __attribute__((vector_size(4 * sizeof(float))));

// One row of the tile: its 16 columns += lane L of a times B's row.
template <int L>
__attribute__((always_inline)) inline void neon_row(float32x4_t (&acc)[4], float32x4_t b0, float32x4_t b1,
                                                    float32x4_t b2, float32x4_t b3, float32x4_t a) {
  acc[0] = vfmaq_laneq_f32(acc[0], b0, a, L);
  acc[1] = vfmaq_laneq_f32(acc[1], b1, a, L);
  acc[2] = vfmaq_laneq_f32(acc[2], b2, a, L);
  acc[3] = vfmaq_laneq_f32(acc[3], b3, a, L);
}

template <bool kOps>
__attribute__((always_inline)) inline void neon_tile(int64_t kc, const float* __restrict a, const float* __restrict b,
                                                     float alpha, float beta, float* __restrict c, int64_t ldc,
                                                     const StoreOps* ops) {
  float32x4_t acc[kMR][4];
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.f);
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
    // Rows 0-3 from the lanes of A's first 4 values, rows 4 and 5 from lanes 2 and 3 of values 2-5.
    const float32x4_t a03 = vld1q_f32(a), a25 = vld1q_f32(a + 2);
    neon_row<0>(acc[0], b0, b1, b2, b3, a03);
    neon_row<1>(acc[1], b0, b1, b2, b3, a03);
    neon_row<2>(acc[2], b0, b1, b2, b3, a03);
    neon_row<3>(acc[3], b0, b1, b2, b3, a03);
    neon_row<2>(acc[4], b0, b1, b2, b3, a25);
    neon_row<3>(acc[5], b0, b1, b2, b3, a25);
    a += kMR;
    b += kNR;
  }
  vec4 rows[kMR][4];
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) rows[i][q] = reinterpret_cast<const vec4&>(acc[i][q]);
  store_rows<kMR, kOps>(rows, alpha, beta, c, ldc, ops);
}

// vector_edge on 4-float vectors: kS sums per accumulator for one or two rows.
template <int R>
__attribute__((always_inline)) inline void neon_edge(int64_t kc, const float* __restrict a, const float* __restrict b,
                                                     float alpha, float beta, float* __restrict c, int64_t ldc,
                                                     const StoreOps* ops) {
  constexpr int kS = R == 1 ? 4 : (R == 2 ? 2 : 1);
  vec4 acc[kS][R][4] = {};
  int64_t k = 0;
  for (; k + kS <= kc; k += kS) {
#pragma GCC unroll 4
    for (int s = 0; s < kS; ++s) {
      vec4 bv[4];
      std::memcpy(bv, b + s * kNR, sizeof bv);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const float av = a[s * kMR + i];
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) acc[s][i][q] += av * bv[q];
      }
    }
    a += kS * kMR;
    b += kS * kNR;
  }
  for (; k < kc; ++k) {
    vec4 bv[4];
    std::memcpy(bv, b, sizeof bv);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const float av = a[i];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) acc[0][i][q] += av * bv[q];
    }
    a += kMR;
    b += kNR;
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      if constexpr (kS == 4) acc[0][i][q] = (acc[0][i][q] + acc[1][i][q]) + (acc[2][i][q] + acc[3][i][q]);
      if constexpr (kS == 2) acc[0][i][q] += acc[1][i][q];
    }
  if (ops == nullptr)
    store_rows<R, false>(acc[0], alpha, beta, c, ldc, ops);
  else
    store_rows<R, true>(acc[0], alpha, beta, c, ldc, ops);
}

// vector_half on 4-float vectors: the left 8 columns, even and odd steps in separate sums.
__attribute__((always_inline)) inline void neon_half(int64_t kc, const float* __restrict a, const float* __restrict b,
                                                     float* __restrict t) {
  vec4 acc[2][kMR][2] = {};
  int64_t k = 0;
  for (; k + 2 <= kc; k += 2) {
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      vec4 bv[2];
      std::memcpy(bv, b + s * kNR, sizeof bv);
#pragma GCC unroll 6
      for (int i = 0; i < kMR; ++i) {
        const float av = a[s * kMR + i];
        acc[s][i][0] += av * bv[0];
        acc[s][i][1] += av * bv[1];
      }
    }
    a += 2 * kMR;
    b += 2 * kNR;
  }
  if (k < kc) {
    vec4 bv[2];
    std::memcpy(bv, b, sizeof bv);
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) {
      acc[0][i][0] += a[i] * bv[0];
      acc[0][i][1] += a[i] * bv[1];
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    const vec4 v[2] = {acc[0][i][0] + acc[1][i][0], acc[0][i][1] + acc[1][i][1]};
    std::memcpy(t + i * kNR, v, sizeof v);
  }
}
#endif

// A tile's left half into a tile buffer (vector_half); nullptr: the whole tile is computed.
using HalfFn = void (*)(int64_t kc, const float* a, const float* b, float* t);

#if KILN_GEMM_DISPATCH
KILN_AVX2_FMA void half_avx2_fma(int64_t kc, const float* a, const float* b, float* t) { vector_half(kc, a, b, t); }
#elif KILN_NEON_KERNELS
KILN_NEON_NO_SCHEDULE void half_neon(int64_t kc, const float* a, const float* b, float* t) {
  neon_half(kc, a, b, t);
}
#elif defined(__GNUC__) || defined(__clang__)
void half_vector(int64_t kc, const float* a, const float* b, float* t) { vector_half(kc, a, b, t); }
#endif

#if defined(__GNUC__) || defined(__clang__)
// The whole tile, 16-wide (vector_tile16) or 8-wide (vector_tile), with or without `ops`.
template <bool kWide>
__attribute__((always_inline)) inline void tile_of(int64_t kc, const float* a, const float* b, float alpha,
                                                   float beta, float* c, int64_t ldc, const StoreOps* ops) {
  if constexpr (kWide) {
    if (ops == nullptr)
      vector_tile16<false>(kc, a, b, alpha, beta, c, ldc, ops);
    else
      vector_tile16<true>(kc, a, b, alpha, beta, c, ldc, ops);
  } else {
    if (ops == nullptr)
      vector_tile<false>(kc, a, b, alpha, beta, c, ldc, ops);
    else
      vector_tile<true>(kc, a, b, alpha, beta, c, ldc, ops);
  }
}
#endif

#if KILN_GEMM_DISPATCH
KILN_AVX512F void kernel_avx512f(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c,
                                 int64_t ldc, const StoreOps* ops) {
  tile_of<true>(kc, a, b, alpha, beta, c, ldc, ops);
}

KILN_AVX2_FMA void kernel_avx2_fma(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c,
                                   int64_t ldc, const StoreOps* ops) {
  tile_of<false>(kc, a, b, alpha, beta, c, ldc, ops);
}
#elif KILN_NEON_KERNELS
void kernel_neon(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c, int64_t ldc,
                 const StoreOps* ops) {
  if (ops == nullptr)
    neon_tile<false>(kc, a, b, alpha, beta, c, ldc, ops);
  else
    neon_tile<true>(kc, a, b, alpha, beta, c, ldc, ops);
}
#elif defined(__GNUC__) || defined(__clang__)
void kernel_vector(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c, int64_t ldc,
                   const StoreOps* ops) {
#if defined(__AVX512F__)
  tile_of<true>(kc, a, b, alpha, beta, c, ldc, ops);
#else
  tile_of<false>(kc, a, b, alpha, beta, c, ldc, ops);
#endif
}
#endif

// The first R rows of a tile, as KernelFn stores a whole one; nullptr: the whole-tile kernel
// does it (into a tile buffer, then store_tile).
using EdgeFn = KernelFn;

#if KILN_GEMM_DISPATCH
template <int R>
KILN_AVX2_FMA void edge_avx2_fma(int64_t kc, const float* a, const float* b, float alpha,
                                                      float beta, float* c, int64_t ldc, const StoreOps* ops) {
  vector_edge<R>(kc, a, b, alpha, beta, c, ldc, ops);
}
template <int R>
KILN_AVX512F void edge_avx512f(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c,
                               int64_t ldc, const StoreOps* ops) {
  vector_edge16<R>(kc, a, b, alpha, beta, c, ldc, ops);
}
#elif KILN_NEON_KERNELS
template <int R>
void edge_neon(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c, int64_t ldc,
               const StoreOps* ops) {
  neon_edge<R>(kc, a, b, alpha, beta, c, ldc, ops);
}
#elif defined(__GNUC__) || defined(__clang__)
template <int R>
void edge_vector(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c, int64_t ldc,
                 const StoreOps* ops) {
#if defined(__AVX512F__)
  vector_edge16<R>(kc, a, b, alpha, beta, c, ldc, ops);
#else
  vector_edge<R>(kc, a, b, alpha, beta, c, ldc, ops);
#endif
}
#endif

// Plain loops, for CPUs and compilers without the above (the compiler vectorizes what it can).
// The clamp as StoreOps and Epilogue::fn_is_clamp define it (NaN kept).
// ReLU as Epilogue::fn_is_relu defines it (and ONNX's Relu in kiln: NaN becomes 0).

//
// The tile in two halves of 8 columns, each summed over all of kc on its own: 6 x 8 sums are
// 12 registers of 4 floats (SSE2, NEON, and most SIMD units; the whole 6 x 16 tile would be
// 24, spilled on every step). With GCC and Clang the sums are 4-float vectors of the compiler's
// generic vector extension, which it lowers to whatever the target has: written as plain loops
// GCC's SLP vectorizer paired the rows' sums instead of the columns' (shuffles, sums on the
// stack), and ResNet-50's Winograd GEMMs ran at about a fifth of the SSE2 peak under
// KILN_CPU_ISA=portable. Each value's sum is in the same order either way.
constexpr int64_t kPortableHalf = kNR / 2;

#if defined(__GNUC__) || defined(__clang__)
typedef float portable_vec4 __attribute__((vector_size(4 * sizeof(float))));

__attribute__((noinline)) void portable_half(int64_t kc, const float* __restrict a, const float* __restrict b,
                                             float (&t)[kMR][kNR], int64_t j0) {
  portable_vec4 s[kMR][2] = {};
  b += j0;
  for (int64_t k = 0; k < kc; ++k) {
    portable_vec4 b0, b1;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + 4, sizeof b1);
#pragma GCC unroll 6
    for (int64_t i = 0; i < kMR; ++i) {
      s[i][0] += a[i] * b0;
      s[i][1] += a[i] * b1;
    }
    a += kMR;
    b += kNR;
  }
  for (int64_t i = 0; i < kMR; ++i) {
    std::memcpy(&t[i][j0], &s[i][0], sizeof s[i][0]);
    std::memcpy(&t[i][j0 + 4], &s[i][1], sizeof s[i][1]);
  }
}
#else
void portable_half(int64_t kc, const float* a, const float* b, float (&t)[kMR][kNR], int64_t j0) {
  float s[kMR][kPortableHalf] = {};
  b += j0;
  for (int64_t k = 0; k < kc; ++k) {
    for (int64_t i = 0; i < kMR; ++i)
      for (int64_t j = 0; j < kPortableHalf; ++j) s[i][j] += a[i] * b[j];
    a += kMR;
    b += kNR;
  }
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kPortableHalf; ++j) t[i][j0 + j] = s[i][j];
}
#endif

[[maybe_unused]] void kernel_portable(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c,
                                      int64_t ldc, const StoreOps* ops) {
  float t[kMR][kNR];
  portable_half(kc, a, b, t, 0);
  portable_half(kc, a, b, t, kPortableHalf);
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kNR; ++j) {
      float v = alpha * t[i][j];
      v = beta == 0.f ? v : v + beta * c[i * ldc + j];
      if (ops != nullptr && ops->bias) v += ops->bias[i];
      if (ops != nullptr && ops->add) v += ops->add[i * ops->add_ld + j];
      if (ops != nullptr && ops->clamp) v = clamp_to(v, ops->lo, ops->hi);
      if (ops != nullptr && ops->relu) v = relu_of(v);
      c[i * ldc + j] = v;
    }
}

KernelFn choose_kernel() {
#if KILN_GEMM_DISPATCH
  if (cpu_has_avx512f()) return kernel_avx512f;
  if (cpu_has_avx2_fma()) return kernel_avx2_fma;
  return kernel_portable;
#elif KILN_NEON_KERNELS
  return cpu_has_neon() ? kernel_neon : kernel_portable;
#elif defined(__GNUC__) || defined(__clang__)
  return kernel_vector;
#else
  return kernel_portable;
#endif
}

// Chosen once per process (a function-local static: thread-safe initialization).
KernelFn tile_kernel() {
  static const KernelFn fn = choose_kernel();
  return fn;
}

struct EdgeKernels {
  EdgeFn rows[kMR] = {};  // rows[r]: the first r rows; rows[0] unused
  HalfFn half = nullptr;  // the left 8 columns
};

EdgeKernels choose_edge_kernels() {
  EdgeKernels e;
#if KILN_GEMM_DISPATCH
  if (tile_kernel() == kernel_avx512f)
    e = {{nullptr, edge_avx512f<1>, edge_avx512f<2>, edge_avx512f<3>, edge_avx512f<4>, edge_avx512f<5>},
         half_avx2_fma};
  else if (tile_kernel() == kernel_avx2_fma)
    e = {{nullptr, edge_avx2_fma<1>, edge_avx2_fma<2>, edge_avx2_fma<3>, edge_avx2_fma<4>, edge_avx2_fma<5>},
         half_avx2_fma};
#elif KILN_NEON_KERNELS
  if (tile_kernel() == kernel_neon)
    e = {{nullptr, edge_neon<1>, edge_neon<2>, edge_neon<3>, edge_neon<4>, edge_neon<5>}, half_neon};
#elif defined(__GNUC__) || defined(__clang__)
  e = {{nullptr, edge_vector<1>, edge_vector<2>, edge_vector<3>, edge_vector<4>, edge_vector<5>}, half_vector};
#endif
  return e;
}

const EdgeKernels& edge_kernels() {
  static const EdgeKernels e = choose_edge_kernels();
  return e;
}

// s[r][q] = sum of a[k] * b[r * ldb + k] over k < k8 with k = q mod 8, for 8 rows r of B
// (k8 a multiple of 8): the lanes of gemv_row's dot products, eight at once.
using RowDotsFn = void (*)(const float* a, const float* b, int64_t ldb, int64_t k8, float* s);

#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline)) inline void vector_row_dots8(const float* __restrict a, const float* __restrict b,
                                                            int64_t ldb, int64_t k8, float* __restrict s) {
  vec8 acc[8] = {};
  for (int64_t k = 0; k < k8; k += 8) {
    vec8 av;
    std::memcpy(&av, a + k, sizeof av);
#pragma GCC unroll 8
    for (int64_t r = 0; r < 8; ++r) {
      vec8 bv;
      std::memcpy(&bv, b + r * ldb + k, sizeof bv);
      acc[r] += av * bv;
    }
  }
  std::memcpy(s, acc, sizeof acc);
}
#endif

#if KILN_GEMM_DISPATCH
KILN_AVX2_FMA void row_dots8_avx2_fma(const float* a, const float* b, int64_t ldb, int64_t k8,
                                                            float* s) {
  vector_row_dots8(a, b, ldb, k8, s);
}
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__AVX__) || defined(__aarch64__))
void row_dots8_vector(const float* a, const float* b, int64_t ldb, int64_t k8, float* s) {
  vector_row_dots8(a, b, ldb, k8, s);
}
#endif

// nullptr: the one-row loop (with 128-bit vectors the eight rows' sums do not fit the
// registers, and the one-row loop was faster).
RowDotsFn row_dots8_kernel() {
#if KILN_GEMM_DISPATCH
  static const RowDotsFn fn = cpu_has_avx2_fma() ? row_dots8_avx2_fma : nullptr;
  return fn;
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__AVX__) || defined(__aarch64__))
  return row_dots8_vector;
#else
  return nullptr;
#endif
}

// acc[0:kNR] += sum over k < kc of a[k * a_stride] * panel[k * kNR + 0:kNR], in four sums
// (steps k mod 4, the tail in the first) added pairwise at the end: one sum was bound by the
// FMA's latency, and the scalar loop before this ran a batch-1 768 x 768 MatMul at 9 GFLOP/s
// (126 us on Zen 4). V holds W floats (a vector type, or float itself); every V gives the
// same sums in the same order, so the result does not depend on the kernel chosen.
using PanelSumsFn = void (*)(int64_t kc, const float* a, int64_t a_stride, const float* panel, float* acc);

template <class V, int W>
__attribute__((always_inline)) inline void panel_sums(int64_t kc, const float* __restrict a, int64_t a_stride,
                                                      const float* __restrict panel, float* __restrict acc) {
  constexpr int H = kNR / W;
  V s[4][H] = {};
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      const float av = a[(k + q) * a_stride];
#pragma GCC unroll 16
      for (int h = 0; h < H; ++h) {
        V bv;
        std::memcpy(&bv, panel + (k + q) * kNR + h * W, sizeof bv);
        s[q][h] += av * bv;
      }
    }
  }
  for (; k < kc; ++k) {
    const float av = a[k * a_stride];
#pragma GCC unroll 16
    for (int h = 0; h < H; ++h) {
      V bv;
      std::memcpy(&bv, panel + k * kNR + h * W, sizeof bv);
      s[0][h] += av * bv;
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < H; ++h) {
    V old;
    std::memcpy(&old, acc + h * W, sizeof old);
    const V v = old + ((s[0][h] + s[1][h]) + (s[2][h] + s[3][h]));
    std::memcpy(acc + h * W, &v, sizeof v);
  }
}

[[maybe_unused]] void panel_sums_portable(int64_t kc, const float* a, int64_t a_stride, const float* panel, float* acc) {
  panel_sums<float, 1>(kc, a, a_stride, panel, acc);
}

#if KILN_GEMM_DISPATCH
KILN_AVX512F void panel_sums_avx512f(int64_t kc, const float* a, int64_t a_stride, const float* panel, float* acc) {
  panel_sums<vec16, 16>(kc, a, a_stride, panel, acc);
}
KILN_AVX2_FMA void panel_sums_avx2_fma(int64_t kc, const float* a, int64_t a_stride, const float* panel, float* acc) {
  panel_sums<vec8, 8>(kc, a, a_stride, panel, acc);
}
#elif KILN_NEON_KERNELS
void panel_sums_neon(int64_t kc, const float* a, int64_t a_stride, const float* panel, float* acc) {
  panel_sums<vec4, 4>(kc, a, a_stride, panel, acc);
}
#elif defined(__GNUC__) || defined(__clang__)
void panel_sums_vector(int64_t kc, const float* a, int64_t a_stride, const float* panel, float* acc) {
  panel_sums<vec8, 8>(kc, a, a_stride, panel, acc);
}
#endif

PanelSumsFn panel_sums_kernel() {
#if KILN_GEMM_DISPATCH
  static const PanelSumsFn fn = cpu_has_avx512f()    ? panel_sums_avx512f
                                : cpu_has_avx2_fma() ? panel_sums_avx2_fma
                                                     : panel_sums_portable;
  return fn;
#elif KILN_NEON_KERNELS
  static const PanelSumsFn fn = cpu_has_neon() ? panel_sums_neon : panel_sums_portable;
  return fn;
#elif defined(__GNUC__) || defined(__clang__)
  return panel_sums_vector;
#else
  return panel_sums_portable;
#endif
}

// One row of store_tile: n values (n == kNR is inlined with a constant trip count, so that it
// vectorizes fully), in one pass.
__attribute__((always_inline)) inline void store_row(const float* t, float* row, int64_t n, float alpha, float beta,
                                                     const float* bias, const float* add, bool clamp, float lo,
                                                     float hi, bool relu) {
  const float bv = bias ? *bias : 0.f;
  for (int64_t j = 0; j < n; ++j) {
    float v = alpha * t[j];
    if (beta == 1.f)
      v = row[j] + v;
    else if (beta != 0.f)
      v = v + beta * row[j];
    if (bias) v += bv;
    if (add) v += add[j];
    if (clamp) v = clamp_to(v, lo, hi);
    if (relu) v = relu_of(v);
    row[j] = v;
  }
}

// C[0:m, 0:n] = alpha * acc + beta * C (beta == 0: C not read), then `ops` (its bias: m rows).
void store_tile(const float* acc, int64_t m, int64_t n, float alpha, float beta, float* c, int64_t ldc,
                const StoreOps* ops) {
  if (ops == nullptr) {
    // Plain loops per beta: with store_row's per-element checks, the edge tiles of ResNet-50's
    // convolutions (64 output channels: 10 tiles and 4 rows) cost about 3 ms more a run.
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      const float* t = acc + i * kNR;
      if (beta == 0.f) {
        for (int64_t j = 0; j < n; ++j) row[j] = alpha * t[j];
      } else if (beta == 1.f) {
        for (int64_t j = 0; j < n; ++j) row[j] += alpha * t[j];
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] = alpha * t[j] + beta * row[j];
      }
    }
    return;
  }
  const bool clamp = ops != nullptr && ops->clamp;
  const float lo = clamp ? ops->lo : 0.f, hi = clamp ? ops->hi : 0.f;
  const bool relu = ops != nullptr && ops->relu;
  for (int64_t i = 0; i < m; ++i) {
    const float* bias = ops != nullptr && ops->bias ? ops->bias + i : nullptr;
    const float* add = ops != nullptr && ops->add ? ops->add + i * ops->add_ld : nullptr;
    if (n == kNR)
      store_row(acc + i * kNR, c + i * ldc, kNR, alpha, beta, bias, add, clamp, lo, hi, relu);
    else
      store_row(acc + i * kNR, c + i * ldc, n, alpha, beta, bias, add, clamp, lo, hi, relu);
  }
}

void scale_c(int64_t M, int64_t N, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    float* row = C + i * ldc;
    if (beta == 0.f) {
      for (int64_t j = 0; j < N; ++j) row[j] = 0.f;
    } else if (beta != 1.f) {
      for (int64_t j = 0; j < N; ++j) row[j] *= beta;
    }
  }
}

float* alloc_floats(int64_t n) {
  // 64-byte aligned; size rounded up as aligned_alloc requires.
  size_t bytes = static_cast<size_t>(n) * sizeof(float);
  bytes = (bytes + 63) / 64 * 64;
  return static_cast<float*>(std::aligned_alloc(64, bytes));
}

// This thread's packing buffer for operand `which` (0: A, 1: B) of at least `floats` floats
// (thread_buffer: GEMMs on the hot path, one per convolution chunk and 36 per Winograd chunk,
// do not allocate). nullptr if it cannot grow.
float* packing_buffer(int which, int64_t floats) {
  return static_cast<float*>(thread_buffer(which == 0 ? ThreadBuffer::gemm_a : ThreadBuffer::gemm_b,
                                           static_cast<size_t>(floats) * sizeof(float)));
}

// Unblocked fallback, used only when the packing buffers cannot be allocated.
// (row0, col0): where this sub-problem starts in the whole product (packed operands are
// addressed globally).
void gemm_naive(const Matrix& a, const Matrix& b, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                float* C, int64_t ldc, int64_t row0, int64_t col0) {
  const int64_t ar = a.packed ? row0 : 0, bc = b.packed ? col0 : 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.f;
      for (int64_t k = 0; k < K; ++k) s += a.at(ar + i, k) * b.at(k, bc + j);
      float* c = C + i * ldc + j;
      *c = beta == 0.f ? alpha * s : alpha * s + beta * *c;
    }
}

// Matrix-vector case M == 1: c[j] = alpha * sum_k a[k] * op(B)[k][j] + beta * c[j].
void gemv_row(const float* a, int64_t a_stride, const Matrix& b, int64_t N, int64_t K, float alpha, float beta,
              float* c) {
  if (!b.trans) {
    // Rows of B are contiguous: accumulate a[k] * B[k, :] in blocks of columns.
    constexpr int64_t kBlock = 256;
    float acc[kBlock];
    for (int64_t j0 = 0; j0 < N; j0 += kBlock) {
      const int64_t nb = N - j0 < kBlock ? N - j0 : kBlock;
      for (int64_t j = 0; j < nb; ++j) acc[j] = 0.f;
      for (int64_t k = 0; k < K; ++k) {
        const float av = a[k * a_stride];
        const float* brow = b.p + k * b.ld + j0;
        for (int64_t j = 0; j < nb; ++j) acc[j] += av * brow[j];
      }
      for (int64_t j = 0; j < nb; ++j)
        c[j0 + j] = beta == 0.f ? alpha * acc[j] : alpha * acc[j] + beta * c[j0 + j];
    }
  } else {
    // Columns of op(B) are rows of B: dot products with 8 independent sums (lanes q: every
    // k = q mod 8), summed pairwise, then the tail. Where a vector kernel exists, eight rows
    // of B at a time (row_dots8): one row alone was bound by the latency of its adds (an
    // LSTM's recurrent step ran at a fraction of the cache's bandwidth). Which path a column
    // takes depends on N only, not on how threads split the columns (in multiples of kNR).
    int64_t j0 = 0;
    const RowDotsFn dots = a_stride == 1 ? row_dots8_kernel() : nullptr;
    if (dots != nullptr) {
      const int64_t k8 = K / 8 * 8;
      for (; j0 + 8 <= N; j0 += 8) {
        float s[8][8];
        dots(a, b.p + j0 * b.ld, b.ld, k8, &s[0][0]);
        for (int64_t r = 0; r < 8; ++r) {
          const float* brow = b.p + (j0 + r) * b.ld;
          float tail = 0.f;
          for (int64_t kk = k8; kk < K; ++kk) tail += a[kk] * brow[kk];
          const float* t = s[r];
          const float sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7])) + tail;
          c[j0 + r] = beta == 0.f ? alpha * sum : alpha * sum + beta * c[j0 + r];
        }
      }
    }
    for (int64_t j = j0; j < N; ++j) {
      const float* brow = b.p + j * b.ld;
      float s[8] = {};
      int64_t k = 0;
      if (a_stride == 1) {
        for (; k + 8 <= K; k += 8)
          for (int q = 0; q < 8; ++q) s[q] += a[k + q] * brow[k + q];
      }
      float tail = 0.f;
      for (; k < K; ++k) tail += a[k * a_stride] * brow[k];
      const float sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail;
      c[j] = beta == 0.f ? alpha * sum : alpha * sum + beta * c[j];
    }
  }
}

// M == 1 with B packed: each kNR-column panel is a contiguous stream of K rows, and
// panel_sums (below) adds a row of A times one K block of it to kNR sums.
void gemv_packed_b(const Matrix& a, const Matrix& b, int64_t col0, int64_t N, int64_t K, float alpha, float beta,
                   float* c) {
  const PanelSumsFn sums = panel_sums_kernel();
  const int64_t a_stride = a.trans ? a.ld : 1;
  for (int64_t j = 0; j < N; j += kNR) {
    const int64_t nr = N - j < kNR ? N - j : kNR;
    alignas(64) float acc[kNR] = {};
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = K - pc < kKC ? K - pc : kKC;
      sums(kc, a.p + pc * a_stride, a_stride, packed_b_panel(b.p, b.rows, b.cols, col0 + j, pc, kc), acc);
    }
    for (int64_t q = 0; q < nr; ++q) c[j + q] = beta == 0.f ? alpha * acc[q] : alpha * acc[q] + beta * c[j + q];
  }
}

// What is applied to each finished tile of C: a per-row bias, then the epilogue on each tile
// row, with offsets counted from element 0 of the whole output (`base` + i * ldc + j).
struct TileFinish {
  const float* row_bias = nullptr;  // indexed by the row of the whole C
  const Epilogue* epilogue = nullptr;
  int64_t base = 0;
  bool any() const { return row_bias != nullptr || (epilogue != nullptr && epilogue->fn != nullptr); }
};

// Rows [i0, i0 + m) x columns [j0, j0 + n) of the whole C, at `c`, are final.
void finish_block(const TileFinish& f, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (f.row_bias) {
      const float bv = f.row_bias[i0 + i];
      for (int64_t j = 0; j < n; ++j) row[j] += bv;
    }
    if (f.epilogue && f.epilogue->fn) f.epilogue->fn(f.epilogue->ctx, row, f.base + (i0 + i) * ldc + j0, n);
  }
}

// use_gemv must depend on the whole problem only (not on a thread's share of
// it) so that results do not depend on the thread count. (row0, col0): where this
// sub-problem's C starts in the whole C, for `finish`.
void gemm_serial(const Matrix& a, const Matrix& b, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                 float* C, int64_t ldc, bool use_gemv, const TileFinish& finish, int64_t row0, int64_t col0) {
  if (use_gemv && !a.packed) {
    if (b.packed)
      gemv_packed_b(a, b, col0, N, K, alpha, beta, C);
    else
      gemv_row(a.p, a.trans ? a.ld : 1, b, N, K, alpha, beta, C);
    if (finish.any()) finish_block(finish, C, ldc, row0, col0, 1, N);
    return;
  }
  const int64_t kc_max = K < kKC ? K : kKC;
  const int64_t mc_max = M < kMC ? (M + kMR - 1) / kMR * kMR : kMC;
  const int64_t nc_max = N < kNC ? (N + kNR - 1) / kNR * kNR : kNC;
  // A packed operand is read in place: only the other one needs a buffer. gemm_serial does not
  // run inside itself on one thread (its epilogues are elementwise), so the buffers are free.
  float* bufa = a.packed ? nullptr : packing_buffer(0, mc_max * kc_max);
  float* bufb = b.packed ? nullptr : packing_buffer(1, kc_max * nc_max);
  if ((!a.packed && bufa == nullptr) || (!b.packed && bufb == nullptr)) {
    gemm_naive(a, b, M, N, K, alpha, beta, C, ldc, row0, col0);
    if (finish.any()) finish_block(finish, C, ldc, row0, col0, M, N);
    return;
  }
  alignas(64) float acc[kMR * kNR];
  // The bias, and a clamp or ReLU epilogue (with a residual or not), are applied by the kernel
  // as it stores each tile after
  // the last K block; `after` is what is left for finish_block (another epilogue). As a
  // second pass over C they cost as much as the FMAs of small-K layers (MobileNet's 1x1s):
  // C's rows, ldc apart, conflict in L1.
  const Epilogue* ep = finish.epilogue != nullptr && finish.epilogue->fn != nullptr ? finish.epilogue : nullptr;
  const bool in_kernel = ep != nullptr && (ep->fn_is_clamp || ep->fn_is_relu || ep->residual != nullptr);
  const bool clamp = in_kernel && ep->fn_is_clamp;
  StoreOps ops{nullptr, clamp, clamp ? ep->clamp_lo : 0.f, clamp ? ep->clamp_hi : 0.f, nullptr, ldc,
               in_kernel && !clamp && ep->fn_is_relu};
  TileFinish after = finish;
  after.row_bias = nullptr;
  if (in_kernel) after.epilogue = nullptr;
  const bool kernel_ops = finish.row_bias != nullptr || in_kernel;
  const KernelFn kernel = tile_kernel();
  const EdgeKernels& edge = edge_kernels();
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = N - jc < kNC ? N - jc : kNC;
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = K - pc < kKC ? K - pc : kKC;
      const float beta_k = pc == 0 ? beta : 1.f;
      const bool last_k = pc + kc >= K;
      if (!b.packed) {
        const Matrix bsub{b.trans ? b.p + jc * b.ld + pc : b.p + pc * b.ld + jc, b.ld, b.trans};
        pack_b(bsub, kc, nc, bufb);
      }
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = M - ic < kMC ? M - ic : kMC;
        const float* apack = nullptr;
        // Rows [0, halves) run in tiles of kMR; a block that would end in a tile of 2 rows
        // after a full one runs its last 8 rows as two tiles of 4 (each in its own panel), where
        // A is packed here: the LSTM's 8 sequences a step ran as 6 + 2 rows, and as 4 + 4 the
        // whole LSTM at batch 8 took 0.92-0.97x the time on Zen 4 (AVX-512). (A 1-row tail as 4 + 3
        // would do the same FMAs in as many steps: left as it is.)
        const int64_t tail = mc % kMR;
        const int64_t halves = !a.packed && mc > kMR && tail == 2 ? mc - kMR - tail : mc;
        const int64_t half1 = (kMR + tail) / 2;
        if (a.packed) {
          apack = packed_a_panel(a.p, a.rows, row0 + ic, pc, kc);
        } else {
          // Rows [r, r + m) of this block into the panels from panel r / kMR.
          const auto pack_rows = [&](int64_t r, int64_t m, int64_t panel) {
            const int64_t i = ic + r;
            const Matrix asub{a.trans ? a.p + pc * a.ld + i : a.p + i * a.ld + pc, a.ld, a.trans};
            pack_a(asub, m, kc, bufa + panel * kc * kMR);
          };
          pack_rows(0, halves, 0);
          if (halves < mc) {
            pack_rows(halves, half1, halves / kMR);
            pack_rows(halves + half1, mc - halves - half1, halves / kMR + 1);
          }
          apack = bufa;
        }
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t nr = nc - jr < kNR ? nc - jr : kNR;
          const int64_t done = jr + nr;  // columns [0, done) of this block are computed
          const float* bp = b.packed ? packed_b_panel(b.p, b.rows, b.cols, col0 + jc + jr, pc, kc)
                                     : bufb + (jr / kNR) * kc * kNR;
          for (int64_t ir = 0, panel = 0, mr = 0; ir < mc; ir += mr, ++panel) {
            mr = ir < halves ? (mc - ir < kMR ? mc - ir : kMR) : (ir == halves ? half1 : mc - ir);
            float* ctile = C + (ic + ir) * ldc + jc + jr;
            const float* ap = apack + panel * kc * kMR;
            const StoreOps* tile_ops = nullptr;
            if (last_k && kernel_ops) {
              ops.bias = finish.row_bias ? finish.row_bias + row0 + ic + ir : nullptr;
              // The residual at the epilogue's offset of the tile's first element.
              ops.add = in_kernel && ep->residual
                            ? ep->residual + finish.base + (row0 + ic + ir) * ldc + col0 + jc + jr
                            : nullptr;
              tile_ops = &ops;
            }
            const KernelFn rows_fn = mr == kMR ? kernel : edge.rows[mr];
            if (nr == kNR && rows_fn != nullptr) {
              rows_fn(kc, ap, bp, alpha, beta_k, ctile, ldc, tile_ops);
            } else if (nr <= kNR / 2 && edge.half != nullptr) {  // half a tile suffices
              edge.half(kc, ap, bp, acc);
              store_tile(acc, mr, nr, alpha, beta_k, ctile, ldc, tile_ops);
            } else {  // a partial tile: into a tile buffer, then the part of it in C
              (rows_fn != nullptr ? rows_fn : kernel)(kc, ap, bp, 1.f, 0.f, acc, kNR, nullptr);
              store_tile(acc, mr, nr, alpha, beta_k, ctile, ldc, tile_ops);
            }
          }
          // Any other epilogue on each group of kFinishCols final columns, while still in
          // cache (not in a second pass), in row segments long enough to vectorize well.
          if (last_k && after.any() && (done % kFinishCols == 0 || done == nc)) {
            const int64_t f0 = (done - 1) / kFinishCols * kFinishCols;
            finish_block(after, C + ic * ldc + jc + f0, ldc, row0 + ic, col0 + jc + f0, mc, done - f0);
          }
        }
      }
    }
  }
}

// The whole product, split across the pool's threads by register tiles of C.
void gemm_run(const Matrix& a, const Matrix& b, int64_t M, int64_t N, int64_t K, float alpha, float beta, float* C,
              int64_t ldc, const TileFinish& finish, ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.f) {
    scale_c(M, N, beta, C, ldc);
    if (finish.any()) finish_block(finish, C, ldc, 0, 0, M, N);
    return;
  }
  const int threads = pool ? pool->size() : 1;
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (threads == 1 || flops < 2.0e5) {
    gemm_serial(a, b, M, N, K, alpha, beta, C, ldc, M == 1, finish, 0, 0);
    return;
  }
  // Split the larger dimension (in register tiles) across threads; every
  // element of C is still computed by the same sequence of operations.
  // The lambdas capture one pointer so that std::function does not allocate.
  struct Args {
    Matrix a, b;
    int64_t M, N, K;
    float alpha, beta;
    float* C;
    int64_t ldc;
    const TileFinish* finish;
  } args{a, b, M, N, K, alpha, beta, C, ldc, &finish};
  const int64_t m_tiles = (M + kMR - 1) / kMR, n_tiles = (N + kNR - 1) / kNR;
  if (n_tiles >= m_tiles || M == 1) {
    pool->parallel_for(n_tiles, [p = &args](int64_t t0, int64_t t1) {
      const int64_t j0 = t0 * kNR, j1 = t1 * kNR < p->N ? t1 * kNR : p->N;
      Matrix bs = p->b;  // a packed B is addressed by global column (col0 below)
      if (!bs.packed) bs.p = p->b.trans ? p->b.p + j0 * p->b.ld : p->b.p + j0;
      gemm_serial(p->a, bs, p->M, j1 - j0, p->K, p->alpha, p->beta, p->C + j0, p->ldc, p->M == 1, *p->finish, 0,
                  j0);
    });
  } else {
    pool->parallel_for(m_tiles, [p = &args](int64_t t0, int64_t t1) {
      const int64_t i0 = t0 * kMR, i1 = t1 * kMR < p->M ? t1 * kMR : p->M;
      Matrix as = p->a;  // a packed A is addressed by global row (row0 below)
      if (!as.packed) as.p = p->a.trans ? p->a.p + i0 : p->a.p + i0 * p->a.ld;
      gemm_serial(as, p->b, i1 - i0, p->N, p->K, p->alpha, p->beta, p->C + i0 * p->ldc, p->ldc, false, *p->finish,
                  i0, 0);
    });
  }
}

}  // namespace

void gemm_f32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
              int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
              ThreadPool* pool) noexcept {
  gemm_run(Matrix{A, lda, trans_a}, Matrix{B, ldb, trans_b}, M, N, K, alpha, beta, C, ldc, TileFinish{}, pool);
}

void gemm_f32_epilogue(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                       const Epilogue& epilogue, ThreadPool* pool) noexcept {
  gemm_f32_fused(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, nullptr, epilogue, 0, pool);
}

const char* gemm_f32_isa_name() noexcept {
  const KernelFn k = tile_kernel();
#if KILN_GEMM_DISPATCH
  if (k == kernel_avx512f) return "avx512";
  if (k == kernel_avx2_fma) return "avx2";
#elif KILN_NEON_KERNELS
  if (k == kernel_neon) return "neon";
#elif defined(__GNUC__) || defined(__clang__)
  if (k == kernel_vector) return "vector";
#endif
  return k == kernel_portable ? "portable" : "other";
}

size_t gemm_f32_packed_a_floats(int64_t M, int64_t K) noexcept {
  return M <= 0 || K <= 0 ? 0 : static_cast<size_t>(K * round_up(M, kMR));
}

void gemm_f32_pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda, float* packed) noexcept {
  for (int64_t pc = 0; pc < K; pc += kKC) {
    const int64_t kc = K - pc < kKC ? K - pc : kKC;
    const Matrix sub{trans_a ? A + pc * lda : A + pc, lda, trans_a};
    pack_a(sub, M, kc, packed + pc * round_up(M, kMR));
  }
}

size_t gemm_f32_packed_b_floats(int64_t K, int64_t N) noexcept {
  return K <= 0 || N <= 0 ? 0 : static_cast<size_t>(K * round_up(N, kNR));
}

void gemm_f32_pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb, float* packed) noexcept {
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = N - jc < kNC ? N - jc : kNC;
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = K - pc < kKC ? K - pc : kKC;
      const Matrix sub{trans_b ? B + jc * ldb + pc : B + pc * ldb + jc, ldb, trans_b};
      pack_b(sub, kc, nc, packed + jc * K + pc * round_up(nc, kNR));
    }
  }
}

void gemm_f32_ex(int64_t M, int64_t N, int64_t K, float alpha, const GemmOperand& A, const GemmOperand& B,
                 float beta, float* C, int64_t ldc, const float* row_bias, const Epilogue& epilogue,
                 int64_t offset_base, ThreadPool* pool) noexcept {
  if (B.bf16 != nullptr && !A.packed && gemm_bf16_native()) {
    gemm_bf16(M, N, K, alpha, A.data, A.ld, A.trans, B.bf16, beta, C, ldc, row_bias, epilogue, offset_base, pool);
    return;
  }
  Matrix a{A.data, A.ld, A.trans, A.packed, true, M, K};
  Matrix b{B.data, B.ld, B.trans, B.packed, false, K, N};
  TileFinish finish;
  finish.row_bias = row_bias;
  finish.epilogue = &epilogue;
  finish.base = offset_base;
  gemm_run(a, b, M, N, K, alpha, beta, C, ldc, finish, pool);
}

void gemm_f32_fused(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                    const float* row_bias, const Epilogue& epilogue, int64_t offset_base,
                    ThreadPool* pool) noexcept {
  TileFinish finish;
  finish.row_bias = row_bias;
  finish.epilogue = &epilogue;
  finish.base = offset_base;
  gemm_run(Matrix{A, lda, trans_a}, Matrix{B, ldb, trans_b}, M, N, K, alpha, beta, C, ldc, finish, pool);
}

}  // namespace kiln::rt
