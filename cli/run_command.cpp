// kiln run MODEL -i NAME=FILE ... [-o DIR]: the reference interpreter on .npy or ONNX
// TensorProto (.pb) inputs.
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/limits_options.h"
#include "cli/model_loader.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "ir/interpreter.h"
#include "kiln/rt/exe_main.h"
#include "kiln/rt/npy.h"
#include "kiln/rt/sanitize.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> named_inputs;
  std::vector<std::string> positional_inputs;
  std::string out_dir;
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  std::string params;
  TensorFlowSelection tf;  // --signature, --input, --output
  bool verbose = false;
  frontend::ImportLimits limits;
};

rt::HostTensor to_host(const ir::Tensor& t) {
  rt::HostTensor host;
  host.dtype = static_cast<kiln_dtype>(t.dtype());
  host.shape = t.dims();
  const auto* p = static_cast<const unsigned char*>(t.raw());
  host.data.assign(p, p + t.nbytes());
  return host;
}

int run_model(const RunArgs& args) {
  PhaseTimer timer(args.verbose);
  LoadOptions load;
  load.dims = parse_dims(args.dims);
  load.input_shapes = args.input_shapes;
  load.params = args.params;
  load.tf = args.tf;
  load.optimize = false;  // the interpreter runs the model as imported
  load.limits = args.limits;
  std::unique_ptr<ir::Graph> graph = load_model(args.model, load, timer);

  std::map<std::string, ir::Tensor> inputs;
  auto add_input = [&](const std::string& name, const std::string& file) {
    if (inputs.count(name)) fail("input '{}' given twice", name);
    inputs[name] = load_tensor_file(file, args.limits);
  };
  for (const std::string& spec : args.named_inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) fail("-i {}: expected NAME=FILE", spec);
    add_input(spec.substr(0, eq), spec.substr(eq + 1));
  }
  if (args.positional_inputs.size() > graph->inputs().size())
    fail("{} inputs given, model has {}", args.positional_inputs.size(), graph->inputs().size());
  for (size_t i = 0; i < args.positional_inputs.size(); ++i)
    add_input(graph->inputs()[i]->name(), args.positional_inputs[i]);

  std::vector<ir::Tensor> outputs = timer.phase("interpret", [&] {
    try {
      return ir::interpret(*graph, inputs);
    } catch (const Error& e) {
      fail("{}: {}", args.model, e.what());
    }
  });

  if (!args.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(args.out_dir, ec);
    if (ec) fail("{}: cannot create directory: {}", args.out_dir, ec.message());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = graph->outputs()[i]->name();
    rt::HostTensor host = to_host(outputs[i]);
    if (args.out_dir.empty()) {
      rt::TensorInfo info{name.c_str(), host.dtype, static_cast<int>(host.shape.size()), host.shape.data()};
      rt::print_tensor_summary(stdout, info, host.data.data());
      continue;
    }
    std::string path = (fs::path(args.out_dir) / (rt::sanitize_file_name(name) + ".npy")).string();
    std::string error;
    if (!rt::write_npy(path, host, error)) throw Error(error);
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "run a model with the reference interpreter");
  cmd->add_option("model", args->model, "the model file (.onnx, a PyTorch .pt/.pt2 archive, or StableHLO .mlir text)")->required();
  cmd->add_option("inputs", args->positional_inputs, "input files in graph input order (.npy or .pb)");
  cmd->add_option("-i,--input", args->named_inputs, "an input as NAME=FILE (.npy or ONNX TensorProto .pb)");
  cmd->add_option("-o,--output-dir", args->out_dir, "write DIR/<output>.npy for each output");
  cmd->add_option("--input-shape", args->input_shapes,
                  "an input's shape, [NAME=]D0,D1,...[:DTYPE] (repeatable; unnamed ones in input order; needed for "
                  "TorchScript archives, which record none)")->allow_extra_args(false);
  cmd->add_option("--dim", args->dims, "give a symbolic dim a value, e.g. --dim batch=1");
  add_tensorflow_options(cmd, args->tf);
  cmd->add_option("--params", args->params,
                  "StableHLO (.mlir) models: an .npz with values for arguments of @main, by index (arg0, arg1, ...) or by the name JAX gives them with as_text(debug_info=True); the other arguments are the inputs");
  cmd->add_flag("-v,--verbose", args->verbose, "print each phase's time");
  add_limits_options(cmd, args->limits);
  return {cmd, [args] { return run_model(*args); }};
}

}  // namespace kiln::cli
