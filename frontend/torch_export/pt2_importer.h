// The torch.export frontend: an ExportedProgram saved by torch.export.save (.pt2, both the
// PT2 archive of torch >= 2.8 and the legacy zip of 2.1-2.7) as an ir::Graph.
//
// Choices worth knowing:
// - Parameters, buffers and lifted tensor constants become IR constants (named by their
//   state-dict names, "conv1.weight"), created when first used. User inputs become graph
//   inputs, named as in the program ("x"), with dtype and shape from its tensor_values;
//   a symbolic dim ("s77": torch.export.Dim names are not kept in the file) must be bound,
//   by `--dim s77=4` or by `--input-shape x=4,3,224,224`, since the lowering needs static
//   shapes.
// - Each node `torch.ops.aten.X.overload` is lowered by the aten table (lower_aten with op
//   "X" and the node's arguments: positional ones in order, keyword ones and those without a
//   kind by their schema names). An unknown target is an error naming the target, the node
//   and the file.
// - Symbolic ints that nodes compute (sym_size, arithmetic on sizes) are not lowered: their
//   value is the dim --dim binds when the expression is one symbol, else the program's hint
//   (the example input's value). An expression over a bound symbol that is not the symbol
//   itself is refused rather than guessed.
// - Every lowered tensor is checked against the program's tensor_values (dtype, static
//   dims); a result the lowering left untyped takes the program's type.
// - Graph outputs are the user outputs of signature.output_specs. Buffer mutations
//   (BatchNorm's running stats in training mode) are dropped with a note in Pt2ModelInfo.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/torchscript/ts_lowering.h"
#include "ir/graph.h"

namespace kiln::frontend {

struct Pt2ImportOptions {
  ImportLimits limits;
  // --dim NAME=VALUE: values for the program's symbols, used for the symbolic ints nodes
  // compute and checked against its range_constraints. Binding the graph's dims is left to
  // passes::bind_dims, as for every frontend.
  std::map<std::string, int64_t> dims;
  // --input-shape: static shapes for the user inputs (by name, else in order); they bind the
  // symbols their dims sit on, like --dim.
  std::vector<torchscript::InputSpec> inputs;
  // Which program of a PT2 archive (models/<model>.json); torch.export.save writes "model".
  std::string model = "model";
};

struct Pt2ModelInfo {
  std::string layout;          // "pt2 archive" or "legacy"
  std::string torch_version;   // as recorded ("2.15.0+cu132"), or "" when absent
  std::string schema_version;  // "8.20"
  std::map<std::string, int> target_histogram;  // node targets ("torch.ops.aten.conv2d.default")
  std::vector<std::string> notes;               // what was dropped, and why
  int checks_dropped = 0;                       // aten._assert_scalar and the like
};

// Reads and converts the program in `path`. Throws kiln::Error with a one-line message that
// names the file (and the node, where there is one). `info`, when given, is filled as far
// as the file was read.
std::unique_ptr<ir::Graph> import_pt2(const std::string& path, const Pt2ImportOptions& options = {},
                                      Pt2ModelInfo* info = nullptr);

// True when `path` looks like a torch.export archive: a zip file whose entries include
// archive_format or serialized_exported_program.json (for choosing a frontend).
bool is_pt2_file(const std::string& path);

}  // namespace kiln::frontend
