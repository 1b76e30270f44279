// Normalizations by statistics of groups of elements: LayerNormalization, RMSNormalization,
// GroupNormalization, InstanceNormalization, MeanVarianceNormalization, LpNormalization, LRN.
// The kernels are the runtime's (kiln/rt/normalize.h), shared with the generated code.
#include "ir/ops/normalize.h"

#include <algorithm>

#include "kiln/rt/normalize.h"

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

int64_t norm_axis(const Node& node, int64_t rank) {
  if (rank < 1) fail("{}: input X must have rank >= 1", node.describe());
  return require_axis(node, node.i("axis"), rank);
}

DType norm_stats_dtype(DType x) { return x == DType::F64 ? DType::F64 : DType::F32; }

std::vector<int64_t> mvn_axes(const Node& node, int64_t rank) {
  std::vector<int64_t> axes = node.ints("axes");
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t k = require_axis(node, a, rank);
    if (std::find(out.begin(), out.end(), k) != out.end())
      fail("{}: axis {} is listed twice in axes {}", node.describe(), a, ints_str(axes));
    out.push_back(k);
  }
  return out;
}

namespace {

// Fails unless `param` (named `what`) broadcasts onto `target` from the right without growing.
void check_param(const Node& node, const char* what, const Shape& param, const Shape& target) {
  bool ok = param.rank() <= target.rank();
  for (size_t i = 0; ok && i < param.rank(); ++i) {
    const Dim& p = param[param.rank() - 1 - i];
    const Dim& t = target[target.rank() - 1 - i];
    if (p.is_static() && t.is_static() && p.value() != 1 && p.value() != t.value()) ok = false;
  }
  if (!ok)
    fail("{}: {} {} does not broadcast to the normalized shape {}", node.describe(), what, param.str(),
         target.str());
}

Shape tail(const Shape& s, int64_t from) {
  return Shape(std::vector<Dim>(s.dims().begin() + from, s.dims().end()));
}

// `t` broadcast to the contiguous `dims` (the normalized shape), as storage type S.
template <class S>
std::vector<S> expand_param(const Tensor& t, const std::vector<int64_t>& dims) {
  std::vector<S> out(static_cast<size_t>(numel(dims)));
  const S* p = t.data<S>();
  std::vector<int64_t> strides = broadcast_strides(t.dims(), dims);
  for_each_broadcast(dims, strides, strides, [&](int64_t o, int64_t i, int64_t) { out[o] = p[i]; });
  return out;
}

// ---- LayerNormalization, RMSNormalization ------------------------------------------------

void infer_layer_norm(Node& node) {
  require_float(node, 0);
  const bool rms = node.op() == "RMSNormalization";
  const Shape& x = node.input(0)->shape();
  const int64_t axis = norm_axis(node, static_cast<int64_t>(x.rank()));
  const Shape normalized = tail(x, axis);
  for (size_t i = 1; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    require_same_dtype(node, 0, i);
    check_param(node, i == 1 ? "scale" : "bias", node.input(i)->shape(), normalized);
  }
  node.output(0)->set_type(node.input(0)->dtype(), x);
  if (rms) return;
  std::vector<Dim> stats(x.dims().begin(), x.dims().begin() + axis);
  stats.resize(x.rank(), Dim(1));
  for (size_t i = 1; i < node.num_outputs(); ++i)
    node.output(i)->set_type(norm_stats_dtype(node.input(0)->dtype()), Shape(stats));
}

void eval_layer_norm(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const bool rms = node.op() == "RMSNormalization";
  const int64_t axis = norm_axis(node, x.rank());
  const std::vector<int64_t> normalized(x.dims().begin() + axis, x.dims().end());
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i]) check_param(node, i == 1 ? "scale" : "bias", in[i]->shape(), Shape::of(normalized));
  const int64_t len = numel(normalized), rows = len == 0 ? 0 : x.numel() / len;
  out[0] = Tensor(x.dtype(), x.dims());
  std::vector<int64_t> stats(x.dims().begin(), x.dims().begin() + axis);
  stats.resize(x.dims().size(), 1);
  const DType u = norm_stats_dtype(x.dtype());
  for (size_t i = 1; i < out.size(); ++i) out[i] = Tensor(u, stats);
  visit_float(node, x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    std::vector<S> scale = expand_param<S>(*in[1], normalized);
    const C eps = static_cast<C>(node.f("epsilon"));
    if (rms) {
      rt::rms_norm<S, C>(rows, len, x.data<S>(), scale.data(), eps, out[0].mutable_data<S>());
      return;
    }
    const Tensor* b = optional_input(in, 2);
    std::vector<S> bias = b ? expand_param<S>(*b, normalized) : std::vector<S>();
    // The statistics come out as C; stored as U (f32, or f64 for f64 inputs).
    std::vector<C> mean(static_cast<size_t>(rows)), inv(static_cast<size_t>(rows));
    rt::layer_norm<S, C, C>(rows, len, x.data<S>(), scale.data(), b ? bias.data() : nullptr, eps,
                            out[0].mutable_data<S>(), mean.data(), inv.data());
    for (size_t i = 1; i < out.size(); ++i)
      visit_float(node, u, [&]<class U>() {
        U* p = out[i].mutable_data<U>();
        for (int64_t r = 0; r < rows; ++r) p[r] = static_cast<U>((i == 1 ? mean : inv)[r]);
      });
  });
}

