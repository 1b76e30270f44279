// Pass: convolutions in the channel-blocked layout NCHW16c (ir/ops/blocked.cpp). Each f32 Conv
// or kiln.FusedConv that the runtime's NCHW16c kernel runs (ir::nchwc_conv_params: group 1, no
// dilation, 16-channel blocks in and out, an activation applied in registers), with constant
// weights (and bias), that is a 1x1 or has a stride (a 3x3 of stride 1 stays NCHW for Winograd),
// becomes a kiln.ConvNchwc reading its input (and residual) blocked and writing its result blocked. A value that several converted convolutions read, or one
// produces and another reads, is blocked once: a kiln.ToNchwc right after its producer, or the
// producing kiln.ConvNchwc's own result. Every other reader keeps reading the NCHW value, now
// made by a kiln.FromNchwc of the blocked one (eliminate_dead_code removes those nobody reads).
// A convolution over fewer than 16 input channels (a stem's image) reads them as plain NCHW,
// where all readers of its result take it blocked (read_blocked); a MaxPool of a blocked value
// becomes a kiln.MaxPoolNchwc. In ResNet-50 the stem, its pool, the block inputs and residuals
// stay blocked from one bottleneck to the next; the stride-1 3x3 convolutions between stay NCHW
// (a reorder before and after each). A kiln.FusedConvDepthwise (MobileNetV2's expand and
// depthwise) between blocked convolutions becomes a kiln.FusedConvDepthwiseNchwc that reads and
// writes the blocked values itself (block_conv_depthwise); a depthwise 3x3 alone between them
// (MobileNetV2's 7 x 7 blocks, where the expand is not fused) a kiln.DepthwiseConvNchwc.
//
// Why: in NCHW a 1x1 convolution is a GEMM whose input is packed on every run and whose tiles
// write rows H * W apart; blocked, the kernel reads the input and writes the output and residual
// as contiguous runs. ResNet-50's 1x1 shapes on Zen 4, alone: 0.94x the NCHW time with data in
// cache, 0.87x with it cold (docs/design/cpu_kernels.md, "Channel-blocked convolutions").
#include <algorithm>
#include <map>

#include "ir/op_registry.h"
#include "ir/ops/blocked.h"
#include "ir/ops/fused.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

// Fewer input channels than a block: the kernel reads them as plain NCHW (a stem's image).
bool reads_plain(const ir::Node& n) { return n.input(0)->shape()[1].value() < rt::kNchwcBlock; }

// f32 of rank 4 with a known shape whose channels are a number; the batch, height and width may
// be bounded symbols (--dim, --input-shape MIN..MAX[:STEP]): the blocked kernels take them at
// run time (a symbolic batch item by item).
bool blockable(const ir::Value* v) {
  return v && v->has_type() && v->dtype() == ir::DType::F32 && v->shape().rank() == 4 && v->shape().is_known() &&
         v->shape()[1].is_static();
}

// The value's dims with its symbols at `at`.
std::vector<int64_t> dims_at(const ir::Value* v, const std::map<std::string, int64_t>& at) {
  std::vector<int64_t> d;
  for (const ir::Dim& x : v->shape().dims()) {
    const ir::Dim b = x.bind(at);
    d.push_back(b.is_static() ? b.value() : -1);
  }
  return d;
}

// The node's symbols at their bounds: the kernel must apply at each (and so, its geometry
// being a polynomial, in between).
std::vector<std::map<std::string, int64_t>> bound_points(const ir::Graph& graph, const ir::Node& n) {
  std::map<std::string, int64_t> lo, hi;
  for (const ir::Value* v : {n.input(0), n.output(0)})
    for (const ir::Dim& d : v->shape().dims())
      for (const std::string& s : d.symbols())
        if (auto it = graph.dim_ranges().find(s); it != graph.dim_ranges().end()) {
          lo[s] = it->second.min;
          hi[s] = it->second.max;
        }
  return {lo, hi};
}

