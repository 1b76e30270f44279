// The TorchScript frontend: an archive written by torch.jit.save (traced, scripted or frozen
// modules; archive versions 1 to 10) as an ir::Graph, with no PyTorch and no Python.
//
// What to know:
// - The archive is untrusted: the zip and the pickles are bounds-checked, the unpickler
//   executes nothing and accepts only the globals TorchScript writes, and the code is parsed
//   and evaluated by kiln's own evaluator with limits on steps, loops and call depth.
// - TorchScript archives do not record input shapes: each input of forward needs one
//   (`--input-shape NAME=1,3,224,224`, or unnamed in forward's order; `:i64` after the dims
//   sets a dtype other than f32).
// - Modules are compiled as in eval(): batch norm uses its running statistics, dropout is
//   the identity, whatever mode the module was saved in.
// - Control flow on known values (shapes, attributes, flags) is resolved at compile time;
//   an `if` on tensor data computes both branches and selects with Where; loops must have
//   trip counts known at compile time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/torchscript/ts_lowering.h"
#include "ir/graph.h"

namespace kiln::frontend {

struct TorchScriptImportOptions {
  ImportLimits limits;
  std::vector<torchscript::InputSpec> inputs;  // --input-shape
};

std::unique_ptr<ir::Graph> import_torchscript(const std::string& path, const TorchScriptImportOptions& options);

// Parses "NAME=1,3,224,224[:DTYPE]" or "1,3,224,224[:DTYPE]" (--input-shape).
torchscript::InputSpec parse_input_shape(const std::string& spec);

}  // namespace kiln::frontend
