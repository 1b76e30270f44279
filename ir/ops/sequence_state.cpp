// LinearAttention and CausalConvWithState (opset 27): sequence ops that carry a state between
// calls. The references convert to f32 and run the runtime's kernels, the ones the compiled
// code calls.
#include "ir/ops/sequence_state.h"

#include <cmath>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

namespace rt = kiln::rt;

namespace {

bool present(const std::vector<std::vector<int64_t>>& dims, const Node& node, size_t i) {
  return i < dims.size() && i < node.num_inputs() && node.has_input(i);
}

}  // namespace

rt::LinearAttentionParams linear_attention_params(const Node& node, const std::vector<std::vector<int64_t>>& dims) {
  rt::LinearAttentionParams p;
  const std::string& rule = node.s("update_rule");
  if (rule == "linear") p.rule = rt::LinearUpdate::Linear;
  else if (rule == "gated") p.rule = rt::LinearUpdate::Gated;
  else if (rule == "delta") p.rule = rt::LinearUpdate::Delta;
  else if (rule == "gated_delta") p.rule = rt::LinearUpdate::GatedDelta;
  else fail("{}: update_rule '{}' is not linear, gated, delta or gated_delta", node.describe(), rule);
  p.q_heads = node.i("q_num_heads");
  p.kv_heads = node.i("kv_num_heads");
  if (p.q_heads <= 0 || p.kv_heads <= 0 || p.q_heads % p.kv_heads != 0)
    fail("{}: q_num_heads {} must be a positive multiple of kv_num_heads {}", node.describe(), p.q_heads,
         p.kv_heads);
  const std::vector<int64_t> &q = dims[0], &k = dims[1], &v = dims[2];
  if (q.size() != 3 || k.size() != 3 || v.size() != 3)
    fail("{}: query, key and value must be 3-D [B, T, heads * dim], got {}, {} and {}", node.describe(),
         dims_str(q), dims_str(k), dims_str(v));
  p.batch = q[0];
  p.seq = q[1];
  if (k[0] != p.batch || v[0] != p.batch || k[1] != p.seq || v[1] != p.seq)
    fail("{}: key {} and value {} must share query {}'s batch and length", node.describe(), dims_str(k),
         dims_str(v), dims_str(q));
  if (q[2] % p.q_heads != 0 || k[2] % p.kv_heads != 0 || v[2] % p.kv_heads != 0)
    fail("{}: widths {}, {} and {} are not multiples of the {} query and {} key/value heads", node.describe(),
         q[2], k[2], v[2], p.q_heads, p.kv_heads);
  p.key_dim = q[2] / p.q_heads;
  p.value_dim = v[2] / p.kv_heads;
  if (k[2] / p.kv_heads != p.key_dim)
    fail("{}: key head size {} differs from the query's {}", node.describe(), k[2] / p.kv_heads, p.key_dim);
  const bool gated = p.rule == rt::LinearUpdate::Gated || p.rule == rt::LinearUpdate::GatedDelta;
  const bool delta = p.rule == rt::LinearUpdate::Delta || p.rule == rt::LinearUpdate::GatedDelta;
  if (gated != present(dims, node, 4))
    fail("{}: update_rule '{}' {} the decay input", node.describe(), rule, gated ? "needs" : "takes no");
  if (delta != present(dims, node, 5))
    fail("{}: update_rule '{}' {} the beta input", node.describe(), rule, delta ? "needs" : "takes no");
  if (present(dims, node, 3) &&
      dims[3] != std::vector<int64_t>{p.batch, p.kv_heads, p.key_dim, p.value_dim})
    fail("{}: past_state {} must be [{}, {}, {}, {}]", node.describe(), dims_str(dims[3]), p.batch, p.kv_heads,
         p.key_dim, p.value_dim);
  if (gated) {
    const std::vector<int64_t>& d = dims[4];
    if (d.size() != 3 || d[0] != p.batch || d[1] != p.seq ||
        (d[2] != p.kv_heads && d[2] != p.kv_heads * p.key_dim))
      fail("{}: decay {} must be [{}, {}, kv_heads {} or kv_heads * key size {}]", node.describe(), dims_str(d),
           p.batch, p.seq, p.kv_heads, p.kv_heads * p.key_dim);
    p.decay_width = d[2] / p.kv_heads;
  }
  if (delta) {
    const std::vector<int64_t>& b = dims[5];
    if (b.size() != 3 || b[0] != p.batch || b[1] != p.seq || (b[2] != p.kv_heads && b[2] != 1))
      fail("{}: beta {} must be [{}, {}, kv_heads {} or 1]", node.describe(), dims_str(b), p.batch, p.seq,
           p.kv_heads);
    p.beta_width = b[2];
  }
  const float scale = node.f("scale");
  p.scale = scale == 0.f ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.key_dim))) : scale;
  return p;
}

