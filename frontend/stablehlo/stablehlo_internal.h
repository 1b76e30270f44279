// Inside the StableHLO importer: the state an op's lowering sees, and the lowering tables
// (stablehlo_ops.cpp: elementwise, shape and layout ops; stablehlo_nn.cpp: dot_general,
// convolution, reduce, reduce_window).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/stablehlo/mlir_text.h"
#include "ir/graph.h"

namespace kiln::frontend::stablehlo {

// dense<...> text (the part inside the brackets) as a tensor of `type`: a splat, a nested
// list of exactly the type's dims, or a "0x..." hex blob (all elements, or one splat
// element). Throws kiln::Error with what was wrong (no location: callers add it).
ir::Tensor dense_tensor(const std::string& body, const TensorType& type, const ImportLimits& limits);

class Lowering {
 public:
  Lowering(ir::Graph& graph, const Module& module, const ImportLimits& limits)
      : graph_(graph), module_(module), limits_(limits) {}

  // The op being lowered, and a name for its nodes ("add_3" for `%3 = stablehlo.add`).
  void begin(const Op& op, const std::string& name_base) {
    op_ = &op;
    base_ = name_base;
    part_ = 0;
  }
  const Op& op() const { return *op_; }
  const ImportLimits& limits() const { return limits_; }
  ir::Graph& graph() { return graph_; }

  // "model.mlir:12:5: stablehlo.reshape: problem"
  [[noreturn]] void fail_op(const std::string& problem) const;

  // Adds a node and infers its output types (errors name the op and its location).
  ir::Value* node(const std::string& op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs = {});
  ir::Value* constant(ir::Tensor t);
  ir::Value* i64s(const std::vector<int64_t>& v);
  // A 0-d constant of dtype `dt` holding `v`.
  ir::Value* scalar(double v, ir::DType dt);

  // Helpers that add nothing when there is nothing to do.
  ir::Value* reshape(ir::Value* v, const std::vector<int64_t>& dims);
  ir::Value* transpose(ir::Value* v, const std::vector<int64_t>& perm);
  ir::Value* cast(ir::Value* v, ir::DType dt);

  std::vector<int64_t> dims(const ir::Value* v) const;  // static dims, or fails
  // Attributes of the op: required ones fail naming the op when absent or of the wrong kind.
  const Attr& attr(const std::string& key) const;
  const Attr* find_attr(const std::string& key) const;
  std::vector<int64_t> ints(const Attr& a, const std::string& what) const;  // [1, 2], array<i64: ...>, dense<...>
  int64_t integer(const Attr& a, const std::string& what) const;
  // The last word of an opaque attribute: `#stablehlo<comparison_direction GT>` -> "GT".
  std::string opaque_word(const Attr& a) const;
  const TensorType& result_type(size_t k = 0) const;

  // The known value of a constant operand (a stablehlo.constant, or nullptr).
  static const ir::Tensor* constant_of(const ir::Value* v) { return v && v->is_constant() ? &v->constant() : nullptr; }

 private:
  ir::Graph& graph_;
  const Module& module_;
  const ImportLimits& limits_;
  const Op* op_ = nullptr;
  std::string base_;
  int part_ = 0;
};

using LowerFn = std::vector<ir::Value*> (*)(Lowering& L, const std::vector<ir::Value*>& in);

// Op name ("stablehlo.add") to its lowering; each file adds its own.
void add_basic_lowerings(std::map<std::string, LowerFn>& table);
void add_nn_lowerings(std::map<std::string, LowerFn>& table);

}  // namespace kiln::frontend::stablehlo
