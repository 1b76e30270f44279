// Attribute rules of the loss ops (ir/ops/loss.cpp) that the code generators also need.
#pragma once

#include "ir/graph.h"
#include "kiln/rt/loss.h"

namespace kiln::ir {

// The `reduction` attribute, or a failure naming the node.
rt::LossReduction loss_reduction(const Node& node);

}  // namespace kiln::ir
