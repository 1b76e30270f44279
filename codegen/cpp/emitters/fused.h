// What the fused ops' emitters compute at compile time, for the other backends
// (codegen/llvm, codegen/cuda): the kernels' parameters, or why a node does not fit them.
#pragma once

#include <string>

#include "ir/graph.h"
#include "kiln/rt/depthwise.h"

namespace kiln::codegen::cpp {

// A fused node's activation (its `activation` attributes) as an expression in `x` of type
// T = float: the activation op's scalar expression from the registry, with its attributes.
std::string activation_expr(const ir::Node& node);

// kiln.FusedConvDepthwise (1x1 expand, then depthwise 3x3): "" and `p`, or the reason.
std::string conv_depthwise_params(const ir::Node& node, kiln::rt::ExpandDepthwiseParams& p);
// True when its weights and biases are constants, packed at compile time (input 1..4).
bool conv_depthwise_packs_weights(const ir::Node& node, size_t input);
// kiln.FusedDepthwiseConv (depthwise 3x3, then a 1x1): "" and `p`, or the reason.
std::string depthwise_conv_params(const ir::Node& node, kiln::rt::DepthwisePointwiseParams& p);

}  // namespace kiln::codegen::cpp