CausalConvGeometry causal_conv_geometry(const Node& node, const std::vector<std::vector<int64_t>>& dims) {
  const std::string& act = node.s("activation");
  if (act != "none" && act != "silu" && act != "swish")
    fail("{}: activation '{}' is not none, silu or swish", node.describe(), act);
  const std::vector<int64_t> &x = dims[0], &w = dims[1];
  if (x.size() != 3) fail("{}: input must be 3-D [B, C, L], got {}", node.describe(), dims_str(x));
  CausalConvGeometry g{x[0], x[1], x[2], 0, act != "none"};
  if (w.size() != 3 || w[0] != g.channels || w[1] != 1 || w[2] < 1)
    fail("{}: weight {} must be [channels {}, 1, kernel >= 1]", node.describe(), dims_str(w), g.channels);
  g.kernel = w[2];
  if (present(dims, node, 2) && dims[2] != std::vector<int64_t>{g.channels})
    fail("{}: bias {} must be [{}]", node.describe(), dims_str(dims[2]), g.channels);
  if (present(dims, node, 3) && dims[3] != std::vector<int64_t>{g.batch, g.channels, g.kernel - 1})
    fail("{}: past_state {} must be [{}, {}, {}]", node.describe(), dims_str(dims[3]), g.batch, g.channels,
         g.kernel - 1);
  return g;
}

namespace {

std::vector<std::vector<int64_t>> static_dims(const Node& node, bool& known) {
  std::vector<std::vector<int64_t>> dims;
  known = true;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const bool has = node.has_input(i);
    known = known && (!has || node.input(i)->shape().is_static());
    dims.push_back(has && node.input(i)->shape().is_static() ? node.input(i)->shape().values()
                                                             : std::vector<int64_t>{});
  }
  return dims;
}

void infer_linear_attention(Node& node) {
  for (size_t i : {0, 1, 2, 4, 5})
    if (i < node.num_inputs() && node.has_input(i)) require_float(node, i);
  require_same_dtype(node, 0, 1);
  require_same_dtype(node, 0, 2);
  if (node.has_input(3)) require_float(node, 3);
  bool known = false;
  std::vector<std::vector<int64_t>> dims = static_dims(node, known);
  const Shape& q = node.input(0)->shape();
  if (q.rank() != 3) fail("{}: query must be 3-D [B, T, heads * dim], got {}", node.describe(), q.str());
  const DType t = node.input(0)->dtype();
  const DType state_t = node.has_input(3) ? node.input(3)->dtype() : t;
  if (!known) {
    node.output(0)->set_type(t, Shape(std::vector<Dim>{q[0], q[1], Dim::unknown()}));
    if (node.num_outputs() > 1) node.output(1)->set_type(state_t, Shape(std::vector<Dim>(4, Dim::unknown())));
    return;
  }
  const rt::LinearAttentionParams p = linear_attention_params(node, dims);
  node.output(0)->set_type(t, Shape{p.batch, p.seq, p.q_heads * p.value_dim});
  if (node.num_outputs() > 1) node.output(1)->set_type(state_t, Shape{p.batch, p.kv_heads, p.key_dim, p.value_dim});
}

