// If, Loop and Scan in the C++ backend. Each body becomes a generated function with its own
// memory plan (cpp_backend.cpp plans and emits it like the main graph, innermost first); the
// node calls it with its inputs and outputs as pointer arrays and the body's arena inside the
// node's scratch memory, so the whole model still runs in the one arena planned at compile time.
#pragma once

#include <string>
#include <unordered_map>

#include "codegen/cpp/emit_context.h"
#include "ir/graph.h"

namespace kiln::codegen::cpp {

struct BodyFunction {
  std::string name;  // the generated function: int name(ctx, A, in, out)
  size_t arena = 0;  // bytes of arena it needs
};
using BodyFunctions = std::unordered_map<const ir::Graph*, BodyFunction>;

bool is_control_flow(const ir::Node& node);
// The body graphs of a control-flow node (then and else, or the one body).
std::vector<const ir::Graph*> bodies_of(const ir::Node& node);
// Scratch bytes: the largest body arena plus the node's own buffers (iteration number, carried
// values between iterations, gathered scan slices).
size_t control_flow_scratch(const ir::Node& node, const BodyFunctions& bodies);
void emit_control_flow(EmitContext& ctx, const ir::Node& node, const BodyFunctions& bodies);

}  // namespace kiln::codegen::cpp
