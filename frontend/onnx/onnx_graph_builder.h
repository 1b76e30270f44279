// Builds an ir::Graph from a GraphProto whose nodes the scan has already accepted.
#pragma once

#include <map>
#include <set>
#include <string>

#include "frontend/onnx/onnx_internal.h"
#include "frontend/onnx/onnx_op_rules.h"
#include "ir/graph.h"

namespace kiln::frontend::onnx_import {

// What all graphs of one model share.
struct ModelContext {
  std::string file;                   // the model's path, for messages
  std::map<std::string, int> opsets;  // by normalized domain
  TensorLoader loader;
  ImportLimits limits;
};

class GraphBuilder final : public NodeEmitter {
 public:
  // `proto` is consumed (initializer bytes are moved out). Subgraphs see `parent`'s values.
  GraphBuilder(ModelContext& model, onnx::GraphProto& proto, ir::Graph& graph,
               GraphBuilder* parent);
  void build();

  ir::Value* constant(const std::string& hint, ir::Tensor t) override;
  std::vector<ir::Value*> emit_helper(PendingNode node) override;
  std::optional<ir::DType> dtype_of(const ir::Value* v) const override;
  std::optional<ir::Shape> shape_of(const ir::Value* v) const override;
  [[noreturn]] void fail_node(const PendingNode& node, const std::string& problem) const override;

 private:
  bool is_main() const { return parent_ == nullptr; }
  // The value of an ONNX name in this graph, or captured from an enclosing one (below).
  ir::Value* lookup(const std::string& name);
  // Gives the node being added the values its subgraphs captured, as trailing inputs.
  void add_captured_inputs(PendingNode& p);
  void define(const std::string& name, ir::Value* v, std::string how);
  void add_initializers();
  void add_inputs();
  void add_node(onnx::NodeProto& node, size_t index);
  void add_outputs();
  void check_declared_shape(const std::string& name, const ir::Shape& shape) const;
  ir::Attribute convert_attr(onnx::AttributeProto& a);
  std::shared_ptr<ir::Graph> convert_subgraph(onnx::GraphProto& g, const std::string& attr);
  std::vector<ir::Value*> emit(PendingNode node, bool helper);
  std::string fresh_name(const std::string& hint) const;
  [[noreturn]] void fail_graph(const std::string& problem) const;

  ModelContext& model_;
  onnx::GraphProto& proto_;
  ir::Graph& graph_;
  GraphBuilder* parent_;
  // A subgraph reads an enclosing graph's value through an input of its own, appended after its
  // declared inputs: (value in the parent, that input), in the order first read.
  struct Capture {
    ir::Value* outer;
    ir::Value* local;
  };
  std::vector<Capture> captures_;
  // The subgraphs of the node being added and what each captured.
  std::vector<std::pair<std::shared_ptr<ir::Graph>, std::vector<Capture>>> node_subgraphs_;
  TypeHints hints_;
  std::map<std::string, ir::Value*> scope_;    // ONNX name -> value defined in this graph
  std::map<std::string, std::string> how_;     // ONNX name -> "by node 'n' (Op)", for messages
  std::set<std::string> reserved_;             // every name the GraphProto defines
  std::map<std::string, std::string> defined_later_;  // node output -> its node, for messages
  // The ONNX node being converted, for messages.
  std::string node_name_;
  std::string node_op_;
};

}  // namespace kiln::frontend::onnx_import
