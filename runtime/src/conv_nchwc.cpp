// NCHW16c convolutions and reorders (see conv_nchwc.h).
//
// The 1x1 kernel's register tile is P output positions x F blocks of 16 output channels: per
// input channel, F vector loads of weights and P broadcasts of the input for P * F FMAs. With
// AVX-512 (32 registers) F = 4 and P = 6: 24 accumulators, the weights of a step reused by 6
// positions and each input value by 64 channels; with AVX2 (16 registers, a 16-float vector in
// two halves, conv_nchwc_avx2.cpp) F = 1, and with NEON (32 registers of 4 floats, conv_nchwc_neon.cpp) F = 1 as
// well. The tile's positions are contiguous in the output (and the residual), the
// input's 16 channels of a block contiguous at each position: nothing is packed at run time.
#include "kiln/rt/conv_nchwc.h"

#include <cstring>
#include <limits>

#include "kiln/rt/conv_nchwc_tile.h"
#include "kiln/rt/gemm_bf16.h"
#include "kiln/rt/kernel_log.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/transpose8.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

using namespace nchwc;
constexpr int64_t kB = kNchwcBlock;

#if defined(__GNUC__) || defined(__clang__)
typedef float vec16 __attribute__((vector_size(kB * sizeof(float))));

// One tap's products for positions [lo, hi) (kAll: all P), the input row at `row`, position p's
// 16 channels of block 0 at row + (iw + p * sw) * 16 (plain: channel c of position p at
// row + c * x_block + iw + p * sw).
template <int F, int P, bool kAll, bool kPlain>
KILN_TILE_NO_POINTER_CHECKS __attribute__((always_inline)) inline void tap(const Tile& t, const float* __restrict row, int64_t iw,
                                               const float* __restrict w, int lo, int hi, vec16 (&acc)[P][F]) {
  int64_t off[P];
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p) off[p] = (iw + p * t.sw) * (kPlain ? 1 : kB);
  if constexpr (kPlain) {
    for (int64_t c = t.k0; c < t.k1; ++c) {
      const float* __restrict xc = row + c * t.x_block;
      vec16 wv[F];
#pragma GCC unroll 4
      for (int f = 0; f < F; ++f) std::memcpy(&wv[f], w + f * t.w_block + c * kB, sizeof(vec16));
#pragma GCC unroll 6
      for (int p = 0; p < P; ++p) {
        if (!kAll && (p < lo || p >= hi)) continue;
        const float xv = xc[off[p]];
#pragma GCC unroll 4
        for (int f = 0; f < F; ++f) acc[p][f] += xv * wv[f];
      }
    }
    return;
  }
  for (int64_t kb = t.k0; kb < t.k1; kb += kB) {
    const float* __restrict xb = row + kb / kB * t.x_block;
    const float* __restrict wb = w + kb * kB;
#pragma GCC unroll 16
    for (int k = 0; k < kB; ++k) {
      vec16 wv[F];
#pragma GCC unroll 4
      for (int f = 0; f < F; ++f) std::memcpy(&wv[f], wb + f * t.w_block + k * kB, sizeof(vec16));
#pragma GCC unroll 6
      for (int p = 0; p < P; ++p) {
        if (!kAll && (p < lo || p >= hi)) continue;
        const float xv = xb[off[p] + k];
#pragma GCC unroll 4
        for (int f = 0; f < F; ++f) acc[p][f] += xv * wv[f];
      }
    }
  }
}

template <int F, int P, bool kPlain>
KILN_TILE_NO_POINTER_CHECKS __attribute__((always_inline)) inline void vector_tile(const Tile& t) {
  vec16 acc[P][F] = {};
  if (!t.first)
#pragma GCC unroll 4
    for (int f = 0; f < F; ++f)
#pragma GCC unroll 6
      for (int p = 0; p < P; ++p) std::memcpy(&acc[p][f], t.y + f * t.y_block + p * kB, sizeof(vec16));
  for (int64_t kh = 0; kh < t.KH; ++kh) {
    const int64_t ih = t.ih0 + kh;
    if (ih < 0 || ih >= t.H) continue;
    const float* row = t.x + ih * t.W * (kPlain ? 1 : kB);
    for (int64_t kw = 0; kw < t.KW; ++kw) {
      int lo, hi;
      valid_positions(t.iw0 + kw, t.sw, t.W, P, lo, hi);
      const float* w = t.w + (kh * t.KW + kw) * t.K * kB;
      if (lo == 0 && hi == P)
        tap<F, P, true, kPlain>(t, row, t.iw0 + kw, w, lo, hi, acc);
      else if (lo < hi)
        tap<F, P, false, kPlain>(t, row, t.iw0 + kw, w, lo, hi, acc);
    }
  }
  if (!t.last) {
#pragma GCC unroll 4
    for (int f = 0; f < F; ++f)
#pragma GCC unroll 6
      for (int p = 0; p < P; ++p) std::memcpy(t.y + f * t.y_block + p * kB, &acc[p][f], sizeof(vec16));
    return;
  }
  const vec16 zero = {}, lo = zero + t.act.lo, hi = zero + t.act.hi;
#pragma GCC unroll 4
  for (int f = 0; f < F; ++f) {
    vec16 bv = {};
    if (t.bias) std::memcpy(&bv, t.bias + f * kB, sizeof bv);
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p) {
      vec16 v = acc[p][f];
      if (t.bias) v += bv;  // act(conv + bias + z), in kiln.FusedConv's order
      if (t.z) {
        vec16 r;
        std::memcpy(&r, t.z + f * t.y_block + p * kB, sizeof r);
        v += r;
      }
      if (t.act.kind == StoreActivation::kClamp) {
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
      } else if (t.act.kind == StoreActivation::kRelu) {
        v = v > zero ? v : zero;  // NaN becomes 0, as Relu
      }
      std::memcpy(t.y + f * t.y_block + p * kB, &v, sizeof v);
    }
  }
}
#endif

