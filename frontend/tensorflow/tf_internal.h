// Inside the TensorFlow importer: TensorProto conversion, the state an op's lowering sees, and
// the lowering tables (tf_ops_math.cpp: elementwise ops and reductions; tf_ops_nn.cpp:
// convolutions, pooling, normalization, matrix products; tf_ops_array.cpp: shapes, slicing,
// gathering, concatenation).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/tensorflow/proto/tf_graph.pb.h"
#include "ir/graph.h"

namespace kiln::frontend::tensorflow {

// A TensorProto as a tensor: tensor_content bytes, else the typed values (one value fills the
// shape). Sizes are checked against `limits` before anything is allocated; errors name `where`.
ir::Tensor tensor_from_proto(const kiln::tf::TensorProto& proto, const ImportLimits& limits, const std::string& where);
// The dims of a TensorShapeProto, -1 for an unknown one; nullopt for an unknown rank.
std::optional<std::vector<int64_t>> dims_from_proto(const kiln::tf::TensorShapeProto& shape);

// The node being lowered and what its lowering may do to the graph.
class TfLowering {
 public:
  TfLowering(ir::Graph& graph, const ImportLimits& limits, std::string file) : graph_(graph), limits_(limits), file_(std::move(file)) {}

  // The node being lowered; `where` names its function ("" in the main graph), `base` its IR name.
  void begin(const kiln::tf::NodeDef& node, const std::string& where, const std::string& base) {
    node_ = &node;
    where_ = where;
    base_ = base;
    part_ = 0;
  }
  const kiln::tf::NodeDef& tf_node() const { return *node_; }
  const ImportLimits& limits() const { return limits_; }
  ir::Graph& graph() { return graph_; }

  // "saved_model: function 'f': node 'conv/Conv2D' (Conv2D): problem"
  [[noreturn]] void fail_node(const std::string& problem) const;
  std::string describe() const;

  // Adds a node and infers its output types (errors name the TF node).
  ir::Value* node(const std::string& op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs = {});
  std::vector<ir::Value*> nodes(const std::string& op, std::vector<ir::Value*> inputs, size_t outputs,
                                ir::AttributeMap attrs = {});
  ir::Value* constant(ir::Tensor t);
  ir::Value* i64s(const std::vector<int64_t>& v);
  ir::Value* scalar(double v, ir::DType dt);
  ir::Value* reshape(ir::Value* v, const std::vector<int64_t>& dims);
  ir::Value* transpose(ir::Value* v, const std::vector<int64_t>& perm);
  ir::Value* cast(ir::Value* v, ir::DType dt);
  // NHWC <-> NCHW for rank-4 values (and the 3-D/5-D analogues by rank).
  ir::Value* to_channels_first(ir::Value* v);
  ir::Value* to_channels_last(ir::Value* v);

  // Attributes of the TF node; the required ones fail naming the node when absent or mistyped.
  bool has_attr(const std::string& key) const;
  int64_t attr_int(const std::string& key) const;
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  bool attr_bool(const std::string& key, bool fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key) const;  // list(int); [] when absent
  ir::DType attr_dtype(const std::string& key) const;
  const kiln::tf::AttrValue* find_attr(const std::string& key) const;

  // The elements of an input that must be known at compile time (axes, perms, paddings).
  std::vector<int64_t> const_ints(const ir::Value* v, const std::string& what) const;
  static const ir::Tensor* constant_of(const ir::Value* v) { return v && v->is_constant() ? &v->constant() : nullptr; }
  std::vector<int64_t> dims(const ir::Value* v) const;  // static dims, or fails
  size_t rank(const ir::Value* v) const;                // known rank, or fails

 private:
  std::optional<std::vector<ir::Value*>> fold(ir::Node& n);

  ir::Graph& graph_;
  const ImportLimits& limits_;
  std::string file_;
  const kiln::tf::NodeDef* node_ = nullptr;
  std::string where_, base_;
  int part_ = 0;
};

// A TF node name as an IR name: characters other than [A-Za-z0-9_/.] become '_', at most 200.
std::string ir_name(const std::string& s);

using TfLowerFn = std::vector<ir::Value*> (*)(TfLowering& L, const std::vector<ir::Value*>& in);

// TF op name ("Conv2D") to its lowering; each file adds its own.
void add_math_lowerings(std::map<std::string, TfLowerFn>& table);
void add_nn_lowerings(std::map<std::string, TfLowerFn>& table);
void add_array_lowerings(std::map<std::string, TfLowerFn>& table);
void add_xla_lowerings(std::map<std::string, TfLowerFn>& table);  // tf_xla_call_module.cpp
const std::map<std::string, TfLowerFn>& lowering_table();

}  // namespace kiln::frontend::tensorflow