Cost layer_norm_cost(const Node& node) {
  // Sum, squared deviations, then a subtract, two multiplies and an add per element.
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& x = node.input(0)->shape();
  if (x.is_static()) c.flops = 7.0 * static_cast<double>(x.numel());
  return c;
}

// ---- GroupNormalization, InstanceNormalization ---------------------------------------------

int64_t num_groups(const Node& node, int64_t channels) {
  if (node.op() == "InstanceNormalization") return channels;
  const int64_t g = node.i("num_groups");
  if (g <= 0 || (channels >= 0 && channels % g != 0))
    fail("{}: num_groups {} must be positive and divide the {} channels", node.describe(), g, channels);
  return g;
}

void infer_group_norm(Node& node) {
  require_float(node, 0);
  const Shape& x = node.input(0)->shape();
  if (x.rank() < 2) fail("{}: input X must have rank >= 2 (N, C, ...), got {}", node.describe(), x.str());
  const int64_t channels = x[1].is_static() ? x[1].value() : -1;
  num_groups(node, channels);
  for (size_t i = 1; i < 3; ++i) {
    require_same_dtype(node, 0, i);
    const Shape& p = node.input(i)->shape();
    if (p.rank() != 1 || (p[0].is_static() && channels >= 0 && p[0].value() != channels))
      fail("{}: {} must be 1-D with one value per channel of X {}, got {}", node.describe(),
           i == 1 ? "scale" : "bias", x.str(), p.str());
  }
  node.output(0)->set_type(node.input(0)->dtype(), x);
}

void eval_group_norm(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  if (x.rank() < 2) fail("{}: input X must have rank >= 2 (N, C, ...), got {}", node.describe(), x.shape().str());
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t groups = num_groups(node, c);
  for (size_t i = 1; i < 3; ++i)
    if (in[i]->rank() != 1 || in[i]->dims()[0] != c)
      fail("{}: {} must be 1-D with the {} channels of X, got {}", node.describe(), i == 1 ? "scale" : "bias", c,
           in[i]->shape().str());
  const int64_t spatial = n * c == 0 ? 0 : x.numel() / (n * c);
  out[0] = Tensor(x.dtype(), x.dims());
  visit_float(node, x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    rt::group_norm<S, C>(n, groups, c / groups, spatial, x.data<S>(), in[1]->data<S>(), in[2]->data<S>(),
                         static_cast<C>(node.f("epsilon")), out[0].mutable_data<S>());
  });
}

// ---- MeanVarianceNormalization -----------------------------------------------------------

void infer_same_float(Node& node) {
  require_float(node, 0);
  node.output(0)->set_type(node.input(0)->dtype(), node.input(0)->shape());
}

void infer_mvn(Node& node) {
  infer_same_float(node);
  mvn_axes(node, static_cast<int64_t>(node.input(0)->shape().rank()));
}

void eval_mvn(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> axes = mvn_axes(node, x.rank());
  std::vector<int64_t> strides = contiguous_strides(x.dims());
  std::vector<int64_t> od, os, rd, rs;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
    (red ? rd : od).push_back(x.dims()[d]);
    (red ? rs : os).push_back(strides[d]);
  }
  for (auto* v : {&od, &rd})
    if (v->empty()) v->push_back(1);
  for (auto* v : {&os, &rs})
    if (v->empty()) v->push_back(0);
  out[0] = Tensor(x.dtype(), x.dims());
  visit_float(node, x.dtype(), [&]<class S>() {
    rt::mean_variance_norm<S, compute_t<S>>(static_cast<int>(od.size()), od.data(), os.data(),
                                            static_cast<int>(rd.size()), rd.data(), rs.data(), x.data<S>(),
                                            out[0].mutable_data<S>());
  });
}

// ---- LpNormalization, LRN ----------------------------------------------------------------

void check_lp(const Node& node) {
  if (node.i("p") != 1 && node.i("p") != 2) fail("{}: p must be 1 or 2, got {}", node.describe(), node.i("p"));
}

void infer_lp_norm(Node& node) {
  check_lp(node);
  infer_same_float(node);
  norm_axis(node, static_cast<int64_t>(node.input(0)->shape().rank()));
}

