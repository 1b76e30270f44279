// Pass (`--precision int8` only, not in any -O pipeline): post-training static quantization
// from the activation ranges that calibration wrote into the graph as kiln.Range nodes
// (passes/calibrate.h):
//
//   Conv(x, W, b) [-> Relu | Clip(0, c)]
//     -> Conv(DequantizeLinear(QuantizeLinear(x)), DequantizeLinear(Wq), b) [-> Relu | Clip]
//        -> QuantizeLinear -> DequantizeLinear, which every reader of the result reads
//   MatMul(x, W) or Gemm(x, W, C)
//     -> MatMulInteger(QuantizeLinear(x), Wq) * (x_scale * w_scale) [+ C]   (f32 result)
//
// Activations u8 (or s8) per tensor, asymmetric: scale (max - min) / 255 over the range widened
// to include 0, zero point round(-min / scale) (s8: that - 128). Weights (constant f32) s8,
// symmetric per output channel (passes/integer_matmul.h). A value is quantized once, however many read it. Ops that
// only move values (MaxPool, Flatten, Reshape, ...) pass on their input's parameters, so that
// DequantizeLinear -> op -> QuantizeLinear can run on the 8-bit values; an Add of two quantized
// values reads their DequantizeLinears (a residual Add in 8 bits after fuse_qdq). fuse_qdq, which runs
// next, turns the Conv pattern into QLinearConv, so that chains of convolutions stay in 8 bits
// and requantize in the int8 kernels' epilogue. Every kiln.Range is gone afterwards.
#include "passes/quantize_static.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/qlinear.h"
#include "kiln/rt/qconv_nhwc.h"
#include "passes/calibrate.h"
#include "passes/integer_matmul.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

struct QuantParams {
  float scale = 1;
  int32_t zero_point = 0;  // of the activations' type
};

// The range's parameters for u8 (`is_signed` false) or s8: the same 256 levels, s8's zero
// point 128 lower.
QuantParams activation_params(const ActivationRange& r, bool is_signed) {
  const double lo = std::min<double>(r.min, 0), hi = std::max<double>(r.max, 0);
  QuantParams p;
  const float scale = static_cast<float>((hi - lo) / 255.0);
  p.scale = scale > 0 && std::isfinite(scale) ? scale : 1.0f;
  p.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / p.scale), 0.0, 255.0)) - (is_signed ? 128 : 0);
  return p;
}

// Ops whose results are some of their input's values, moved: they keep its quantization.
bool moves_values(const ir::Node& n) {
  static const char* const ops[] = {"MaxPool", "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity"};
  return std::find(std::begin(ops), std::end(ops), n.op()) != std::end(ops);
}

// One quantized activation: its QuantizeLinear's result and parameters, and the
// DequantizeLinear back to f32 (made when first needed).
struct Quantized {
  std::string of;  // the f32 value's name
  ir::Value* q = nullptr;
  ir::Value* scale = nullptr;
  ir::Value* zero_point = nullptr;
  ir::Value* dq = nullptr;
};

class StaticQuantizer {
 public:
  StaticQuantizer(ir::Graph& graph, const StaticQuantizeOptions& options)
      : graph_(graph), activations_(options.activations), reduced_range_(options.reduced_range_dense_convs) {
    take_ranges();
  }

  bool quantize(ir::Node& n) { return n.op() == "Conv" ? quantize_conv(n) : quantize_matmul(n); }

  // Adds of two quantized values of the result's shape read both through their
  // DequantizeLinear (as onnxruntime's QDQ quantizer has them do), so that fuse_qdq keeps them
  // in 8 bits (kiln.QLinearAdd, with a Relu after it) where their result is quantized: a
  // residual block's input otherwise reached its Add in f32, and the Add, its Relu and the
  // quantization of the result ran in f32 on every run. Where the result stays f32 (the last
  // block's, read by a pooling), reading the input dequantized lets the block before it fuse
  // (its result then has no f32 reader).
  void quantize_adds() {
    std::vector<ir::Node*> adds;
    for (const auto& n : graph_.nodes())
      if (n->op() == "Add" && n->num_inputs() == 2 && n->output(0)->has_type()) adds.push_back(n.get());
    for (ir::Node* add : adds) {
      Quantized* a = known(add->input(0));
      Quantized* b = known(add->input(1));
      if (!a || !b || add->input(0)->shape() != add->output(0)->shape() ||
          add->input(1)->shape() != add->output(0)->shape())
        continue;
      add->set_input(0, dequantized(*a));
      add->set_input(1, dequantized(*b));
    }
  }

