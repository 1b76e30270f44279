#include "cli/model_loader.h"

#include <filesystem>
#include <iostream>

#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "ir/verifier.h"

namespace kiln::cli {

std::unique_ptr<ir::Graph> load_model(const std::string& path, const LoadOptions& options,
                                      PhaseTimer& timer) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("{}: no such file", path);
  if (std::filesystem::is_directory(path, ec))
    fail("{}: is a directory (expected an .onnx model file)", path);
  std::unique_ptr<ir::Graph> graph =
      timer.phase("import", [&] { return frontend::import_onnx(path); });
  try {
    if (!options.dims.empty()) passes::bind_dims(*graph, options.dims);
    std::vector<std::string> pipeline =
        options.optimize ? passes::default_pipeline() : std::vector<std::string>{"infer_shapes"};
    passes::PipelineOptions pipeline_options = options.pipeline;
    pipeline_options.time = timer.verbose();
    if (timer.verbose() && !pipeline_options.log) pipeline_options.log = &std::cerr;
    timer.phase("optimize", [&] { passes::run_pipeline(*graph, pipeline, pipeline_options); });
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
  return graph;
}

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      fail("--dim {}: expected NAME=VALUE", spec);
    std::string value = spec.substr(eq + 1);
    size_t used = 0;
    int64_t v = -1;
    try {
      v = std::stoll(value, &used);
    } catch (...) {
      used = 0;
    }
    if (used != value.size() || v < 0) fail("--dim {}: '{}' is not a non-negative integer", spec, value);
    dims[spec.substr(0, eq)] = v;
  }
  return dims;
}

}  // namespace kiln::cli
