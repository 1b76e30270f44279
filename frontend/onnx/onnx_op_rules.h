// How ONNX ops whose form changed across opsets (or that have no IR op of their own) become
// the IR's canonical ops. This is ONNX's version history, so it lives in the frontend; what
// an op means at the newest opset is its registry entry's business.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/onnx/onnx_internal.h"
#include "ir/graph.h"

namespace kiln::frontend::onnx_import {

// A node as the scan sees it, before anything is converted.
struct NodeView {
  const onnx::NodeProto& proto;
  int opset;                          // of the node's domain
  const TypeHints& hints;             // declared types in this graph and the enclosing ones
  const std::set<std::string>& used;  // names read in this graph, its subgraphs, or its outputs
};

// A node about to be added to the IR graph.
struct PendingNode {
  std::string op;
  std::vector<ir::Value*> inputs;     // nullptr for an omitted optional input
  std::vector<std::string> outputs;   // "" for an omitted optional output
  ir::AttributeMap attrs;
  std::string name;
};

// What a rule may do to the graph being built.
class NodeEmitter {
 public:
  virtual ~NodeEmitter() = default;
  // A new constant value named after `hint` (made unique).
  virtual ir::Value* constant(const std::string& hint, ir::Tensor t) = 0;
  // Adds a helper node whose outputs get fresh names; returns them.
  virtual std::vector<ir::Value*> emit_helper(PendingNode node) = 0;
  // The value's dtype and shape, from its type or from what the model declares for it.
  virtual std::optional<ir::DType> dtype_of(const ir::Value* v) const = 0;
  virtual std::optional<ir::Shape> shape_of(const ir::Value* v) const = 0;
  // Fails naming the file and the node.
  [[noreturn]] virtual void fail_node(const PendingNode& node, const std::string& problem) const = 0;
};

struct OpRule {
  std::string_view op_type;
  // The opset at which ONNX's form of the op became the IR's. Older nodes are rewritten by
  // `convert`, or unsupported if there is none. INT_MAX: `convert` applies at every opset.
  int canonical_since = 1;
  // The IR ops the rule emits, all of which must be registered; empty: the op itself.
  std::vector<std::string_view> emits;
  // ONNX attributes that change nothing at inference; dropped unless the IR op declares them.
  std::vector<std::string_view> noop_attrs;
  // Why this node cannot be imported, or "" if it can.
  std::string (*check)(const NodeView& node) = nullptr;
  // Rewrites `node` from its ONNX form into the canonical one, possibly emitting helper
  // nodes first; `node` is then added as the one that defines the ONNX outputs.
  void (*convert)(NodeEmitter& emitter, PendingNode& node, int opset) = nullptr;
};

// The rule for an ONNX op of the default domain, or nullptr.
const OpRule* find_op_rule(std::string_view op_type);

// Why a default-domain node cannot be imported ("" if it can): no IR op, an old form
// nobody rewrites, or what the op's rule rejects.
std::string unsupported_reason(const NodeView& node);

// Whether `attr` may be dropped from a node of `op_type` when its IR op does not declare it.
bool is_noop_attr(std::string_view op_type, std::string_view attr);

}  // namespace kiln::frontend::onnx_import
