// TEMPORARY, linked only into test_pt2_import (never into a library): a stand-in for the
// aten op table (frontend/torchscript/aten_ops.h), which another branch is writing. It knows
// the ops of the fixtures by name and lowers each call to one untyped "Identity" node over
// the call's tensor arguments with as many outputs as the op has, named after the node: the
// importer then types them from the program's tensor_values. Delete this file when
// kiln_frontend_torchscript is a real library.
#include <algorithm>
#include <array>

#include "frontend/torchscript/aten_ops.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {
namespace {

constexpr std::array<std::string_view, 39> kOps = {
    "_native_batch_norm_legit_no_training", "adaptive_avg_pool2d", "add", "addmm", "batch_norm", "clamp",
    "contiguous", "conv2d", "convolution", "div", "dropout", "flatten", "gelu", "hardswish", "hardtanh",
    "layer_norm", "linear", "max_pool2d", "max_pool2d_with_indices", "mean", "mul", "permute", "relu",
    "reshape", "scaled_dot_product_attention", "select", "softmax", "squeeze", "transpose", "unflatten",
    "unsqueeze", "view", "_softmax", "t", "native_layer_norm", "sym_size", "add_", "relu_", "hardtanh_"};

size_t num_outputs(std::string_view op) {
  if (op == "_native_batch_norm_legit_no_training" || op == "native_layer_norm") return 3;
  if (op == "max_pool2d_with_indices") return 2;
  return 1;
}

void collect(const TValue& v, std::vector<ir::Value*>& out) {
  if (v.is_tensor()) out.push_back(v.tensor);
  if (v.is_sequence())
    for (const TValue& item : *v.items) collect(item, out);
}

}  // namespace

// Every call lower_aten saw, for tests of how arguments are converted.
std::vector<AtenCall>& stub_aten_calls() {
  static std::vector<AtenCall> calls;
  return calls;
}

std::vector<ir::Value*> AtenBuilder::node(const std::string& op, std::vector<ir::Value*> inputs,
                                          ir::AttributeMap attrs, size_t num_outputs) {
  std::vector<std::string> names;
  for (size_t k = 0; k < num_outputs; ++k)
    names.push_back(k == 0 ? node_prefix_ : fmt::format("{}_{}", node_prefix_, k));
  ir::Node* n = graph_->add_node(op, std::move(inputs), names, std::move(attrs), node_prefix_);
  return n->outputs();
}

ir::Value* AtenBuilder::constant(ir::Tensor t) { return graph_->add_constant(node_prefix_ + "_constant", std::move(t)); }

ir::Value* AtenBuilder::constant_i64s(const std::vector<int64_t>& v) {
  return constant(ir::Tensor::from_vector<int64_t>(ir::DType::I64, {static_cast<int64_t>(v.size())}, v));
}

ir::Value* AtenBuilder::scalar_tensor(const TValue& v, std::optional<ir::DType> like) {
  if (v.is_tensor()) return v.tensor;
  double x = v.kind == TKind::Float ? v.f : v.kind == TKind::Bool ? v.b : static_cast<double>(v.i);
  return constant(ir::Tensor::from_vector<double>(like.value_or(ir::DType::F32), {}, {x}));
}

void AtenBuilder::fail_op(const std::string& problem) const { fail("{}: {}", where(), problem); }

std::optional<TValue> lower_aten(AtenBuilder& b, const AtenCall& call) {
  if (!has_aten_op(call.name)) return std::nullopt;
  stub_aten_calls().push_back(call);
  std::vector<ir::Value*> inputs;
  for (const TValue& v : call.positional) collect(v, inputs);
  for (const auto& kw : call.keywords) collect(kw.second, inputs);
  std::vector<ir::Value*> outs = b.node("Identity", inputs, {}, num_outputs(call.name));
  if (outs.size() == 1) return TValue::of(outs[0]);
  std::vector<TValue> items;
  for (ir::Value* v : outs) items.push_back(TValue::of(v));
  return TValue::tuple(std::move(items));
}

bool has_aten_op(std::string_view name) { return std::find(kOps.begin(), kOps.end(), name) != kOps.end(); }

std::vector<std::string> aten_op_names() {
  std::vector<std::string> names(kOps.begin(), kOps.end());
  std::sort(names.begin(), names.end());
  return names;
}

std::string tkind_name(TKind kind) {
  switch (kind) {
    case TKind::None: return "None";
    case TKind::Bool: return "bool";
    case TKind::Int: return "int";
    case TKind::Float: return "float";
    case TKind::String: return "str";
    case TKind::Tensor: return "Tensor";
    case TKind::List: return "List";
    case TKind::Tuple: return "Tuple";
    case TKind::Dict: return "Dict";
    case TKind::Device: return "Device";
    case TKind::Object: return "Object";
    case TKind::Function: return "Function";
    case TKind::Module: return "Module";
  }
  return "?";
}

std::string describe(const TValue& v) { return tkind_name(v.kind); }

}  // namespace kiln::frontend::torchscript
