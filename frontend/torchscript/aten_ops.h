// The aten (and prim) ops the torch frontends understand, each written once: its argument
// names and defaults as in PyTorch's schema, and how it becomes IR nodes. TorchScript code
// (`torch.conv2d(x, w, b, [1, 1], ...)`) and torch.export graphs (`torch.ops.aten.conv2d.default`
// with named arguments) both resolve their calls here.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/torchscript/torch_value.h"
#include "ir/graph.h"

namespace kiln::frontend::torchscript {

// What an op's lowering may do to the graph being built.
class AtenBuilder {
 public:
  virtual ~AtenBuilder() = default;
  ir::Graph& graph() { return *graph_; }
  // Adds a node, infers its outputs' types at once (so that later shape questions have
  // answers), and folds it to constants when every input is constant. Errors name the op
  // being lowered and where it stands in the source.
  std::vector<ir::Value*> node(const std::string& op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs = {},
                               size_t num_outputs = 1);
  ir::Value* node1(const std::string& op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs = {}) {
    return node(op, std::move(inputs), std::move(attrs), 1)[0];
  }
  // A constant tensor value.
  ir::Value* constant(ir::Tensor t);
  ir::Value* constant_i64s(const std::vector<int64_t>& v);
  // A scalar argument (Int/Float/Bool/0-d tensor) as a tensor of `like`'s dtype (or its own).
  ir::Value* scalar_tensor(const TValue& v, std::optional<ir::DType> like = std::nullopt);
  // Where the call being lowered stands ("code/__torch__/m.py:12", or a node name): for messages.
  virtual std::string where() const = 0;
  [[noreturn]] void fail_op(const std::string& problem) const;

 private:
  std::optional<std::vector<ir::Value*>> fold(const std::string& op, const std::vector<ir::Value*>& inputs,
                                              const ir::AttributeMap& attrs, const std::vector<std::string>& outs,
                                              const std::string& name);
  void trace(const ir::Node& n) const;

 protected:
  ir::Graph* graph_ = nullptr;
  std::string node_prefix_;  // names nodes after the source construct
  int counter_ = 0;
};

// Lowers aten op `name` ("conv2d", "add_", "size") with its arguments already bound to the
// schema's parameters (positional then keywords, defaults filled). Returns the op's results:
// one TValue, or a Tuple for several. nullopt when the op is not in the table.
struct AtenCall {
  std::string name;                       // without namespace or overload: "conv2d"
  std::vector<TValue> positional;
  std::vector<std::pair<std::string, TValue>> keywords;
};
std::optional<TValue> lower_aten(AtenBuilder& b, const AtenCall& call);
bool has_aten_op(std::string_view name);
// Every op name in the table, sorted (for docs and `kiln inspect`).
std::vector<std::string> aten_op_names();

}  // namespace kiln::frontend::torchscript
