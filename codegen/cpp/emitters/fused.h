// What the fused ops' emitters compute at compile time, for the other backends
// (codegen/llvm, codegen/cuda): the kernels' parameters, or why a node does not fit them.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/depthwise.h"

namespace kiln::codegen::cpp {

// A fused node's activation (its `activation` attributes) as an expression in `x` of type
// T = float: the activation op's scalar expression from the registry, with its attributes.
std::string activation_expr(const ir::Node& node);

// kiln.Elementwise's steps as C++ over T: `lambdas` declare f0, f1, ... (each step's op's scalar
// expression), `body` computes t0, t1, ... from the inputs x0, x1, ... and the earlier steps; the
// result is t{count - 1}.
struct ChainCode {
  std::vector<std::string> lambdas;
  std::string body;
  size_t count = 0;
};
ChainCode elementwise_chain_code(const ir::Node& node);

// kiln.FusedConvDepthwise (1x1 expand, then depthwise 3x3): "" and `p`, or the reason.
std::string conv_depthwise_params(const ir::Node& node, kiln::rt::ExpandDepthwiseParams& p);
// True when its weights and biases are constants, packed at compile time (input 1..4).
bool conv_depthwise_packs_weights(const ir::Node& node, size_t input);
// kiln.FusedDepthwiseConv (depthwise 3x3, then a 1x1): "" and `p`, or the reason.
std::string depthwise_conv_params(const ir::Node& node, kiln::rt::DepthwisePointwiseParams& p);

}  // namespace kiln::codegen::cpp
