// BatchNormalization (inference, and training mode with batch statistics), Softmax and
// LogSoftmax.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"
#include "kiln/rt/normalize.h"

namespace kiln::ir {
namespace {

// Validates BatchNormalization's shapes: X [N, C, ...] and four [C] vectors.
void check_batch_norm(const Node& node, const Shape& x, const std::vector<Shape>& params) {
  if (node.i("training_mode") != 0 && node.i("training_mode") != 1)
    fail("{}: training_mode must be 0 or 1, got {}", node.describe(), node.i("training_mode"));
  if (node.num_outputs() > 1 && node.i("training_mode") == 0)
    fail("{}: only output Y is supported at inference (running mean and var are training outputs)",
         node.describe());
  if (x.rank() < 2)
    fail("{}: input X must have rank >= 2 (N, C, ...), got {}", node.describe(), x.str());
  static const char* const kNames[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape& p = params[i];
    if (p.rank() != 1) fail("{}: {} must be 1-D [C], got {}", node.describe(), kNames[i], p.str());
    if (p[0].is_static() && x[1].is_static() && p[0].value() != x[1].value())
      fail("{}: {} {} does not match the {} channels of X {}", node.describe(), kNames[i], p.str(),
           x[1].value(), x.str());
  }
}

void infer_batch_norm(Node& node) {
  require_float(node, 0);
  for (size_t i = 1; i < 5; ++i) require_same_dtype(node, 0, i);
  std::vector<Shape> params;
  for (size_t i = 1; i < 5; ++i) params.push_back(node.input(i)->shape());
  check_batch_norm(node, node.input(0)->shape(), params);
  node.output(0)->set_type(node.input(0)->dtype(), node.input(0)->shape());
  for (size_t i = 1; i < node.num_outputs(); ++i) node.output(i)->set_type(node.input(0)->dtype(), params[0]);
}

// Training mode: the batch's statistics, and the running ones updated (kiln/rt/normalize.h).
void eval_batch_norm_training(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);
  out[0] = Tensor(x.dtype(), x.dims());
  for (size_t i = 1; i < out.size(); ++i) out[i] = Tensor(x.dtype(), std::vector<int64_t>{c});
  visit_float(node, x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    rt::batch_norm_training<S, C>(n, c, inner, x.data<S>(), in[1]->data<S>(), in[2]->data<S>(), in[3]->data<S>(),
                                  in[4]->data<S>(), static_cast<C>(node.f("epsilon")),
                                  static_cast<C>(node.f("momentum")), out[0].mutable_data<S>(),
                                  out.size() > 1 ? out[1].mutable_data<S>() : nullptr,
                                  out.size() > 2 ? out[2].mutable_data<S>() : nullptr);
  });
}

void eval_batch_norm(const Node& node, std::span<const Tensor* const> in,
                     std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<Shape> params;
  for (size_t i = 1; i < 5; ++i) params.push_back(in[i]->shape());
  check_batch_norm(node, x.shape(), params);
  if (node.i("training_mode") != 0) return eval_batch_norm_training(node, in, out);
  out[0] = Tensor(x.dtype(), x.dims());
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);
  const double eps = node.f("epsilon");
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      const S* px = x.data<S>();
      const S *scale = in[1]->data<S>(), *bias = in[2]->data<S>();
      const S *mean = in[3]->data<S>(), *var = in[4]->data<S>();
      S* py = out[0].mutable_data<S>();
      for (int64_t ch = 0; ch < c; ++ch) {
        // y = (x - mean) / sqrt(var + epsilon) * scale + B
        const C inv = C(1) / std::sqrt(static_cast<C>(var[ch]) + static_cast<C>(eps));
        const C a = static_cast<C>(scale[ch]) * inv;
        const C m = static_cast<C>(mean[ch]), b = static_cast<C>(bias[ch]);
        for (int64_t nb = 0; nb < n; ++nb) {
          const int64_t base = (nb * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i)
            py[base + i] = S((static_cast<C>(px[base + i]) - m) * a + b);
        }
      }
    } else {
      fail("{} is not supported", dtype_name(x.dtype()));
    }
  });
}

Cost batch_norm_cost(const Node& node) {
  // Folded per channel into y = x * a + b: one multiply-add per element.
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& x = node.input(0)->shape();
  if (x.is_static()) c.flops = 2.0 * static_cast<double>(x.numel());
  return c;
}

void infer_softmax(Node& node) {
  require_float(node, 0);
  const Shape& x = node.input(0)->shape();
  require_axis(node, node.i("axis"), static_cast<int64_t>(x.rank()));
  node.output(0)->set_type(node.input(0)->dtype(), x);
}

// Softmax or LogSoftmax along one axis, numerically stable (the max is subtracted first).
void eval_softmax(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t axis = require_axis(node, node.i("axis"), x.rank());
  const bool log = node.op() == "LogSoftmax";
  out[0] = Tensor(x.dtype(), x.dims());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.dims()[i];
  for (int64_t i = axis + 1; i < x.rank(); ++i) inner *= x.dims()[i];
  const int64_t len = x.rank() == 0 ? 1 : x.dims()[axis];
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      const S* px = x.data<S>();
      S* py = out[0].mutable_data<S>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * len * inner + i;
          C max = -std::numeric_limits<C>::infinity();
          for (int64_t k = 0; k < len; ++k)
            max = std::max(max, static_cast<C>(px[base + k * inner]));
          C sum = 0;
          for (int64_t k = 0; k < len; ++k)
            sum += std::exp(static_cast<C>(px[base + k * inner]) - max);
          for (int64_t k = 0; k < len; ++k) {
            C shifted = static_cast<C>(px[base + k * inner]) - max;
            py[base + k * inner] = S(log ? shifted - std::log(sum) : std::exp(shifted) / sum);
          }
        }
    } else {
      fail("{} is not supported", dtype_name(x.dtype()));
    }
  });
}

Cost softmax_cost(const Node& node) {
  // Per element: max, subtract, exp, sum and divide (or subtract the log).
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& x = node.input(0)->shape();
  if (x.is_static()) c.flops = 5.0 * static_cast<double>(x.numel());
  return c;
}

}  // namespace

void register_normalization_ops(Registry& r) {
  r.add(OpDef{
      .name = "BatchNormalization",
      .summary = "(X - mean) / sqrt(var + epsilon) * scale + B per channel; training_mode: batch statistics",
      .inputs = {{"X"}, {"scale"}, {"B"}, {"input_mean"}, {"input_var"}},
      .outputs = {"Y", "running_mean", "running_var"},
      .min_outputs = 1,
      .attrs = {{"epsilon", AttrType::Float, Attribute(1e-5f)},
                {"momentum", AttrType::Float, Attribute(0.9f)},
                {"training_mode", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_batch_norm,
      .eval = eval_batch_norm,
      .cost = batch_norm_cost,
  });
  r.add(OpDef{
      .name = "Softmax",
      .summary = "exp(x) / sum(exp(x)) along one axis (opset 13)",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}},
      .infer = infer_softmax,
      .eval = eval_softmax,
      .cost = softmax_cost,
  });
  r.add(OpDef{
      .name = "LogSoftmax",
      .summary = "x - log(sum(exp(x))) along one axis (opset 13)",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}},
      .infer = infer_softmax,
      .eval = eval_softmax,
      .cost = softmax_cost,
  });
}

}  // namespace kiln::ir
