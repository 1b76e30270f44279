// The fused ops of the `kiln` domain (ir/ops/fused.cpp): Conv, Gemm and MatMul with a
// residual add and an activation applied to their result, y = act(op(...) + Z).
#pragma once

#include <string_view>

namespace kiln::ir {

// Activations a fused op may name in its `activation` attribute. "Clip" reads its bounds from
// activation_alpha (min) and activation_beta (max); "SiLU" is x * Sigmoid(x).
inline constexpr std::string_view kFusedActivations[] = {"none", "Relu", "Sigmoid", "Tanh", "Clip", "SiLU"};

bool is_fused_activation(std::string_view name);

}  // namespace kiln::ir