void eval_linear_attention(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor* t : in) dims.push_back(t ? t->dims() : std::vector<int64_t>{});
  const rt::LinearAttentionParams p = linear_attention_params(node, dims);
  const std::vector<float> q = values_f32(in[0]), k = values_f32(in[1]), v = values_f32(in[2]),
                           past = values_f32(optional_input(in, 3)), decay = values_f32(optional_input(in, 4)),
                           beta = values_f32(optional_input(in, 5));
  std::vector<float> y(static_cast<size_t>(p.batch * p.seq * p.q_heads * p.value_dim));
  std::vector<float> state(static_cast<size_t>(p.batch * p.kv_heads * p.key_dim * p.value_dim));
  rt::linear_attention_f32(p, q.data(), k.data(), v.data(), data_or_null(past), data_or_null(decay),
                           data_or_null(beta), y.data(), state.data());
  const DType t = in[0]->dtype();
  out[0] = tensor_from_f32(t, {p.batch, p.seq, p.q_heads * p.value_dim}, y);
  if (out.size() > 1)
    out[1] = tensor_from_f32(optional_input(in, 3) ? in[3]->dtype() : t, {p.batch, p.kv_heads, p.key_dim, p.value_dim},
                      state);
}

void infer_causal_conv(Node& node) {
  require_float(node, 0);
  for (size_t i = 1; i < node.num_inputs(); ++i)
    if (node.has_input(i)) require_same_dtype(node, 0, i);
  const Shape& x = node.input(0)->shape();
  const Shape& w = node.input(1)->shape();
  if (x.rank() != 3 || w.rank() != 3)
    fail("{}: input {} and weight {} must be 3-D", node.describe(), x.str(), w.str());
  bool known = false;
  std::vector<std::vector<int64_t>> dims = static_dims(node, known);
  if (known) causal_conv_geometry(node, dims);
  const DType t = node.input(0)->dtype();
  node.output(0)->set_type(t, x);
  const Dim keep = w[2].is_static() ? Dim(w[2].value() - 1) : Dim::unknown();
  if (node.num_outputs() > 1) node.output(1)->set_type(t, Shape(std::vector<Dim>{x[0], x[1], keep}));
}

void eval_causal_conv(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor* t : in) dims.push_back(t ? t->dims() : std::vector<int64_t>{});
  const CausalConvGeometry g = causal_conv_geometry(node, dims);
  const std::vector<float> x = values_f32(in[0]), w = values_f32(in[1]), bias = values_f32(optional_input(in, 2)),
                           past = values_f32(optional_input(in, 3));
  std::vector<float> y(x.size()), state(static_cast<size_t>(g.batch * g.channels * (g.kernel - 1)));
  rt::causal_conv_with_state_f32(g.batch, g.channels, g.length, g.kernel, x.data(), w.data(), data_or_null(bias),
                                 data_or_null(past), g.silu, y.data(), state.data());
  const DType t = in[0]->dtype();
  out[0] = tensor_from_f32(t, in[0]->dims(), y);
  if (out.size() > 1) out[1] = tensor_from_f32(t, {g.batch, g.channels, g.kernel - 1}, state);
}

}  // namespace

void register_sequence_state_ops(Registry& r) {
  r.add(OpDef{
      .name = "LinearAttention",
      .summary = "attention through a [key, value] state updated per step (linear, gated, delta or gated "
                 "delta rule; opset 27)",
      .inputs = {{"query"}, {"key"}, {"value"}, {"past_state", true}, {"decay", true}, {"beta", true}},
      .outputs = {"output", "present_state"},
      .min_outputs = 1,
      .attrs = {{"chunk_size", AttrType::Int, Attribute(int64_t{64})},  // a tuning hint
                {"kv_num_heads", AttrType::Int, std::nullopt},
                {"q_num_heads", AttrType::Int, std::nullopt},
                {"scale", AttrType::Float, Attribute(0.f)},
                {"update_rule", AttrType::String, Attribute(std::string("gated_delta"))}},
      .infer = infer_linear_attention,
      .eval = eval_linear_attention,
  });
  r.add(OpDef{
      .name = "CausalConvWithState",
      .summary = "depthwise causal 1-D convolution continuing from a carried state, optional silu (opset 27)",
      .inputs = {{"input"}, {"weight"}, {"bias", true}, {"past_state", true}},
      .outputs = {"output", "present_state"},
      .min_outputs = 1,
      .attrs = {{"activation", AttrType::String, Attribute(std::string("none"))}},
      .infer = infer_causal_conv,
      .eval = eval_causal_conv,
  });
}

}  // namespace kiln::ir
