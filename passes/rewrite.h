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

// True when `v` is a one-element f32 constant (any rank); its value in `out`.
bool f32_scalar(const ir::Value* v, float& out);
// True when `v` is a one-element f32 constant within `rel` (relative) of `want`.
bool is_f32_scalar(const ir::Value* v, double want, double rel = 1e-4);

// A new node `op(inputs) {attrs}` placed right after the node computing `v` (first, for a graph
// input), so that every reader of `v` can read its result; the node and its one output are
// named `name` (made unique). Types inferred.
ir::Node* add_node_after(ir::Graph& graph, const ir::Value* v, const std::string& op, std::vector<ir::Value*> inputs,
                         const std::string& name, ir::AttributeMap attrs = {});

// True when `n` is a Relu, or a Clip from 0 to a constant upper bound (ReLU6): what an 8-bit
// quantization with zero point 0 after it clamps as well. The bound (infinity for Relu) in
// `upper` when given.
bool clamps_from_zero(const ir::Node& n, float* upper);

// The input of binary node `n` that is not `v`; nullptr when `v` is not exactly one of them.
ir::Value* other_input(const ir::Node& n, const ir::Value* v);

// The node that computes `v` when it is `op` and `v` is read only by `user`; else nullptr.
ir::Node* producer_for(const ir::Value* v, const char* op, const ir::Node* user);

// Runs `rewrite` on every node, from the start again after each change, until none
// changes (rewrites that replace nodes invalidate the walk).
void rewrite_until_done(ir::Graph& graph, bool (*rewrite)(ir::Graph&, ir::Node&));
// The same for rewrites that replace only the node they are given and nodes after it, and whose
// results are never candidates again: after a change the walk resumes at that position, not at
// the start (linear rather than quadratic in the graph's size).
void rewrite_forward_until_done(ir::Graph& graph, bool (*rewrite)(ir::Graph&, ir::Node&));

}  // namespace kiln::passes
