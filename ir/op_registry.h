// The op registry: every op's schema, shape rule, reference implementation and cost, defined
// once in ir/ops/ and consulted by frontends, passes, the interpreter and backends alike.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/graph.h"

namespace kiln::ir {

struct AttrSpec {
  std::string name;
  AttrType type;
  // Absent: the attribute is required unless `optional` says the op copes without it.
  std::optional<Attribute> default_value;
  bool optional = false;
};

struct InputSpec {
  std::string name;
  bool optional = false;
  bool variadic = false;  // only the last input; one or more values
  // Its values decide the output's shape (Resize's scales): constant in real models, and
  // what a test harness makes constant to compile a node test with static shapes.
  bool sets_output_shape = false;
};

struct Cost {
  double flops = 0;  // multiply-add counts as two
  double bytes = 0;  // bytes read plus written, ignoring caches
};

// Sets each output's dtype and shape from the inputs' types (and constant values, where an
// input like Reshape's shape must be known). Throws kiln::Error on invalid input.
using InferFn = void (*)(Node& node);
// Reference implementation: obvious loops, the semantics everything else is checked against.
// `inputs[i]` is nullptr for an omitted optional input.
using EvalFn = void (*)(const Node& node, std::span<const Tensor* const> inputs,
                        std::vector<Tensor>& outputs);
using CostFn = Cost (*)(const Node& node);
// Compile-time results from the inputs' types alone (Shape of a static shape), or nullopt.
// Ops whose results need the inputs' values are folded through `eval` instead.
using FoldFn = std::optional<std::vector<Tensor>> (*)(const Node& node);

struct OpDef {
  std::string name;
  std::string summary;
  std::vector<InputSpec> inputs;
  std::vector<std::string> outputs;
  size_t min_outputs = 1;  // trailing outputs beyond this are optional
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  EvalFn eval = nullptr;
  CostFn cost = nullptr;  // nullptr: memory-bound, cost is bytes moved
  FoldFn fold = nullptr;
  // Elementwise ops only: the scalar function as a C++ expression over `x` (unary) or `a`
  // and `b` (binary), with `T` the compute type. The same text is compiled into the
  // reference implementation (ir/ops/elementwise_ops.def) and emitted by code generators.
  std::string scalar_expr;
  // Accepts the storage-only dtypes (float8, float4, int4, int2...; ir/dtype.h) on its inputs
  // and outputs. Ops without it are refused them by infer_node, so their code never sees one.
  bool storage_dtypes = false;
  // Each output element is computed from the input elements at the same index, the inputs
  // broadcast numpy-style, and no attribute names an axis: a Transpose commutes with the op
  // (passes/sink_transposes.cpp). The registry sets it for every op with a scalar_expr; the
  // variadic ops, Clip, Cast and Identity set it themselves.
  bool elementwise = false;

  size_t min_inputs() const;
  size_t max_inputs() const;  // SIZE_MAX when variadic
};

class Registry {
 public:
  void add(OpDef def);
  const OpDef* find(std::string_view name) const;
  // All ops sorted by name.
  std::vector<const OpDef*> all() const;

 private:
  std::map<std::string, OpDef, std::less<>> ops_;
};

// The registry of all built-in ops, built on first use.
const Registry& registry();

// Runs `node`'s shape rule after checking arity and attribute types; errors name the node.
void infer_node(Node& node);
// Evaluates `node` with its reference implementation; errors name the node.
std::vector<Tensor> eval_node(const Node& node, std::span<const Tensor* const> inputs);
// The node's cost from its op's cost rule, or the bytes it touches by default.
Cost node_cost(const Node& node);

}  // namespace kiln::ir
