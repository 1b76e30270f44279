// Winograd convolution F(m x m, 3 x 3) for 3x3, stride 1, dilation 1, ungrouped convolutions:
// each m x m block of the output comes from an (m + 2) x (m + 2) input tile by
// Y = A^T [ (G g G^T) .* (B^T d B) ] A, so the products of every tile position xi (one of
// (m + 2)^2) over the channels form one GEMM [M x C] x [C x tiles]: (m + 2)^2 / (9 m^2) of the
// multiplications of a direct convolution (F(4,3): 1/4, F(2,3): 4/9).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/conv.h"
#include "kiln/rt/epilogue.h"

namespace kiln::rt {

class ThreadPool;

// True when p can run as Winograd (3x3, stride 1, dilation 1, group 1, non-negative pads).
bool winograd_applicable(const Conv2dParams& p) noexcept;

// The tile (output block size) that pays for p: 4 (F(4,3)), 2 (F(2,3)) or 0 (im2col is
// faster: few channels, or too few tiles to fill the GEMM's register tiles).
int winograd_choose_tile(const Conv2dParams& p) noexcept;

// The weights transformed (G g G^T) and packed as the GEMM's A operand for each of the
// (tile + 2)^2 tile positions: done at compile time. tile is 2 or 4.
size_t winograd_packed_weight_floats(const Conv2dParams& p, int tile) noexcept;
void winograd_pack_weights(const Conv2dParams& p, int tile, const float* w, float* packed) noexcept;

// Floats of scratch winograd_conv2d_f32 needs (the transformed input and products, per
// chunk of tiles).
size_t winograd_scratch_floats(const Conv2dParams& p, int tile) noexcept;

// y = conv(x, w) + bias, then `epilogue` on row segments of the output (as conv2d_f32_epilogue);
// w_packed is winograd_pack_weights's output. y must not overlap x or scratch.
void winograd_conv2d_f32(const Conv2dParams& p, int tile, const float* x, const float* w_packed, const float* bias,
                         float* y, float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
