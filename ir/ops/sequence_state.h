// LinearAttention's and CausalConvWithState's geometry, shared by the reference
// (ir/ops/sequence_state.cpp) and the C++ emitter.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/sequence_state.h"

namespace kiln::ir {

// Checks LinearAttention's inputs (static dims; empty when omitted) and attributes.
kiln::rt::LinearAttentionParams linear_attention_params(const Node& node,
                                                        const std::vector<std::vector<int64_t>>& dims);

struct CausalConvGeometry {
  int64_t batch, channels, length, kernel;
  bool silu;
};
// Checks CausalConvWithState's inputs (static dims; empty when omitted) and activation.
CausalConvGeometry causal_conv_geometry(const Node& node, const std::vector<std::vector<int64_t>>& dims);

}  // namespace kiln::ir