 private:
  // Records each kiln.Range's range for its input and removes it.
  void take_ranges() {
    std::vector<ir::Node*> annotations;
    for (const auto& n : graph_.nodes()) {
      if (n->op() != "kiln.Range") continue;
      ranges_[n->input(0)->name()] = {n->f("min"), n->f("max")};
      graph_.replace_all_uses(n->output(0), n->input(0));
      annotations.push_back(n.get());
    }
    graph_.remove_nodes(annotations);
  }

  // The quantization `x` takes: its producer's input's when that op only moves values, else
  // from its calibrated range.
  std::optional<QuantParams> params_of(const ir::Value* x) const {
    for (const ir::Value* v = x; v->producer() && moves_values(*v->producer());) {
      v = v->producer()->input(0);
      auto d = dequantized_.find(v->name());
      if (d != dequantized_.end()) {
        const Quantized& q = by_value_.at(d->second);
        return QuantParams{q.scale->constant().data<float>()[0],
                           static_cast<int32_t>(q.zero_point->constant().as_double(0))};
      }
    }
    auto r = ranges_.find(x->name());
    if (r == ranges_.end()) return std::nullopt;
    return activation_params(r->second, activations_ == ir::DType::I8);
  }

  // x's quantization, made once (a QuantizeLinear right after x is computed); null when x
  // has no range. A DequantizeLinear made here gives back what it dequantizes.
  Quantized* quantized(ir::Value* x) {
    auto d = dequantized_.find(x->name());
    if (d != dequantized_.end()) return &by_value_.at(d->second);
    auto known = by_value_.find(x->name());
    if (known != by_value_.end()) return &known->second;
    if (!x->has_type() || x->dtype() != ir::DType::F32 || x->is_constant()) return nullptr;
    std::optional<QuantParams> p = params_of(x);
    if (!p) return nullptr;
    Quantized q;
    q.of = x->name();
    q.scale = graph_.add_constant(graph_.unique_value_name(x->name() + ".scale"),
                                  ir::Tensor::from_vector<float>(ir::DType::F32, {}, {p->scale}));
    q.zero_point = graph_.add_constant(
        graph_.unique_value_name(x->name() + ".zero_point"),
        activations_ == ir::DType::I8
            ? ir::Tensor::from_vector<int8_t>(ir::DType::I8, {}, {static_cast<int8_t>(p->zero_point)})
            : ir::Tensor::from_vector<uint8_t>(ir::DType::U8, {}, {static_cast<uint8_t>(p->zero_point)}));
    q.q = add_node_after(graph_, x, "QuantizeLinear", {x, q.scale, q.zero_point}, x->name() + ".q")->output(0);
    return &(by_value_[x->name()] = q);
  }

  // x's quantization when x (or what x dequantizes) was quantized, else null.
  Quantized* known(const ir::Value* x) {
    auto d = dequantized_.find(x->name());
    auto q = by_value_.find(d != dequantized_.end() ? d->second : x->name());
    return q != by_value_.end() && x->has_type() ? &q->second : nullptr;
  }

  ir::Value* dequantized(Quantized& q) {
    if (!q.dq) {
      q.dq = add_node_after(graph_, q.q, "DequantizeLinear", {q.q, q.scale, q.zero_point}, q.q->name() + ".dq")->output(0);
      dequantized_[q.dq->name()] = q.of;
    }
    return q.dq;
  }

  // The result `y` in 8 bits for every reader (which reads its DequantizeLinear), unless it
  // is a graph output or has no range.
  void quantize_result(ir::Value* y) {
    if (graph_.is_graph_output(y) || y->users().empty()) return;
    Quantized* q = quantized(y);
    if (!q) return;
    const ir::Node* quantize = q->q->producer();
    ir::Value* dq = dequantized(*q);
    const std::vector<ir::Node*> users = y->users();
    for (ir::Node* user : users)
      if (user != quantize)
        for (size_t i = 0; i < user->num_inputs(); ++i)
          if (user->input(i) == y) user->set_input(i, dq);
  }

