// Sliding-window geometry shared by Conv and the pools: the effective kernel, strides,
// dilations and pads after auto_pad, and the output spatial dims. The shape rules, the
// reference implementations and the code generators all call resolve_window, so they agree.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

struct ResolvedWindow {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, out_dims;
};

// Reads the node's strides, dilations, pads, auto_pad and ceil_mode (each optional; ceil_mode
// only where the op has it) and resolves them for `kernel` over `spatial_in_dims`. ONNX
// semantics: SAME_UPPER/SAME_LOWER give ceil(in / stride) outputs with the extra pad at the
// end/begin; with ceil_mode a window that would start past the input and its begin pad is
// dropped. Validates every attribute and fails naming the node (negative pads, a kernel
// larger than the padded input, ...).
//
// An input dim < 0 stands for a symbolic dim: its out dim is -1, and so are its pads under
// SAME_*. Code generators always pass static dims.
ResolvedWindow resolve_window(const Node& node, const std::vector<int64_t>& spatial_in_dims,
                              std::vector<int64_t> kernel);

// The resolved window's output dims as shape dims: -1 becomes Dim::unknown().
std::vector<Dim> window_out_dims(const ResolvedWindow& w);
// The same where a symbolic input dim gives a polynomial output dim (ir/symbolic_params.h:
// resolve_window at sample values, fitted): a stride-2 window over 32 * "H/32" gives
// 16 * "H/32". `w` is resolve_window's answer for `spatial_in` with -1 for each symbolic dim;
// an output dim that is no polynomial of the graph's bounded symbols stays unknown.
std::vector<Dim> window_out_dims(const Node& node, const std::vector<Dim>& spatial_in,
                                 const std::vector<int64_t>& kernel, const ResolvedWindow& w);

// A kernel tap that lands inside the input, for one output position.
struct WindowTap {
  int64_t kernel_index;  // row-major index into the kernel's spatial dims
  int64_t input_offset;  // row-major offset into one spatial plane of the input
};

// The taps of the window at output position `out_index` (a multi-index into w.out_dims) that
// fall inside an input plane of `in_dims`. `padded_count` receives how many taps fall inside
// the padded extent [-pads_begin, in + pads_end): AveragePool's count_include_pad divisor.
void window_taps(const ResolvedWindow& w, const std::vector<int64_t>& in_dims,
                 const std::vector<int64_t>& out_index, std::vector<WindowTap>& taps,
                 int64_t& padded_count);

}  // namespace kiln::ir
