// AtenBuilder: how an aten op's lowering adds IR nodes. Types are inferred as each node is
// added and nodes of constant inputs are folded at once, because TorchScript code asks
// questions of them right away (`torch.size(x)`, `torch.dim(x) == 4`) and branches on the
// answers at compile time.
#include <fmt/format.h>

#include "frontend/torchscript/aten_ops.h"
#include <cstdlib>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend::torchscript {
namespace {

// Folded results larger than their inputs by more than this stay computed at run time, so a
// model cannot bloat its binary (torch.zeros of a huge shape) through folding.
constexpr int64_t kMaxFoldGrowthBytes = 1 << 20;

bool foldable(const ir::Node& node) {
  int64_t in_bytes = 0, out_bytes = 0;
  for (const ir::Value* v : node.inputs()) {
    if (!v) continue;
    if (!v->is_constant()) return false;
    in_bytes += static_cast<int64_t>(v->constant().nbytes());
  }
  for (const ir::Value* v : node.outputs()) {
    if (!v->has_type() || !v->shape().is_static()) return false;
    out_bytes += v->shape().numel() * static_cast<int64_t>(ir::dtype_size(v->dtype()));
  }
  return node.def().eval && out_bytes <= in_bytes + kMaxFoldGrowthBytes;
}

}  // namespace

std::vector<ir::Value*> AtenBuilder::node(const std::string& op, std::vector<ir::Value*> inputs,
                                          ir::AttributeMap attrs, size_t num_outputs) {
  std::string base = node_prefix_.empty() ? op : node_prefix_;
  std::string name = fmt::format("{}_{}", base, counter_++);
  std::vector<std::string> outs;
  for (size_t k = 0; k < num_outputs; ++k) outs.push_back(num_outputs == 1 ? name : fmt::format("{}_{}", name, k));
  try {
    if (auto folded = fold(op, inputs, attrs, outs, name)) return *folded;
    ir::Node* n = graph_->add_node(op, std::move(inputs), outs, std::move(attrs), name);
    ir::infer_node(*n);
    trace(*n);
    return n->outputs();
  } catch (const Error& e) {
    fail_op(e.what());
  }
}

// A node whose inputs are all constant, evaluated in a scratch graph (the model's graph would
// drop every value without users, the weights not yet read among them): its results as
// constants, or nullopt when it is not worth folding.
std::optional<std::vector<ir::Value*>> AtenBuilder::fold(const std::string& op, const std::vector<ir::Value*>& inputs,
                                                         const ir::AttributeMap& attrs,
                                                         const std::vector<std::string>& outs, const std::string& name) {
  for (const ir::Value* v : inputs)
    if (v && !v->is_constant()) return std::nullopt;
  ir::Graph scratch;
  std::vector<ir::Value*> args;
  for (const ir::Value* v : inputs) args.push_back(v ? scratch.add_constant(v->name(), v->constant()) : nullptr);
  ir::Node* n = scratch.add_node(op, args, outs, attrs, name);
  ir::infer_node(*n);
  if (!foldable(*n)) return std::nullopt;
  std::vector<const ir::Tensor*> values;
  for (const ir::Value* v : n->inputs()) values.push_back(v ? &v->constant() : nullptr);
  std::vector<ir::Tensor> results = ir::eval_node(*n, values);
  std::vector<ir::Value*> out;
  for (size_t k = 0; k < results.size(); ++k) out.push_back(graph_->add_constant(outs[k], std::move(results[k])));
  trace(*n);
  return out;
}

// KILN_TS_TRACE=1: each node as it is lowered, with where it comes from and its shapes.
void AtenBuilder::trace(const ir::Node& n) const {
  static const bool on = std::getenv("KILN_TS_TRACE") != nullptr;
  if (!on) return;
  std::string ins;
  for (const ir::Value* v : n.inputs()) ins += v ? fmt::format(" {}{}", v->name(), v->has_type() ? v->shape().str() : "?") : " -";
  const ir::Value* o = n.output(0);
  fmt::print(stderr, "{}: {}{} -> {}\n", where(), n.op(), ins, o->has_type() ? o->shape().str() : "?");
}

ir::Value* AtenBuilder::constant(ir::Tensor t) {
  return graph_->add_constant(fmt::format("{}_const_{}", node_prefix_.empty() ? "c" : node_prefix_, counter_++),
                              std::move(t));
}

ir::Value* AtenBuilder::constant_i64s(const std::vector<int64_t>& v) {
  return constant(ir::Tensor::from_vector<int64_t>(ir::DType::I64, {static_cast<int64_t>(v.size())}, v));
}

ir::Value* AtenBuilder::scalar_tensor(const TValue& v, std::optional<ir::DType> like) {
  if (v.kind == TKind::Tensor) {
    if (like && v.tensor->dtype() != *like)
      return node1("Cast", {v.tensor}, {{"to", static_cast<int64_t>(*like)}});
    return v.tensor;
  }
  ir::DType dt = like ? *like : v.kind == TKind::Float ? ir::DType::F32 : v.kind == TKind::Bool ? ir::DType::Bool
                                                                                                  : ir::DType::I64;
  double d = v.kind == TKind::Float ? v.f : v.kind == TKind::Bool ? (v.b ? 1 : 0) : static_cast<double>(v.i);
  if (!v.is_number()) fail_op(fmt::format("expected a number, found {}", describe(v)));
  ir::Tensor t = v.kind == TKind::Float ? ir::Tensor::from_vector<double>(dt, {}, {d})
                                        : ir::Tensor::from_vector<int64_t>(dt, {}, {v.kind == TKind::Bool ? v.b : v.i});
  return constant(std::move(t));
}

void AtenBuilder::fail_op(const std::string& problem) const { fail("{}: {}", where(), problem); }

}  // namespace kiln::frontend::torchscript
