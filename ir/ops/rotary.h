// RotaryEmbedding's geometry, shared by the reference (ir/ops/rotary.cpp) and the C++ emitter.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/rotary.h"

namespace kiln::ir {

// Checks the input, cache and position-id shapes and the attributes (static dims) and
// describes the op to the runtime kernel; fails naming the node. `position_ids` is empty
// when omitted.
kiln::rt::RotaryParams rotary_params(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& cos,
                                     const std::vector<int64_t>& sin, const std::vector<int64_t>& position_ids);

}  // namespace kiln::ir
