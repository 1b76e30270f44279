// The depthwise half of qconv2d_nhwc (qconv_nhwc.h: call that), in its own file
// (qdepthwise_nhwc.cpp); internal to the runtime.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/conv.h"
#include "kiln/rt/qgemm.h"

namespace kiln::rt::nhwc {

// p is depthwise (group == C == M). `w` holds [C][KH][KW] s8 values with zero point 0 (u8
// weights already less 128).
size_t depthwise_packed_bytes(const Conv2dParams& p) noexcept;
void depthwise_pack(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept;

// Whether a depthwise p runs on the 3x3 kernel that keeps few channels (8 to 56) as fast as the
// NCHW kernel (qconv2d_nhwc_narrow_depthwise_fast).
bool depthwise_narrow_fast(const Conv2dParams& p) noexcept;

// qconv2d_nhwc for a depthwise p.
void depthwise_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const QGemmOutput& out,
                    ThreadPool* pool, QGemmIsa isa) noexcept;

}  // namespace kiln::rt::nhwc
