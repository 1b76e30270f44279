// The JAX frontend: StableHLO as MLIR text (`jax.jit(f).lower(*args).as_text()`, saved as
// .mlir), as MLIR bytecode of its portable form VHLO (.mlirbc), or as a jax.export serialized
// artifact (the flatbuffer of `exported.serialize()`, whose mlir_module_serialized field is
// that bytecode), into an ir::Graph. kiln reads the bytecode itself (mlir_bytecode.h), with
// no MLIR library: VHLO lives in the StableHLO repository, not in LLVM's MLIR.
//
// Choices worth knowing:
// - The entry is func.func @main; private functions it reaches through func.call are
//   inlined (a recursive call is refused). Ops map onto IR ops one to a few nodes:
//   dot_general becomes Transpose/Reshape around MatMul, convolution a Conv between
//   layout transposes, reduce with an add/max/min/multiply body ReduceSum/Max/Min/Prod,
//   reduce_window with a max or add body MaxPool or AveragePool (times the window size).
//   An op outside the table is refused with its name and line:column.
// - Weights are either inline dense<...> constants, or arguments of @main given values by
//   `params` (an .npz: a zip of .npy files, e.g. numpy.savez). An .npz entry is matched to
//   an argument by index ("arg0", "arg1", ...) or by the name JAX prints as the argument's
//   location with as_text(debug_info=True) (`%arg0: tensor<3xf32> loc("params['dense']['b']")`).
//   Each given argument becomes a constant (dtype and shape must match); the others are the
//   graph's inputs, in order, named by the identifier parts of their location name
//   (loc("x") gives "x", loc("params['w']") "params.w"), else "argN". Constants from the .npz
//   are named the same way. An .npz entry that matches no argument is an error.
// - Outputs are @main's results, named output_0, output_1, ...
// - The text is untrusted: errors name the file and line:column; sizes are checked against
//   the import limits before anything is allocated.
// Not read: jax2tf SavedModels, dynamic shapes, while/case/if, custom_call, tuples and tokens.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "ir/graph.h"

namespace kiln::frontend {

struct StableHloImportOptions {
  ImportLimits limits;
  std::string params_path;                 // --params FILE.npz, or ""
  std::map<std::string, ir::Tensor> params;  // values given directly (merged with the file's)
  std::string entry = "main";
};

// Reads and converts the module at `path`. Throws kiln::Error with a one-line message that
// names the file (and line:column where there is one).
std::unique_ptr<ir::Graph> import_stablehlo(const std::string& path, const StableHloImportOptions& options = {});
// The same for text in memory; `name` stands for the file in messages.
std::unique_ptr<ir::Graph> import_stablehlo_text(const std::string& text, const std::string& name,
                                                 const StableHloImportOptions& options = {});

// The same for the bytes of a file of any of the three forms, told apart by content: MLIR
// bytecode (VHLO, "ML\xEFR"), a jax.export serialized artifact (a flatbuffer holding such
// bytecode), or else MLIR text.
std::unique_ptr<ir::Graph> import_stablehlo_bytes(const std::string& bytes, const std::string& name,
                                                  const StableHloImportOptions& options = {});

// Lowers the entry function of the module in `bytes` (any of the three forms) into `graph`,
// with `args` as its arguments (their types must be the arguments' types) and node names
// prefixed by `prefix`; returns its results. For modules embedded in other formats (the
// `module` attribute of TensorFlow's XlaCallModule).
std::vector<ir::Value*> lower_stablehlo_into(const std::string& bytes, const std::string& name, ir::Graph& graph,
                                             const std::vector<ir::Value*>& args, const std::string& prefix,
                                             const ImportLimits& limits);

// True when `path` looks like StableHLO text: a .mlir or .stablehlo file, or a file whose
// first non-blank text is `module`, `func.func` or a `#loc` alias.
bool is_stablehlo_file(const std::string& path);

// The arrays of an .npz file (numpy.savez / savez_compressed), keyed by name without ".npy".
std::map<std::string, ir::Tensor> read_npz(const std::string& path, const ImportLimits& limits);

}  // namespace kiln::frontend
