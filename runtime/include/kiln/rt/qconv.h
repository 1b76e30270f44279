// Quantized 2-D convolution on the int8 GEMM (qgemm.h): per image and group, the input
// patches are gathered into rows (im2row; padding holds x's zero point, so it adds 0) and
// multiplied by the weights, packed once. The requantization of qgemm's epilogue gives
// ConvInteger (int32) and QLinearConv (8-bit) results, and fused forms (f32, clamps).
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

// Scratch bytes qconv2d needs (the patch rows of one image and group).
size_t qconv2d_scratch_bytes(const Conv2dParams& p) noexcept;

// y = requantize(conv(x - x.zero_point, w - w_zero_point)) with x [N, C, H, W] (x.data; x.lda
// unused); `out` as for qgemm with out.y the whole [N, M, OH, OW] output (its strides are set
// here) and its per-column arrays (and w_zero_point) indexed by output channel, 1 or M values.
void qconv2d(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const int32_t* w_zero_point,
             int64_t w_zero_point_count, const QGemmOutput& out, unsigned char* scratch, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
