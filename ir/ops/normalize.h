// Attribute rules of the statistics normalizations (ir/ops/normalize.cpp) that the code
// generators also need.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// LayerNormalization, RMSNormalization, LpNormalization: the `axis` attribute normalized
// into [0, rank), or a failure naming the node.
int64_t norm_axis(const Node& node, int64_t rank);
// The dtype of LayerNormalization's Mean and InvStdDev outputs for input dtype `x`.
DType norm_stats_dtype(DType x);
// MeanVarianceNormalization's `axes`, normalized and checked for repeats.
std::vector<int64_t> mvn_axes(const Node& node, int64_t rank);

}  // namespace kiln::ir
