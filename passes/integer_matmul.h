// Shared by the quantizing passes (quantize_dynamic, quantize_static): MatMul and Gemm with a
// constant f32 weight rewritten onto MatMulInteger with s8 weights, symmetric per output
// column, quantized at compile time.
#pragma once

#include <optional>
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
// k * k_stride] for k < K. q has w's layout; scale[c] = max |.| / limit (1 when all are 0), and
// q = round_half_even(w / scale) in [-limit, limit] (NaN ignored by the scale and quantized to
// 0). limit is 127 but for reduced-range weights (64, docs/quantization.md).
void quantize_symmetric_s8(const float* w, int64_t channels, int64_t K, int64_t channel_stride, int64_t k_stride,
                           int8_t* q, float* scale, int limit = 127);

}  // namespace kiln::passes
