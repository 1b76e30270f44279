// Attention (opset 23/24): scaled dot-product attention with grouped key/value heads, masks,
// causal masking, softcap and a key/value cache. The reference converts to f32 and runs the
// runtime's kernel, the one the compiled code calls.
#include "ir/ops/attention.h"

#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

constexpr size_t kOutPresentKey = 1, kOutPresentValue = 2, kOutScores = 3;

// a == b when both are known.
bool dims_differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }
int64_t dim_or(const Shape& s, size_t i) { return s[i].is_static() ? s[i].value() : -1; }

// Heads of a packed [B, S, heads * dim] input: the head size, or -1 when the width is symbolic.
int64_t packed_head_dim(const Node& node, const Shape& s, int64_t heads, const char* what) {
  int64_t width = dim_or(s, 2);
  if (width < 0) return -1;
  if (width % heads != 0)
    fail("{}: {} width {} is not a multiple of its {} heads", node.describe(), what, width, heads);
  return width / heads;
}

void check_mask(const Node& node, const AttentionGeometry& g, const Shape& m) {
  if (m.rank() < 1 || m.rank() > 4)
    fail("{}: attn_mask must have rank 1 to 4, got {}", node.describe(), m.str());
  // Broadcast to [B, q_heads, q_len, kv_len]; the key axis may be shorter (padded as masked).
  const int64_t target[4] = {g.batch, g.q_heads, g.q_len, g.kv_len()};
  for (size_t i = 0; i < m.rank(); ++i) {
    const size_t axis = 4 - m.rank() + i;
    const int64_t d = dim_or(m, i), t = target[axis];
    if (axis == 3) {
      if (d >= 0 && t >= 0 && d > t)
        fail("{}: attn_mask {} has more keys than the {} of K (past included)", node.describe(), m.str(), t);
    } else if (d >= 0 && d != 1 && dims_differ(d, t)) {
      fail("{}: attn_mask {} does not broadcast to [batch {}, heads {}, q {}, kv {}]", node.describe(), m.str(),
           g.batch, g.q_heads, g.q_len, g.kv_len());
    }
  }
}

void check_past(const Node& node, const AttentionGeometry& g, const Shape& p, int64_t dim, const char* what) {
  if (p.rank() != 4) fail("{}: {} must be 4-D [B, kv_heads, past, dim], got {}", node.describe(), what, p.str());
  if (dims_differ(dim_or(p, 0), g.batch) || dims_differ(dim_or(p, 1), g.kv_heads) ||
      dims_differ(dim_or(p, 3), dim))
    fail("{}: {} {} does not match [batch {}, kv_heads {}, past, {}]", node.describe(), what, p.str(), g.batch,
         g.kv_heads, dim);
}

}  // namespace