// Plain loops, for compilers and CPUs without the above (KILN_CPU_ISA=portable, and the floor
// for CPUs kiln has no kernels for): two positions of one output block at a time. Written so
// that GCC and Clang vectorize them for whatever the target's vectors are: the 16 channels'
// loop unrolled whole, two positions' sums in local arrays the compiler keeps in registers (8
// SSE2 registers on x86-64's baseline, 8 NEON ones on ARM64), the weights of an input channel
// read once for both. One position at a time, with the block's index divided out per channel,
// ResNet-50's 1x1s ran at 2.8 G multiply-adds/s on a core whose SSE2 peak is 4x that. The same
// taps, channel order and epilogue as the tiles above.
namespace portable {

// acc0[j] += x0 * w[j] (and acc1 from x1 where N = 2) over input channels [k0, k1) of one tap,
// position q's value of channel c at xq + index(c). Its own function, the sums in local arrays
// loaded and stored around the loop: inlined into the tile's loops, GCC left them in memory.
// GCC's loop vectorizer took the loop over a block's 16 input channels instead (their values
// are contiguous), transposing the weights with shuffles and keeping sums on the stack:
// vectorizing the unrolled 16 channels of the output (SLP) is what keeps them in registers.
#if defined(__GNUC__) && !defined(__clang__)
#define KILN_NO_LOOP_VECTORIZE __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define KILN_NO_LOOP_VECTORIZE
#endif

template <bool kPlain, int N>
KILN_NO_LOOP_VECTORIZE __attribute__((noinline)) void tap(const Tile& t, const float* __restrict x0, const float* __restrict x1,
                                   const float* __restrict w, float* __restrict acc0, float* __restrict acc1) {
  float a0[kB], a1[kB];
  std::memcpy(a0, acc0, sizeof a0);
  if (N == 2) std::memcpy(a1, acc1, sizeof a1);
  const auto step = [&](int64_t i, const float* __restrict wc) {
    const float v0 = x0[i], v1 = N == 2 ? x1[i] : 0.f;
#pragma GCC unroll 16
    for (int j = 0; j < kB; ++j) {
      a0[j] += v0 * wc[j];
      if (N == 2) a1[j] += v1 * wc[j];
    }
  };
  if constexpr (kPlain) {
    for (int64_t c = t.k0; c < t.k1; ++c) step(c * t.x_block, w + c * kB);
  } else {
    int64_t i = t.k0 / kB * t.x_block;
    for (int64_t kb = t.k0; kb < t.k1; kb += kB, i += t.x_block)
      for (int k = 0; k < kB; ++k) step(i + k, w + (kb + k) * kB);
  }
  std::memcpy(acc0, a0, sizeof a0);
  if (N == 2) std::memcpy(acc1, a1, sizeof a1);
}

template <bool kPlain>
void tile(const Tile& t, int F, int P) {
  const int64_t scale = kPlain ? 1 : kB;
  for (int f = 0; f < F; ++f)
    for (int p0 = 0; p0 < P; p0 += 2) {
      const int n = P - p0 < 2 ? 1 : 2;
      float acc[2][kB] = {};
      float* y = t.y + f * t.y_block + p0 * kB;
      if (!t.first)
        for (int q = 0; q < n; ++q) std::memcpy(acc[q], y + q * kB, sizeof acc[q]);
      for (int64_t kh = 0; kh < t.KH; ++kh) {
        const int64_t ih = t.ih0 + kh;
        if (ih < 0 || ih >= t.H) continue;
        for (int64_t kw = 0; kw < t.KW; ++kw) {
          const float* w = t.w + f * t.w_block + (kh * t.KW + kw) * t.K * kB;
          bool in[2];
          const float* xs[2];
          for (int q = 0; q < 2; ++q) {
            const int64_t iw = t.iw0 + kw + (p0 + q) * t.sw;
            in[q] = q < n && iw >= 0 && iw < t.W;
            xs[q] = t.x + (ih * t.W + (in[q] ? iw : 0)) * scale;
          }
          if (in[0] && in[1]) {
            tap<kPlain, 2>(t, xs[0], xs[1], w, acc[0], acc[1]);
          } else if (in[0] || in[1]) {  // one of the pair in the padding: the other alone
            const int q = in[0] ? 0 : 1;
            tap<kPlain, 1>(t, xs[q], nullptr, w, acc[q], nullptr);
          }
        }
      }
      for (int q = 0; q < n; ++q) {
        float* yq = y + q * kB;
        if (!t.last) {
          std::memcpy(yq, acc[q], sizeof acc[q]);
          continue;
        }
        for (int64_t j = 0; j < kB; ++j) {
          float v = acc[q][j];
          if (t.bias) v += t.bias[f * kB + j];
          if (t.z) v += t.z[f * t.y_block + (p0 + q) * kB + j];
          if (t.act.kind == StoreActivation::kClamp) v = v < t.act.lo ? t.act.lo : (v > t.act.hi ? t.act.hi : v);
          if (t.act.kind == StoreActivation::kRelu) v = v > 0.f ? v : 0.f;
          yq[j] = v;
        }
      }
    }
}

}  // namespace portable

