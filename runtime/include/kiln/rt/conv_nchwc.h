// Convolutions on channel-blocked tensors (NCHW16c: [N, C / 16, H, W, 16], the 16 channels of a
// block contiguous at each position), and the reorders to and from NCHW. In this layout a 1x1
// convolution reads its input and writes its output (and residual) as contiguous runs of
// positions, and needs no packing of its input at run time: on Zen 4 ResNet-50's 1x1 shapes ran
// at 0.94x the time of the NCHW GEMM path with their data in cache and 0.87x with it cold
// (docs/cpu_perf.md, session 10).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/depthwise.h"

namespace kiln::rt {

class ThreadPool;

inline constexpr int64_t kNchwcBlock = 16;

// x [N, C, HW] into y [N, C / 16, HW, 16] (C a multiple of 16), and back.
void nchw_to_nchwc_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, ThreadPool* pool) noexcept;
void nchwc_to_nchw_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, ThreadPool* pool) noexcept;

// A 1x1 convolution without padding (group 1, dilation 1), input [N, C / 16, H, W, 16] and
// output [N, M / 16, OH, OW, 16], output (oh, ow) reading input (oh * stride_h, ow * stride_w).
struct Conv1x1NchwcParams {
  int64_t N, C, H, W;
  int64_t M, OH, OW;
  int64_t stride_h, stride_w;
};

// C and M multiples of 16, strides >= 1 and OH, OW the output's size for them.
bool conv1x1_nchwc_applicable(const Conv1x1NchwcParams& p) noexcept;

// The weights [M, C] packed for the kernel: per block of 16 output channels, C steps of 16.
size_t conv1x1_nchwc_packed_floats(const Conv1x1NchwcParams& p) noexcept;
void conv1x1_nchwc_pack_weights(const Conv1x1NchwcParams& p, const float* w, float* packed) noexcept;

// Which kernel conv1x1_nchwc_f32 runs: automatic (the best this CPU has), or one named (for
// tests; it must be supported here).
enum class NchwcIsa { automatic, portable, avx2, avx512 };
bool conv1x1_nchwc_isa_supported(NchwcIsa isa) noexcept;

// y = act(conv(x, w) + bias + z): bias [M] or nullptr, z (the residual, y's shape and layout)
// or nullptr. Each output value is summed over the input channels in order, whatever the
// thread count.
void conv1x1_nchwc_f32(const Conv1x1NchwcParams& p, const float* x, const float* packed_w, const float* bias,
                       const float* z, const StoreActivation& act, float* y, ThreadPool* pool,
                       NchwcIsa isa = NchwcIsa::automatic) noexcept;

}  // namespace kiln::rt
