// Pass: evaluate at compile time every node whose results are already determined, either
// by constant inputs (through the op's reference implementation) or by the inputs' static
// types alone (through the op's fold rule, e.g. Shape).
#include "ir/control_flow.h"
#include "ir/op_registry.h"
#include "passes/pass_manager.h"

namespace kiln::passes {

namespace {

// Results bigger than this that are not cheaper than their inputs stay computed at run time,
// so folding never bloats the binary (e.g. Expand of a scalar to a huge tensor).
constexpr int64_t kMaxFoldedGrowthBytes = 1 << 20;

bool all_inputs_constant(const ir::Node& node) {
  for (const ir::Value* v : node.inputs())
    if (v && !v->is_constant()) return false;
  return true;
}

bool worth_storing(const ir::Node& node) {
  int64_t in_bytes = 0, out_bytes = 0;
  for (const ir::Value* v : node.inputs())
    if (v) in_bytes += v->constant().nbytes();
  for (const ir::Value* v : node.outputs())
    if (v->has_type() && v->shape().is_static())
      out_bytes += v->shape().numel() * ir::dtype_size(v->dtype());
  return out_bytes <= in_bytes + kMaxFoldedGrowthBytes;
}

// What is known of an If, Loop or Scan node at compile time reaches its bodies: a captured
// value that is constant becomes that constant inside them (the body input stays, unread, so
// positions do not move), and an If on a constant condition keeps only the branch it takes.
void fold_into_bodies(ir::Node& node) {
  if (node.op() != "If" && node.op() != "Loop" && node.op() != "Scan") return;
  const size_t captured = ir::num_captured(node);
  const size_t first = node.num_inputs() - captured;
  for (const auto& [name, a] : node.attrs()) {
    if (a.type() != ir::AttrType::Graph || !a.g()) continue;
    ir::Graph& body = *a.g();
    if (body.inputs().size() < captured) continue;  // malformed: the shape rule says so
    const size_t formal = body.inputs().size() - captured;
    for (size_t i = first; i < node.num_inputs(); ++i) {
      ir::Value* in = body.inputs()[formal + (i - first)];
      if (node.input(i)->is_constant() && !in->is_constant()) in->set_constant(node.input(i)->constant());
    }
  }
  if (node.op() == "If" && node.input(0)->is_constant() && node.input(0)->constant().numel() == 1) {
    const bool taken = node.input(0)->constant().as_int64(0) != 0;
    ir::Attribute live = node.attr(taken ? "then_branch" : "else_branch");
    node.set_attr("then_branch", live);
    node.set_attr("else_branch", live);
  }
}

// A value computed from shapes whose elements are all known numbers (the Gather of a static
// dim from the Shape of a tensor with a symbolic batch): that constant.
std::optional<ir::Tensor> static_shape_value(const ir::Node& node) {
  if (node.num_outputs() != 1 || node.output(0)->is_constant()) return std::nullopt;
  const ir::Value* out = node.output(0);
  if (!out->shape_value() || !out->has_type() || !out->shape().is_static()) return std::nullopt;
  std::vector<int64_t> values;
  for (const ir::Dim& d : *out->shape_value()) {
    if (!d.is_static()) return std::nullopt;
    values.push_back(d.value());
  }
  if (static_cast<int64_t>(values.size()) != out->shape().numel()) return std::nullopt;
  return ir::Tensor::from_vector<int64_t>(out->dtype(), out->shape().values(), values);
}

// A Reshape whose target is computed at run time from symbolic shapes but whose result is
// known as dims: the same target as a constant, with 0 for "the input's dim here" and -1 for
// the one remaining symbolic dim, so that the shape computation feeding it becomes dead.
void constant_reshape_target(ir::Graph& graph, ir::Node& node) {
  if (node.op() != "Reshape" || node.input(1)->is_constant() || node.i("allowzero") != 0) return;
  const ir::Shape& in = node.input(0)->shape();
  const ir::Shape& out = node.output(0)->shape();
  std::vector<int64_t> target;
  bool inferred = false;
  for (size_t i = 0; i < out.rank(); ++i) {
    const ir::Dim& d = out[i];
    if (d.is_unknown()) return;
    if (d.is_static() && d.value() > 0) {
      target.push_back(d.value());
    } else if (i < in.rank() && in[i] == d) {
      target.push_back(0);
    } else if (!d.is_static() && !inferred) {
      target.push_back(-1);
      inferred = true;
    } else {
      return;
    }
  }
  node.set_input(1, graph.add_constant(node.name() + "_shape",
                                       ir::Tensor::from_vector<int64_t>(ir::DType::I64, {static_cast<int64_t>(target.size())}, target)));
  ir::infer_node(node);
}

}  // namespace

void fold_constants(ir::Graph& graph) {
  // Snapshot: folding removes nodes from the list.
  std::vector<ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  for (ir::Node* node : nodes) {
    // Earlier folds may have made inputs constant (a Reshape's shape computed from Shape):
    // re-derive the types with what is now known.
    fold_into_bodies(*node);
    ir::infer_node(*node);
    if (std::optional<ir::Tensor> t = static_shape_value(*node)) {
      graph.fold_node(node, {std::move(*t)});
      continue;
    }
    constant_reshape_target(graph, *node);
    if (node->def().fold) {
      if (auto results = node->def().fold(*node)) {
        graph.fold_node(node, std::move(*results));
        continue;
      }
    }
    if (!all_inputs_constant(*node) || !worth_storing(*node)) continue;
    std::vector<const ir::Tensor*> args;
    for (const ir::Value* v : node->inputs()) args.push_back(v ? &v->constant() : nullptr);
    graph.fold_node(node, ir::eval_node(*node, args));
  }
}

}  // namespace kiln::passes