void portable_tile(const Tile& t, int F, int P, bool plain) {
  if (plain)
    portable::tile<true>(t, F, P);
  else
    portable::tile<false>(t, F, P);
}

#if KILN_X86_KERNELS
template <int F, int P, bool kPlain>
KILN_AVX512F KILN_TILE_NO_POINTER_CHECKS void tile_avx512f(const Tile& t) {
  vector_tile<F, P, kPlain>(t);
}

template <int F, bool kPlain>
void fill_avx512f(Kernels& k) {
  TileFn* fns = k.fns[kPlain][F - 1];
  fns[0] = tile_avx512f<F, 1, kPlain>;
  fns[1] = tile_avx512f<F, 2, kPlain>;
  fns[2] = tile_avx512f<F, 3, kPlain>;
  fns[3] = tile_avx512f<F, 4, kPlain>;
  fns[4] = tile_avx512f<F, 5, kPlain>;
  fns[5] = tile_avx512f<F, 6, kPlain>;
}

#endif

NchwcIsa best_isa() {
#if KILN_X86_KERNELS
  if (cpu_has_avx512f()) return NchwcIsa::avx512;
  if (cpu_has_avx2_fma()) return NchwcIsa::avx2;
#endif
  if (cpu_has_neon()) return NchwcIsa::neon;
  return NchwcIsa::portable;
}

// The family `isa` names: automatic becomes the best this CPU has.
NchwcIsa resolve(NchwcIsa isa) {
  static const NchwcIsa best = best_isa();
  return isa == NchwcIsa::automatic ? best : isa;
}

Kernels kernels_for(NchwcIsa isa) {
  Kernels k;
#if KILN_X86_KERNELS
  if (isa == NchwcIsa::avx512) {
    fill_avx512f<1, false>(k);
    fill_avx512f<2, false>(k);
    fill_avx512f<3, false>(k);
    fill_avx512f<4, false>(k);
    fill_avx512f<1, true>(k);
    fill_avx512f<2, true>(k);
    fill_avx512f<3, true>(k);
    fill_avx512f<4, true>(k);
    k.max_f = 4;
  } else if (isa == NchwcIsa::avx2) {
    fill_avx2(k);
  }
#endif
  if (isa == NchwcIsa::neon) fill_neon(k);
  return k;
}

const Kernels& kernels(NchwcIsa isa) {
  static const Kernels portable = kernels_for(NchwcIsa::portable), avx2 = kernels_for(NchwcIsa::avx2),
                       avx512 = kernels_for(NchwcIsa::avx512), neon = kernels_for(NchwcIsa::neon);
  switch (resolve(isa)) {
    case NchwcIsa::avx512: return avx512;
    case NchwcIsa::avx2: return avx2;
    case NchwcIsa::neon: return neon;
    case NchwcIsa::automatic:
    case NchwcIsa::portable: break;
  }
  return portable;
}

