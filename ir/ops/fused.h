// The fused ops of the `kiln` domain (ir/ops/fused.cpp): Conv, Gemm and MatMul with a bias
// (MatMul only), a residual add and an activation applied to their result,
// y = act(op(...) [+ C] + Z); and an expand 1x1 Conv with the depthwise 3x3 Conv after it.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"
#include "kiln/rt/depthwise.h"

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
// `prefix` names the attributes: "activation" (activation_alpha, ...), or
// "expand_activation" for kiln.FusedConvDepthwise's expand conv, "project_activation" for
// kiln.FusedDepthwiseConv's 1x1.
FusedActivation fused_activation(const Node& node, std::string_view prefix = "activation");

// The activation as a kernel applies it in registers: none, Relu, or Clip with min <= max;
// nullopt for any other.
std::optional<rt::StoreActivation> store_activation(const FusedActivation& a);

// The stride (1 or 2) when `node`'s window attributes and group, over input dims x
// (N, M, H, W) and weight dims w, make the depthwise 3x3 that kiln.FusedConvDepthwise runs
// (group M, w M x 1 x 3 x 3, pads 1 on every side, the same stride on both axes, dilation 1);
// otherwise 0.
int64_t depthwise3x3_stride(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w);

// The attributes of a fused node that apply `activation` (a node of a kFusedActivations op,
// or a Clip whose bounds the caller passes), for a pass building one.
AttributeMap fused_activation_attrs(const Node& activation, float clip_min = 0, float clip_max = 0);

// `op` with `attrs` run by its reference implementation on `in` (nullptr: an omitted input),
// and the type it gives its first output for inputs of the given types: for ops whose
// semantics are another op's, so that no math is written twice.
Tensor eval_op(const std::string& op, AttributeMap attrs, const std::vector<const Tensor*>& in);
std::pair<DType, Shape> infer_op(const std::string& op, AttributeMap attrs,
                                 const std::vector<std::pair<DType, Shape>*>& in);
// The cost of `op` with `attrs` on inputs of those types (its registry entry's count).
Cost cost_op(const std::string& op, AttributeMap attrs, const std::vector<std::pair<DType, Shape>*>& in);

}  // namespace kiln::ir
