// The reference interpreter: runs a graph node by node with each op's reference
// implementation. Slow and obvious on purpose; everything else is checked against it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// Runs `graph` on `inputs` (by graph input name) and returns the graph outputs in order.
// Fails with a clear message on a missing, unknown or mistyped input, naming it.
std::vector<Tensor> interpret(const Graph& graph, const std::map<std::string, Tensor>& inputs);

// Called with every graph input and every node result as soon as it is known (calibration
// collects activation ranges with it: passes/calibrate.h).
using ValueObserver = std::function<void(const Value& value, const Tensor& data)>;
std::vector<Tensor> interpret(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                              const ValueObserver& observe);

// Runs the body of an If, Loop or Scan node on its inputs, by position. Dtypes are checked; shapes
// are not, since a loop-carried value may change shape from iteration to iteration.
std::vector<Tensor> interpret_body(const Graph& body, std::vector<Tensor> inputs);

// Checks `t` against a declared input: dtype, rank, static dims, and symbolic dims bound
// consistently across inputs (`bindings` collects symbol -> value).
void check_input(const Value& declared, const Tensor& t, std::map<std::string, int64_t>& bindings);

}  // namespace kiln::ir
