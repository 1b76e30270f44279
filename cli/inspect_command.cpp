// kiln inspect MODEL [--json]: inputs, outputs, op histogram, parameters, FLOPs, and what
// cannot be imported or compiled.
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/limits_options.h"
#include "cli/model_loader.h"
#include "frontend/tensorflow/tf_importer.h"
#include "cli/pipeline_options.h"
#include "codegen/cpp/cpp_backend.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "passes/pass_manager.h"

namespace kiln::cli {

namespace {

struct InspectArgs {
  std::string model;
  bool json = false;
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  std::string params;                 // --params FILE.npz (StableHLO)
  TensorFlowSelection tf;  // --signature, --input, --output
  bool plan = false;                  // --plan: per-pass node counts and the memory plan
  passes::PipelineOptions pipeline;  // cli/pipeline_options.h
  codegen::cpp::EmitOptions emit;    // --conv-algo, for --plan's memory plan
  frontend::ImportLimits limits;
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20)
      out += fmt::format("\\u{:04x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

struct Report {
  std::vector<std::tuple<std::string, std::string, std::string>> inputs, outputs;  // name, dtype, shape
  std::map<std::string, int> ops;
  int64_t parameters = 0;
  int64_t parameter_bytes = 0;
  double flops = 0;
  int nodes_without_static_shapes = 0;
  std::vector<frontend::UnsupportedNode> unsupported;
  std::string compile_problem;  // why the C++ backend would refuse, or empty
  int64_t ir_version = 0;
  std::map<std::string, int> opsets;
  std::string producer;
};

Report inspect(const InspectArgs& args) {
  Report r;
  frontend::OnnxImportOptions options;
  options.allow_unsupported = true;
  options.limits = args.limits;
  frontend::OnnxModelInfo info;
  std::unique_ptr<ir::Graph> graph;
  if (model_format(args.model) == ModelFormat::Onnx) {
    graph = frontend::import_onnx(args.model, options, &info);
    try {
      apply_input_shape_args(*graph, args.model, args.input_shapes);
    } catch (const Error& e) {
      fail("{}: {}", args.model, e.what());
    }
  } else {
    graph = import_model(args.model, args.limits, args.input_shapes, {}, args.params, args.tf);
    const ModelFormat format = model_format(args.model);
    info.producer = format == ModelFormat::TorchExport ? "torch.export program"
                    : format == ModelFormat::StableHlo ? "StableHLO"
                    : format == ModelFormat::TensorFlow ? (frontend::is_saved_model_dir(args.model) ? "TensorFlow SavedModel"
                                                                                                    : "TensorFlow GraphDef")
                                                        : "TorchScript archive";
    for (const auto& n : graph->nodes()) info.op_histogram[n->op()]++;
  }
  r.ir_version = info.ir_version;
  r.opsets = info.opsets;
  r.producer = info.producer;
  r.unsupported = info.unsupported;
  if (!graph) {
    r.ops = info.op_histogram;
    return r;
  }
  try {
    ir::DimRanges ranges;
    const std::map<std::string, int64_t> dims = parse_dims(args.dims, &ranges);
    if (!dims.empty()) passes::bind_dims(*graph, dims);
    // Bounds from --dim or --input-shape (stepped dims become step * a fresh symbol there).
    if (!ranges.empty() || !graph->dim_ranges().empty()) passes::set_dim_ranges(*graph, ranges);
    passes::infer_shapes(*graph);
  } catch (const Error& e) {
    fail("{}: {}", args.model, e.what());
  }
  for (const ir::Value* v : graph->inputs())
    r.inputs.emplace_back(v->name(), std::string(ir::dtype_name(v->dtype())), v->shape().str());
  for (const ir::Value* v : graph->outputs())
    r.outputs.emplace_back(v->name(), std::string(ir::dtype_name(v->dtype())), v->shape().str());
  for (const auto& n : graph->nodes()) {
    ++r.ops[n->op()];
    bool is_static = true;
    for (const ir::Value* out : n->outputs()) is_static &= out->shape().is_static();
    if (is_static)
      r.flops += ir::node_cost(*n).flops;
    else
      ++r.nodes_without_static_shapes;
  }
  for (const auto& v : graph->values())
    if (v->is_constant()) {
      r.parameters += v->constant().numel();
      r.parameter_bytes += static_cast<int64_t>(v->constant().nbytes());
    }
  try {
    passes::fold_constants(*graph);
    passes::eliminate_dead_code(*graph);
    codegen::cpp::check_compilable(*graph);
  } catch (const Error& e) {
    r.compile_problem = e.what();
  }
  return r;
}

void print_text(const Report& r, const std::string& path) {
  fmt::print("model: {}\n", path);
  if (r.opsets.empty() && r.ir_version == 0) {  // a PyTorch model: no ONNX versions to report
    fmt::print("  format: {}\n", r.producer);
  } else {
    fmt::print("  ir version {}, producer '{}', opsets:", r.ir_version, r.producer);
    for (const auto& [domain, v] : r.opsets) fmt::print(" {}={}", domain.empty() ? "ai.onnx" : domain, v);
    fmt::print("\n");
  }
  for (const auto& [name, dtype, shape] : r.inputs) fmt::print("input   {} {}{}\n", name, dtype, shape);
  for (const auto& [name, dtype, shape] : r.outputs) fmt::print("output  {} {}{}\n", name, dtype, shape);
  int total = 0;
  for (const auto& [op, n] : r.ops) total += n;
  fmt::print("nodes   {}\n", total);
  for (const auto& [op, n] : r.ops) fmt::print("  {:<24} {}\n", op, n);
  fmt::print("parameters {} ({:.2f} MB)\n", r.parameters, r.parameter_bytes / 1e6);
  fmt::print("flops   {:.4g}{}\n", r.flops,
             r.nodes_without_static_shapes
                 ? fmt::format(" (static shapes only; {} nodes with symbolic shapes not counted)",
                               r.nodes_without_static_shapes)
                 : "");
  if (r.unsupported.empty()) {
    fmt::print("unsupported ops: none\n");
  } else {
    fmt::print("unsupported ops: {}\n", r.unsupported.size());
    for (const auto& u : r.unsupported)
      fmt::print("  {} ({}{}): {}\n", u.op_type, u.name, u.domain.empty() ? "" : ", domain " + u.domain, u.reason);
  }
  if (r.unsupported.empty())
    fmt::print("compilable: {}\n", r.compile_problem.empty() ? "yes" : "no: " + r.compile_problem);
}

void print_json(const Report& r, const std::string& path) {
  auto tensors = [](const auto& list) {
    std::vector<std::string> items;
    for (const auto& [name, dtype, shape] : list)
      items.push_back(fmt::format("{{\"name\": {}, \"dtype\": {}, \"shape\": {}}}", json_string(name),
                                  json_string(dtype), json_string(shape)));
    return fmt::format("[{}]", fmt::join(items, ", "));
  };
  std::vector<std::string> ops, unsupported, opsets;
  for (const auto& [op, n] : r.ops) ops.push_back(fmt::format("{}: {}", json_string(op), n));
  for (const auto& [d, v] : r.opsets) opsets.push_back(fmt::format("{}: {}", json_string(d.empty() ? "ai.onnx" : d), v));
  for (const auto& u : r.unsupported)
    unsupported.push_back(fmt::format("{{\"op\": {}, \"node\": {}, \"domain\": {}, \"reason\": {}}}",
                                      json_string(u.op_type), json_string(u.name), json_string(u.domain),
                                      json_string(u.reason)));
  fmt::print(
      "{{\n  \"model\": {},\n  \"ir_version\": {},\n  \"producer\": {},\n  \"opsets\": {{{}}},\n"
      "  \"inputs\": {},\n  \"outputs\": {},\n  \"ops\": {{{}}},\n  \"parameters\": {},\n"
      "  \"parameter_bytes\": {},\n  \"flops\": {},\n  \"nodes_with_symbolic_shapes\": {},\n"
      "  \"unsupported\": [{}],\n  \"compilable\": {},\n  \"compile_problem\": {}\n}}\n",
      json_string(path), r.ir_version, json_string(r.producer), fmt::join(opsets, ", "), tensors(r.inputs),
      tensors(r.outputs), fmt::join(ops, ", "), r.parameters, r.parameter_bytes, r.flops,
      r.nodes_without_static_shapes, fmt::join(unsupported, ", "),
      r.unsupported.empty() && r.compile_problem.empty() ? "true" : "false",
      json_string(r.compile_problem));
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "show a model's inputs, outputs, ops, size and cost");
  cmd->add_option("model", args->model, "the model file (.onnx, a PyTorch .pt/.pt2 archive, or StableHLO .mlir text)")->required();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_flag("--plan", args->plan, "run the optimizer printing node counts by op after each pass, then the memory plan");
  add_pipeline_options(cmd, args->pipeline);
  add_emit_options(cmd, args->emit);
  add_limits_options(cmd, args->limits);
  cmd->add_option("--input-shape", args->input_shapes,
                  "an input's shape, [NAME=]D0,D1,...[:DTYPE] (repeatable; needed for TorchScript archives)")->allow_extra_args(false);
  cmd->add_option("--dim", args->dims,
                  "give a symbolic dim a value, --dim batch=1, or bounds, --dim seq=1..256 (as kiln compile takes them)");
  add_tensorflow_options(cmd, args->tf);
  cmd->add_option("--params", args->params,
                  "StableHLO (.mlir) models: an .npz with values for arguments of @main, by index (arg0, arg1, ...) or by the name JAX gives them with as_text(debug_info=True); the other arguments are the inputs");
  return {cmd, [args] {
            std::error_code ec;
            if (!std::filesystem::exists(args->model, ec)) fail("{}: no such file", args->model);
            if (args->plan) return print_plan(args->model, args->dims, args->pipeline, args->emit);
            Report r = inspect(*args);
            if (args->json)
              print_json(r, args->model);
            else
              print_text(r, args->model);
            return 0;
          }};
}

}  // namespace kiln::cli
