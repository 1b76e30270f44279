// Reads the textual IR that ir/printer.h writes (and hand-written IR in the same form, which
// may also leave out node names and carry # comments).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace kiln::ir {

// Throws kiln::Error "SOURCE:LINE:COL: message" at the first problem: a syntax error, an
// unknown op or dtype, a value used before it is defined or defined twice. It does not run
// the verifier or shape inference: types are taken as written.
std::unique_ptr<Graph> parse_graph(std::string_view text, const std::string& source_name = "<text>");

}  // namespace kiln::ir