AttentionGeometry attention_geometry(const Node& node, const std::vector<const Shape*>& in) {
  const Shape &q = *in[kAttnQ], &k = *in[kAttnK], &v = *in[kAttnV];
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
    fail("{}: Q, K and V must all be 3-D or all 4-D, got {}, {} and {}", node.describe(), q.str(), k.str(),
         v.str());
  AttentionGeometry g;
  g.packed = q.rank() == 3;
  g.batch = dim_or(q, 0);
  if (g.packed) {
    if (!node.has_attr("q_num_heads") || !node.has_attr("kv_num_heads"))
      fail("{}: 3-D inputs need the q_num_heads and kv_num_heads attributes", node.describe());
    g.q_heads = node.i("q_num_heads");
    g.kv_heads = node.i("kv_num_heads");
    if (g.q_heads <= 0 || g.kv_heads <= 0)
      fail("{}: q_num_heads {} and kv_num_heads {} must be positive", node.describe(), g.q_heads, g.kv_heads);
    g.q_len = dim_or(q, 1);
    g.kv_new = dim_or(k, 1);
    g.head_dim = packed_head_dim(node, q, g.q_heads, "Q");
    const int64_t k_dim = packed_head_dim(node, k, g.kv_heads, "K");
    if (dims_differ(g.head_dim, k_dim))
      fail("{}: Q's head size {} differs from K's {} ({} and {})", node.describe(), g.head_dim, k_dim, q.str(),
           k.str());
    g.v_head_dim = packed_head_dim(node, v, g.kv_heads, "V");
  } else {
    g.q_heads = dim_or(q, 1);
    g.kv_heads = dim_or(k, 1);
    g.q_len = dim_or(q, 2);
    g.kv_new = dim_or(k, 2);
    g.head_dim = dim_or(q, 3);
    g.v_head_dim = dim_or(v, 3);
    if (dims_differ(g.head_dim, dim_or(k, 3)) || dims_differ(g.kv_heads, dim_or(v, 1)))
      fail("{}: K {} and V {} do not match Q {} (heads and head size)", node.describe(), k.str(), v.str(),
           q.str());
  }
  const int64_t v_len = dim_or(v, g.packed ? 1 : 2);
  if (dims_differ(g.batch, dim_or(k, 0)) || dims_differ(g.batch, dim_or(v, 0)) || dims_differ(g.kv_new, v_len))
    fail("{}: K {} and V {} must share the batch of Q {} and their sequence length", node.describe(), k.str(),
         v.str(), q.str());
  if (g.q_heads > 0 && g.kv_heads > 0 && g.q_heads % g.kv_heads != 0)
    fail("{}: {} query heads are not a multiple of {} key/value heads", node.describe(), g.q_heads, g.kv_heads);
  const bool has_pk = in.size() > kAttnPastKey && in[kAttnPastKey];
  const bool has_pv = in.size() > kAttnPastValue && in[kAttnPastValue];
  if (has_pk != has_pv) fail("{}: past_key and past_value must be given together", node.describe());
  if (has_pk) {
    check_past(node, g, *in[kAttnPastKey], g.head_dim, "past_key");
    check_past(node, g, *in[kAttnPastValue], g.v_head_dim, "past_value");
    g.past = dim_or(*in[kAttnPastKey], 2);
    if (dims_differ(g.past, dim_or(*in[kAttnPastValue], 2)))
      fail("{}: past_key {} and past_value {} have different lengths", node.describe(), in[kAttnPastKey]->str(),
           in[kAttnPastValue]->str());
  }
  if (in.size() > kAttnNonpad && in[kAttnNonpad]) {
    if (has_pk) fail("{}: nonpad_kv_seqlen cannot be combined with past_key and past_value", node.describe());
    const Shape& n = *in[kAttnNonpad];
    if (n.rank() != 1 || dims_differ(dim_or(n, 0), g.batch))
      fail("{}: nonpad_kv_seqlen must be [batch {}], got {}", node.describe(), g.batch, n.str());
  }
  if (in.size() > kAttnMask && in[kAttnMask]) check_mask(node, g, *in[kAttnMask]);
  const int64_t mode = node.i("qk_matmul_output_mode");
  if (mode < 0 || mode > 3) fail("{}: qk_matmul_output_mode {} is not 0 to 3", node.describe(), mode);
  if (node.i("is_causal") != 0 && node.i("is_causal") != 1)
    fail("{}: is_causal must be 0 or 1, got {}", node.describe(), node.i("is_causal"));
  return g;
}

kiln::rt::AttentionParams attention_params(const Node& node, const std::vector<std::vector<int64_t>>& dims,
                                           bool kv_from_present) {
  std::vector<Shape> shapes;
  std::vector<const Shape*> ptrs;
  shapes.reserve(dims.size());
  for (const auto& d : dims) shapes.push_back(Shape::of(d));
  for (size_t i = 0; i < dims.size(); ++i)
    ptrs.push_back(i < node.num_inputs() && node.has_input(i) ? &shapes[i] : nullptr);
  const AttentionGeometry g = attention_geometry(node, ptrs);
  namespace rt = kiln::rt;
  rt::AttentionParams p;
  p.batch = g.batch;
  p.q_heads = g.q_heads;
  p.kv_heads = g.kv_heads;
  p.q_len = g.q_len;
  p.kv_len = g.kv_len();
  p.head_dim = g.head_dim;
  p.v_head_dim = g.v_head_dim;
  auto layout = [&](int64_t heads, int64_t seq, int64_t dim) {
    return g.packed ? rt::attention_layout_bshd(heads, seq, dim) : rt::attention_layout_bhsd(heads, seq, dim);
  };
  p.q = layout(g.q_heads, g.q_len, g.head_dim);
  p.y = layout(g.q_heads, g.q_len, g.v_head_dim);
  if (kv_from_present) {
    p.k = rt::attention_layout_bhsd(g.kv_heads, p.kv_len, g.head_dim);
    p.v = rt::attention_layout_bhsd(g.kv_heads, p.kv_len, g.v_head_dim);
  } else {
    p.k = layout(g.kv_heads, g.kv_new, g.head_dim);
    p.v = layout(g.kv_heads, g.kv_new, g.v_head_dim);
  }
  p.scale = node.has_attr("scale") ? node.f("scale")
                                   : static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.head_dim)));
  p.softcap = node.f("softcap");
  p.mask.causal = node.i("is_causal") != 0;
  p.mask.causal_offset = g.past;
  if (dims.size() > kAttnMask && node.has_input(kAttnMask)) {
    const std::vector<int64_t>& m = dims[kAttnMask];
    const std::vector<int64_t> target = {g.batch, g.q_heads, g.q_len, m.back()};
    std::vector<int64_t> strides = broadcast_strides(m, target);
    for (size_t i = 0; i < 4; ++i) p.mask.stride[i] = strides[i];
    p.mask.keys = m.back();
  }
  p.scores_mode = static_cast<rt::AttentionScores>(node.i("qk_matmul_output_mode"));
  return p;
}

