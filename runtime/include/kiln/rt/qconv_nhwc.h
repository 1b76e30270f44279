// Quantized 2-D convolutions in the channels-last layout (NHWC): x [N, H, W, C] and y
// [N, OH, OW, M], 8-bit, for the chains of int8 layers that the pass layout_nhwc converts
// (MobileNet-like models: 1x1 convolutions and depthwise ones between them; ResNet-like ones:
// 1x1s and 3x3s).
//
// Why channels-last: a thread's part of such a chain is a run of whole output rows, the same
// rows from layer to layer, so each thread reads what it wrote itself (a depthwise layer also
// one halo row a side). In NCHW the 1x1 layers split by pixels and the depthwise ones by
// channels, and every layer read the other core's writes: on a VM whose two vCPUs sit far
// apart that made MobileNetV2 int8 slower at two threads than at one (docs/design/int8_kernels.md,
// "Channels-last chains").
//
// Three shapes run here (qconv2d_nhwc_supported):
//  - dense: group 1, C a multiple of 4, any kernel up to 7x7 (49 taps), stride, padding and
//    dilation: each pixel's channels at each tap are the broadcast operand of a VNNI tile (4 at
//    a time), 16 output channels a weight vector, taps in the padding read a row of zero points;
//  - row patches: group 1, other C (a 3-channel stem), up to 49 kernel rows, dilation 1 across:
//    the dense tiles on a kernel row's KW x C contiguous bytes (rounded up to 4) as channels,
//    read from a thread's copy of its input rows padded across with zero points;
//  - depthwise (group == C == M), any kernel, stride and padding: 16 channels a vector, 4 taps
//    interleaved into each 32-bit lane (VNNI), padding read from a row of zero points.
// Both split their output rows between the threads, in parallel_for's equal shares. Where the
// CPU lacks AVX-512 VNNI and VBMI, AVX2 kernels compute the same integers: dense layers whose
// weight pairs fit int16 (qconv2d_nhwc_pairs_fit_int16) by vpmaddubsw, the others and the
// depthwise ones with products widened to int16 and summed in pairs by vpmaddwd (both exact);
// plain loops where the CPU lacks AVX2 too.
//
// The weights' zero point must be 0 after their packing (s8 weights with zero point 0, or u8
// ones with 128): the pass converts no other QLinearConv. The output is plain 8-bit
// (qgemm_plain_8bit_output: QLinearConv's requantization, no clamp of its own).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/conv.h"
#include "kiln/rt/qgemm.h"

namespace kiln::rt {

bool qconv2d_nhwc_supported(const Conv2dParams& p) noexcept;

// Weights W [M, C / group, KH, KW] of s8 or u8 (stored less 128), packed for qconv2d_nhwc.
size_t qconv2d_nhwc_packed_weight_bytes(const Conv2dParams& p) noexcept;
void qconv2d_nhwc_pack_weights(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept;
void qconv2d_nhwc_pack_weights(const Conv2dParams& p, const uint8_t* w, unsigned char* packed) noexcept;

// Whether the packed dense weights let the AVX2 kernel multiply with vpmaddubsw: in every pair
// of weights it sums (input channels 2i and 2i + 1 of a tap) the positive ones sum to at most
// 128 and the negative ones to at least -128, so that a u8 x s8 pair sum fits int16 (the
// instruction saturates). Found when packing, at compile time.
bool qconv2d_nhwc_pairs_fit_int16(const Conv2dParams& p, const unsigned char* packed_w) noexcept;

// Whether a depthwise p of few channels (under 64) runs channels-last about as fast as
// qconv2d's NCHW kernel, which takes 16 pixels a vector where a channels-last vector holds
// channels: true for 3x3 layers at dilation 1 and stride across 1 or 2 with C a multiple of 8
// (an AVX2 kernel that interleaves each input column once, also used on VNNI hosts for 32
// channels or fewer). layout_nhwc keeps the other narrow ones on large planes in NCHW.
bool qconv2d_nhwc_narrow_depthwise_fast(const Conv2dParams& p) noexcept;

// y = requantize_f32(conv(x - x.zero_point, w) + bias, scale[m], out.y_zero_point), with x
// [N, H, W, C] at x.data (x.lda unused), out.y [N, OH, OW, M] (strides set here) of out.type
// KILN_U8 or KILN_I8; out.bias and out.scale have 1 or M values.
void qconv2d_nhwc(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const QGemmOutput& out,
                  ThreadPool* pool, QGemmIsa isa = QGemmIsa::automatic) noexcept;

// kiln.ToNhwc and kiln.FromNhwc of 8-bit tensors: per image (N of them) x [rows][cols] to y
// [cols][rows] (NCHW to NHWC: rows C, cols H * W; back: rows H * W, cols C), in tiles; the
// output's rows are split between the threads.
void transpose_planes_8bit(int64_t N, int64_t rows, int64_t cols, const void* x, void* y, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
