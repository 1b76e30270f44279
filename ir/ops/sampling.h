// Geometry of GridSample and AffineGrid (ir/ops/sampling.cpp), shared by the reference and the
// code generator.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/grid_sample.h"

namespace kiln::ir {

// GridSample's parameters for X and grid dims; `in` and `out` receive the spatial dims the
// result points into. Validates both shapes and the attributes, failing naming the node.
rt::GridSampleParams grid_sample_params(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& grid, std::vector<int64_t>& in,
                                        std::vector<int64_t>& out);

// AffineGrid's output dims for theta's dims and the values of `size` (N, C, spatial...).
std::vector<int64_t> affine_grid_dims(const Node& node, const std::vector<int64_t>& theta,
                                      const std::vector<int64_t>& size);

}  // namespace kiln::ir