kiln::rt::AttentionParams flex_attention_params(const Node& node, const std::vector<int64_t>& q,
                                                const std::vector<int64_t>& k, const std::vector<int64_t>& v) {
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    fail("{}: Q, K and V must be 4-D, got {}, {} and {}", node.describe(), dims_str(q), dims_str(k), dims_str(v));
  if (k[0] != q[0] || v[0] != q[0] || v[1] != k[1] || v[2] != k[2] || k[3] != q[3])
    fail("{}: K {} and V {} do not match Q {} (batch, heads, length, head size)", node.describe(), dims_str(k),
         dims_str(v), dims_str(q));
  if (k[1] <= 0 || q[1] % k[1] != 0)
    fail("{}: {} query heads are not a multiple of {} key/value heads", node.describe(), q[1], k[1]);
  kiln::rt::AttentionParams p;
  p.batch = q[0];
  p.q_heads = q[1];
  p.kv_heads = k[1];
  p.q_len = q[2];
  p.kv_len = k[2];
  p.head_dim = q[3];
  p.v_head_dim = v[3];
  p.q = kiln::rt::attention_layout_bhsd(p.q_heads, p.q_len, p.head_dim);
  p.k = kiln::rt::attention_layout_bhsd(p.kv_heads, p.kv_len, p.head_dim);
  p.v = kiln::rt::attention_layout_bhsd(p.kv_heads, p.kv_len, p.v_head_dim);
  p.y = kiln::rt::attention_layout_bhsd(p.q_heads, p.q_len, p.v_head_dim);
  p.scale = node.has_attr("scale") ? node.f("scale")
                                   : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
  return p;
}

