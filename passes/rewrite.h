// Helpers for passes that replace a group of nodes by one new node.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

// Replaces the nodes `old` (whose only result read outside them is `result`) by one new node
// `op(inputs) {attrs}` that computes `result`. The new node's output keeps `result`'s name
// (graph outputs never change name), takes its place in node order (where the last of `old`
// was) and the new node takes `name`. Every value in `inputs` must be defined before the
// last of `old` (inputs of the old nodes are) or be a constant. Returns the new node, its
// types inferred.
ir::Node* replace_with_node(ir::Graph& graph, const std::vector<ir::Node*>& old, ir::Value* result,
                            const std::string& op, const std::vector<ir::Value*>& inputs,
                            ir::AttributeMap attrs, std::string name);

// The only node reading `v` (once), or nullptr when it has other readers or is a graph output.
ir::Node* single_user(const ir::Value* v);

// `v`'s constant data as f32 values, or an empty vector when `v` is not an f32 constant.
std::vector<float> f32_constant(const ir::Value* v);

}  // namespace kiln::passes
