// Pass: elementwise chain fusion. A chain of elementwise ops (ops with a scalar expression
// and no attribute set, the op's defaults applying; one dtype throughout), each the only reader of the previous one's
// result, becomes one kiln.Elementwise node that the backend emits as a single loop. Every
// input of the chain must have the result's shape or hold one element.
#include <map>

#include "ir/op_registry.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool fusable(const ir::Node& n, const ir::Shape& shape, ir::DType dtype) {
  const ir::OpDef& def = n.def();
  if (def.scalar_expr.empty() || !n.attrs().empty() || n.num_outputs() != 1) return false;
  for (const ir::AttrSpec& spec : def.attrs)
    if (!spec.default_value) return false;
  const ir::Value* out = n.output(0);
  if (!out->has_type() || out->dtype() != dtype || !(out->shape() == shape)) return false;
  for (const ir::Value* v : n.inputs()) {
    if (!v || !v->has_type() || v->dtype() != dtype || !v->shape().is_known()) return false;
    if (!(v->shape() == shape) && v->shape().product() != ir::Dim(1)) return false;
  }
  return true;
}

bool try_fuse(ir::Graph& graph, ir::Node& first) {
  const ir::Value* out0 = first.num_outputs() == 1 ? first.output(0) : nullptr;
  if (!out0 || !out0->has_type() || !out0->shape().is_known() || !ir::is_float(out0->dtype())) return false;
  const ir::Shape shape = out0->shape();
  const ir::DType dtype = out0->dtype();
  if (!fusable(first, shape, dtype)) return false;
  std::vector<ir::Node*> chain = {&first};
  for (ir::Node* next = single_user(first.output(0)); next && fusable(*next, shape, dtype);
       next = single_user(next->output(0)))
    chain.push_back(next);
  if (chain.size() < 2) return false;

  std::vector<ir::Value*> inputs;
  std::map<const ir::Value*, std::string> names;  // chain values and inputs -> tK / iK
  std::vector<std::string> steps;
  for (size_t s = 0; s < chain.size(); ++s) {
    std::string text = chain[s]->op();
    for (ir::Value* v : chain[s]->inputs()) {
      auto it = names.find(v);
      if (it == names.end()) {
        it = names.emplace(v, "i" + std::to_string(inputs.size())).first;
        inputs.push_back(v);
      }
      text += " " + it->second;
    }
    names[chain[s]->output(0)] = "t" + std::to_string(s);
    steps.push_back(text);
  }
  ir::Value* result = chain.back()->output(0);
  replace_with_node(graph, chain, result, "kiln.Elementwise", inputs,
                    {{"steps", ir::Attribute(steps)}}, chain.front()->name());
  return true;
}

}  // namespace

void fuse_elementwise(ir::Graph& graph) {
  rewrite_forward_until_done(graph, try_fuse);
}

}  // namespace kiln::passes
