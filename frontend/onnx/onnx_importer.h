// The ONNX frontend: a ModelProto file (any IR version, default-domain opset 7 or newer) as
// an ir::Graph in the IR's canonical, newest-opset form.
//
// Choices worth knowing:
// - An initializer that is also listed in graph.input (an "overridable default" in ONNX) is
//   imported as a constant, not as a graph input: a compiled model bakes its weights in.
// - Before anything is converted, every node (subgraphs included) is checked; all the nodes
//   kiln cannot import are reported together in one error.
// - Any opset is read. Old forms are rewritten into the canonical ones (Reshape-1,
//   Squeeze/Unsqueeze < 13, Clip < 11, the Softmax family < 13, Dropout, legacy
//   BatchNormalization attributes, legacy broadcasting of binary ops < 7, Concat < 4); old
//   forms nobody rewrites (Pad < 11, Split < 13, Reduce* ...) and attributes the IR op does
//   not declare (unless known no-ops such as consumed_inputs) are reported as unsupported.
// - Only graph inputs and initializers get types here; shape inference is a pass.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace kiln::frontend {

// Limits on what an (untrusted) model may ask for. Each is checked before the work it bounds,
// and an error names the limit and the command-line flag that raises it.
struct ImportLimits {
  uint64_t max_file_bytes = (uint64_t{1} << 31) - 1;  // --max-file-bytes (protobuf's own cap)
  uint64_t max_tensor_bytes = uint64_t{1} << 34;      // --max-tensor-bytes, any one tensor
  uint64_t max_elements = uint64_t{1} << 32;          // --max-elements, any one tensor or shape
  int max_rank = 32;                                  // --max-rank
  uint64_t max_nodes = 1'000'000;                     // --max-nodes, all graphs together
  int max_subgraph_depth = 16;                        // --max-subgraph-depth (If/Loop bodies)
  int max_proto_depth = 100;                          // --max-proto-depth (protobuf recursion)
  uint64_t max_name_length = 4096;                    // --max-name-length, bytes
};

struct OnnxImportOptions {
  // Report unsupported nodes in OnnxModelInfo::unsupported and return nullptr instead of
  // throwing (for `kiln inspect`).
  bool allow_unsupported = false;
  ImportLimits limits;
};

struct UnsupportedNode {
  std::string name;     // the ONNX node name, or "<op_type>_<index>" when it has none
  std::string op_type;
  std::string domain;   // "" for the default domain
  int opset = 0;        // the model's opset for that domain; 0 when it imports none
  std::string reason;   // e.g. "not implemented", "domain com.x is not supported"
};

struct OnnxModelInfo {
  int64_t ir_version = 0;
  std::string producer;              // producer_name and producer_version
  std::map<std::string, int> opsets;  // by domain; "" (and "ai.onnx") is the default domain
  std::vector<UnsupportedNode> unsupported;  // in graph order, subgraphs after their node
  std::map<std::string, int> op_histogram;  // by op_type, over the main graph's nodes
};

// Reads and converts the model at `path`. Throws kiln::Error with a one-line message naming
// the file (and the node, where there is one). With options.allow_unsupported, a model with
// unsupported nodes gives nullptr and info->unsupported instead. `info`, when given, is
// filled whenever the file is a readable model.
std::unique_ptr<ir::Graph> import_onnx(const std::string& path, const OnnxImportOptions& options = {},
                                       OnnxModelInfo* info = nullptr);

// An ONNX TensorProto file (.pb, as in ONNX's backend test data) as an ir::Tensor. External
// data is resolved relative to the file's directory.
ir::Tensor load_tensor_proto_file(const std::string& path, const ImportLimits& limits = {});

}  // namespace kiln::frontend
