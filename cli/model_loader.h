// Loading a model for any command: the frontend chosen by file type, symbolic dims bound
// from the command line, and the optimization pipeline.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/phase_timer.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/graph.h"
#include "passes/calibrate.h"
#include "passes/pass_manager.h"
#include "passes/precision.h"

namespace kiln::cli {

// `--precision int8`'s state across loads of one model (cli/static_quantization.h).
struct StaticQuantization {
  std::vector<passes::CalibrationSample> samples;
  passes::CalibrationOptions calibration;
  std::set<std::string> keep_fp32;                 // nodes left in fp32 (--max-error)
  std::optional<passes::ActivationRanges> ranges;  // calibrated by the first load, then reused
  std::vector<std::string> quantized;              // the nodes the last load quantized
  ir::DType activations = ir::DType::U8;           // --activation-type
  bool reduced_range_dense_convs = false;         // --weight-range reduced
};

// Which part of a TensorFlow model to compile: a SavedModel's signature, a frozen GraphDef's
// input Placeholders and output tensors.
struct TensorFlowSelection {
  std::string signature = "serving_default";  // --signature
  std::vector<std::string> inputs;             // --input-node NAME (repeatable)
  std::vector<std::string> outputs;            // --output-node NAME[:K] (repeatable)
};

struct LoadOptions {
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE
  ir::DimRanges dim_ranges;             // --dim NAME=MIN..MAX[@OPT] (kiln compile)
  bool allow_dim_ranges = false;        // bounded dims (--input-shape NAME=1..8,...) are accepted
  std::vector<std::string> input_shapes;  // --input-shape [NAME=]D0,D1,...[:DTYPE]
  std::string params;                   // --params FILE.npz (StableHLO: values of @main's arguments)
  TensorFlowSelection tf;               // --signature, --input-node, --output-node (TensorFlow)
  bool optimize = true;                 // run the default pipeline after import
  passes::PipelineOptions pipeline;
  frontend::ImportLimits limits;        // --max-* (cli/limits_options.h)
  // int8-dynamic adds the pass quantize_dynamic before the fusion passes (docs/guide/quantization.md)
  passes::Precision precision = passes::Precision::FP32;
  // int8: calibrates (once), then runs quantize_static and fuse_qdq before the fusion passes
  StaticQuantization* int8 = nullptr;
};

enum class ModelFormat { Onnx, TorchScript, TorchExport, StableHlo, TensorFlow };
// The format of the model at `path`, from its contents: a zip archive is PyTorch's, a
// torch.export program when it holds one, else TorchScript; MLIR text (a .mlir file, or text
// that starts with `module`) is JAX's StableHLO; a directory with saved_model.pb, or a .pb
// GraphDef, is TensorFlow's; anything else is ONNX.
ModelFormat model_format(const std::string& path);
// --input-shape on an imported ONNX graph (import_model applies it itself): each named, or the
// next unnamed, input takes those dims (and bounds), which must agree with its static dims.
void apply_input_shape_args(ir::Graph& graph, const std::string& path, const std::vector<std::string>& input_shapes);
// Imports `path` with the frontend for its format, applying --input-shape; no passes run.
std::unique_ptr<ir::Graph> import_model(const std::string& path, const frontend::ImportLimits& limits,
                                        const std::vector<std::string>& input_shapes,
                                        const std::map<std::string, int64_t>& dims = {},
                                        const std::string& params = "", const TensorFlowSelection& tf = {});

// A name for the model at `path`: the file's stem, or a SavedModel directory's name (its
// parent's when it is called saved_model, as TensorFlow's examples call it).
std::string model_stem(const std::string& path);

// Adds --signature, --input-node and --output-node (TensorFlow models) to `cmd`.
void add_tensorflow_options(CLI::App* cmd, TensorFlowSelection& tf);

// Imports `path`; errors name the file. Returns a verified graph with types inferred.
std::unique_ptr<ir::Graph> load_model(const std::string& path, const LoadOptions& options,
                                      PhaseTimer& timer);

// A tensor from a .npy file or an ONNX TensorProto (.pb); errors name the file.
ir::Tensor load_tensor_file(const std::string& path, const frontend::ImportLimits& limits);

// Parses "NAME=VALUE" pairs given to --dim; "NAME=MIN..MAX[@OPT]" ranges go to `ranges`, and
// are refused where it is null (commands that run one shape).
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs, ir::DimRanges* ranges = nullptr);

}  // namespace kiln::cli