// Positions a unit of work takes along a row (stride 1: along the whole plane, which is then
// one row of OH * OW positions): whole tiles whose input, all its blocks, is about 128 KiB (so
// that it stays in L2 while the unit's neighbours, the other output blocks of the same positions,
// read it again), from 2 to 128 tiles.
int64_t chunk_positions(const ConvNchwcParams& p) {
  const int64_t tiles = (128 << 10) / (p.KH * p.C * static_cast<int64_t>(sizeof(float)) * kMaxP);
  return (tiles < 2 ? 2 : tiles > 128 ? 128 : tiles) * kMaxP;
}

// Chunks of `chunk` positions along a row of row_len, the last taking the rest; a rest shorter
// than a tile joins the chunk before it. (ResNet-50's 2048 -> 512 1x1 at 7 x 7: chunks of 12
// left a last one of 1 position, a tile with 2 accumulator chains over 2048 input channels,
// as slow as three tiles of 6: the layer ran at 65-70% of the AVX2 FMA peak.)
int64_t chunks_of(int64_t row_len, int64_t chunk) {
  const int64_t chunks = (row_len + chunk - 1) / chunk, rest = row_len % chunk;
  return chunks > 1 && rest > 0 && rest < kMaxP ? chunks - 1 : chunks;
}

struct ConvJob {
  const ConvNchwcParams* p;
  const float* x;
  const float* w;
  const float* bias;
  const float* z;
  StoreActivation act;
  float* y;
  int64_t groups, rows, row_len, chunk, chunks;  // per image: rows x chunks of a row x output-block groups
  bool plane;  // a stride-1 1x1 without padding: the whole plane is one row
  bool flat;   // tiles run along the whole output plane across its rows (Tile::flat_ow)
  bool groups_outer;  // a group's units are neighbours, not a chunk's (spatial_inner)
  int64_t k_chunk;    // input channels a pass over a group's positions (k_chunk_of)
  const Kernels* ks;
};

// How a convolution's units are ordered. Usually the output groups of a chunk of positions are
// neighbours: the chunk's input (about 128 KiB) stays in L2 while every group's weights stream
// past it. Where all the weights outgrow L2 and the whole input fits in it, the positions of a
// group are neighbours instead, so that each group's weights are read from memory once, not once
// per chunk (ResNet-50's layer 4: 4-8 MB of weights, a 7 x 7 output read in 5-7 chunks); where
// one group's weights outgrow half of L2 too (layer 4's stride-2 3x3: 1.2 MB a group), a unit is
// a whole group, its input channels in chunks whose weights fit in a quarter of it.
struct UnitOrder {
  bool groups_outer = false;
  int64_t k_chunk = 0;  // 0: all of C at once
};

UnitOrder unit_order(const ConvNchwcParams& p, int64_t per) {
  constexpr int64_t kL2 = 1 << 20;
  // Weight bytes per input channel: of one group, and of all.
  const int64_t per_channel = per * kB * p.KH * p.KW * static_cast<int64_t>(sizeof(float));
  const int64_t all_per_channel = p.M * p.KH * p.KW * static_cast<int64_t>(sizeof(float));
  UnitOrder o;
  if (all_per_channel * p.C <= kL2 ||
      p.C * p.H * p.W * static_cast<int64_t>(sizeof(float)) > kL2)
    return o;
  o.groups_outer = true;
  if (per_channel * p.C <= kL2 / 2) return o;
  const int64_t step = p.x_nchw ? 1 : kB, fit = (kL2 / 4) / per_channel;
  const int64_t chunks = (p.C + fit - 1) / (fit > 0 ? fit : 1);
  o.k_chunk = ((p.C + chunks - 1) / chunks + step - 1) / step * step;  // near-equal chunks of whole blocks
  if (o.k_chunk >= p.C) o.k_chunk = 0;
  return o;
}

