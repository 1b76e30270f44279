// The fused ops of the `kiln` domain (ir/ops/fused.cpp): Conv, Gemm and MatMul with a bias
// (MatMul only), a residual add and an activation applied to their result,
// y = act(op(...) [+ C] + Z).
#pragma once

#include <limits>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace kiln::ir {

// Activations a fused op may name in its `activation` attribute: elementwise ops of the
// registry. The activation op's attribute X is the fused node's `activation_X` (absent: the
// activation op's default). "Clip" takes its bounds from activation_alpha (min) and
// activation_beta (max) instead of inputs.
inline constexpr std::string_view kFusedActivations[] = {"none",      "Relu",        "Sigmoid",   "Tanh",
                                                         "Clip",      "Swish",       "Gelu",      "HardSwish",
                                                         "HardSigmoid", "LeakyRelu", "Elu",       "Softplus"};

bool is_fused_activation(std::string_view name);

// The activation a fused node applies: the op and that op's attributes.
struct FusedActivation {
  std::string op;  // "none" or a name in kFusedActivations
  AttributeMap attrs;
  float clip_min = std::numeric_limits<float>::lowest();
  float clip_max = std::numeric_limits<float>::max();
};
FusedActivation fused_activation(const Node& node);

// The attributes of a fused node that apply `activation` (a node of a kFusedActivations op,
// or a Clip whose bounds the caller passes), for a pass building one.
AttributeMap fused_activation_attrs(const Node& activation, float clip_min = 0, float clip_max = 0);

}  // namespace kiln::ir
