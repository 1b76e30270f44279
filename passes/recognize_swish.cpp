// Pass: SiLU / Swish recognition. x * Sigmoid(x) (PyTorch's SiLU, TensorFlow's swish) and
// x * Sigmoid(alpha * x) become one Swish(x) {alpha} (ONNX opset 24), an elementwise op that
// fuses into a kernel's epilogue or an elementwise loop.
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool try_recognize(ir::Graph& graph, ir::Node& mul) {
  if (mul.op() != "Mul") return false;
  for (size_t k = 0; k < 2; ++k) {
    ir::Value* x = mul.input(1 - k);
    ir::Node* sig = producer_for(mul.input(k), "Sigmoid", &mul);
    if (!sig || x == mul.input(k) || !x->has_type() || !(x->shape() == mul.output(0)->shape())) continue;
    std::vector<ir::Node*> old = {sig, &mul};
    float alpha = 1.0f;
    if (sig->input(0) != x) {  // Sigmoid(alpha * x)
      ir::Node* scale = producer_for(sig->input(0), "Mul", sig);
      if (!scale || other_input(*scale, x) == nullptr || !f32_scalar(other_input(*scale, x), alpha)) continue;
      old.insert(old.begin(), scale);
    }
    ir::AttributeMap attrs;
    if (alpha != 1.0f) attrs["alpha"] = ir::Attribute(alpha);
    replace_with_node(graph, old, mul.output(0), "Swish", {x}, std::move(attrs), sig->name());
    return true;
  }
  return false;
}

}  // namespace

void recognize_swish(ir::Graph& graph) { rewrite_until_done(graph, try_recognize); }

}  // namespace kiln::passes
