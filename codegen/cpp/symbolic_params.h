// Kernel parameters for shapes with bounded symbolic dims. An op's geometry is written once,
// for numbers (ir/ops/*.h: attention_params and friends); rather than a second, symbolic copy,
// the backend evaluates it with the symbols bound to sample values and fits each integer
// parameter as a polynomial in them (degree <= 2 in each symbol), then checks the fit at
// the bounds and at further samples (not at 1: see lift_params). Strides, lengths and element
// counts are such polynomials; a floor division or a branch on a size is not, and is refused.
// Emitters opt in one by one, for geometry code that holds no such branch.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::codegen::cpp {

using ParamsAt = std::function<std::vector<int64_t>(const std::map<std::string, int64_t>& symbols)>;

// Each parameter as a dim, or nullopt when one is not a polynomial of that degree (or
// `params` fails at a sample). `symbols` are the node's symbols, at most 3.
std::optional<std::vector<ir::Dim>> lift_params(const std::vector<std::string>& symbols, const ir::DimRanges& ranges,
                                                const ParamsAt& params);

// The symbols in the shapes of a node's inputs and outputs.
std::vector<std::string> node_symbols(const ir::Node& node);

// A shape with the symbols replaced by numbers, as dims_of would give it.
std::vector<int64_t> bound_dims(const ir::Value* v, const std::map<std::string, int64_t>& symbols);

}  // namespace kiln::codegen::cpp
