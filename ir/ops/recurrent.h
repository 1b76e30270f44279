// RNN, GRU and LSTM geometry and attributes, shared by the reference (ir/ops/recurrent.cpp)
// and the C++ emitter: both describe the node to the runtime's one kernel (kiln/rt/recurrent.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/recurrent.h"

namespace kiln::ir {

// Input positions shared by the three ops (LSTM adds initial_c and P).
enum RnnInput : size_t { kRnnX, kRnnW, kRnnR, kRnnB, kRnnSeqLens, kRnnH0, kRnnC0, kRnnP };

// Checks the attributes and the static input dims (`dims[i]` empty when input i is omitted)
// and describes the node to the kernel; fails naming the node.
kiln::rt::RnnParams rnn_params(const Node& node, const std::vector<std::vector<int64_t>>& dims);

}  // namespace kiln::ir