// Whether `n` becomes a kiln.ConvNchwc.
bool converts(const ir::Graph& graph, const ir::Node& n) {
  if (n.op() != "Conv" && n.op() != "kiln.FusedConv") return false;
  const ir::Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  if (!blockable(x) || !blockable(y) || !w->shape().is_static()) return false;
  if (!w->is_constant() || w->dtype() != ir::DType::F32 || (b && !b->is_constant())) return false;
  for (const auto& at : bound_points(graph, n)) {
    const std::vector<int64_t> xd = dims_at(x, at);
    if (std::find(xd.begin(), xd.end(), -1) != xd.end()) return false;  // a symbol without bounds
    const std::optional<rt::ConvNchwcParams> p = ir::nchwc_conv_params(n, xd, w->shape().values(), reads_plain(n));
    // A larger kernel only with a stride: a 3x3 of stride 1 runs faster as Winograd (NCHW).
    if (!p || !((p->KH == 1 && p->KW == 1) || p->stride_h > 1 || p->stride_w > 1)) return false;
  }
  return true;
}

// Whether `n` is a depthwise 3x3 that the blocked depthwise kernel runs (kiln.DepthwiseConvNchwc),
// with constant weights (and bias) and static shapes.
bool depthwise_converts(const ir::Node& n) {
  if (n.op() != "Conv" && n.op() != "kiln.FusedConv") return false;
  const ir::Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  if (!blockable(x) || !blockable(y) || !x->shape().is_static() || !w->shape().is_static()) return false;
  if (!w->is_constant() || w->dtype() != ir::DType::F32 || (b && !b->is_constant())) return false;
  return ir::nchwc_depthwise_params(n, x->shape().values(), w->shape().values()).has_value();
}

// Whether `n` is a MaxPool that can pool a blocked input (kiln.MaxPoolNchwc): f32, 2-D, 16-channel
// blocks, its Y alone.
bool pool_converts(const ir::Node& n) {
  if (n.op() != "MaxPool" || (n.num_outputs() > 1 && n.output(1))) return false;
  const ir::Value *x = n.input(0), *y = n.output(0);
  return blockable(x) && blockable(y) && x->shape()[1].value() % rt::kNchwcBlock == 0 &&
         n.ints("kernel_shape").size() == 2;
}

// Whether every reader of v reads it blocked once converted: as X or Z of a convolution that
// converts on blocked input, or as a pool's input; v not a graph output. A convolution on
// plain input converts only then: a reorder back to NCHW costs what its kernel saves
// (MobileNetV2's stem, read by a depthwise convolution: 349 + 77 us for the reorder, against
// 466 us as im2col).
bool read_blocked(const ir::Graph& graph, const ir::Value* v) {
  if (graph.is_graph_output(v) || v->users().empty()) return false;
  for (const ir::Node* u : v->users()) {
    if (pool_converts(*u)) continue;
    const bool data_only = u->input(1) != v && u->input(2) != v;  // not its weights or bias
    if (!converts(graph, *u) || reads_plain(*u) || !data_only) return false;
  }
  return true;
}

struct Blocked {
  ir::Graph& graph;
  std::map<const ir::Value*, ir::Value*> of;  // NCHW value -> its blocked form

  ir::Value* get(ir::Value* v) {
    if (auto it = of.find(v); it != of.end()) return it->second;
    ir::Node* to = add_node_after(graph, v, "kiln.ToNchwc", {v}, v->name() + ".nchwc");
    return of[v] = to->output(0);
  }
};

