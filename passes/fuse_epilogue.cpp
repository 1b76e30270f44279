// Pass: epilogue fusion. A Conv, Gemm or MatMul (f32) followed by a residual Add (of a value
// shaped like its result) and/or an activation (an op of ir::kFusedActivations: Relu,
// Sigmoid, Tanh, Swish, Gelu, ..., or Clip with constant bounds) becomes one kiln.FusedConv /
// kiln.FusedGemm / kiln.FusedMatMul computing act(op(...) + Z) (ir/ops/fused.cpp), which the
// backend runs as the kernel's epilogue. A MatMul also takes the bias Add before them (a
// constant row: what a Linear layer on a 3-D input exports as). Intermediate results read
// elsewhere stop the chain.
#include <limits>

#include "ir/ops/fused.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

struct Chain {
  std::vector<ir::Node*> nodes;
  ir::Value* result = nullptr;
  ir::Value* bias = nullptr;
  ir::Value* residual = nullptr;
  ir::Node* activation = nullptr;
  float clip_min = 0, clip_max = 0;
};

bool same_type(const ir::Value* a, const ir::Value* b) {
  return a->has_type() && b->has_type() && a->dtype() == b->dtype() && a->shape() == b->shape();
}

// A constant [.., 1, N] row added to every row of the result.
void take_bias(Chain& c) {
  ir::Node* add = single_user(c.result);
  if (!add || add->op() != "Add" || add->input(0) == add->input(1)) return;
  ir::Value* b = add->input(0) == c.result ? add->input(1) : add->input(0);
  if (!b->is_constant() || b->dtype() != ir::DType::F32 || !same_type(add->output(0), c.result)) return;
  const ir::Shape& s = b->shape();
  const ir::Shape& y = c.result->shape();
  if (s.rank() < 1 || s.rank() > y.rank() || !(s[s.rank() - 1] == y[y.rank() - 1])) return;
  for (size_t i = 0; i + 1 < s.rank(); ++i)
    if (s[i].value() != 1) return;
  c.bias = b;
  c.nodes.push_back(add);
  c.result = add->output(0);
}

void take_residual(Chain& c) {
  ir::Node* add = single_user(c.result);
  if (!add || add->op() != "Add" || add->input(0) == add->input(1)) return;
  ir::Value* z = add->input(0) == c.result ? add->input(1) : add->input(0);
  if (!same_type(z, c.result) || !same_type(add->output(0), c.result)) return;
  c.residual = z;
  c.nodes.push_back(add);
  c.result = add->output(0);
}

// A Clip bound: a constant f32 scalar, or absent (then `fallback`).
bool clip_bound(const ir::Node& clip, size_t i, float fallback, float& out) {
  if (!clip.has_input(i)) {
    out = fallback;
    return true;
  }
  std::vector<float> v = f32_constant(clip.input(i));
  if (v.size() != 1) return false;
  out = v[0];
  return true;
}

void take_activation(Chain& c) {
  ir::Node* a = single_user(c.result);
  if (!a || !same_type(a->output(0), c.result) || a->op() == "none" || !ir::is_fused_activation(a->op())) return;
  if (a->op() == "Clip" && (!clip_bound(*a, 1, std::numeric_limits<float>::lowest(), c.clip_min) ||
                            !clip_bound(*a, 2, std::numeric_limits<float>::max(), c.clip_max)))
    return;
  c.activation = a;
  c.nodes.push_back(a);
  c.result = a->output(0);
}

bool try_fuse(ir::Graph& graph, ir::Node& n) {
  std::string fused;
  size_t base_inputs = 0;
  if (n.op() == "Conv") {
    fused = "kiln.FusedConv";
    base_inputs = 3;
  } else if (n.op() == "Gemm") {
    fused = "kiln.FusedGemm";
    base_inputs = 3;
  } else if (n.op() == "MatMul" && n.input(0)->shape().rank() >= 2 && n.input(1)->shape().rank() == 2) {
    fused = "kiln.FusedMatMul";  // B shared by every batch: one GEMM, one epilogue
    base_inputs = 2;
  } else {
    return false;
  }
  if (!n.output(0)->has_type() || n.output(0)->dtype() != ir::DType::F32 || !n.output(0)->shape().is_known())
    return false;
  Chain c;
  c.nodes = {&n};
  c.result = n.output(0);
  const bool matmul = n.op() == "MatMul";
  if (matmul) take_bias(c);
  take_residual(c);
  take_activation(c);
  if (c.nodes.size() == 1) return false;

  std::vector<ir::Value*> inputs;
  for (size_t i = 0; i < base_inputs; ++i) inputs.push_back(n.input(i));
  if (matmul) inputs.push_back(c.bias);
  inputs.push_back(c.residual);
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  ir::AttributeMap attrs = n.attrs();
  if (c.activation)
    for (auto& [name, a] : ir::fused_activation_attrs(*c.activation, c.clip_min, c.clip_max)) attrs[name] = a;
  replace_with_node(graph, c.nodes, c.result, fused, inputs, attrs, n.name());
  return true;
}

}  // namespace

void fuse_epilogue(ir::Graph& graph) {
  rewrite_forward_until_done(graph, try_fuse);
}

}  // namespace kiln::passes