namespace {

std::vector<const Shape*> input_shapes(const Node& node) {
  std::vector<const Shape*> s;
  for (size_t i = 0; i < node.num_inputs(); ++i) s.push_back(node.has_input(i) ? &node.input(i)->shape() : nullptr);
  return s;
}

Dim dim_of(int64_t v) { return v >= 0 ? Dim(v) : Dim::unknown(); }

void infer_attention(Node& node) {
  require_float(node, kAttnQ);
  require_same_dtype(node, kAttnQ, kAttnK);
  require_same_dtype(node, kAttnQ, kAttnV);
  for (size_t i : {kAttnPastKey, kAttnPastValue})
    if (node.has_input(i)) require_same_dtype(node, kAttnQ, i);
  if (node.has_input(kAttnMask) && node.input(kAttnMask)->dtype() != DType::Bool)
    require_same_dtype(node, kAttnQ, kAttnMask);
  if (node.has_input(kAttnNonpad)) require_dtype(node, kAttnNonpad, {DType::I64});
  const AttentionGeometry g = attention_geometry(node, input_shapes(node));
  const DType t = node.input(kAttnQ)->dtype();
  const Shape& q = node.input(kAttnQ)->shape();
  const Dim batch = q[0];
  if (g.packed) {
    const int64_t width = g.v_head_dim < 0 ? -1 : g.q_heads * g.v_head_dim;
    node.output(0)->set_type(t, Shape(std::vector<Dim>{batch, q[1], dim_of(width)}));
  } else {
    node.output(0)->set_type(t, Shape(std::vector<Dim>{batch, q[1], q[2], dim_of(g.v_head_dim)}));
  }
  const Dim total = dim_of(g.kv_len());
  if (node.num_outputs() > kOutPresentKey)
    node.output(kOutPresentKey)->set_type(t, Shape(std::vector<Dim>{batch, dim_of(g.kv_heads), total, dim_of(g.head_dim)}));
  if (node.num_outputs() > kOutPresentValue)
    node.output(kOutPresentValue)->set_type(t, Shape(std::vector<Dim>{batch, dim_of(g.kv_heads), total, dim_of(g.v_head_dim)}));
  if (node.num_outputs() > kOutScores)
    node.output(kOutScores)->set_type(t, Shape(std::vector<Dim>{batch, dim_of(g.q_heads), dim_of(g.q_len), total}));
}

void eval_attention(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < in.size(); ++i) dims.push_back(in[i] ? in[i]->dims() : std::vector<int64_t>{});
  kiln::rt::AttentionParams p = attention_params(node, dims, /*kv_from_present=*/true);
  const DType t = in[kAttnQ]->dtype();
  const std::vector<float> q = values_f32(in[kAttnQ]), k = values_f32(in[kAttnK]), v = values_f32(in[kAttnV]);
  // K and V are read from the present key/value, whether or not they are outputs.
  const bool packed = in[kAttnQ]->rank() == 3;
  const int64_t past = p.mask.causal_offset, kv_new = p.kv_len - past;
  auto cur_layout = [&](int64_t dim) {
    return packed ? kiln::rt::attention_layout_bshd(p.kv_heads, kv_new, dim)
                  : kiln::rt::attention_layout_bhsd(p.kv_heads, kv_new, dim);
  };
  std::vector<float> past_k, past_v;
  if (const Tensor* pk = optional_input(in, kAttnPastKey)) past_k = values_f32(pk);
  if (const Tensor* pv = optional_input(in, kAttnPastValue)) past_v = values_f32(pv);
  std::vector<float> present_k(static_cast<size_t>(p.batch * p.kv_heads * p.kv_len * p.head_dim));
  std::vector<float> present_v(static_cast<size_t>(p.batch * p.kv_heads * p.kv_len * p.v_head_dim));
  kiln::rt::attention_concat_kv_f32(p.batch, p.kv_heads, past, kv_new, p.head_dim, past_k.data(), k.data(),
                                    cur_layout(p.head_dim), present_k.data());
  kiln::rt::attention_concat_kv_f32(p.batch, p.kv_heads, past, kv_new, p.v_head_dim, past_v.data(), v.data(),
                                    cur_layout(p.v_head_dim), present_v.data());
  std::vector<float> mask;
  if (const Tensor* m = optional_input(in, kAttnMask)) {
    if (m->dtype() == DType::Bool) {
      p.mask.allow = m->data<bool>();
    } else {
      mask = values_f32(m);
      p.mask.bias = mask.data();
    }
  }
  if (const Tensor* n = optional_input(in, kAttnNonpad)) {
    p.mask.nonpad_kv_seqlen = n->data<int64_t>();
    for (int64_t b = 0; b < p.batch; ++b)
      if (n->data<int64_t>()[b] < 0 || n->data<int64_t>()[b] > p.kv_len)
        fail("{}: nonpad_kv_seqlen[{}] = {} is outside [0, {}]", node.describe(), b, n->data<int64_t>()[b],
             p.kv_len);
  }
  std::vector<float> scores;
  if (node.num_outputs() > kOutScores) {
    scores.resize(static_cast<size_t>(p.batch * p.q_heads * p.q_len * p.kv_len));
    p.scores = scores.data();
  }
  std::vector<int64_t> y_dims = in[kAttnQ]->dims();
  y_dims.back() = packed ? p.q_heads * p.v_head_dim : p.v_head_dim;
  std::vector<float> y(static_cast<size_t>(numel(y_dims)));
  if (!kiln::rt::attention_f32(p, q.data(), present_k.data(), present_v.data(), y.data(), nullptr))
    fail("{}: out of memory", node.describe());
  out[0] = tensor_from_f32(t, y_dims, y);
  if (out.size() > kOutPresentKey)
    out[kOutPresentKey] = tensor_from_f32(t, {p.batch, p.kv_heads, p.kv_len, p.head_dim}, present_k);
  if (out.size() > kOutPresentValue)
    out[kOutPresentValue] = tensor_from_f32(t, {p.batch, p.kv_heads, p.kv_len, p.v_head_dim}, present_v);
  if (out.size() > kOutScores) out[kOutScores] = tensor_from_f32(t, {p.batch, p.q_heads, p.q_len, p.kv_len}, scores);
}

