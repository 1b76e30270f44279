// The textual form of the IR. print_graph's output parses back (ir/parser.h) to a graph that
// prints identically, so passes are tested with IR text in and IR text out. For example:
//
//   graph main(%x: f32[N,3], %w = constant f32[3] [1, 2.5, -3]) -> (%y) {
//     %b = constant f32[20] hex"0000803f..."
//     %t: f32[N,3] = Add(%x, %w) @add_1
//     %y = Clip(%t, _, %hi) {note="..."} @"/clip/Clip"
//   }
//
// Values are %name (or %"quoted name"), types dtype[dims] with dims an integer, a symbol or
// ?, and each node ends with @ and its name. tests/ir/test_text.cpp covers every construct.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"

namespace kiln::ir {

// The whole graph, ending with a newline. Deterministic: the same graph gives the same bytes.
std::string print_graph(const Graph& graph);

// One node as it appears in print_graph (without indentation or newline), for messages.
std::string print_node(const Node& node);
// "%x" or %"onnx::Conv_12" for a value, "_" for nullptr.
std::string print_value_ref(const Value* value);
// "f32[1,3,N,?]", with symbol names quoted where they are not plain identifiers.
std::string print_type(DType dtype, const Shape& shape);
// A double-quoted string with \" \\ \n \t \r and \xHH escapes; other bytes (UTF-8) as is.
std::string quote_string(std::string_view s);

}  // namespace kiln::ir
