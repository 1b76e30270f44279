// The IR: a Graph of SSA Values and Nodes in topological order. Nothing here knows any
// model format; frontends build it, passes rewrite it, backends lower it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace kiln::ir {

class Node;
class Graph;
struct OpDef;

class Value {
 public:
  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  // False until the frontend or shape inference has given the value a type.
  bool has_type() const { return has_type_; }
  void set_type(DType dtype, Shape shape);

  Node* producer() const { return producer_; }
  // Nodes reading this value, once per input slot.
  const std::vector<Node*>& users() const { return users_; }

  bool is_constant() const { return constant_.defined(); }
  const Tensor& constant() const { return constant_; }
  // Makes this value a constant (an initializer, or a folded result); takes its type.
  void set_constant(Tensor t);

  Graph* graph() const { return graph_; }

  // For a small int64 tensor computed from shapes (Shape, and Gather/Concat/Unsqueeze of
  // it): its elements as dims, symbolic where a shape is. Set by shape inference
  // (ir/shape_values.cpp) so that Reshape and Expand know their targets at compile time.
  const std::optional<std::vector<Dim>>& shape_value() const { return shape_value_; }
  void set_shape_value(std::optional<std::vector<Dim>> dims) { shape_value_ = std::move(dims); }

 private:
  friend class Graph;
  friend class Node;
  std::optional<std::vector<Dim>> shape_value_;
  std::string name_;
  DType dtype_ = DType::F32;
  Shape shape_;
  bool has_type_ = false;
  Node* producer_ = nullptr;
  std::vector<Node*> users_;
  Tensor constant_;
  Graph* graph_ = nullptr;
};

class Node {
 public:
  const std::string& op() const { return op_; }
  const OpDef& def() const { return *def_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // "node 'conv1' (Conv)", for messages.
  std::string describe() const;

  size_t num_inputs() const { return inputs_.size(); }
  // nullptr for an omitted optional input.
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool has_input(size_t i) const { return input(i) != nullptr; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  void set_input(size_t i, Value* v);
  size_t num_outputs() const { return outputs_.size(); }
  Value* output(size_t i) const { return outputs_[i]; }
  const std::vector<Value*>& outputs() const { return outputs_; }

  const AttributeMap& attrs() const { return attrs_; }
  bool has_attr(std::string_view name) const { return attrs_.find(name) != attrs_.end(); }
  void set_attr(const std::string& name, Attribute a) { attrs_[name] = std::move(a); }
  // The attribute, or the schema's default; fails naming the node if neither exists.
  const Attribute& attr(std::string_view name) const;
  int64_t i(std::string_view name) const { return attr(name).i(); }
  float f(std::string_view name) const { return attr(name).f(); }
  const std::string& s(std::string_view name) const { return attr(name).s(); }
  const std::vector<int64_t>& ints(std::string_view name) const { return attr(name).ints(); }
  const std::vector<float>& floats(std::string_view name) const { return attr(name).floats(); }

  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  std::string op_;
  const OpDef* def_ = nullptr;
  std::string name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttributeMap attrs_;
  Graph* graph_ = nullptr;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // A new value; the name is made unique if taken ("x" -> "x_1").
  Value* add_value(const std::string& name);
  Value* add_value(const std::string& name, DType dtype, Shape shape);
  Value* add_constant(const std::string& name, Tensor t);
  Value* find_value(std::string_view name) const;

  // Appends a node for a registered op; outputs are new values with these names.
  // Fails if the op is unknown.
  Node* add_node(const std::string& op, std::vector<Value*> inputs,
                 const std::vector<std::string>& output_names, AttributeMap attrs = {},
                 std::string name = "");
  // Moves the last node added to just before `before` (for passes that insert mid-graph).
  void move_last_before(const Node* before);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*>& inputs() { return inputs_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  std::vector<Value*>& outputs() { return outputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  bool is_graph_output(const Value* v) const;

  // Every use of `from` (node inputs and graph outputs) now reads `to`.
  void replace_all_uses(Value* from, Value* to);
  // Removes nodes (their outputs must be unused) and then values nobody refers to.
  void remove_nodes(const std::vector<Node*>& nodes);
  void remove_unused_values();
  // Replaces a node by constants: its outputs keep their names and become `results`.
  void fold_node(Node* node, std::vector<Tensor> results);

  std::string unique_value_name(const std::string& base) const;

  // The run-time bounds of the symbolic dims left open (--dim NAME=MIN..MAX): the code is
  // generated for any value within them, its memory planned for the maxima.
  const DimRanges& dim_ranges() const { return dim_ranges_; }
  DimRanges& dim_ranges() { return dim_ranges_; }

 private:
  DimRanges dim_ranges_;
  std::string name_ = "main";
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, Value*, std::less<>> by_name_;
};

}  // namespace kiln::ir
