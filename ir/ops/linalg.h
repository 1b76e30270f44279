// Einsum's equation resolved against input shapes (ir/ops/linalg.cpp), for the reference
// and the code generators alike.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// The arguments of rt::einsum: label sizes (the output's labels first, n_out of them, then
// the summed ones), one stride per label for each input in turn, and the output's dims.
struct EinsumPlan {
  int n_out = 0;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  std::vector<int64_t> out_dims;
};
// Fails naming the node when the equation is malformed or does not fit the inputs.
EinsumPlan einsum_plan(const Node& node, const std::vector<std::vector<int64_t>>& inputs);

}  // namespace kiln::ir