void run_tiles(const ConvJob& j, int64_t n, int64_t g, int64_t row, int64_t chunk, int64_t k0, int64_t k1) {
  const ConvNchwcParams& p = *j.p;
  const Kernels& ks = *j.ks;
  const int64_t MB = p.M / kB, per = ks.max_f > 0 ? ks.max_f : 1;
  const int64_t b0 = g * per, F = MB - b0 < per ? MB - b0 : per;
  const int64_t c0 = chunk * j.chunk, c1 = chunk == j.chunks - 1 ? j.row_len : c0 + j.chunk;
  Tile t{};
  t.K = p.C;
  t.k0 = k0;
  t.k1 = k1;
  t.first = k0 == 0;
  t.last = k1 == p.C;
  t.x_block = p.H * p.W * (p.x_nchw ? 1 : kB);
  t.x = j.x + n * p.C * p.H * p.W;  // C * H * W floats an image either way
  t.H = j.plane ? 1 : p.H;
  t.W = j.plane ? p.H * p.W : p.W;
  t.KH = p.KH;
  t.KW = p.KW;
  t.sw = p.stride_w;
  t.ih0 = j.plane ? 0 : row * p.stride_h - p.pad_top;
  if (j.flat) {
    t.flat_ow = p.OW;
    t.sh = p.stride_h;
    t.pad_top = p.pad_top;
    t.pad_left = p.pad_left;
  }
  t.w = j.w + b0 * p.KH * p.KW * p.C * kB;
  t.w_block = p.KH * p.KW * p.C * kB;
  t.bias = j.bias ? j.bias + b0 * kB : nullptr;
  t.y_block = p.OH * p.OW * kB;
  t.plane_size = p.OH * p.OW;
  t.act = j.act;
  const int64_t y_off = (n * MB + b0) * t.y_block + (j.plane || j.flat ? 0 : row * p.OW * kB);
  // With one output block a tile (AVX2, NEON: F = 1), near-equal tiles of at most kMaxP
  // positions, a 7-wide row as 4 + 3 rather than 6 + 1: a 1-position tile keeps too few
  // accumulator chains to cover the FMA latency. ResNet-50's stride-2 layers under
  // KILN_CPU_ISA=avx2 went from 60% to 63-65% of the FMA peak (layer 4's 3x3/2: 47% to
  // 52-53%, bench/layer_efficiency.py). With AVX-512's four blocks a tile the same split made layer
  // 4's 7-wide rows 30% slower (and layer 3's 14-wide ones 10-18% faster): kept as it was.
  // Each position's sum is the same either way.
  const int64_t len = c1 - c0, full = (len + kMaxP - 1) / kMaxP;
  if (ks.plane_run != nullptr && j.plane && t.first && t.last && !p.x_nchw && F == 1) {
    t.iw0 = c0;
    t.plane_pos = c0;
    t.y = j.y + y_off + c0 * kB;
    t.z = j.z ? j.z + y_off + c0 * kB : nullptr;
    ks.plane_run(t, len, ks.fns[0][0]);
    return;
  }
  const bool balance = ks.max_f == 1;
  int64_t q = c0;
  for (int64_t i = 0; i < full; ++i) {
    const int64_t P = balance ? len / full + (i < len % full ? 1 : 0) : (c1 - q < kMaxP ? c1 - q : kMaxP);
    t.iw0 = q * p.stride_w - p.pad_left;
    t.plane_pos = j.plane || j.flat ? q : row * p.OW + q;
    t.y = j.y + y_off + q * kB;
    t.z = j.z ? j.z + y_off + q * kB : nullptr;
    if (ks.max_f > 0)
      ks.fns[p.x_nchw][F - 1][P - 1](t);
    else
      portable_tile(t, static_cast<int>(F), static_cast<int>(P), p.x_nchw);
    q += P;
  }
}

void run_unit(const ConvJob& j, int64_t unit) {
  const ConvNchwcParams& p = *j.p;
  if (j.k_chunk < p.C) {
    // One group of one image, its input channels in chunks (each chunk's weights kept in L2 over
    // all the group's positions), partial sums in y between them.
    const int64_t g = unit % j.groups, n = unit / j.groups;
    for (int64_t k0 = 0; k0 < p.C; k0 += j.k_chunk)
      for (int64_t row = 0; row < j.rows; ++row)
        for (int64_t chunk = 0; chunk < j.chunks; ++chunk)
          run_tiles(j, n, g, row, chunk, k0, k0 + j.k_chunk < p.C ? k0 + j.k_chunk : p.C);
    return;
  }
  // The groups of a chunk of positions are neighbours (they read the same input), or the chunks of
  // a group (they read the same weights).
  const int64_t spatial = j.chunks * j.rows;
  const int64_t g = j.groups_outer ? unit / spatial % j.groups : unit % j.groups;
  const int64_t s = j.groups_outer ? unit % spatial : unit / j.groups % spatial;
  run_tiles(j, unit / (j.groups * spatial), g, s / j.chunks, s % j.chunks, 0, p.C);
}

#if KILN_X86_KERNELS
// 8 x 8 blocks through transpose8: rows of src (ld_src apart) become columns of dst.
KILN_AVX2_FMA void transpose8x8(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld_src);
  transpose8(r);
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + i * ld_dst, r[i]);
}
#endif

// One block of 16 channels of one image: plane-major [16][HW] to position-major [HW][16]
// (to_blocked) or back.
void reorder_block(const float* src, float* dst, int64_t HW, bool to_blocked) {
  int64_t q = 0;
#if KILN_X86_KERNELS
  if (cpu_has_avx2_fma()) {
    for (; q + 8 <= HW; q += 8)
      for (int64_t h = 0; h < kB; h += 8) {
        if (to_blocked)
          transpose8x8(src + h * HW + q, HW, dst + q * kB + h, kB);
        else
          transpose8x8(src + q * kB + h, kB, dst + h * HW + q, HW);
      }
  }
#endif
  for (; q < HW; ++q)
    for (int64_t c = 0; c < kB; ++c) {
      if (to_blocked)
        dst[q * kB + c] = src[c * HW + q];
      else
        dst[c * HW + q] = src[q * kB + c];
    }
}