void infer_flex_attention(Node& node) {
  require_float(node, kAttnQ);
  require_same_dtype(node, kAttnQ, kAttnK);
  require_same_dtype(node, kAttnQ, kAttnV);
  const Shape &q = node.input(kAttnQ)->shape(), &v = node.input(kAttnV)->shape();
  if (q.rank() != 4 || v.rank() != 4)
    fail("{}: Q {} and V {} must be 4-D", node.describe(), q.str(), v.str());
  if (q.is_static() && node.input(kAttnK)->shape().is_static() && v.is_static())
    flex_attention_params(node, q.values(), node.input(kAttnK)->shape().values(), v.values());
  node.output(0)->set_type(node.input(kAttnQ)->dtype(), Shape(std::vector<Dim>{q[0], q[1], q[2], v[3]}));
}

void eval_flex_attention(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const kiln::rt::AttentionParams p = flex_attention_params(node, in[0]->dims(), in[1]->dims(), in[2]->dims());
  const std::vector<float> q = values_f32(in[0]), k = values_f32(in[1]), v = values_f32(in[2]);
  std::vector<float> y(static_cast<size_t>(p.batch * p.q_heads * p.q_len * p.v_head_dim));
  if (!kiln::rt::attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr))
    fail("{}: out of memory", node.describe());
  out[0] = tensor_from_f32(in[0]->dtype(), {p.batch, p.q_heads, p.q_len, p.v_head_dim}, y);
}

Cost attention_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const AttentionGeometry g = attention_geometry(node, input_shapes(node));
  if (g.batch >= 0 && g.q_len >= 0 && g.kv_len() >= 0 && g.head_dim >= 0 && g.v_head_dim >= 0)
    c.flops = 2.0 * static_cast<double>(g.batch * g.q_heads * g.q_len) * static_cast<double>(g.kv_len()) *
              static_cast<double>(g.head_dim + g.v_head_dim + 3);
  return c;
}

}  // namespace

void register_attention_ops(Registry& r) {
  r.add(OpDef{
      .name = "Attention",
      .summary = "softmax(softcap(scale * Q K^T) + mask) V per head, with grouped KV heads and a KV cache "
                 "(opset 23/24)",
      .inputs = {{"Q"},
                 {"K"},
                 {"V"},
                 {"attn_mask", true},
                 {"past_key", true},
                 {"past_value", true},
                 {"nonpad_kv_seqlen", true}},
      .outputs = {"Y", "present_key", "present_value", "qk_matmul_output"},
      .min_outputs = 1,
      .attrs = {{"is_causal", AttrType::Int, Attribute(int64_t{0})},
                {"kv_num_heads", AttrType::Int, std::nullopt, true},
                {"q_num_heads", AttrType::Int, std::nullopt, true},
                {"qk_matmul_output_mode", AttrType::Int, Attribute(int64_t{0})},
                {"scale", AttrType::Float, std::nullopt, true},
                {"softcap", AttrType::Float, Attribute(0.f)},
                // The softmax runs in f32 for every input type, at least the precision asked for.
                {"softmax_precision", AttrType::Int, std::nullopt, true}},
      .infer = infer_attention,
      .eval = eval_attention,
      .cost = attention_cost,
  });
  r.add(OpDef{
      .name = "ai.onnx.preview:FlexAttention",
      .summary = "softmax(scale * Q K^T) V per head with grouped KV heads; score_mod and prob_mod graphs "
                 "are not supported",
      .inputs = {{"Q"}, {"K"}, {"V"}},
      .outputs = {"Y"},
      .attrs = {{"scale", AttrType::Float, std::nullopt, true},
                // The softmax runs in f32 for every input type.
                {"softmax_precision", AttrType::Int, std::nullopt, true}},
      .infer = infer_flex_attention,
      .eval = eval_flex_attention,
  });
}

}  // namespace kiln::ir
