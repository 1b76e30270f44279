// Loading a model for any command: the frontend chosen by file type, symbolic dims bound
// from the command line, and the optimization pipeline.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "cli/phase_timer.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/graph.h"
#include "passes/pass_manager.h"
#include "passes/precision.h"

namespace kiln::cli {

struct LoadOptions {
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE
  bool optimize = true;                 // run the default pipeline after import
  passes::PipelineOptions pipeline;
  frontend::ImportLimits limits;        // --max-* (cli/limits_options.h)
  // int8-dynamic adds the pass quantize_dynamic before the fusion passes (docs/quantization.md)
  passes::Precision precision = passes::Precision::FP32;
};

// Imports `path`; errors name the file. Returns a verified graph with types inferred.
std::unique_ptr<ir::Graph> load_model(const std::string& path, const LoadOptions& options,
                                      PhaseTimer& timer);

// Parses "NAME=VALUE" pairs given to --dim.
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs);

}  // namespace kiln::cli
