// 2-D convolution (1-D convolutions are passed with H = KH = OH = 1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/epilogue.h"

namespace kiln::rt {

class ThreadPool;

// x is N x C x H x W, w is M x C/group x KH x KW, y is N x M x OH x OW.
// Bottom and right padding are implied by OH and OW.
struct Conv2dParams {
  int64_t N, C, H, W, M, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, group;
};

// Floats of scratch that conv2d_f32 needs (0 for the 1x1 and depthwise
// paths; scratch may then be nullptr).
size_t conv2d_scratch_floats(const Conv2dParams& p) noexcept;

// y = conv(x, w) + bias; bias is M floats or nullptr. Depthwise
// (group == C == M) runs a direct loop (3x3 on a zero-padded copy of each plane); 1x1,
// stride 1, no padding multiplies directly; everything else is im2col + gemm_f32 per image
// and group, the column matrix built in chunks of output columns that stay in L2.
// y must not overlap x, w or scratch.
void conv2d_f32(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y, float* scratch,
                ThreadPool* pool) noexcept;

// conv2d_f32, then `epilogue` on blocks of the output after the bias is added (row segments
// from the GEMM, whole planes or rows from depthwise), each right after it is computed.
void conv2d_f32_epilogue(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                         float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept;

// Weights packed at compile time for the GEMM path (every conv but depthwise): the floats
// needed (0 when the conv reads its weights as they are), and the packing.
size_t conv2d_packed_weight_floats(const Conv2dParams& p) noexcept;
void conv2d_pack_weights(const Conv2dParams& p, const float* w, float* packed) noexcept;

// conv2d_f32_epilogue; with w_packed, w is conv2d_pack_weights's output for p.
void conv2d_f32_prepacked(const Conv2dParams& p, const float* x, const float* w, bool w_packed, const float* bias,
                          float* y, float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
