// Geometry of the reductions in ir/ops/reduce.cpp, shared with the code generators.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

// Which input dims a Reduce* node reduces, or nullopt when its axes input is not known.
// None reduced: the node is the identity (noop_with_empty_axes with no axes).
std::optional<std::vector<bool>> reduced_dims(const Node& node, int64_t rank,
                                              std::span<const Tensor* const> in = {});
// The axis of ArgMax, ArgMin, TopK, CumSum, CumProd (the last two from their input), normalized.
int64_t reduce_axis(const Node& node, int64_t rank, std::span<const Tensor* const> in = {});
// TopK's k, when known.
std::optional<int64_t> topk_k(const Node& node, std::span<const Tensor* const> in = {});

}  // namespace kiln::ir