struct ReorderJob {
  int64_t HW;
  const float* x;
  float* y;
  bool to_blocked;
};

void reorder(int64_t N, int64_t C, int64_t HW, const float* x, float* y, bool to_blocked, ThreadPool* pool) {
  const ReorderJob job{HW, x, y, to_blocked};
  // Either way, block b of the whole tensor is the same 16 * HW floats (planes 16b.. or [b][HW][16]).
  parallel_for(pool, N * (C / kB), [j = &job](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) reorder_block(j->x + b * kB * j->HW, j->y + b * kB * j->HW, j->HW, j->to_blocked);
  });
}

// The running max of a window's 16 channels, m = x where x > m or x is NaN (a NaN wins, as
// maxpool2d_f32's max): plain floats, and AVX2 and AVX-512 registers. (GCC lowered vector
// extensions' selects here lane by lane, as conditional loads.)
struct MaxPlain {
  float m[kB];
  void init(float v) {
    for (int64_t j = 0; j < kB; ++j) m[j] = v;
  }
  void step(const float* x) {
    for (int64_t j = 0; j < kB; ++j) m[j] = (x[j] > m[j] || x[j] != x[j]) ? x[j] : m[j];
  }
  void store(float* y) const { std::memcpy(y, m, sizeof m); }
};

#if KILN_X86_KERNELS
struct MaxAvx2 {
  __m256 m0, m1;
  KILN_AVX2_FMA void init(float v) { m0 = m1 = _mm256_set1_ps(v); }
  KILN_AVX2_FMA static __m256 max_nan(__m256 m, __m256 x) {
    const __m256 take = _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_blendv_ps(m, x, take);
  }
  KILN_AVX2_FMA void step(const float* x) {
    m0 = max_nan(m0, _mm256_loadu_ps(x));
    m1 = max_nan(m1, _mm256_loadu_ps(x + 8));
  }
  KILN_AVX2_FMA void store(float* y) const {
    _mm256_storeu_ps(y, m0);
    _mm256_storeu_ps(y + 8, m1);
  }
};

struct MaxAvx512 {
  __m512 m;
  KILN_AVX512F void init(float v) { m = _mm512_set1_ps(v); }
  KILN_AVX512F void step(const float* x) {
    const __m512 v = _mm512_loadu_ps(x);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
  }
  KILN_AVX512F void store(float* y) const { _mm512_storeu_ps(y, m); }
};
#endif

// Taps [lo, hi) of a window of `k` taps `dil` apart from `start` that land inside [0, size).
inline void inside_taps(int64_t start, int64_t k, int64_t dil, int64_t size, int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = k;
  while (lo < hi && start + lo * dil < 0) ++lo;
  while (hi > lo && start + (hi - 1) * dil >= size) --hi;
}

// MaxPool of one output row of one block (16 channels a position).
template <class Max>
__attribute__((always_inline)) inline void maxpool_row(const Pool2dParams& p, const float* __restrict xb,
                                                       float* __restrict yr, int64_t oh) {
  const int64_t ih0 = oh * p.stride_h - p.pad_top;
  int64_t kh0, kh1;
  inside_taps(ih0, p.KH, p.dil_h, p.H, kh0, kh1);
  for (int64_t ow = 0; ow < p.OW; ++ow) {
    const int64_t iw0 = ow * p.stride_w - p.pad_left;
    int64_t kw0, kw1;
    inside_taps(iw0, p.KW, p.dil_w, p.W, kw0, kw1);
    Max m;
    m.init(-std::numeric_limits<float>::infinity());  // what padding holds
    for (int64_t kh = kh0; kh < kh1; ++kh)
      for (int64_t kw = kw0; kw < kw1; ++kw) m.step(xb + ((ih0 + kh * p.dil_h) * p.W + iw0 + kw * p.dil_w) * kB);
    m.store(yr + ow * kB);
  }
}

struct MaxPoolJob {
  const Pool2dParams* p;
  const float* x;
  float* y;
};

