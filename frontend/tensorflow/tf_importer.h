// The TensorFlow frontend: a SavedModel directory (tf.saved_model.save, Keras 3's
// model.export) or a frozen GraphDef (.pb) into an ir::Graph, with no TensorFlow.
//
// Choices worth knowing:
// - SavedModel: the signature (default serving_default) names the outer graph's tensors; the
//   call it reaches ((Stateful)PartitionedCall) is inlined, and so is every call inside. A
//   function's captured variables (its trailing resource arguments) are found through the
//   SavedObjectGraph (the concrete function's bound_inputs) and the checkpoint's object graph,
//   and read from the tensor bundle in variables/: weights become constants.
// - Frozen GraphDef: inputs are the Placeholders named by `inputs` (all reached ones when
//   empty), outputs the tensors named by `outputs` ("node" or "node:k"; required).
// - Only what the outputs need is imported: the saver's restore functions and other
//   side branches are never read.
// - Ops map onto IR ops through one table (tf_ops_*.cpp). NHWC ops become NCHW IR ops between
//   Transposes, which the optimizer cancels along chains of layers.
// - Unknown input dims (a Keras batch of None) become symbolic dims named batch (dim 0) or
//   INPUT_K; bind them with --dim or --input-shape.
// - Files are untrusted: sizes are checked against the import limits; errors name the file,
//   the function and the node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "ir/graph.h"

namespace kiln::frontend {

struct TensorFlowImportOptions {
  ImportLimits limits;
  std::string signature = "serving_default";  // SavedModel: the SignatureDef key
  std::vector<std::string> inputs;             // frozen GraphDef: Placeholder names
  std::vector<std::string> outputs;            // frozen GraphDef: "node" or "node:k"
};

// Reads the SavedModel directory or frozen GraphDef at `path`. Throws kiln::Error with a
// one-line message naming the file (and the function and node where there is one).
std::unique_ptr<ir::Graph> import_tensorflow(const std::string& path, const TensorFlowImportOptions& options = {});

// A directory holding saved_model.pb.
bool is_saved_model_dir(const std::string& path);
// A .pb file that is a GraphDef (its first field is a node, where an ONNX model starts with
// its ir_version).
bool is_graphdef_file(const std::string& path);

}  // namespace kiln::frontend
