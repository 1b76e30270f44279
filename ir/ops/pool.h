// MaxUnpool's geometry (ir/ops/pool.cpp), shared by the reference and the code generator.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// The unpooled dims for X of dims x (what I indexes): each spatial dim as the input of the
// MaxPool that produced X. Validates the attributes, failing naming the node.
std::vector<int64_t> max_unpool_dims(const Node& node, const std::vector<int64_t>& x);

}  // namespace kiln::ir
