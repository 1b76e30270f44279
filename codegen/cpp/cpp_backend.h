// The C++ backend: lowers a graph with static shapes to C++ source that calls the runtime,
// with a C API header, a main() for the standalone executable, and a weights blob.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "passes/plan_memory.h"

namespace kiln::codegen::cpp {

struct CppOptions {
  std::string name;          // a C identifier: prefix of every exported symbol
  std::string source_model;  // named in the generated files' header comment
  bool external_weights = false;  // weights in NAME.weights, memory-mapped at run time
};

struct GeneratedModel {
  std::string name;
  std::map<std::string, std::string> files;  // relative path -> text
  std::string weights;                       // bytes of NAME.weights
  passes::MemoryPlan plan;
};

// Fails with one message listing every node the backend cannot compile (no emitter, or an
// unsupported dtype or form) and every value whose shape is not static.
void check_compilable(const ir::Graph& graph);

GeneratedModel generate_cpp(const ir::Graph& graph, const CppOptions& options);

// A C identifier made from a model name: other characters become '_', a leading digit is
// prefixed with 'm'.
std::string c_identifier(const std::string& name);

}  // namespace kiln::codegen::cpp
