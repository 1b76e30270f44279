// Direct 3x3 convolution for few input channels (a network's stem: MobileNetV2's 3 -> 32,
// 3x3 stride 2 at 224 x 224), without a column matrix (conv2d_f32 uses it).
#pragma once

#include <cstdint>

#include "kiln/rt/conv.h"
#include "kiln/rt/depthwise.h"

namespace kiln::rt {

// Whether conv3x3_direct handles p: ungrouped, 3x3, stride 1 or 2 in both axes, dilation 1,
// padding in [0, 2], at most 4 input channels (K = C * 9 <= 36: im2col's column matrix has
// so few rows that building and repacking it costs as much as the products), and input rows
// short enough for its stack buffers. A property of the shape only (not of the CPU), since
// conv2d_pack_weights leaves such weights as they are.
bool conv3x3_direct_applicable(const Conv2dParams& p) noexcept;

// y = conv(x, w) + bias (w as given: M x C x 3 x 3), then `epilogue` on each output row
// (a Clip in registers when epilogue_is_clamp). Output rows are split across the pool.
// With AVX2 and FMA (checked at run time) 4 output channels x 24 columns are summed in
// registers per tap; elsewhere a plain loop.
void conv3x3_direct(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                    const Epilogue& epilogue, ThreadPool* pool) noexcept;

// Whether conv1x1_direct handles p: an ungrouped 1x1, stride 1, unpadded convolution with at
// most 192 input channels (summed over all of them per register tile) on a plane of at least
// 96 positions, where the packed GEMM is at a disadvantage: at most 32 input or output
// channels, or at most 196 positions (a shape property, as for conv3x3_direct).
bool conv1x1_direct_applicable(const Conv2dParams& p) noexcept;

// A 1x1 convolution read straight from x (no packing of the input, as the GEMM would do):
// per block of 24 positions, 4 output channels x 24 positions summed in registers over all
// input channels, the bias, residual and clamp or Relu applied as they are stored
// (Epilogue::residual, fn_is_clamp, fn_is_relu; other epilogues per block). Blocks are split across the pool.
void conv1x1_direct(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                    const Epilogue& epilogue, ThreadPool* pool) noexcept;

// conv1x1_direct's kernel on n positions of rows already at hand: y[m * ldy + j] =
// act(bias[m] + sum_c w[m * K + c] * src[c][j]) for m < M, j < n (w is M x K, bias M floats or
// nullptr); each src[c] readable up to n rounded up to a multiple of 8 (the floats past n feed
// lanes that are not stored). On the calling thread.
void conv1x1_direct_rows(const float* const* src, int64_t K, int64_t n, const float* w, const float* bias, int64_t M,
                         float* y, int64_t ldy, const StoreActivation& act) noexcept;

}  // namespace kiln::rt
