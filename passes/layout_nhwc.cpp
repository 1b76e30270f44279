// Pass: chains of int8 convolutions in the channels-last layout NHWC (ir/ops/channels_last.cpp).
// Each QLinearConv that the runtime's qconv2d_nhwc runs (ir::nhwc_conv_runs: group 1 with C a
// multiple of 4 up to 7x7, or depthwise; constant weights and parameters, the weights' zero
// point 0) and each
// kiln.QLinearAdd of two same-shaped 4-D tensors is a candidate; candidates that read one
// another's results form a chain. A chain becomes channels-last when it is long for the
// reorders at its ends: at most one value entering or leaving it per 4 nodes, or when it holds
// a stem on 3 channels with a large plane (row_patch_stem). Its convolutions
// become kiln.QLinearConvNhwc, its adds read and write NHWC tensors, a value that enters is
// reordered once (kiln.ToNhwc right after its producer), and every reader outside the chain
// reads a kiln.FromNhwc of the value it read (eliminate_dead_code removes those nobody reads).
//
// Why: in NCHW the int8 1x1 layers split their pixels between the threads and the depthwise
// ones their channels, so that each layer read what the other core wrote. Channels-last, every
// layer splits its output rows alike and a thread reads its own rows (kiln/rt/qconv_nhwc.h).
// MobileNetV2's whole body after the stem is one chain (2 reorders for 52 nodes), and so is
// ResNet-50's after its stem and max pool (its 3x3s too; the stem has 3 channels).
#include <map>
#include <numeric>
#include <set>

#include "ir/ops/channels_last.h"
#include "ir/op_registry.h"
#include "ir/ops/qlinear.h"
#include "kiln/rt/qconv_nhwc.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool same_static_4d(const ir::Value* a, const ir::Value* b) {
  return a->has_type() && b->has_type() && a->shape().rank() == 4 && a->shape().is_static() &&
         a->shape() == b->shape();
}

// kiln.QLinearAdd without broadcasting: its result's elements line up with both inputs'.
bool add_converts(const ir::Node& n) {
  return n.op() == "kiln.QLinearAdd" && same_static_4d(n.input(0), n.input(3)) &&
         same_static_4d(n.input(0), n.output(0));
}

// A depthwise layer of few channels on a large plane stays NCHW unless the runtime has a
// channels-last kernel for it that keeps up (rt::qconv2d_nhwc_narrow_depthwise_fast): on the
// general ones a vector of 64 channels is half empty and every pixel pays for its taps'
// interleave, where the NCHW kernel takes 16 pixels a vector (MobileNetV2's first, 32 channels
// at 112 x 112, one thread: 216 us NHWC, 97 NCHW; on the 3x3 kernel 99 us, and two threads
// split its rows rather than its channels).
bool wide_enough(const ir::Node& n) {
  const rt::Conv2dParams p = ir::integer_conv_params(n, 0, 3);
  return p.group == 1 || p.C >= 64 || p.OH * p.OW <= 56 * 56 || rt::qconv2d_nhwc_narrow_depthwise_fast(p);
}

// A convolution on channels that are not a multiple of 4 (a stem on 3 channels) with a large
// output plane: channels-last it runs on row patches, 2.5x as fast as the NCHW kernel, whose
// vectors hold 16 pixels of one of 3 planes (ResNet-50's 7x7/2 stem: 3.3 ms against 1.3 at one
// thread). Its chain converts even when it is only the stem, followed by an NCHW node
// (ResNet-50's MaxPool): the reorders at its ends take about a tenth of what it gains. Small
// planes (the digits CNN's 8 x 8) keep the rule of the ends: both ways cost next to nothing.
bool row_patch_stem(const ir::Node& n) {
  if (n.op() != "QLinearConv") return false;
  const rt::Conv2dParams p = ir::integer_conv_params(n, 0, 3);
  return p.C % 4 != 0 && p.OH * p.OW >= 56 * 56;
}

bool candidate(const ir::Node& n) {
  return add_converts(n) || (n.op() == "QLinearConv" && ir::nhwc_conv_runs(n) && wide_enough(n));
}