// A kiln.FusedConvDepthwise whose result only a kiln.ToNchwc reads (an inverted-residual
// block's expand and depthwise, its projection a kiln.ConvNchwc) becomes a
// kiln.FusedConvDepthwiseNchwc writing the blocked result itself, and reads its input blocked
// where that is a kiln.FromNchwc's (the previous block's projection): its kernel stores a band's
// 8 channels of a pixel as they are (half a block) instead of transposing them into planes, and
// the reorders go (MobileNetV2, AVX2: 0.28 ms of 9.2 at one thread, and they scale worse than
// the convolutions). The kernel must apply with the blocked layouts (channels in 16s).
bool block_conv_depthwise(ir::Graph& graph, ir::Node& n) {
  if (n.op() != "kiln.FusedConvDepthwise") return false;
  ir::Node* to = single_user(n.output(0));
  if (!to || to->op() != "kiln.ToNchwc") return false;
  const ir::Value *x = n.input(0), *y = n.output(0);
  if (!x->shape().is_static() || !y->shape().is_static() || !n.input(3)->shape().is_static()) return false;
  const std::vector<int64_t> xd = x->shape().values(), yd = y->shape().values();
  ir::Value* xb = nullptr;
  if (const ir::Node* from = x->producer(); from && from->op() == "kiln.FromNchwc") xb = from->input(0);
  const int64_t stride = ir::depthwise3x3_stride(n, {xd[0], yd[1], xd[2], xd[3]}, n.input(3)->shape().values());
  rt::ExpandDepthwiseParams p{xd[0], xd[1], xd[2], xd[3], yd[1], stride, yd[2], yd[3]};
  p.x_nchw16c = xb != nullptr;
  p.y_nchw16c = true;
  if (stride == 0 || !rt::expand_depthwise3x3_applicable(p)) return false;
  std::vector<ir::Value*> inputs(n.inputs().begin(), n.inputs().end());
  if (xb) inputs[0] = xb;
  replace_with_node(graph, {&n, to}, to->output(0), "kiln.FusedConvDepthwiseNchwc", inputs, n.attrs(), n.name());
  return true;
}

}  // namespace

void layout_nchwc(ir::Graph& graph) {
  std::vector<ir::Node*> candidates;
  for (const auto& n : graph.nodes())
    if (converts(graph, *n) || pool_converts(*n) || depthwise_converts(*n)) candidates.push_back(n.get());
  Blocked blocked{graph, {}};
  for (ir::Node* n : candidates) {
    ir::Value* y = n->output(0);
    std::vector<ir::Value*> inputs;
    std::string op;
    if (n->op() == "MaxPool") {
      // Only a pool whose input is blocked already (a converted convolution's result).
      auto it = blocked.of.find(n->input(0));
      if (it == blocked.of.end()) continue;
      inputs = {it->second};
      op = "kiln.MaxPoolNchwc";
    } else if (depthwise_converts(*n)) {
      // Only between blocked values: its input blocked already and every reader of its result
      // taking it blocked (MobileNetV2's 7 x 7 blocks); elsewhere the two reorders cost what
      // the kernel saves.
      auto it = blocked.of.find(n->input(0));
      if (it == blocked.of.end() || !read_blocked(graph, y)) continue;
      inputs = {it->second, n->input(1), n->input(2)};
      while (!inputs.back()) inputs.pop_back();
      op = "kiln.DepthwiseConvNchwc";
    } else {
      if (reads_plain(*n) && !read_blocked(graph, y)) continue;
      inputs = {reads_plain(*n) ? n->input(0) : blocked.get(n->input(0)), n->input(1), n->input(2),
                n->has_input(3) ? blocked.get(n->input(3)) : nullptr};
      while (!inputs.back()) inputs.pop_back();
      op = "kiln.ConvNchwc";
    }
    const std::string name = graph.unique_value_name(y->name() + ".nchwc");
    ir::Node* node = graph.add_node(op, inputs, {name}, n->attrs(), n->name());
    graph.move_last_before(n);
    ir::infer_node(*node);
    // n's readers now read the blocked result through a kiln.FromNchwc (y's name kept).
    ir::Node* from = replace_with_node(graph, {n}, y, "kiln.FromNchwc", {node->output(0)}, {}, y->name() + ".nchw");
    blocked.of[from->output(0)] = node->output(0);
  }
  rewrite_forward_until_done(graph, block_conv_depthwise);
}

}  // namespace kiln::passes
