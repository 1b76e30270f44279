// Pass: epilogue fusion. A Conv, Gemm or MatMul (f32) followed by a residual Add (of a value
// shaped like its result) and/or an activation (Relu, Sigmoid, Tanh, Clip with constant
// bounds, or SiLU written x * Sigmoid(x)) becomes one kiln.FusedConv / kiln.FusedGemm /
// kiln.FusedMatMul computing act(op(...) + Z) (ir/ops/fused.cpp), which the backend runs as
// the kernel's epilogue. Intermediate results read elsewhere stop the chain.
#include <limits>

#include "ir/ops/fused.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

struct Chain {
  std::vector<ir::Node*> nodes;
  ir::Value* result = nullptr;
  ir::Value* residual = nullptr;
  std::string activation = "none";
  float alpha = 0, beta = 0;
};

bool same_type(const ir::Value* a, const ir::Value* b) {
  return a->has_type() && b->has_type() && a->dtype() == b->dtype() && a->shape() == b->shape();
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
  const ir::Value* y = c.result;
  // SiLU: y * Sigmoid(y), y read by exactly those two nodes.
  if (y->users().size() == 2 && !y->graph()->is_graph_output(y)) {
    ir::Node* s = y->users()[0]->op() == "Sigmoid" ? y->users()[0] : y->users()[1];
    ir::Node* m = s == y->users()[0] ? y->users()[1] : y->users()[0];
    if (s->op() == "Sigmoid" && m->op() == "Mul" && single_user(s->output(0)) == m &&
        ((m->input(0) == y && m->input(1) == s->output(0)) || (m->input(1) == y && m->input(0) == s->output(0))) &&
        same_type(m->output(0), y)) {
      c.activation = "SiLU";
      c.nodes.push_back(s);
      c.nodes.push_back(m);
      c.result = m->output(0);
    }
    return;
  }
  ir::Node* a = single_user(y);
  if (!a || !same_type(a->output(0), y)) return;
  if (a->op() == "Relu" || a->op() == "Sigmoid" || a->op() == "Tanh") {
    c.activation = a->op();
  } else if (a->op() == "Clip") {
    if (!clip_bound(*a, 1, std::numeric_limits<float>::lowest(), c.alpha) ||
        !clip_bound(*a, 2, std::numeric_limits<float>::max(), c.beta))
      return;
    c.activation = "Clip";
  } else {
    return;
  }
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
  if (!n.output(0)->has_type() || n.output(0)->dtype() != ir::DType::F32 || !n.output(0)->shape().is_static())
    return false;
  Chain c;
  c.nodes = {&n};
  c.result = n.output(0);
  take_residual(c);
  take_activation(c);
  if (c.nodes.size() == 1) return false;

  std::vector<ir::Value*> inputs;
  for (size_t i = 0; i < base_inputs; ++i) inputs.push_back(n.input(i));
  inputs.push_back(c.residual);
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  ir::AttributeMap attrs = n.attrs();
  attrs["activation"] = ir::Attribute(c.activation);
  if (c.activation == "Clip") {
    attrs["activation_alpha"] = ir::Attribute(c.alpha);
    attrs["activation_beta"] = ir::Attribute(c.beta);
  }
  replace_with_node(graph, c.nodes, c.result, fused, inputs, attrs, n.name());
  return true;
}

}  // namespace

void fuse_epilogue(ir::Graph& graph) {
  // Fused nodes are never candidates again, so one sweep from the start after each rewrite
  // terminates; `done` skips the prefix already looked at.
  size_t done = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const auto& nodes = graph.nodes();
    for (size_t i = done; i < nodes.size(); ++i)
      if (try_fuse(graph, *nodes[i])) {
        changed = true;
        done = i;
        break;
      }
  }
}

}  // namespace kiln::passes