void eval_lp_norm(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  check_lp(node);
  const Tensor& x = *in[0];
  const int64_t axis = norm_axis(node, x.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dims()[d];
  out[0] = Tensor(x.dtype(), x.dims());
  visit_float(node, x.dtype(), [&]<class S>() {
    rt::lp_norm<S, compute_t<S>>(outer, x.dims()[axis], inner, static_cast<int>(node.i("p")), x.data<S>(),
                                 out[0].mutable_data<S>());
  });
}

void check_lrn(const Node& node, int64_t rank) {
  if (node.i("size") <= 0) fail("{}: size must be positive, got {}", node.describe(), node.i("size"));
  if (rank < 2) fail("{}: input X must have rank >= 2 (N, C, ...), got rank {}", node.describe(), rank);
}

void infer_lrn(Node& node) {
  infer_same_float(node);
  check_lrn(node, static_cast<int64_t>(node.input(0)->shape().rank()));
}

void eval_lrn(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  check_lrn(node, x.rank());
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t spatial = n * c == 0 ? 0 : x.numel() / (n * c);
  out[0] = Tensor(x.dtype(), x.dims());
  visit_float(node, x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    rt::lrn<S, C>(n, c, spatial, node.i("size"), static_cast<C>(node.f("alpha")), static_cast<C>(node.f("beta")),
                  static_cast<C>(node.f("bias")), x.data<S>(), out[0].mutable_data<S>());
  });
}

AttrSpec epsilon_attr() { return {"epsilon", AttrType::Float, Attribute(1e-5f)}; }
AttrSpec stash_type_attr() { return {"stash_type", AttrType::Int, Attribute(int64_t{1})}; }

}  // namespace

void register_normalize_ops(Registry& r) {
  r.add(OpDef{
      .name = "LayerNormalization",
      .summary = "(X - mean) / sqrt(var + epsilon) * Scale + B over the dims from axis on",
      .inputs = {{"X"}, {"Scale"}, {"B", true}},
      .outputs = {"Y", "Mean", "InvStdDev"},
      .min_outputs = 1,
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}, epsilon_attr(), stash_type_attr()},
      .infer = infer_layer_norm,
      .eval = eval_layer_norm,
      .cost = layer_norm_cost,
  });
  r.add(OpDef{
      .name = "RMSNormalization",
      .summary = "X / sqrt(mean(X^2) + epsilon) * scale over the dims from axis on",
      .inputs = {{"X"}, {"scale"}},
      .outputs = {"Y"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}, epsilon_attr(), stash_type_attr()},
      .infer = infer_layer_norm,
      .eval = eval_layer_norm,
      .cost = layer_norm_cost,
  });
  r.add(OpDef{
      .name = "GroupNormalization",
      .summary = "normalizes each group of channels by its mean and variance, then scale and bias per channel",
      .inputs = {{"X"}, {"scale"}, {"bias"}},
      .outputs = {"Y"},
      .attrs = {epsilon_attr(), {"num_groups", AttrType::Int}, stash_type_attr()},
      .infer = infer_group_norm,
      .eval = eval_group_norm,
      .cost = layer_norm_cost,
  });
  r.add(OpDef{
      .name = "InstanceNormalization",
      .summary = "normalizes each channel of each item by its mean and variance, then scale and B per channel",
      .inputs = {{"input"}, {"scale"}, {"B"}},
      .outputs = {"output"},
      .attrs = {epsilon_attr()},
      .infer = infer_group_norm,
      .eval = eval_group_norm,
      .cost = layer_norm_cost,
  });
  r.add(OpDef{
      .name = "MeanVarianceNormalization",
      .summary = "(X - mean) / (std + 1e-9) with mean and std over axes",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .attrs = {{"axes", AttrType::Ints, Attribute(std::vector<int64_t>{0, 2, 3})}},
      .infer = infer_mvn,
      .eval = eval_mvn,
  });
  r.add(OpDef{
      .name = "LpNormalization",
      .summary = "x / ||x||_p along axis, p 1 or 2",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}, {"p", AttrType::Int, Attribute(int64_t{2})}},
      .infer = infer_lp_norm,
      .eval = eval_lp_norm,
  });
  r.add(OpDef{
      .name = "LRN",
      .summary = "local response normalization across channels: x / (bias + alpha / size * sum x^2)^beta",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .attrs = {{"alpha", AttrType::Float, Attribute(1e-4f)},
                {"beta", AttrType::Float, Attribute(0.75f)},
                {"bias", AttrType::Float, Attribute(1.0f)},
                {"size", AttrType::Int}},
      .infer = infer_lrn,
      .eval = eval_lrn,
  });
}

}  // namespace kiln::ir
