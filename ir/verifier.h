// Structural checks of a graph, run after the frontend and (optionally) after every pass.
#pragma once

#include "ir/graph.h"

namespace kiln::ir {

// Throws kiln::Error describing the first problem found, with the node (name and op) and, in a
// subgraph, the attribute and node that hold it. Checks, recursing into subgraphs:
// - every node's op is registered; input and output counts within the op's bounds; required
//   inputs present; attributes known to the op, of the right type; required attributes present
// - SSA: each value defined once (graph input, constant or one node output); producer pointers
//   and users lists agree with the nodes' outputs and inputs; value names unique
// - order: every input is defined before its use (in this graph, or in an enclosing graph before
//   the node that holds the subgraph); graph outputs defined; no pointers to values or nodes of
//   unrelated graphs; a subgraph value does not shadow an enclosing graph's value
// - constants: no producer, type equal to the data's
// - types: where all of a node's inputs have types, its op's shape rule run on a copy gives
//   the recorded output types (an unknown dim '?' matches any dim, and two symbols match
//   each other; a static dim must equal a static dim and a symbol is not a static dim)
void verify_graph(const Graph& graph);

}  // namespace kiln::ir
