#include "cli/model_loader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/stablehlo/stablehlo_importer.h"
#include "frontend/tensorflow/tf_importer.h"
#include "frontend/torch_export/pt2_importer.h"
#include "frontend/torchscript/torchscript_importer.h"
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

// --input-shape on an ONNX model: the named (or, unnamed, the next) graph input takes these
// dims, which must agree with every static dim the model declares.
void apply_input_shapes(ir::Graph& graph, const std::string& path, const std::vector<frontend::torchscript::InputSpec>& specs) {
  size_t next = 0;
  for (const auto& spec : specs) {
    ir::Value* in = nullptr;
    if (spec.name.empty()) {
      if (next >= graph.inputs().size()) fail("{}: more --input-shape given than the model has inputs", path);
      in = graph.inputs()[next++];
    } else {
      for (ir::Value* v : graph.inputs())
        if (v->name() == spec.name) in = v;
      if (!in) fail("{}: --input-shape names '{}', which is not an input of the model", path, spec.name);
    }
    const ir::Shape& declared = in->shape();
    if (in->has_type() && declared.rank() != spec.dims.size())
      fail("{}: --input-shape gives input '{}' {} dims, the model declares {}", path, in->name(), spec.dims.size(), declared.str());
    for (size_t k = 0; k < spec.dims.size() && in->has_type(); ++k)
      if (declared[k].is_static() && (declared[k].value() != spec.dims[k] || spec.ranges.count(k)))
        fail("{}: --input-shape gives input '{}' dim {} the value {}, the model fixes it at {}", path, in->name(), k,
             spec.dims[k], declared[k].value());
    // A MIN..MAX dim stays a symbol, bounded: the model's name for it, else INPUT_AXIS.
    std::vector<ir::Dim> dims;
    for (size_t k = 0; k < spec.dims.size(); ++k) {
      auto r = spec.ranges.find(k);
      if (r == spec.ranges.end()) {
        dims.emplace_back(spec.dims[k]);
        continue;
      }
      const std::string name = in->has_type() && declared[k].is_symbol() ? declared[k].name()
                                                                         : fmt::format("{}_{}", in->name(), k);
      ir::DimRange range{r->second.first, r->second.second, r->second.second};
      if (auto st = spec.steps.find(k); st != spec.steps.end()) range.step = st->second;
      auto [it, added] = graph.dim_ranges().emplace(name, range);
      if (!added && !(it->second == range))
        fail("{}: --input-shape gives the symbolic dim '{}' the bounds {}..{} and {}..{}", path, name, it->second.min,
             it->second.max, range.min, range.max);
      dims.push_back(ir::Dim::symbol(name));
    }
    in->set_type(in->has_type() ? in->dtype() : spec.dtype, ir::Shape(std::move(dims)));
  }
}

}  // namespace

ModelFormat model_format(const std::string& path) {
  // A zip archive is PyTorch's (an ONNX model is a bare protobuf and never starts with "PK"):
  // its frontend then gives the archive's own errors, a broken zip included.
  if (frontend::is_stablehlo_file(path)) return ModelFormat::StableHlo;
  if (frontend::is_saved_model_dir(path) || frontend::is_graphdef_file(path)) return ModelFormat::TensorFlow;
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {};
  if (in.read(magic, 2) && magic[0] == 'P' && magic[1] == 'K')
    return frontend::is_pt2_file(path) ? ModelFormat::TorchExport : ModelFormat::TorchScript;
  return ModelFormat::Onnx;
}

void apply_input_shape_args(ir::Graph& graph, const std::string& path, const std::vector<std::string>& input_shapes) {
  std::vector<frontend::torchscript::InputSpec> specs;
  for (const std::string& s : input_shapes) specs.push_back(frontend::parse_input_shape(s));
  apply_input_shapes(graph, path, specs);
}