// The inputs that change layout: x of a convolution, A and B of an add.
std::vector<size_t> data_inputs(const ir::Node& n) {
  return n.op() == "QLinearConv" ? std::vector<size_t>{0} : std::vector<size_t>{0, 3};
}

struct Chains {
  std::map<const ir::Node*, const ir::Node*> parent;
  const ir::Node* root(const ir::Node* n) {
    while (parent[n] != n) n = parent[n] = parent[parent[n]];
    return n;
  }
  void join(const ir::Node* a, const ir::Node* b) { parent[root(a)] = root(b); }
};

}  // namespace

void layout_nhwc(ir::Graph& graph) {
  std::vector<ir::Node*> candidates;
  Chains chains;
  for (const auto& n : graph.nodes())
    if (candidate(*n)) {
      candidates.push_back(n.get());
      chains.parent[n.get()] = n.get();
    }
  for (ir::Node* n : candidates)
    for (size_t i : data_inputs(*n)) {
      const ir::Node* p = n->input(i)->producer();
      if (p && chains.parent.count(p)) chains.join(n, p);
    }
  // Per chain: its nodes, and the values entering and leaving it.
  std::map<const ir::Node*, int64_t> size;
  std::map<const ir::Node*, std::set<const ir::Value*>> ends;
  std::set<const ir::Node*> with_row_patches;
  for (ir::Node* n : candidates) {
    const ir::Node* r = chains.root(n);
    ++size[r];
    if (row_patch_stem(*n)) with_row_patches.insert(r);
    for (size_t i : data_inputs(*n)) {
      const ir::Node* p = n->input(i)->producer();
      if (!p || !chains.parent.count(p) || chains.root(p) != r) ends[r].insert(n->input(i));
    }
    const ir::Value* y = n->output(0);
    bool leaves = graph.is_graph_output(y);
    for (const ir::Node* u : y->users()) {
      const auto it = chains.parent.find(u);
      const std::vector<size_t> reads = it == chains.parent.end() ? std::vector<size_t>{} : data_inputs(*u);
      const bool as_data = std::any_of(reads.begin(), reads.end(), [&](size_t i) { return u->input(i) == y; });
      if (it == chains.parent.end() || !as_data) leaves = true;
    }
    if (leaves) ends[r].insert(y);
  }
  std::map<const ir::Value*, ir::Value*> nhwc;  // NCHW value -> its channels-last form
  auto get = [&](ir::Value* v) {
    if (auto it = nhwc.find(v); it != nhwc.end()) return it->second;
    ir::Node* to = add_node_after(graph, v, "kiln.ToNhwc", {v}, v->name() + ".nhwc");
    return nhwc[v] = to->output(0);
  };
  for (ir::Node* n : candidates) {
    const ir::Node* r = chains.root(n);
    if (static_cast<int64_t>(ends[r].size()) * 4 > size[r] && !with_row_patches.count(r)) continue;
    ir::Value* y = n->output(0);
    std::vector<ir::Value*> inputs;
    for (size_t i = 0; i < n->num_inputs(); ++i) inputs.push_back(n->has_input(i) ? n->input(i) : nullptr);
    for (size_t i : data_inputs(*n)) inputs[i] = get(n->input(i));
    while (!inputs.empty() && !inputs.back()) inputs.pop_back();
    const std::string op = n->op() == "QLinearConv" ? "kiln.QLinearConvNhwc" : n->op();
    const std::string name = graph.unique_value_name(y->name() + ".nhwc");
    ir::Node* node = graph.add_node(op, inputs, {name}, n->attrs(), n->name());
    graph.move_last_before(n);
    ir::infer_node(*node);
    // n's readers now read the NCHW result through a kiln.FromNhwc (y's name kept).
    ir::Node* from = replace_with_node(graph, {n}, y, "kiln.FromNhwc", {node->output(0)}, {}, y->name() + ".nchw");
    nhwc[from->output(0)] = node->output(0);
  }
}

}  // namespace kiln::passes
