// Loss functions: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. The kernels are the
// runtime's (kiln/rt/loss.h), shared with the generated code.
#include "ir/ops/loss.h"

#include "kiln/rt/loss.h"

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

rt::LossReduction loss_reduction(const Node& node) {
  const std::string& r = node.s("reduction");
  if (r == "none") return rt::LossReduction::None;
  if (r == "sum") return rt::LossReduction::Sum;
  if (r == "mean") return rt::LossReduction::Mean;
  fail("{}: reduction '{}' is not one of none, sum, mean", node.describe(), r);
}

namespace {

// Checks x [N, C, d...], target [N, d...] and weight [C] against each other.
void check_loss_shapes(const Node& node, const Shape& x, const Shape& target, const Shape* weight) {
  if (x.rank() < 2) fail("{}: input must have rank >= 2 (N, C, ...), got {}", node.describe(), x.str());
  bool ok = target.rank() + 1 == x.rank();
  for (size_t i = 0; ok && i < target.rank(); ++i) {
    const Dim& t = target[i];
    const Dim& d = x[i == 0 ? 0 : i + 1];
    if (t.is_static() && d.is_static() && t.value() != d.value()) ok = false;
  }
  if (!ok)
    fail("{}: target {} must have the input's shape {} without its class dim (dim 1)", node.describe(),
         target.str(), x.str());
  if (weight && (weight->rank() != 1 || ((*weight)[0].is_static() && x[1].is_static() &&
                                         (*weight)[0].value() != x[1].value())))
    fail("{}: weight {} must be 1-D with one value per class of input {}", node.describe(), weight->str(), x.str());
}

void infer_loss(Node& node) {
  require_float(node, 0);
  require_dtype(node, 1, {DType::I32, DType::I64});
  const Shape& x = node.input(0)->shape();
  const Shape& target = node.input(1)->shape();
  const bool weighted = node.has_input(2);
  if (weighted) require_same_dtype(node, 0, 2);
  check_loss_shapes(node, x, target, weighted ? &node.input(2)->shape() : nullptr);
  const DType t = node.input(0)->dtype();
  node.output(0)->set_type(t, loss_reduction(node) == rt::LossReduction::None ? target : Shape());
  if (node.num_outputs() > 1) node.output(1)->set_type(t, x);  // SoftmaxCrossEntropyLoss's log_prob
}

void eval_loss(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& target = *in[1];
  const Tensor* weight = optional_input(in, 2);
  const Shape weight_shape = weight ? weight->shape() : Shape();
  check_loss_shapes(node, x.shape(), target.shape(), weight ? &weight_shape : nullptr);
  const rt::LossReduction reduction = loss_reduction(node);
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t d = n * c == 0 ? 0 : x.numel() / (n * c);
  const bool has_ignore = node.has_attr("ignore_index");
  const int64_t ignore = has_ignore ? node.i("ignore_index") : 0;
  const bool softmax = node.op() == "SoftmaxCrossEntropyLoss";
  out[0] = reduction == rt::LossReduction::None ? Tensor(x.dtype(), target.dims()) : Tensor(x.dtype(), std::vector<int64_t>{});
  Tensor log_prob = softmax ? Tensor(x.dtype(), x.dims()) : Tensor();
  int64_t bad = -1;
  visit_float(node, x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    const S* w = weight ? weight->data<S>() : nullptr;
    S* y = out[0].mutable_data<S>();
    visit_dtype(target.dtype(), [&]<class I>() {
      if constexpr (std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>) {
        if (softmax)
          bad = rt::softmax_cross_entropy<S, I, C>(n, c, d, x.data<S>(), target.data<I>(), w, has_ignore, ignore,
                                                   reduction, y, log_prob.mutable_data<S>());
        else
          bad = rt::nll_loss<S, I, C>(n, c, d, x.data<S>(), target.data<I>(), w, has_ignore, ignore, reduction, y);
      } else {
        fail("{}: target must be int32 or int64, got {}", node.describe(), dtype_name(target.dtype()));
      }
    });
  });
  if (bad >= 0)
    fail("{}: target {} at position {} is outside the {} classes [0, {})", node.describe(),
         static_cast<int64_t>(target.as_double(bad)), bad, c, c);
  if (out.size() > 1) out[1] = std::move(log_prob);
}

std::vector<AttrSpec> loss_attrs() {
  return {{"ignore_index", AttrType::Int, std::nullopt, true}, {"reduction", AttrType::String, Attribute("mean")}};
}

}  // namespace

void register_loss_ops(Registry& r) {
  r.add(OpDef{
      .name = "NegativeLogLikelihoodLoss",
      .summary = "-input[n, target[n, d...], d...] * weight[target], reduced by none, sum or (weighted) mean",
      .inputs = {{"input"}, {"target"}, {"weight", true}},
      .outputs = {"loss"},
      .attrs = loss_attrs(),
      .infer = infer_loss,
      .eval = eval_loss,
  });
  r.add(OpDef{
      .name = "SoftmaxCrossEntropyLoss",
      .summary = "NegativeLogLikelihoodLoss of LogSoftmax(scores) over the class dim (1); log_prob optional",
      .inputs = {{"scores"}, {"labels"}, {"weights", true}},
      .outputs = {"output", "log_prob"},
      .min_outputs = 1,
      .attrs = loss_attrs(),
      .infer = infer_loss,
      .eval = eval_loss,
  });
}

}  // namespace kiln::ir
