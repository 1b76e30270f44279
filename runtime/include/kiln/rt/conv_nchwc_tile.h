// The register tiles of conv_nchwc_f32 (runtime/src/conv_nchwc.cpp): what a tile function is
// given and the table of them that one instruction set fills. For the runtime's own sources: the
// NEON tiles live in conv_nchwc_neon.cpp, beside the x86 ones in conv_nchwc.cpp.
#pragma once

#include <cstdint>

#include "kiln/rt/conv_nchwc.h"

namespace kiln::rt::nchwc {

// One register tile: P output positions along a row (stride_w apart in the input) of F
// output blocks. The input is read around the tile's row: for each kernel tap (kh, kw), row
// ih0 + kh and columns iw0 + kw + p * sw, skipping taps and positions outside the image (the
// zero padding). A stride-1 1x1 runs its whole plane as one row (H = 1, W = H * W). The input
// is blocked, or plain NCHW (ConvNchwcParams::x_nchw: a stem's 3 channels), one channel a step.
struct Tile {
  int64_t K;        // input channels (a multiple of 16 where blocked)
  const float* x;   // the image's input block 0 (plain: channel 0)
  int64_t x_block;  // floats from one input block to the next (H * W * 16; plain: one channel to the next, H * W)
  int64_t H, W, KH, KW, sw;
  int64_t ih0, iw0;  // input row and column of the tile's first position, tap (0, 0)
  const float* w;    // packed weights of the tile's first output block
  int64_t w_block;   // floats from one output block's weights to the next (KH * KW * K * 16)
  const float* bias; // the first output block's 16 biases, or nullptr
  const float* z;    // the residual at the tile's first output value, or nullptr
  float* y;          // the tile's first output value
  int64_t y_block;   // floats from one output block to the next (OH * OW * 16)
  StoreActivation act;
  // Input channels [k0, k1) of the K summed now: the first range starts from zero, the others
  // from the partial sums in y; only the last adds the bias and residual and applies act.
  int64_t k0, k1;
  bool first, last;
  // Where flat_ow > 0 (only for a family that sets Kernels::flat, blocked input): the tile's P
  // positions are plane_pos, plane_pos + 1, ... of the whole output plane, flat_ow a row, and may
  // span rows; position q reads from row (q / flat_ow) * sh - pad_top + kh, column (q % flat_ow) *
  // sw - pad_left + kw. ih0 and iw0 are not used then. A strided layer's 7-wide rows thus run as
  // tiles of 6, not of 4 and 3.
  int64_t flat_ow = 0, sh = 1, pad_top = 0, pad_left = 0;
  // The tile's first position in its output plane (oh * OW + ow) and the plane's size: where a
  // flat tile starts, and which share of the next output block's weights a tile fetches ahead
  // (conv_nchwc_avx2.cpp).
  int64_t plane_pos = 0, plane_size = 1;
};

using TileFn = void (*)(const Tile& t);

// Positions [lo, hi) of a tile's P whose column iw + p * sw is inside [0, W).
inline void valid_positions(int64_t iw, int64_t sw, int64_t W, int P, int& lo, int& hi) {
  lo = 0;
  hi = P;
  while (lo < P && iw + lo * sw < 0) ++lo;
  while (hi > lo && iw + (hi - 1) * sw >= W) --hi;
}

constexpr int kMaxP = 6;  // positions a tile
constexpr int kMaxF = 4;  // output blocks a tile

// The tile functions for F in [1, max_f], P in [1, 6], input blocked (plain = 0) or NCHW
// (plain = 1): fns[plain][F - 1][P - 1].
struct Kernels {
  TileFn fns[2][kMaxF][kMaxP] = {};
  int max_f = 0;  // 0: portable_tile
  bool flat = false;  // the blocked tiles take Tile::flat_ow
  // Where set: positions [t.iw0, t.iw0 + len) of a stride-1 1x1's plane (t as for a tile of
  // them; t.first and t.last both true), blocked input, one output block (F = 1), in one call;
  // `blocked` is fns[0][0] (tiles of 1 to 6 positions) for what it leaves.
  void (*plane_run)(const Tile& t, int64_t len, const TileFn* blocked) = nullptr;
};

// The NEON tiles (ARM64: F = 1, P = 1 to 6, blocked and plain input); leaves k as it is
// elsewhere.
void fill_neon(Kernels& k);

// The AVX2 + FMA tiles (conv_nchwc_avx2.cpp: F = 1, P = 1 to 6, blocked and plain input); leaves
// k as it is where the build has no x86 kernels.
void fill_avx2(Kernels& k);

}  // namespace kiln::rt::nchwc