// Rows [r0, r1) of (image and block, output row), with plain floats or, chosen at run time, AVX2
// or AVX-512 registers.
template <class Max>
__attribute__((always_inline)) inline void maxpool_rows(const MaxPoolJob& j, int64_t r0, int64_t r1) {
  const Pool2dParams& p = *j.p;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / p.OH, oh = r % p.OH;
    maxpool_row<Max>(p, j.x + b * p.H * p.W * kB, j.y + (b * p.OH + oh) * p.OW * kB, oh);
  }
}
void maxpool_rows_baseline(const MaxPoolJob& j, int64_t r0, int64_t r1) { maxpool_rows<MaxPlain>(j, r0, r1); }
#if KILN_X86_KERNELS
KILN_AVX2_FMA void maxpool_rows_avx2(const MaxPoolJob& j, int64_t r0, int64_t r1) { maxpool_rows<MaxAvx2>(j, r0, r1); }
KILN_AVX512F void maxpool_rows_avx512(const MaxPoolJob& j, int64_t r0, int64_t r1) {
  maxpool_rows<MaxAvx512>(j, r0, r1);
}
#endif

}  // namespace

void maxpool_nchwc_f32(const Pool2dParams& p, const float* x, float* y, ThreadPool* pool) noexcept {
  if (p.N <= 0 || p.C <= 0 || p.OH <= 0 || p.OW <= 0) return;
  const MaxPoolJob job{&p, x, y};
  void (*rows)(const MaxPoolJob&, int64_t, int64_t) = maxpool_rows_baseline;
#if KILN_X86_KERNELS
  if (cpu_has_avx512f())
    rows = maxpool_rows_avx512;
  else if (cpu_has_avx2_fma())
    rows = maxpool_rows_avx2;
#endif
  parallel_for(pool, p.N * (p.C / kB) * p.OH, [j = &job, rows](int64_t r0, int64_t r1) { rows(*j, r0, r1); });
}

void nchw_to_nchwc_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, ThreadPool* pool) noexcept {
  reorder(N, C, HW, x, y, true, pool);
}

void nchwc_to_nchw_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, ThreadPool* pool) noexcept {
  reorder(N, C, HW, x, y, false, pool);
}

bool conv_nchwc_applicable(const ConvNchwcParams& p) noexcept {
  return p.N >= 1 && p.C > 0 && p.M > 0 && (p.C % kB == 0 || p.x_nchw) && p.M % kB == 0 && p.H > 0 && p.W > 0 && p.KH >= 1 &&
         p.KW >= 1 && p.stride_h >= 1 && p.stride_w >= 1 && p.pad_top >= 0 && p.pad_left >= 0 && p.OH >= 1 &&
         p.OW >= 1;
}

size_t conv_nchwc_packed_floats(const ConvNchwcParams& p) noexcept {
  return static_cast<size_t>(p.M * p.C * p.KH * p.KW);
}

void conv_nchwc_pack_weights(const ConvNchwcParams& p, const float* w, float* packed) noexcept {
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t c = 0; c < p.C; ++c)
      for (int64_t kh = 0; kh < p.KH; ++kh)
        for (int64_t kw = 0; kw < p.KW; ++kw)
          packed[(((m / kB) * p.KH + kh) * p.KW + kw) * p.C * kB + c * kB + m % kB] =
              w[((m * p.C + c) * p.KH + kh) * p.KW + kw];
}

bool conv_nchwc_isa_supported(NchwcIsa isa) noexcept {
  switch (isa) {
    case NchwcIsa::automatic:
    case NchwcIsa::portable: return true;
    case NchwcIsa::avx2: return KILN_X86_KERNELS && cpu_has_avx2_fma();
    case NchwcIsa::avx512: return KILN_X86_KERNELS && cpu_has_avx512f();
    case NchwcIsa::neon: return cpu_has_neon();
  }
  return false;
}

const char* conv_nchwc_isa_name(NchwcIsa isa) noexcept {
  switch (resolve(conv_nchwc_isa_supported(isa) ? isa : NchwcIsa::automatic)) {
    case NchwcIsa::avx512: return "avx512";
    case NchwcIsa::avx2: return "avx2";
    case NchwcIsa::neon: return "neon";
    case NchwcIsa::automatic:
    case NchwcIsa::portable: break;
  }
  return "portable";
}

