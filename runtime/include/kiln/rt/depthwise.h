// Depthwise 3x3 convolution on 8 channels at once (conv2d_f32's depthwise path uses it), alone
// or fed band by band from the 1x1 convolution before it (an inverted-residual block's expand).
#pragma once

#include <cstdint>

#include "kiln/rt/conv.h"

namespace kiln::rt {

class ThreadPool;

// An activation a kernel applies in registers as it stores a value: none, Relu (x > 0 ? x : 0,
// a NaN becomes 0) or a clamp to [lo, hi] (Clip, ReLU6; lo <= hi, a NaN stays NaN).
struct StoreActivation {
  enum Kind { kNone, kRelu, kClamp } kind = kNone;
  float lo = 0.f, hi = 0.f;
};

// Whether depthwise3x3_c8 handles p (depthwise, 3x3, stride 1 or 2 in both axes, dilation 1,
// padding in [0, 2], a plane narrow enough for its band buffer) on this machine: it needs an
// x86-64 CPU with AVX2 and FMA (checked at run time, whatever the compile flags).
bool depthwise3x3_c8_supported(const Conv2dParams& p) noexcept;

// Channels [c0, c0 + 8) of image n (c0 + 8 <= C): y = conv(x, w) + bias for those planes,
// then `epilogue` on each of the 8 output planes (offsets counted in the whole output).
// Works on channel-interleaved bands of rows (8 planes transposed into pixels of 8 channels,
// zero-padded), so that every 3x3 tap is one vector FMA for 8 outputs whatever the plane's
// width: MobileNet's 14 x 14 and 7 x 7 planes spent most of their time on edges and copies.
void depthwise3x3_c8(const Conv2dParams& p, int64_t n, int64_t c0, const float* x, const float* w,
                     const float* bias, float* y, const Epilogue& epilogue) noexcept;

// The same for output rows [oh_begin, oh_end) of those planes only (0 <= oh_begin <= oh_end <= OH),
// so that threads can split a large plane by rows.
void depthwise3x3_c8_rows(const Conv2dParams& p, int64_t n, int64_t c0, int64_t oh_begin, int64_t oh_end,
                          const float* x, const float* w, const float* bias, float* y,
                          const Epilogue& epilogue) noexcept;

// A depthwise 3x3 (group == C == M) on NCHW16c tensors as kiln.ToNchwc makes them
// ([N, C / 16, H, W, 16], conv_nchwc.h): y = act(conv(x, w) + bias), w C x 1 x 3 x 3, bias C
// floats or nullptr. For a depthwise between blocked 1x1s (MobileNetV2's 7 x 7 blocks), so that
// no reorder surrounds it: the band kernels of depthwise3x3_c8, whose interleaved bands are 8
// lanes of a block already (a copy, not a transpose, in and out).
// Applicable: C a multiple of 16, 3x3, dilation 1, the same stride 1 or 2 on both axes, pads
// at the top and left in [0, 2], a plane narrow enough for the band buffer. Any CPU (AVX2 and
// FMA checked at run time; plain loops elsewhere).
bool depthwise3x3_nchw16c_applicable(const Conv2dParams& p) noexcept;
void depthwise3x3_nchw16c_f32(const Conv2dParams& p, const float* x, const float* w, const float* bias,
                              const StoreActivation& act, float* y, ThreadPool* pool) noexcept;

// An expand 1x1 convolution followed by a depthwise 3x3 (MobileNetV2's inverted-residual
// block): x is N x C x H x W, the 1x1's result (N x M x H x W, never stored whole) is the
// depthwise's input, padded by 1 on every side, at stride 1 or 2; y is N x M x OH x OW.
// x_nchw16c, y_nchw16c: x, or y, is stored channel-blocked as kiln.ToNchwc makes it
// ([N, C / 16, H, W, 16], conv_nchwc.h), so that the blocked 1x1 convolutions around the node
// (the block's projection, the previous block's) read and write it without a reorder.
struct ExpandDepthwiseParams {
  int64_t N, C, H, W, M, stride, OH, OW;
  bool x_nchw16c = false, y_nchw16c = false;
};

// Whether expand_depthwise3x3_f32 handles p (a property of the shape only): M a multiple of 8,
// C at most 512, stride 1 or 2, OH = (H - 1) / stride + 1 and OW likewise, and an expanded row
// short enough for its band buffer; C a multiple of 16 where x is blocked, M where y is.
bool expand_depthwise3x3_applicable(const ExpandDepthwiseParams& p) noexcept;

// Whether fusing pays, measured in MobileNetV2 against the two convolutions apart (one
// thread, Zen 4): on planes of at least 100 positions (112 x 112 to 14 x 14); on 7 x 7 the
// fused node took 263 us against 192 + 29 (160 -> 960: the expanded tensor stays in L2 anyway,
// and the transposed GEMM with packed weights beats the kernel's 16-channel tiles at K = 160).
bool expand_depthwise3x3_pays(const ExpandDepthwiseParams& p) noexcept;

// y = act2(dw(act1(conv1x1(x, w1) + b1), w2) + b2), w1 M x C, w2 M x 1 x 3 x 3, b1 and b2 M
// floats or nullptr. Per group of 8 expanded channels and band of output rows, the expanded
// input rows of the band are computed into a small channel-interleaved buffer (zero rows and
// columns where the depthwise pads) and the depthwise runs on it, so that the expanded tensor
// never leaves L1/L2; consecutive bands keep the rows they share. Groups and bands of rows
// are split across the pool. With AVX2 and FMA (checked at run time), vector kernels;
// elsewhere the same bands in plain loops.
// The weights are interleaved per unit of work as the kernel reads them, on every call: a
// model with constant weights packs them once (expand_depthwise3x3_pack) and calls
// expand_depthwise3x3_f32_prepacked.
void expand_depthwise3x3_f32(const ExpandDepthwiseParams& p, const float* x, const float* w1, const float* b1,
                             const StoreActivation& act1, const float* w2, const float* b2,
                             const StoreActivation& act2, float* y, ThreadPool* pool) noexcept;

// Floats of the packed weights of p's shape (w1, b1, w2 and b2 together).
int64_t expand_depthwise3x3_packed_floats(const ExpandDepthwiseParams& p) noexcept;

// w1, b1, w2, b2 as expand_depthwise3x3_f32 takes them, interleaved into `packed`
// (expand_depthwise3x3_packed_floats(p) floats; the layout depends on p's shape only).
void expand_depthwise3x3_pack(const ExpandDepthwiseParams& p, const float* w1, const float* b1, const float* w2,
                              const float* b2, float* packed) noexcept;

// expand_depthwise3x3_f32 with the weights packed by expand_depthwise3x3_pack for the same p.
void expand_depthwise3x3_f32_prepacked(const ExpandDepthwiseParams& p, const float* x, const float* packed,
                                       const StoreActivation& act1, const StoreActivation& act2, float* y,
                                       ThreadPool* pool) noexcept;

// A depthwise 3x3 (pads 1, stride 1 or 2) followed by a 1x1 convolution reading it
// (MobileNetV2's first block: 32 channels at 112 x 112, then 32 -> 16): x is N x C x H x W,
// the depthwise's result (N x C x OH x OW, never stored whole) the 1x1's input, y N x M x OH x OW.
struct DepthwisePointwiseParams {
  int64_t N, C, H, W, stride, OH, OW, M;
};

// Whether depthwise3x3_pointwise_f32 handles p (a property of the shape only): C a multiple
// of 8, stride 1 or 2, OH = (H - 1) / stride + 1 and OW likewise, rows short enough for the
// band and chunk buffers.
bool depthwise3x3_pointwise_applicable(const DepthwisePointwiseParams& p) noexcept;

// Whether fusing pays: on output planes of at least 56 x 56 positions, where the depthwise's
// result leaves L2 between the two convolutions (MobileNetV2's 32 x 112 x 112, 1.6 MB).
bool depthwise3x3_pointwise_pays(const DepthwisePointwiseParams& p) noexcept;

// y = act2(conv1x1(act1(dw(x, w1) + b1), w2) + b2), w1 C x 1 x 3 x 3, w2 M x C, b1 (C) and b2
// (M) or nullptr. Per chunk of output rows, the depthwise's rows of all C channels go into a
// stack buffer (depthwise3x3_c8's bands) and the 1x1 (conv1x1_direct's tiles) reads them from
// there while they are in L2. Chunks are split across the pool. With AVX2 and FMA (checked at
// run time), vector kernels; elsewhere plain loops.
void depthwise3x3_pointwise_f32(const DepthwisePointwiseParams& p, const float* x, const float* w1, const float* b1,
                                const StoreActivation& act1, const float* w2, const float* b2,
                                const StoreActivation& act2, float* y, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
