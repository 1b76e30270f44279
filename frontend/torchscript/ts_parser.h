// Parsing TorchScript's serialized code (the Python subset that python_print.cpp writes) into
// the syntax tree of ts_ast.h. The text is untrusted: nesting depth and size are bounded, and
// every error is "FILE:LINE:COLUMN: what was found, what was expected".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/torchscript/ts_ast.h"

namespace kiln::frontend::torchscript {

struct ParseLimits {
  uint64_t max_source_bytes = 64ull << 20;  // one file
  int max_depth = 200;                      // nested blocks and expressions together
};

// Parses one source file. Throws kiln::Error on any syntax the subset does not have.
Module parse_source(std::string_view text, const std::string& file, const ParseLimits& limits = {});

}  // namespace kiln::frontend::torchscript
