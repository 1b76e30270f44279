// Builds IR from TF node lists: the outer GraphDef and, inlined where they are called, the
// FunctionDefs of its library.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/tensorflow/proto/tf_graph.pb.h"
#include "frontend/tensorflow/tf_internal.h"

namespace kiln::frontend::tensorflow {

// A TensorListReserve whose element shape is not known where it is made (Keras reserves
// [-1, units] for its RNN outputs): the first TensorListSetItem gives it, from the item.
struct TfReservedList {
  ir::DType dtype = ir::DType::F32;
  int64_t size = 0;
  std::optional<std::vector<int64_t>> element_shape;  // -1 for an unknown dim; nullopt: unknown rank
  std::optional<std::vector<ir::Dim>> resolved;        // the element's dims, once an item is written
};

// A value flowing in a TF graph: a tensor, a resource handle (a variable), or a TensorList.
// Inside an If or While body, a variable comes in already read: a resource whose `tensor` is
// the body input carrying its weights. A TensorList of n elements is the tensor [n, element...]
// stacking them (tf_lists.cpp); a reserved one whose element shape is not known yet has no
// tensor, or, carried into a While body, a body input typed when the body first writes to it.
struct TfValue {
  ir::Value* tensor = nullptr;
  int variable = -1;         // the variable a resource handle refers to, when known
  std::string handle;        // a resource handle's name, for messages ("" for a tensor)
  bool list = false;
  std::shared_ptr<TfReservedList> reserved;
  bool is_resource() const { return !handle.empty(); }
  bool is_list() const { return list; }
};

// Where the variables that functions capture come from (the SavedModel's object graph and
// tensor bundle); frozen GraphDefs have none.
class VariableSource {
 public:
  virtual ~VariableSource() = default;
  // The variables bound to `function`'s trailing arguments, in order (empty: none).
  virtual std::vector<int> bound_variables(const std::string& function) = 0;
  // Variable `id`'s weights as a constant of `graph` (one constant per variable).
  virtual ir::Value* value(int id, ir::Graph& graph) = 0;
  virtual std::string name(int id) = 0;
};

class GraphBuilder {
 public:
  GraphBuilder(ir::Graph& graph, std::string file, const ImportLimits& limits, const kiln::tf::FunctionDefLibrary& library,
               VariableSource* variables);

  // The values of `outputs` ("node" or "node:k") of the outer graph `g`; a Placeholder reads
  // `feeds[its name]`. Only the nodes the outputs need are imported.
  std::vector<TfValue> import_graph(const kiln::tf::GraphDef& g, const std::map<std::string, TfValue>& feeds,
                                    const std::vector<std::string>& outputs);

 private:
  struct Body;
  // A builder of an If branch or While body: the same library and variables, another graph.
  GraphBuilder(const GraphBuilder& parent, ir::Graph& graph);
  struct Ref {
    bool is_arg = false;
    std::string arg;
    size_t node = 0, output = 0;
  };
  Ref parse_ref(const Body& body, const std::string& text, const kiln::tf::NodeDef* user) const;
  std::vector<TfValue> run(Body& body, const std::vector<std::string>& outputs);
  std::vector<TfValue> lower(Body& body, const kiln::tf::NodeDef& node, const std::vector<TfValue>& in);
  std::vector<TfValue> call(Body& body, const kiln::tf::NodeDef& node, const std::string& function, std::vector<TfValue> args);
  std::vector<TfValue> lower_if(Body& body, const kiln::tf::NodeDef& node, const std::vector<TfValue>& in);
  std::vector<TfValue> lower_while(Body& body, const kiln::tf::NodeDef& node, const std::vector<TfValue>& in);
  // A TensorList op of the function `where`, its IR nodes named from `base` (tf_lists.cpp).
  std::vector<TfValue> lower_list(const kiln::tf::NodeDef& node, const std::string& where, const std::string& base,
                                  const std::vector<TfValue>& in);
  // Zeros of `dims` in this graph; a symbolic dim is read from an input of the graph that has it.
  ir::Value* zeros(ir::DType dtype, const std::vector<ir::Dim>& dims);
  // The tensor a value holds: a variable's weights (read into this graph) for a resource.
  ir::Value* tensor_of(const Body& body, const kiln::tf::NodeDef& node, const TfValue& v);
  std::string function_attr(const Body& body, const kiln::tf::NodeDef& node, const std::string& key) const;
  size_t output_offset(const kiln::tf::NodeDef& node, const std::string& arg) const;
  [[noreturn]] void fail_node(const Body& body, const kiln::tf::NodeDef& node, const std::string& problem) const;

  ir::Graph& graph_;
  std::string file_;
  const ImportLimits& limits_;
  std::map<std::string, const kiln::tf::FunctionDef*> functions_;
  VariableSource* variables_;
  TfLowering lowering_;
};

}  // namespace kiln::frontend::tensorflow
