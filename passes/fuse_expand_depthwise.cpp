// Pass: an inverted-residual block's expand and depthwise convolutions as one node. A 1x1 Conv
// or kiln.FusedConv (ungrouped, stride 1, unpadded) whose only reader is a depthwise 3x3 Conv
// or kiln.FusedConv (ir::depthwise3x3_stride: pads 1, stride 1 or 2) becomes one
// kiln.FusedConvDepthwise (ir/ops/fused.cpp): f32, static shapes, neither with a residual, both
// activations none, Relu or Clip, and only where the runtime's kernel applies and pays
// (kiln::rt::expand_depthwise3x3_applicable: expanded channels a multiple of 8, ...;
// expand_depthwise3x3_pays: planes of 100 positions or more). That
// kernel computes the expanded rows band by band next to the depthwise, so the expanded tensor
// (MobileNetV2's 96 x 112 x 112, 4.8 MB) never goes to memory and back.
// Then a depthwise 3x3 left alone whose only reader is such a 1x1 becomes one
// kiln.FusedDepthwiseConv, under the same conditions on dtype, shapes, residual and activations,
// where kiln::rt::depthwise3x3_pointwise_applicable and _pays say so (planes of 56 x 56 or more:
// MobileNetV2's first block); its kernel runs the 1x1 on each chunk of the depthwise's rows while
// they are in L2.
#include "ir/ops/fused.h"
#include "ir/ops/window.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

// The input and weight dims when `n` is a 2-D f32 Conv or kiln.FusedConv with static shapes,
// no residual and an activation a kernel applies in registers; false otherwise.
bool conv_dims(const ir::Node& n, std::vector<int64_t>& x, std::vector<int64_t>& w) {
  if (n.op() != "Conv" && n.op() != "kiln.FusedConv") return false;
  if (n.op() == "kiln.FusedConv" && (n.has_input(3) || !ir::store_activation(ir::fused_activation(n)))) return false;
  const ir::Value* y = n.output(0);
  if (!y->has_type() || y->dtype() != ir::DType::F32 || !y->shape().is_static() || y->shape().rank() != 4) return false;
  if (!n.input(0)->shape().is_static() || !n.input(1)->shape().is_static()) return false;
  x = n.input(0)->shape().values();
  w = n.input(1)->shape().values();
  return x.size() == 4 && w.size() == 4;
}

bool is_pointwise(const ir::Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (n.i("group") != 1 || w[2] != 1 || w[3] != 1) return false;
  const ir::ResolvedWindow win = ir::resolve_window(n, {x[2], x[3]}, {1, 1});
  const std::vector<int64_t> ones{1, 1}, zeros{0, 0};
  return win.strides == ones && win.dilations == ones && win.pads_begin == zeros && win.pads_end == zeros;
}

// The node's attributes with those of `pointwise`'s activation added, named with `prefix`.
ir::AttributeMap with_pointwise_activation(const ir::Node& depthwise, const ir::Node& pointwise,
                                           const std::string& prefix) {
  ir::AttributeMap attrs = depthwise.attrs();
  for (const auto& [name, a] : pointwise.attrs())
    if (name.rfind("activation", 0) == 0) attrs[prefix + name] = a;
  return attrs;
}

bool try_fuse(ir::Graph& graph, ir::Node& n) {
  std::vector<int64_t> x, w, e, wd;
  if (!conv_dims(n, x, w) || !is_pointwise(n, x, w)) return false;
  ir::Node* d = single_user(n.output(0));
  if (!d || d->input(0) != n.output(0) || !conv_dims(*d, e, wd)) return false;
  const int64_t stride = ir::depthwise3x3_stride(*d, e, wd);
  const std::vector<int64_t> y = d->output(0)->shape().values();
  const rt::ExpandDepthwiseParams p{x[0], x[1], x[2], x[3], e[1], stride, y[2], y[3]};
  if (stride == 0 || !rt::expand_depthwise3x3_applicable(p) || !rt::expand_depthwise3x3_pays(p)) return false;

  std::vector<ir::Value*> inputs{n.input(0), n.input(1), n.input(2), d->input(1), d->input(2)};
  while (!inputs.back()) inputs.pop_back();
  replace_with_node(graph, {&n, d}, d->output(0), "kiln.FusedConvDepthwise", inputs,
                    with_pointwise_activation(*d, n, "expand_"), d->name());
  return true;
}

bool try_fuse_project(ir::Graph& graph, ir::Node& d) {
  std::vector<int64_t> x, wd, e, w;
  if (!conv_dims(d, x, wd)) return false;
  const int64_t stride = ir::depthwise3x3_stride(d, x, wd);
  if (stride == 0) return false;
  ir::Node* n = single_user(d.output(0));
  if (!n || n->input(0) != d.output(0) || !conv_dims(*n, e, w) || !is_pointwise(*n, e, w)) return false;
  const std::vector<int64_t> y = n->output(0)->shape().values();
  const rt::DepthwisePointwiseParams p{x[0], x[1], x[2], x[3], stride, y[2], y[3], w[0]};
  if (!rt::depthwise3x3_pointwise_applicable(p) || !rt::depthwise3x3_pointwise_pays(p)) return false;

  std::vector<ir::Value*> inputs{d.input(0), d.input(1), d.input(2), n->input(1), n->input(2)};
  while (!inputs.back()) inputs.pop_back();
  replace_with_node(graph, {&d, n}, n->output(0), "kiln.FusedDepthwiseConv", inputs,
                    with_pointwise_activation(d, *n, "project_"), n->name());
  return true;
}

}  // namespace

void fuse_expand_depthwise(ir::Graph& graph) {
  rewrite_forward_until_done(graph, try_fuse);
  rewrite_forward_until_done(graph, try_fuse_project);
}

}  // namespace kiln::passes
