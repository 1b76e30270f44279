// Channel-blocked (NCHW16c) tensors and ops (ir/ops/blocked.cpp): what passes/layout_nchwc.cpp
// converts and the C++ backend runs through kiln/rt/conv_nchwc.h.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/conv_nchwc.h"

namespace kiln::ir {

// The runtime kernel's parameters when `node` (Conv, kiln.FusedConv or kiln.ConvNchwc) over NCHW
// input dims x and weight dims w is a convolution the NCHW16c kernel runs: group 1, no
// dilation, C (unless x_nchw: the input read as plain NCHW) and M multiples of 16 and (fused
// ops) an activation the kernel applies in registers (none, Relu, Clip); nullopt otherwise.
std::optional<rt::ConvNchwcParams> nchwc_conv_params(const Node& node, const std::vector<int64_t>& x,
                                                     const std::vector<int64_t>& w, bool x_nchw = false);

// The runtime kernel's parameters when `node` (Conv, kiln.FusedConv or kiln.DepthwiseConvNchwc)
// over NCHW input dims x and weight dims w is a depthwise 3x3 that depthwise3x3_nchw16c_f32 runs
// (kiln/rt/depthwise.h: C a multiple of 16, stride 1 or 2, pads up to 2) with no residual and
// an activation it applies in registers; nullopt otherwise.
std::optional<rt::Conv2dParams> nchwc_depthwise_params(const Node& node, const std::vector<int64_t>& x,
                                                       const std::vector<int64_t>& w);

}  // namespace kiln::ir
