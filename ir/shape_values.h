// Shape arithmetic at compile time: the int64 tensors a model computes from its own shapes
// (Shape, then Gather, Unsqueeze, Concat, Slice and integer Add/Sub/Mul/Div of the result),
// followed as dims rather than numbers, so that a Reshape or Expand fed by them knows its
// target even where a dim is a symbol left open with --dim NAME=MIN..MAX.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// The elements of `v` as dims: its shape value (Value::shape_value), or a small constant
// int64/int32 list. A negative constant element (Reshape's -1) reads as an unknown dim.
std::optional<std::vector<Dim>> shape_value_of(const Value* v);

// Sets the node's output shape value where its op is one of the shape-arithmetic ops above
// and its inputs' values are known; clears it otherwise. Called after the node's shape rule.
void propagate_shape_value(Node& node);

// Reshape's output dims for input shape `in` and a target whose elements are dims: a static
// 0 copies the input dim (without allowzero), one unknown element is inferred from the element
// count when the division is exact for every value of the symbols.
std::vector<Dim> reshape_dims(const Node& node, const Shape& in, const std::vector<Dim>& target);

}  // namespace kiln::ir
