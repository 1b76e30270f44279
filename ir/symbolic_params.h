// Geometry for shapes with bounded symbolic dims. An op's geometry is written once, for
// numbers (ir/ops/*.h: attention_params, resolve_window and friends); rather than a second,
// symbolic copy, the shape rules (a window's output dims) and the backend (kernel parameters)
// evaluate it with the symbols bound to sample values and fit each integer as a polynomial in
// them (degree <= 2 in each symbol), then check the fit at the bounds and at further samples
// (not at 1: see lift_params). Strides, lengths and element counts are such polynomials; a
// floor division is one only where the divisor divides the symbolic part (a stride-2 window
// over a stepped dim, 32 * "H/32"), and a branch on a size is not: those are refused.
// Emitters opt in one by one, for geometry code that holds no such branch.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::ir {

using ParamsAt = std::function<std::vector<int64_t>(const std::map<std::string, int64_t>& symbols)>;

// Each parameter as a dim, or nullopt when one is not a polynomial of that degree (or
// `params` fails at a sample). `symbols` are the node's symbols, at most 3.
std::optional<std::vector<Dim>> lift_params(const std::vector<std::string>& symbols, const DimRanges& ranges,
                                            const ParamsAt& params);

// The symbols in the shapes of a node's inputs and outputs.
std::vector<std::string> node_symbols(const Node& node);

// A shape with the symbols replaced by numbers, as dims_of would give it.
std::vector<int64_t> bound_dims(const Value* v, const std::map<std::string, int64_t>& symbols);

}  // namespace kiln::ir