namespace {

// A strided 1x1 without padding (ResNet's downsampling) reads one position of every stride in
// every stride-th row: a line of 16 channels for each position it uses and, through the
// hardware's adjacent-line fetch, another it does not. Its input is first gathered into the
// positions it reads (a quarter of the plane at stride 2, into this thread's buffer, split
// across the pool) and the 1x1 runs as a stride-1 plane. ResNet-50 with AVX-512 hidden, one
// thread: 93.1 -> 91.6 ms (level at two threads and natively). nullptr where p is not such a
// layer or no buffer is to be had (it then reads the positions in place).
const float* subsample_1x1(const ConvNchwcParams& p, const float* x, ThreadPool* pool) {
  if (p.KH != 1 || p.KW != 1 || (p.stride_h == 1 && p.stride_w == 1) || p.pad_top != 0 || p.pad_left != 0 ||
      p.x_nchw)
    return nullptr;
  const int64_t rows = p.N * (p.C / kB) * p.OH;
  float* xs = static_cast<float*>(
      thread_buffer(ThreadBuffer::conv_subsampled, static_cast<size_t>(rows * p.OW * kB) * sizeof(float)));
  if (!xs) return nullptr;
  struct Gather {
    const ConvNchwcParams* p;
    const float* x;
    float* xs;
  } g{&p, x, xs};
  parallel_for(pool, rows, [g = &g](int64_t r0, int64_t r1) {
    const ConvNchwcParams& q = *g->p;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t plane = r / q.OH, oh = r % q.OH;  // plane: image and block
      const float* src = g->x + ((plane * q.H + oh * q.stride_h) * q.W) * kB;
      float* dst = g->xs + r * q.OW * kB;
      for (int64_t ow = 0; ow < q.OW; ++ow)
        std::memcpy(dst + ow * kB, src + ow * q.stride_w * kB, kB * sizeof(float));
    }
  });
  return xs;
}

// p on the gathered input: a stride-1 1x1 over the OH x OW positions.
ConvNchwcParams subsampled_params(const ConvNchwcParams& p) {
  ConvNchwcParams s = p;
  s.H = p.OH;
  s.W = p.OW;
  s.stride_h = s.stride_w = 1;
  return s;
}

// conv_nchwc_f32 after the bf16 path and the gathering, on x as given.
void conv_nchwc_plane(const ConvNchwcParams& p, const float* x, const float* packed_w, const float* bias,
                      const float* z, const StoreActivation& act, float* y, ThreadPool* pool, NchwcIsa isa) {
  const Kernels& ks = kernels(conv_nchwc_isa_supported(isa) ? isa : NchwcIsa::automatic);
  const int64_t per = ks.max_f > 0 ? ks.max_f : 1;
  const bool plane = p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
                     p.pad_left == 0 && p.OH == p.H && p.OW == p.W;
  // A strided layer's rows shorter than four tiles that do not split into whole tiles (ResNet-50's
  // 7- and 14-wide stride-2 layers) run as one row of the whole plane where the family can
  // (AVX2: a 7-wide row was a tile of 4 and one of 3 positions, 8 and 6 accumulator chains for
  // the FMAs' latency; the 3x3/2 at 7 x 7 went from 74-76% to 81-84% of the FMA peak, the 1x1/2
  // from 69% to 83-85%, under KILN_CPU_ISA=avx2). Not at stride 1: a tile across a row's end
  // splits its padded edge taps in two runs, and layer 4's 3x3s went from 82% to 73%.
  const bool flat = !plane && ks.flat && !p.x_nchw && (p.stride_h > 1 || p.stride_w > 1) &&
                    p.OW % kMaxP != 0 && p.OW < 4 * kMaxP;
  const int64_t row_len = plane || flat ? p.OH * p.OW : p.OW, rows = plane || flat ? 1 : p.OH;
  const int64_t chunk = chunk_positions(p);
  const UnitOrder order = unit_order(p, per);
  ConvJob job{&p, x, packed_w, bias, z, act, y, (p.M / kB + per - 1) / per, rows, row_len, chunk,
              chunks_of(row_len, chunk), plane, flat, order.groups_outer, order.k_chunk > 0 ? order.k_chunk : p.C,
              &ks};
  const int64_t units = p.N * job.groups * (job.k_chunk < p.C ? 1 : rows * job.chunks);
  parallel_for_balanced(pool, units, [j = &job](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) run_unit(*j, u);
  });
}

}  // namespace

void conv_nchwc_f32(const ConvNchwcParams& p, const float* x, const float* packed_w, const float* bias,
                    const float* z, const StoreActivation& act, float* y, ThreadPool* pool, NchwcIsa isa,
                    const uint16_t* w_bf16) noexcept {
  if (w_bf16 != nullptr && gemm_bf16_native() && conv_nchwc_bf16_applicable(p)) {
    if (kernel_log_enabled()) log_conv_kernel("conv_nchwc_bf16", "avx512_bf16", p.C, p.H, p.W, p.M, p.KH, p.KW, p.stride_w);
    conv_nchwc_bf16(p, x, w_bf16, bias, z, act, y, pool);
    return;
  }
  if (kernel_log_enabled())
    log_conv_kernel("conv_nchwc", conv_nchwc_isa_name(isa), p.C, p.H, p.W, p.M, p.KH, p.KW, p.stride_w);
  if (const float* xs = subsample_1x1(p, x, pool)) {
    conv_nchwc_plane(subsampled_params(p), xs, packed_w, bias, z, act, y, pool, isa);
    return;
  }
  conv_nchwc_plane(p, x, packed_w, bias, z, act, y, pool, isa);
}

}  // namespace kiln::rt
