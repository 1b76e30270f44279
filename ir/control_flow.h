// If, Loop and Scan: ops whose bodies are subgraphs (graph attributes). A body reads values of
// the enclosing graphs only through its trailing inputs, fed by the node's trailing
// `num_captured` inputs (the frontends turn names captured from outer scopes into them), so
// every body is a self-contained graph that passes, the interpreter and backends treat like
// the main one. The ops' semantics are their registry entries (ir/ops/control_flow.cpp);
// this header holds what those entries, the passes and the backends share.
#pragma once

#include <span>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// The trailing inputs of an If, Loop or Scan node that feed its bodies' captured values.
size_t num_captured(const Node& node);
// Loop: how many loop-carried values it has (N); Scan: how many states.
size_t loop_carried_count(const Node& loop);
size_t scan_state_count(const Node& scan);

// Gives the body's inputs these types and infers each of its nodes in order; errors name the
// node that owns the body. The body must have exactly `types.size()` inputs.
struct ValueType {
  DType dtype;
  Shape shape;
};
void infer_body(const Node& owner, Graph& body, const std::vector<ValueType>& types);

// Same rank and dtype; dims that differ become unknown (a shape that changes from iteration to
// iteration, or differs between branches). Fails naming `owner` and `what` otherwise.
ValueType merge_types(const Node& owner, const std::string& what, const ValueType& a, const ValueType& b);

// True when a Loop certainly runs all M iterations: M is a constant, the initial condition is
// absent or a constant true, and the body's condition output is a constant true or passes the
// condition input through (Identity chains followed).
bool loop_runs_to_trip_count(const Node& loop);
// The constant trip count M of a Loop, or -1 when it is absent or computed at run time.
int64_t loop_constant_trip_count(const Node& loop);

// Scan's per-input and per-output axes and directions, normalized (axes into [0, rank)).
struct ScanLayout {
  std::vector<int64_t> input_axes, input_directions;    // per scan input
  std::vector<int64_t> output_axes, output_directions;  // per scan output
};
// The ranks come from the values' types, or from `input_ranks`/`output_ranks` where given (the
// reference implementation, which runs graphs no shape rule has typed).
ScanLayout scan_layout(const Node& scan, const std::vector<int64_t>& input_ranks = {},
                       const std::vector<int64_t>& output_ranks = {});

}  // namespace kiln::ir
