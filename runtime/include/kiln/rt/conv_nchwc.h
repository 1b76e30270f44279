// Convolutions on channel-blocked tensors (NCHW16c: [N, C / 16, H, W, 16], the 16 channels of a
// block contiguous at each position), and the reorders to and from NCHW. In this layout a
// convolution reads its input and writes its output (and residual) as contiguous runs of
// positions and needs no packing at run time: on Zen 4 ResNet-50's 1x1 shapes ran at 0.94x the
// time of the NCHW GEMM path with their data in cache and 0.87x with it cold, its stride-2 3x3s
// at 0.84x their im2col time in the model (docs/design/cpu_kernels.md, "Channel-blocked convolutions").
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/depthwise.h"
#include "kiln/rt/pool.h"

namespace kiln::rt {

class ThreadPool;

inline constexpr int64_t kNchwcBlock = 16;

// x [N, C, HW] into y [N, C / 16, HW, 16] (C a multiple of 16), and back.
void nchw_to_nchwc_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, ThreadPool* pool) noexcept;
void nchwc_to_nchw_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, ThreadPool* pool) noexcept;

// A convolution (group 1, dilation 1) with input [N, C / 16, H, W, 16] and output
// [N, M / 16, OH, OW, 16]: output (oh, ow) sums kernel tap (kh, kw) of input
// (oh * stride_h - pad_top + kh, ow * stride_w - pad_left + kw), zero outside the image.
struct ConvNchwcParams {
  int64_t N, C, H, W;
  int64_t M, KH, KW, OH, OW;
  int64_t stride_h, stride_w, pad_top, pad_left;
  // The input is plain NCHW [N, C, H, W], any C (a network's stem reading its 3-channel image,
  // which then needs no reorder); the output is blocked either way.
  bool x_nchw = false;
};

// C (unless x_nchw) and M multiples of 16, a kernel, strides and output of at least 1, pads >= 0.
bool conv_nchwc_applicable(const ConvNchwcParams& p) noexcept;

// The weights [M, C, KH, KW] packed for the kernel: per block of 16 output channels, per tap,
// C steps of 16.
size_t conv_nchwc_packed_floats(const ConvNchwcParams& p) noexcept;
void conv_nchwc_pack_weights(const ConvNchwcParams& p, const float* w, float* packed) noexcept;

// Which kernel conv_nchwc_f32 runs: automatic (the best this CPU has), or one named (for
// tests; it must be supported here). neon: ARM64's tile (conv_nchwc_neon.cpp).
enum class NchwcIsa { automatic, portable, avx2, avx512, neon };
bool conv_nchwc_isa_supported(NchwcIsa isa) noexcept;

// The family that conv_nchwc_f32 runs for `isa` here ("portable", "avx2", "avx512", "neon"):
// what automatic resolves to, under KILN_CPU_ISA too.
const char* conv_nchwc_isa_name(NchwcIsa isa) noexcept;

// y = act(conv(x, w) + bias + z): bias [M] or nullptr, z (the residual, y's shape and layout)
// or nullptr. Each output value is summed over the taps and input channels in an order the
// shape fixes (where a group's weights outgrow L2, chunk by chunk of input channels), whatever
// the thread count. w_bf16: the same weights packed by conv_nchwc_bf16_pack_weights
// (kiln/rt/gemm_bf16.h), or nullptr; where the CPU has native bf16 and that kernel applies, it
// runs on them (isa is then unused and packed_w may be nullptr).
void conv_nchwc_f32(const ConvNchwcParams& p, const float* x, const float* packed_w, const float* bias,
                    const float* z, const StoreActivation& act, float* y, ThreadPool* pool,
                    NchwcIsa isa = NchwcIsa::automatic, const uint16_t* w_bf16 = nullptr) noexcept;

// MaxPool (2-D) on blocked x [N, C / 16, H, W, 16] into blocked y [N, C / 16, OH, OW, 16], C a
// multiple of 16, as maxpool2d_f32 on the NCHW tensors: padding never wins, a NaN in the
// window wins, a window with no input element gives -inf. ResNet's stem pools its blocked
// output in place of a reorder to NCHW and back.
void maxpool_nchwc_f32(const Pool2dParams& p, const float* x, float* y, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
