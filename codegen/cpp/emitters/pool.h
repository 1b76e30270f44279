// What the pooling emitters compute at compile time, for the other backend (codegen/llvm).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace kiln::codegen::cpp {

// MaxPool's and AveragePool's Pool2dParams (16 fields) where the fast 2-D f32 kernels run the
// node (static shapes), else nullopt (the node runs pool_nd).
std::optional<std::vector<int64_t>> pool2d_fields(const ir::Node& node);

}  // namespace kiln::codegen::cpp