std::unique_ptr<ir::Graph> import_model(const std::string& path, const frontend::ImportLimits& limits,
                                        const std::vector<std::string>& input_shapes,
                                        const std::map<std::string, int64_t>& dims, const std::string& params,
                                        const TensorFlowSelection& tf) {
  std::vector<frontend::torchscript::InputSpec> specs;
  for (const std::string& s : input_shapes) specs.push_back(frontend::parse_input_shape(s));
  const ModelFormat format = model_format(path);
  for (const auto& spec : specs)
    if (!spec.ranges.empty() && format != ModelFormat::Onnx && format != ModelFormat::TensorFlow)
      fail("{}: --input-shape with MIN..MAX bounds applies to ONNX and TensorFlow models (use --dim NAME=MIN..MAX)", path);
  if (!params.empty() && format != ModelFormat::StableHlo)
    fail("{}: --params applies to StableHLO (.mlir) models only", path);
  if (format != ModelFormat::TensorFlow && (!tf.inputs.empty() || !tf.outputs.empty() || tf.signature != "serving_default"))
    fail("{}: --signature, --input-node and --output-node apply to TensorFlow models only", path);
  switch (format) {
    case ModelFormat::TorchScript: {
      frontend::TorchScriptImportOptions options;
      options.limits = limits;
      options.inputs = specs;
      return frontend::import_torchscript(path, options);
    }
    case ModelFormat::TorchExport: {
      frontend::Pt2ImportOptions options;
      options.limits = limits;
      options.dims = dims;
      options.inputs = specs;
      return frontend::import_pt2(path, options);
    }
    case ModelFormat::StableHlo: {
      frontend::StableHloImportOptions options;
      options.limits = limits;
      options.params_path = params;
      auto graph = frontend::import_stablehlo(path, options);
      apply_input_shapes(*graph, path, specs);  // only checks: StableHLO shapes are static
      return graph;
    }
    case ModelFormat::TensorFlow: {
      frontend::TensorFlowImportOptions options;
      options.limits = limits;
      options.signature = tf.signature;
      options.inputs = tf.inputs;
      options.outputs = tf.outputs;
      auto graph = frontend::import_tensorflow(path, options);
      apply_input_shapes(*graph, path, specs);
      return graph;
    }
    case ModelFormat::Onnx: break;
  }
  frontend::OnnxImportOptions import;
  import.limits = limits;
  auto graph = frontend::import_onnx(path, import);
  apply_input_shapes(*graph, path, specs);
  return graph;
}

std::unique_ptr<ir::Graph> load_model(const std::string& path, const LoadOptions& options,
                                      PhaseTimer& timer) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("{}: no such file", path);
  if (std::filesystem::is_directory(path, ec) && !frontend::is_saved_model_dir(path))
    fail("{}: is a directory without saved_model.pb (expected an .onnx model, a PyTorch .pt/.pt2 archive, StableHLO "
         ".mlir text, or a TensorFlow SavedModel directory)", path);
  std::unique_ptr<ir::Graph> graph = timer.phase("import", [&] {
    return import_model(path, options.limits, options.input_shapes, options.dims, options.params, options.tf);
  });
  try {
    if (!options.dims.empty()) passes::bind_dims(*graph, options.dims);
    if (!graph->dim_ranges().empty() && !options.allow_dim_ranges)
      fail("--input-shape with MIN..MAX bounds is for kiln compile; give one value here");
    if (!options.dim_ranges.empty() || !graph->dim_ranges().empty()) passes::set_dim_ranges(*graph, options.dim_ranges);
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

namespace {

int64_t parse_count(const std::string& spec, const std::string& text) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (text.empty() || used != text.size() || v < 0) fail("--dim {}: '{}' is not a non-negative integer", spec, text);
  return v;
}

}  // namespace

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs, ir::DimRanges* ranges) {
  std::map<std::string, int64_t> dims;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      fail("--dim {}: expected NAME=VALUE or NAME=MIN..MAX[:STEP][@OPT]", spec);
    const std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
    if (dims.count(name) || (ranges && ranges->count(name))) fail("--dim {}: '{}' is given twice", spec, name);
    const size_t dots = value.find("..");
    if (dots == std::string::npos) {
      dims[name] = parse_count(spec, value);
      continue;
    }
    if (!ranges) fail("--dim {}: a range is for kiln compile; give one value here", spec);
    const size_t at = value.find('@', dots);
    ir::DimRange r;
    r.min = parse_count(spec, value.substr(0, dots));
    const std::string upper = value.substr(dots + 2, at == std::string::npos ? std::string::npos : at - dots - 2);
    const size_t colon = upper.find(':');
    r.max = parse_count(spec, upper.substr(0, colon));
    if (colon != std::string::npos) r.step = parse_count(spec, upper.substr(colon + 1));
    r.opt = at == std::string::npos ? r.max : parse_count(spec, value.substr(at + 1));
    (*ranges)[name] = r;
  }
  return dims;
}

std::string model_stem(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();  // "dir/"
  if (!frontend::is_saved_model_dir(path)) return p.stem().string();
  std::filesystem::path abs = std::filesystem::absolute(p).lexically_normal();
  if (!abs.has_filename()) abs = abs.parent_path();
  if (abs.filename() == "saved_model" && abs.has_parent_path() && !abs.parent_path().filename().empty())
    return abs.parent_path().filename().string();
  return abs.filename().string();
}

void add_tensorflow_options(CLI::App* cmd, TensorFlowSelection& tf) {
  cmd->add_option("--signature", tf.signature, "TensorFlow SavedModels: the signature to compile")->capture_default_str();
  cmd->add_option("--input-node", tf.inputs,
                  "frozen TensorFlow GraphDefs: a Placeholder that is an input (repeatable; default: every Placeholder)");
  cmd->add_option("--output-node", tf.outputs,
                  "frozen TensorFlow GraphDefs: an output tensor, NODE or NODE:K (repeatable; default: the nodes nobody reads)");
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
