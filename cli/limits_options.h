// The "limits" option group shared by kiln compile, run and inspect: every limit the frontend
// enforces on an untrusted model, each raisable by its own flag (see SECURITY.md).
#pragma once

#include <CLI/CLI.hpp>

#include "frontend/onnx/onnx_importer.h"

namespace kiln::cli {

// Adds --max-file-bytes, --max-tensor-bytes, --max-elements, --max-rank, --max-nodes,
// --max-subgraph-depth, --max-proto-depth and --max-name-length to `cmd`, writing into
// `limits`, which must outlive the parse.
void add_limits_options(CLI::App* cmd, frontend::ImportLimits& limits);

}  // namespace kiln::cli
