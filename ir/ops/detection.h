// RoiAlign's parameters (ir/ops/detection.cpp), shared by the reference and the code generator.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/detection.h"

namespace kiln::ir {

// Validates RoiAlign's attributes, failing naming the node.
void roi_align_check(const Node& node);
// The kernel's parameters for X of dims x (N, C, H, W) and `rois` regions.
rt::RoiAlignParams roi_align_params(const Node& node, const std::vector<int64_t>& x, int64_t rois);

}  // namespace kiln::ir