  bool quantize_conv(ir::Node& conv) {
    ir::Value* x = conv.input(0);
    ir::Value* w = conv.input(1);
    if (!w->is_constant() || w->dtype() != ir::DType::F32 || w->shape().rank() < 3 || w->shape().rank() > 4)
      return false;
    if (!x->has_type() || !x->shape().is_static() || !conv.output(0)->has_type()) return false;
    Quantized* qx = quantized(x);
    if (!qx) return false;
    if (!dequantized_.count(x->name())) conv.set_input(0, dequantized(*qx));

    const ir::Tensor& wt = w->constant();
    const int64_t m = wt.dims()[0], per_channel = m > 0 ? wt.numel() / m : 0;
    std::vector<int8_t> q(static_cast<size_t>(wt.numel()));
    std::vector<float> scale(static_cast<size_t>(m));
    // Reduced range only where the NHWC dense kernel would run (ir::nhwc_conv_runs: group 1,
    // C a multiple of 4 or row patches): elsewhere it would cost accuracy for nothing.
    const bool dense = reduced_range_ && conv.i("group") == 1 && wt.dims().size() == 4 && wt.numel() > 0 &&
                       x->shape().rank() == 4 && rt::qconv2d_nhwc_supported(ir::integer_conv_params(conv, 0, 1));
    if (dense)
      quantize_conv_s8_pairs_fit_int16(wt.data<float>(), m, wt.dims()[1], wt.dims()[2], wt.dims()[3], q.data(),
                                       scale.data());
    else
      quantize_symmetric_s8(wt.data<float>(), m, per_channel, per_channel, 1, q.data(), scale.data());
    ir::Value* wq = graph_.add_constant(graph_.unique_value_name(w->name() + ".s8"),
                                        ir::Tensor::from_vector<int8_t>(ir::DType::I8, wt.dims(), q));
    ir::Value* ws = graph_.add_constant(graph_.unique_value_name(w->name() + ".scale"),
                                        ir::Tensor::from_vector<float>(ir::DType::F32, {m}, scale));
    ir::Value* wz = graph_.add_constant(graph_.unique_value_name(w->name() + ".zero_point"),
                                        ir::Tensor(ir::DType::I8, {m}));
    ir::Node* dqw = insert_before(graph_, conv, "DequantizeLinear", {wq, ws, wz}, {"w"},
                                  {{"axis", ir::Attribute(int64_t{0})}});
    conv.set_input(1, dqw->output(0));

    ir::Value* y = conv.output(0);
    if (ir::Node* act = single_user(y); act && clamps_from_zero(*act, nullptr)) y = act->output(0);
    quantize_result(y);
    return true;
  }

  bool quantize_matmul(ir::Node& node) {
    std::optional<ConstantWeightMatMul> m = constant_weight_matmul(node);
    if (!m || m->x->shape().rank() < 2) return false;
    Quantized* qx = quantized(m->x);
    if (!qx) return false;
    lower_to_matmul_integer(graph_, node, *m, qx->q, qx->scale, qx->zero_point);
    return true;
  }

  ir::Graph& graph_;
  ir::DType activations_;
  bool reduced_range_;
  std::map<std::string, ActivationRange> ranges_;     // by value name
  std::map<std::string, Quantized> by_value_;         // by the name of the f32 value quantized
  std::map<std::string, std::string> dequantized_;    // DequantizeLinear result -> that f32 value
};

}  // namespace

std::vector<std::string> quantize_static_except(ir::Graph& graph, const std::set<std::string>& keep_fp32,
                                                const StaticQuantizeOptions& options) {
  if (options.activations != ir::DType::U8 && options.activations != ir::DType::I8)
    fail("quantize_static: activations are u8 or s8, not {}", ir::dtype_name(options.activations));
  StaticQuantizer quantizer(graph, options);
  std::vector<ir::Node*> candidates;
  for (const auto& n : graph.nodes())
    if (n->op() == "Conv" || n->op() == "MatMul" || n->op() == "Gemm") candidates.push_back(n.get());
  std::vector<std::string> done;
  for (ir::Node* n : candidates) {
    const std::string name = n->name();  // the node may be replaced
    if (!keep_fp32.count(name) && quantizer.quantize(*n)) done.push_back(name);
  }
  quantizer.quantize_adds();
  graph.remove_unused_values();
  return done;
}

void quantize_static(ir::Graph& graph) { quantize_static_except(graph, {}); }

}  // namespace kiln::passes
