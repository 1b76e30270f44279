// Attribute rules of ReverseSequence and TensorScatter (ir/ops/rearrange.cpp) that the code
// generators also need.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// Whether ReverseSequence's input is [batch, time, ...] (else [time, batch, ...]); fails
// unless batch_axis and time_axis are 0 and 1 in some order.
bool reverse_sequence_batch_major(const Node& node, int64_t rank);

// TensorScatter's view of past_cache as [batch, per_batch, max_len, inner] and of update as
// [batch, per_batch, upd_len, inner].
struct TensorScatterGeometry {
  int64_t batch, per_batch, max_len, upd_len, inner;
  bool circular;
};
TensorScatterGeometry tensor_scatter_geometry(const Node& node, const std::vector<int64_t>& past,
                                              const std::vector<int64_t>& update);

}  // namespace kiln::ir
