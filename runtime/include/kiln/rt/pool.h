// 2-D max and average pooling (1-D pooling is passed with H = KH = OH = 1).
#pragma once

#include <cstdint>

namespace kiln::rt {

class ThreadPool;

// x is N x C x H x W, y is N x C x OH x OW.
// pad_bottom / pad_right are the explicit end pads. Only avgpool2d_f32 with
// count_include_pad reads them; left at -1 they are derived from OH / OW as
// the padding the output needs, which also counts any ceil_mode overhang, so
// generated code should set them whenever count_include_pad is true.
struct Pool2dParams {
  int64_t N, C, H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
  int64_t pad_bottom = -1, pad_right = -1;
};

// Padding never wins (acts as -inf); a window with no input element gives -inf.
void maxpool2d_f32(const Pool2dParams& p, const float* x, float* y, ThreadPool* pool) noexcept;
// The same on 8-bit values (quantized models: the maximum commutes with quantization); padding
// acts as the type's lowest value.
void maxpool2d_u8(const Pool2dParams& p, const uint8_t* x, uint8_t* y, ThreadPool* pool) noexcept;
void maxpool2d_s8(const Pool2dParams& p, const int8_t* x, int8_t* y, ThreadPool* pool) noexcept;

// Mean over the window. The divisor counts the window's elements inside the
// input, or, with count_include_pad, inside the explicitly padded input
// [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right) as ONNX does.
void avgpool2d_f32(const Pool2dParams& p, bool count_include_pad, const float* x, float* y,
                   ThreadPool* pool) noexcept;

// The mean of value(0) .. value(spatial - 1) as global_avgpool_f32 computes it, in its order:
// 8 running sums over the first spatial / 8 * 8 values (sum q takes values q, q + 8, ...), a
// running sum of the rest, then ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) + rest,
// divided by spatial (0 for no values).
template <class Value>
float plane_mean(int64_t spatial, Value value) noexcept {
  float s[8] = {};
  int64_t j = 0;
  for (; j + 8 <= spatial; j += 8)
    for (int q = 0; q < 8; ++q) s[q] += value(j + q);
  float rest = 0.f;
  for (; j < spatial; ++j) rest += value(j);
  const float sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + rest;
  return spatial > 0 ? sum / static_cast<float>(spatial) : 0.f;
}

// y[i] = mean of x[i*spatial .. (i+1)*spatial), for i in [0, NC); planes split across the pool
// (nullptr: serial) when there are enough of them.
void global_avgpool_f32(int64_t NC, int64_t spatial, const float* x, float* y, ThreadPool* pool = nullptr) noexcept;

// kiln.DequantizeGlobalAveragePoolNhwc: GlobalAveragePool(DequantizeLinear(x)) of an 8-bit
// channels-last x [N, spatial, C] quantized per tensor (Q uint8_t or int8_t; the zero point as a
// float), to y [N, C]: each channel's values dequantized as dequantize_linear does ((x - zp) *
// scale in float) and averaged in plane_mean's order, so the same values as a kiln.FromNhwc,
// DequantizeLinear and GlobalAveragePool would give, without their f32 tensor. Channels split
// across the pool, as the 1x1 before it splits them on a small plane (qconv_nhwc.cpp).
template <class Q>
void dequantize_global_avgpool_nhwc(int64_t N, int64_t spatial, int64_t C, const Q* x, float scale, float zero_point,
                                    float* y, ThreadPool* pool = nullptr) noexcept;

// y[i] = max of x[i*spatial .. (i+1)*spatial); T is any type with operator<.
template <class T>
void global_maxpool(int64_t NC, int64_t spatial, const T* x, T* y) noexcept {
  for (int64_t i = 0; i < NC; ++i) {
    const T* xs = x + i * spatial;
    T m = xs[0];
    for (int64_t j = 1; j < spatial; ++j)
      if (m < xs[j]) m = xs[j];
    y[i] = m;
  }
}

}  // namespace kiln::rt
