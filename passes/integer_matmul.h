// Shared by the quantizing passes (quantize_dynamic, quantize_static): MatMul and Gemm with a
// constant f32 weight rewritten onto MatMulInteger with s8 weights, symmetric per output
// column, quantized at compile time.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

// A MatMul(x, W) or Gemm(x, W, C) (transA = 0) whose weight W is a constant 2-D f32 matrix.
struct ConstantWeightMatMul {
  ir::Value* x = nullptr;
  ir::Value* w = nullptr;
  int64_t K = 0, N = 0;
  bool transposed = false;  // Gemm's transB: W is [N, K]
  float alpha = 1, beta = 1;
  ir::Value* c = nullptr;   // Gemm's C, or null
};

// `node` as such a MatMul, or nullopt when it is not one (or x is not a non-constant f32).
std::optional<ConstantWeightMatMul> constant_weight_matmul(const ir::Node& node);

// Replaces `node` (described by `m`) by
//   acc = MatMulInteger(xq, Wq, xz)      Wq: s8 [K, N], ws[n] = max_k |W[k, n]| / 127
//   y = Cast(acc, f32) * (xs * ws) [+ beta * C]
// where xq (u8), xs (f32 scalar) and xz (u8 scalar) quantize x (computed or constants).
// Gemm's alpha goes into ws. The last node keeps the node's output and name.
void lower_to_matmul_integer(ir::Graph& graph, ir::Node& node, const ConstantWeightMatMul& m, ir::Value* xq,
                             ir::Value* xs, ir::Value* xz);

// The same with W already quantized: q s8 [K, N] (row-major) and scale [N] (before alpha); m.w
// only names the new constants.
void lower_to_matmul_integer(ir::Graph& graph, ir::Node& node, const ConstantWeightMatMul& m, ir::Value* xq,
                             ir::Value* xs, ir::Value* xz, const std::vector<int8_t>& q, std::vector<float> scale);

// A node inserted just before `anchor`, named after it ("<anchor>.<op>"), its outputs
// "<anchor's output>.<o>", types inferred.
ir::Node* insert_before(ir::Graph& graph, const ir::Node& anchor, const std::string& op, std::vector<ir::Value*> inputs,
                        const std::vector<std::string>& outputs, ir::AttributeMap attrs = {});

// Symmetric s8 quantization of `w` per channel: channel c holds w[c * channel_stride +
// k * k_stride] for k < K. q has w's layout; scale[c] = max |.| / 127 (1 when all are 0), and
// q = round_half_even(w / scale) in [-127, 127] (NaN ignored by the scale and quantized to 0).
void quantize_symmetric_s8(const float* w, int64_t channels, int64_t K, int64_t channel_stride, int64_t k_stride,
                           int8_t* q, float* scale);

// The pairs of weights of W [M, C, KH, KW] (indices within one output channel's C x KH x KW)
// that qconv2d_nhwc's AVX2 vpmaddubsw tile sums in int16, as kiln/rt/qconv_nhwc.cpp packs
// them: with C a multiple of 4, input channels 2i and 2i + 1 at each tap; otherwise (flat
// patches, a 3-channel stem) bytes 2i and 2i + 1 of the KH x KW x C weights in (kh, kw, c)
// order, the last one of an odd count beside a 0 (second index -1).
std::vector<std::pair<int64_t, int64_t>> conv_weight_pairs(int64_t C, int64_t KH, int64_t KW);

// Reduced-range weights of a convolution, W [M, C, KH, KW]: quantize_symmetric_s8 per output
// channel, except that every pair of conv_weight_pairs fits the AVX2 vpmaddubsw tile
// (qconv2d_nhwc_pairs_fit_int16): its positive q sum to at most 128 and its negative ones to
// at least -128. scale[m] = the largest such sum of |w| over m's pairs / 127 (at least
// max |w| / 127), so the rounded sums stay within 128. The largest |q| of a channel is then
// 64 to 127, where a 7-bit range (ONNX Runtime's reduce_range) always takes 64: only pairs of
// large weights of one sign cost precision.
void quantize_conv_s8_pairs_fit_int16(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW, int8_t* q,
                                      float* scale);

}  // namespace kiln::passes
