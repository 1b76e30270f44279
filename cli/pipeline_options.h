// The optimizer's command-line options, shared by `kiln compile` and `kiln inspect`:
// -O0/-O1/-O2, --print-ir-after=PASS, --print-ir-after-all, --disable-pass=PASS,
// --verify-each; and the per-stage report of `kiln inspect --plan` and `kiln compile -v`.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "codegen/cpp/emit_options.h"
#include "ir/graph.h"
#include "passes/pass_manager.h"

namespace kiln::cli {

// Adds the optimizer options to `cmd`, filling `options` (IR dumps go to stderr).
void add_pipeline_options(CLI::App* cmd, passes::PipelineOptions& options);

// Adds the code generator's options to `cmd` (--conv-algo), filling `options`; shared by
// `kiln compile` and `kiln inspect --plan` (whose memory plan depends on them).
void add_emit_options(CLI::App* cmd, codegen::cpp::EmitOptions& options);

// Prints the memory plan of a compilable graph emitted under `options`: arena, lower bound,
// naive sum, largest values.
void print_memory_plan(const ir::Graph& graph, const codegen::cpp::EmitOptions& options, std::FILE* out);

// kiln inspect --plan: imports `model`, runs the pipeline printing node counts by op after
// each pass, then prints the memory plan of the code `emit` would generate. Returns the exit code.
int print_plan(const std::string& model, const std::vector<std::string>& dims,
               const passes::PipelineOptions& options, const codegen::cpp::EmitOptions& emit);

}  // namespace kiln::cli
