// The pass quantize_static (`kiln compile --precision int8`, docs/quantization.md) with the
// layers to leave in fp32 (`--max-error`).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

// quantize_static, except for the nodes named in `keep_fp32`, with activations of `activations`
// (U8 or I8). Returns the names of the nodes it quantized, in graph order.
std::vector<std::string> quantize_static_except(ir::Graph& graph, const std::set<std::string>& keep_fp32,
                                                ir::DType activations = ir::DType::U8);

}  // namespace kiln::passes
