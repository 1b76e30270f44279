// Shared by the integer matmul and conv ops' reference (ir/ops/qlinear.cpp) and their
// emitters: the [M,K] x [K,N] products a batched, broadcast matmul is made of, and a conv's
// geometry.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "kiln/rt/conv.h"

namespace kiln::ir {

struct IntegerMatmulPlan {
  int64_t M = 0, K = 0, N = 0;
  // Element offsets of each product's A and B matrices; the output's are i * M * N.
  std::vector<int64_t> a_offsets, b_offsets;
};

// The products of MatMulInteger or QLinearMatMul, A and B being inputs `a` and `b` (rank >= 2,
// numpy batch broadcasting). Needs static shapes.
IntegerMatmulPlan integer_matmul_plan(const Node& node, size_t a, size_t b);

// The 2-D geometry of ConvInteger or QLinearConv (1-D lifted to H = KH = OH = 1), x and w
// being inputs `x` and `w`. Needs static shapes; 3-D and larger convolutions fail.
kiln::rt::Conv2dParams integer_conv_params(const Node& node, size_t x, size_t w);

// QLinearConv's and QLinearMatMul's requantization multipliers x_scale * w_scale[j] / y_scale
// (f32 scales) for `count` output channels (w_scale holds 1 or `count` values), rounded as the
// reference rounds them: the interpreter and the compiled code use the same values.
std::vector<float> qlinear_multipliers(const Tensor& x_scale, const Tensor& w_scale, const Tensor& y_scale,
                                       int64_t count);

// An integer tensor's values as int32 (weight zero points, for the int8 kernels).
std::vector<int32_t> int32_values(const Tensor& t);

}  // namespace kiln::ir
