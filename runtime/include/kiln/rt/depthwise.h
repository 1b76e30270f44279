// Depthwise 3x3 convolution on 8 channels at once (conv2d_f32's depthwise path uses it).
#pragma once

#include <cstdint>

#include "kiln/rt/conv.h"

namespace kiln::rt {

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

}  // namespace kiln::rt
