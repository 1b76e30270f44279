// Quantized 2-D convolution: per image and group, a GEMM with the weights (packed once) on the
// left and the input's patches as columns (im2col row by row, padding holding x's zero point
// so that it adds 0; 1x1 convolutions of stride 1 read the input as it lies; ungrouped ones
// with C a multiple of 4, stride_w <= 2 and dilation 1 copy their panels from a padded,
// channel-interleaved copy of the input, with K ordered (kh, kw, c)), so that each output
// channel's plane is written contiguously. Small planes (3x3s of at most 28 x 28 outputs, 1x1s
// of at most 49 pixels and 256+ input channels) turn the tile round: 7 output pixels broadcast
// from the interleaved copy times 16 output channels a vector (VNNI, else AVX2 vpmaddwd on
// int16 halves, else plain loops). The requantization of qgemm's epilogue
// gives ConvInteger (int32) and QLinearConv (8-bit) results, and fused forms (f32, clamps).
// Depthwise convolutions run a direct loop per channel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/conv.h"
#include "kiln/rt/qgemm.h"

namespace kiln::rt {

// Weights W [M, C / group, KH, KW] of s8 or u8, packed per group.
size_t qconv2d_packed_weight_bytes(const Conv2dParams& p) noexcept;
void qconv2d_pack_weights(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept;
void qconv2d_pack_weights(const Conv2dParams& p, const uint8_t* w, unsigned char* packed) noexcept;

// Scratch bytes qconv2d needs (the packed patches of one image and group).
size_t qconv2d_scratch_bytes(const Conv2dParams& p) noexcept;

// y = requantize(conv(x - x.zero_point, w - w_zero_point)) with x [N, C, H, W] (x.data; x.lda
// unused); `out` as for qgemm with out.y the whole [N, M, OH, OW] output (its strides are set
// here) and its per-column arrays (and w_zero_point) indexed by output channel, 1 or M values.
void qconv2d(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const int32_t* w_zero_point,
             int64_t w_zero_point_count, const QGemmOutput& out, unsigned char* scratch, ThreadPool* pool,
             QGemmIsa isa = QGemmIsa::automatic) noexcept;

}  // namespace kiln::rt
