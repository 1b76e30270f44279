// Shared by the quantization ops' reference (ir/ops/quantize.cpp) and their emitters: where
// each element's scale and zero point are.
#pragma once

#include "ir/graph.h"
#include "kiln/rt/quantize.h"

namespace kiln::ir {

// The layout of QuantizeLinear's or DequantizeLinear's scale (input 1) against x (input 0):
// per tensor (one element), per axis (1-D, x's `axis` long) or blocked (x's rank, the axis
// split into `block_size` blocks). Needs static shapes; fails naming the node otherwise.
kiln::rt::QuantLayout quant_layout(const Node& node);

}  // namespace kiln::ir
