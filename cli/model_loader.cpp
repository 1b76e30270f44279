#include "cli/model_loader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "ir/verifier.h"
#include "passes/quantize_static.h"
#include "kiln/rt/npy.h"

namespace kiln::cli {
namespace {

// Every value whose shape inference found static within the element and tensor size limits,
// so that neither the interpreter nor a compiled arena is asked for more (ConstantOfShape or
// Expand to 2^40 elements from a few bytes of model).
void check_value_sizes(const ir::Graph& graph, const frontend::ImportLimits& limits) {
  for (const auto& v : graph.values()) {
    if (!v->has_type() || !v->shape().is_static()) continue;
    uint64_t count = 1;
    bool zero = false;
    for (const ir::Dim& d : v->shape().dims()) {
      zero = zero || d.value() == 0;
      if (count != UINT64_MAX && __builtin_mul_overflow(count, static_cast<uint64_t>(d.value()), &count))
        count = UINT64_MAX;
    }
    if (zero) continue;
    std::string where = v->producer() ? v->producer()->describe() + ": output" : "value";
    if (count > limits.max_elements)
      fail("{} '{}' of shape {} has more than {} elements, the element limit (--max-elements)", where,
           v->name(), v->shape().str(), limits.max_elements);
    uint64_t size = ir::dtype_size(v->dtype());
    if (size && count > limits.max_tensor_bytes / size)
      fail("{} '{}' of shape {} needs {} bytes, over the tensor size limit of {} bytes "
           "(--max-tensor-bytes)",
           where, v->name(), v->shape().str(), count * size, limits.max_tensor_bytes);
  }
}

// --precision int8: the pipeline up to the fusion passes, calibration on that graph (once;
// the interpreter runs it on every sample), quantize_static, fuse_qdq to make the int8 ops
// of its QDQ patterns, then the rest of the pipeline.
void quantize_statically(ir::Graph& graph, const std::vector<std::string>& pipeline,
                         const passes::PipelineOptions& options, StaticQuantization* int8, PhaseTimer& timer) {
  if (!int8) fail("--precision int8 needs calibration samples (--calibration DIR)");
  auto fusion = std::find(pipeline.begin(), pipeline.end(), "fuse_matmul_add");  // the ops as written
  timer.phase("optimize", [&] { passes::run_pipeline(graph, std::vector<std::string>(pipeline.begin(), fusion), options); });
  if (!int8->ranges)
    int8->ranges = timer.phase("calibrate", [&] { return passes::calibrate(graph, int8->samples, int8->calibration); });
  passes::annotate_ranges(graph, *int8->ranges);
  const passes::StaticQuantizeOptions quantize{int8->activations, int8->reduced_range_dense_convs};
  int8->quantized = timer.phase("quantize", [&] { return passes::quantize_static_except(graph, int8->keep_fp32, quantize); });
  std::vector<std::string> rest = {"fuse_qdq", "fold_constants", "eliminate_dead_code", "eliminate_common_subexpressions"};
  rest.insert(rest.end(), fusion, pipeline.end());
  timer.phase("optimize", [&] { passes::run_pipeline(graph, rest, options); });
}

}  // namespace

std::unique_ptr<ir::Graph> load_model(const std::string& path, const LoadOptions& options,
                                      PhaseTimer& timer) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("{}: no such file", path);
  if (std::filesystem::is_directory(path, ec))
    fail("{}: is a directory (expected an .onnx model file)", path);
  std::unique_ptr<ir::Graph> graph =
      timer.phase("import", [&] {
        frontend::OnnxImportOptions import;
        import.limits = options.limits;
        return frontend::import_onnx(path, import);
      });
  try {
    if (!options.dims.empty()) passes::bind_dims(*graph, options.dims);
    std::vector<std::string> pipeline =
        options.optimize ? passes::pipeline_for_level(options.pipeline.opt_level) : std::vector<std::string>{"infer_shapes"};
    if (options.precision == passes::Precision::Int8Dynamic) {
      auto fusion = std::find(pipeline.begin(), pipeline.end(), "fuse_matmul_add");  // the MatMuls as written
      // CSE: MatMuls reading the same input (attention's q, k, v) share one DynamicQuantizeLinear
      pipeline.insert(fusion, {"quantize_dynamic", "eliminate_common_subexpressions"});
    }
    passes::PipelineOptions pipeline_options = options.pipeline;
    pipeline_options.time = timer.verbose();
    pipeline_options.stats = timer.verbose();
    if (timer.verbose() && !pipeline_options.log) pipeline_options.log = &std::cerr;
    if (options.precision == passes::Precision::Int8 && options.optimize)
      quantize_statically(*graph, pipeline, pipeline_options, options.int8, timer);
    else
      timer.phase("optimize", [&] { passes::run_pipeline(*graph, pipeline, pipeline_options); });
    check_value_sizes(*graph, options.limits);
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

ir::Tensor load_tensor_file(const std::string& path, const frontend::ImportLimits& limits) {
  if (std::filesystem::path(path).extension() == ".pb") return frontend::load_tensor_proto_file(path, limits);
  rt::HostTensor host;
  std::string error;
  if (!rt::read_npy(path, host, error)) throw Error(error);
  auto dtype = ir::dtype_from_code(static_cast<int>(host.dtype));
  if (!dtype) fail("{}: unsupported dtype", path);
  ir::Tensor t(*dtype, host.shape);
  if (!host.data.empty()) std::memcpy(t.mutable_raw(), host.data.data(), host.data.size());
  return t;
}

}  // namespace kiln::cli
