// DFT's and STFT's geometry (ir/ops/signal.cpp), shared by the reference and the code generator.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/dft.h"

namespace kiln::ir {

// DFT for input dims x; the dft_length and axis inputs are read from `in` when given (eval),
// else from the node's constants; `axis` receives the normalized axis. Validates and fails
// naming the node.
rt::DftParams dft_params(const Node& node, const std::vector<int64_t>& x, int64_t& axis,
                         std::span<const Tensor* const> in = {});
std::vector<int64_t> dft_out_dims(const std::vector<int64_t>& x, int64_t axis, const rt::DftParams& p);

// STFT for signal dims x and window dims (empty when omitted).
rt::StftParams stft_params(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& window,
                           std::span<const Tensor* const> in = {});

}  // namespace kiln::ir
