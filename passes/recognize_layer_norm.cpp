// Pass: LayerNormalization recognition. The decomposition PyTorch (opset < 17) and
// TensorFlow export over the trailing axes of x,
//   m = ReduceMean(x); d = x - m; v = ReduceMean(d^2); y = d / Sqrt(v + eps) [* gamma] [+ beta]
// (d^2 as Pow(d, 2) or d * d; the division may be d * Reciprocal(...)) becomes one
// LayerNormalization(x, gamma, beta) {axis, epsilon} (ONNX opset 17). gamma and beta must be
// constants over the normalized axes; without gamma the scale is ones.
#include <algorithm>

#include "ir/ops/op_helpers.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

// The first normalized axis when `n` is ReduceMean over the trailing axes of its input with
// keepdims (an axes constant), else -1.
int64_t trailing_mean_axis(const ir::Node* n) {
  if (!n || n->op() != "ReduceMean" || n->i("keepdims") == 0 || !n->has_input(1) || !n->input(1)->is_constant())
    return -1;
  const ir::Shape& x = n->input(0)->shape();
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes = n->input(1)->constant().to_int64_vector();
  if (axes.empty()) return -1;
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i)) return -1;
  return axes[0];
}

bool same_axes(const ir::Node* a, const ir::Node* b) {
  return a->input(1)->constant().to_int64_vector() == b->input(1)->constant().to_int64_vector();
}

// A constant f32 scale or shift over the normalized dims `norm` of x (its shape, leading ones
// allowed), as a constant shaped exactly `norm`; nullptr when `v` is not one.
ir::Value* normalized_constant(ir::Graph& graph, ir::Value* v, const std::vector<int64_t>& norm) {
  if (!v->is_constant() || v->dtype() != ir::DType::F32) return nullptr;
  std::vector<int64_t> dims = v->shape().values();
  while (dims.size() > norm.size() && dims.front() == 1) dims.erase(dims.begin());
  if (dims != norm) return nullptr;
  if (v->shape().rank() == norm.size()) return v;
  ir::Tensor t(ir::DType::F32, norm);
  std::copy_n(v->constant().data<float>(), t.numel(), t.mutable_data<float>());
  return graph.add_constant(v->name() + ".norm", std::move(t));
}

bool try_recognize(ir::Graph& graph, ir::Node& mean) {
  const int64_t axis = trailing_mean_axis(&mean);
  ir::Value* x = mean.input(0);
  if (axis < 0 || x->dtype() != ir::DType::F32 || !x->shape().is_known()) return false;
  // The normalized dims must be numbers (the scale and shift are constants over them); the
  // leading ones may be symbols bounded with --dim.
  for (size_t i = static_cast<size_t>(axis); i < x->shape().rank(); ++i)
    if (!x->shape()[i].is_static()) return false;
  ir::Node* sub = single_user(mean.output(0));
  if (!sub || sub->op() != "Sub" || sub->input(0) != x || sub->input(1) != mean.output(0)) return false;
  ir::Value* d = sub->output(0);
  if (d->graph()->is_graph_output(d) || !(d->shape() == x->shape())) return false;

  // d's readers: the square (Pow(d, 2) or d * d) and the division.
  ir::Node *square = nullptr, *div = nullptr;
  for (ir::Node* u : d->users()) {
    bool is_square = (u->op() == "Pow" && u->input(0) == d && is_f32_scalar(u->input(1), 2.0)) ||
                     (u->op() == "Mul" && u->input(0) == d && u->input(1) == d);
    if (is_square && (!square || square == u)) square = u;
    else if ((u->op() == "Div" || u->op() == "Mul") && !div && u->input(0) == d) div = u;
    else return false;
  }
  if (!square || !div) return false;
  ir::Node* var = single_user(square->output(0));
  if (!var || trailing_mean_axis(var) != axis || !same_axes(var, &mean)) return false;
  ir::Node* add_eps = single_user(var->output(0));
  float eps = 0;
  if (!add_eps || add_eps->op() != "Add" || !f32_scalar(other_input(*add_eps, var->output(0)), eps)) return false;
  ir::Node* sqrt = single_user(add_eps->output(0));
  if (!sqrt || sqrt->op() != "Sqrt") return false;
  std::vector<ir::Node*> nodes = {&mean, sub, square, var, add_eps, sqrt};
  if (div->op() == "Div") {
    if (div->input(1) != sqrt->output(0) || single_user(sqrt->output(0)) != div) return false;
  } else {  // d * Reciprocal(sqrt)
    ir::Node* rcp = single_user(sqrt->output(0));
    if (!rcp || rcp->op() != "Reciprocal" || div->input(1) != rcp->output(0) || single_user(rcp->output(0)) != div)
      return false;
    nodes.push_back(rcp);
  }
  nodes.push_back(div);

  // Optional scale, then optional shift, each a constant over the normalized dims.
  std::vector<int64_t> norm;
  for (size_t i = static_cast<size_t>(axis); i < x->shape().rank(); ++i) norm.push_back(x->shape()[i].value());
  ir::Value* y = div->output(0);
  auto affine = [&](const char* op) -> ir::Value* {
    ir::Node* n = single_user(y);
    if (!n || n->op() != op || !other_input(*n, y) || !(n->output(0)->shape() == x->shape())) return nullptr;
    ir::Value* c = normalized_constant(graph, other_input(*n, y), norm);
    if (!c) return nullptr;
    nodes.push_back(n);
    y = n->output(0);
    return c;
  };
  ir::Value* gamma = affine("Mul");
  ir::Value* beta = affine("Add");
  if (!gamma) {
    ir::Tensor ones(ir::DType::F32, norm);
    std::fill_n(ones.mutable_data<float>(), ones.numel(), 1.0f);
    gamma = graph.add_constant(mean.name() + ".scale", std::move(ones));
  }
  std::vector<ir::Value*> inputs = {x, gamma};
  if (beta) inputs.push_back(beta);
  ir::AttributeMap attrs;
  attrs["axis"] = ir::Attribute(axis);
  attrs["epsilon"] = ir::Attribute(eps);
  replace_with_node(graph, nodes, y, "LayerNormalization", inputs, std::move(attrs), mean.name());
  return true;
}

}  // namespace

void recognize_layer_norm(ir::Graph& graph) { rewrite_until_done(graph, try_recognize); }

}  // namespace kiln::passes
