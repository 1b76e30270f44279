// aten's sequence layers: the recurrent ones (what nn.LSTM and nn.GRU script and trace to)
// onto the IR's ONNX LSTM and GRU, one IR node per layer, PyTorch's gate order rearranged
// into ONNX's at compile time (the weights are constants, so the rearranging folds away);
// and the fused transformer ops of PyTorch's inference fast path, decomposed into the ops
// they fuse (linear, attention, layer norm), which kiln's own fusion passes then see.
#include <fmt/format.h>

#include "frontend/torchscript/aten_internal.h"

namespace kiln::frontend::torchscript::aten {
namespace {

using ir::Value;

// Rows of a [G*H, ...] gate-stacked weight, reordered block by block, with a leading unit dim.
Value* regate(AtenBuilder& b, Value* w, const std::vector<int>& order) {
  const int64_t gates = static_cast<int64_t>(order.size());
  const int64_t rows = shape_of(b, w)[0].value();
  if (rows % gates) b.fail_op(fmt::format("a recurrent weight of {} rows does not split into {} gates", rows, gates));
  std::vector<int64_t> sizes(static_cast<size_t>(gates), rows / gates);
  std::vector<Value*> parts = b.node("Split", {w, b.constant_i64s(sizes)}, {{"axis", int64_t{0}}}, sizes.size());
  std::vector<Value*> ordered;
  for (int g : order) ordered.push_back(parts[static_cast<size_t>(g)]);
  Value* joined = b.node1("Concat", ordered, {{"axis", int64_t{0}}});
  return b.node1("Unsqueeze", {joined, b.constant_i64s({0})});
}

Value* concat0(AtenBuilder& b, const std::vector<Value*>& vs) {
  return vs.size() == 1 ? vs[0] : b.node1("Concat", vs, {{"axis", int64_t{0}}});
}

Value* rows(AtenBuilder& b, Value* v, int64_t lo, int64_t hi) {
  return b.node1("Slice", {v, b.constant_i64s({lo}), b.constant_i64s({hi}), b.constant_i64s({0})});
}

// lstm/gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
TValue recurrent(Args& a, bool lstm) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<Value*> hx = lstm ? a.tensors(1) : std::vector<Value*>{a.tensor(1)};
  std::vector<Value*> params = a.tensors(2);
  const bool biases = a.boolean(3), bidir = a.boolean(7), batch_first = a.boolean(8);
  const int64_t layers = a.integer(4), dirs = bidir ? 2 : 1;
  const size_t per = biases ? 4 : 2;
  if (params.size() != per * static_cast<size_t>(layers * dirs))
    b.fail_op(fmt::format("{} weights for {} layers of {} directions", params.size(), layers, dirs));
  if (a.boolean(6) && a.real(5) > 0) b.fail_op("recurrent dropout in training mode is not supported");
  if (hx.size() != (lstm ? 2u : 1u)) b.fail_op("unexpected recurrent state");
  const std::vector<int> order = lstm ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{1, 0, 2};
  const int64_t hidden = shape_of(b, params[1])[1].value();
  bool unbatched = rank_of(x) == 2;
  if (unbatched) {
    x = b.node1("Unsqueeze", {x, b.constant_i64s({batch_first ? 0 : 1})});
    for (Value*& h : hx) h = b.node1("Unsqueeze", {h, b.constant_i64s({1})});
  }
  if (batch_first) x = b.node1("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  std::vector<Value*> h_out, c_out;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Value*> W, R, B;
    for (int64_t d = 0; d < dirs; ++d) {
      size_t base = per * static_cast<size_t>(l * dirs + d);
      W.push_back(regate(b, params[base], order));
      R.push_back(regate(b, params[base + 1], order));
      if (biases) {
        Value* wb = regate(b, params[base + 2], order);
        Value* rb = regate(b, params[base + 3], order);
        B.push_back(b.node1("Concat", {wb, rb}, {{"axis", int64_t{1}}}));
      }
    }
    std::vector<Value*> in{x, concat0(b, W), concat0(b, R), biases ? concat0(b, B) : nullptr, nullptr,
                           rows(b, hx[0], l * dirs, (l + 1) * dirs)};
    if (lstm) in.push_back(rows(b, hx[1], l * dirs, (l + 1) * dirs));
    ir::AttributeMap attrs{{"hidden_size", hidden}, {"direction", std::string(bidir ? "bidirectional" : "forward")}};
    if (!lstm) attrs["linear_before_reset"] = int64_t{1};
    std::vector<Value*> outs = b.node(lstm ? "LSTM" : "GRU", in, attrs, lstm ? 3 : 2);
    // Y [seq, dirs, batch, hidden] -> [seq, batch, dirs * hidden], the next layer's input
    Value* y = b.node1("Transpose", {outs[0]}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    const ir::Shape& ys = shape_of(b, y);
    x = b.node1("Reshape", {y, b.constant_i64s({ys[0].value(), ys[1].value(), dirs * hidden})});
    h_out.push_back(outs[1]);
    if (lstm) c_out.push_back(outs[2]);
  }
  if (batch_first) x = b.node1("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  Value* h = concat0(b, h_out);
  Value* c = lstm ? concat0(b, c_out) : nullptr;
  if (unbatched) {
    x = b.node1("Squeeze", {x, b.constant_i64s({batch_first ? 0 : 1})});
    h = b.node1("Squeeze", {h, b.constant_i64s({1})});
    if (c) c = b.node1("Squeeze", {c, b.constant_i64s({1})});
  }
  if (lstm) return tuple_of({x, h, c});
  return tuple_of({x, h});
}

Value* call1(AtenBuilder& b, const char* name, std::vector<TValue> args,
             std::vector<std::pair<std::string, TValue>> kwargs = {}) {
  std::optional<TValue> r = lower_aten(b, AtenCall{name, std::move(args), std::move(kwargs)});
  if (!r || !r->is_tensor()) b.fail_op(fmt::format("aten::{} gave no tensor", name));
  return r->tensor;
}

TValue T(Value* v) { return TValue::of(v); }

// Multi-head attention of PyTorch's fast path: q, k, v [B, S, E] projected by the packed
// qkv weight [3E, E], split into heads, attended, merged and projected out.
Value* attention(AtenBuilder& b, Value* query, Value* key, Value* value, int64_t embed, int64_t heads,
                 Value* qkv_w, Value* qkv_b, Value* proj_w, Value* proj_b, const TValue& mask) {
  if (embed % heads) b.fail_op(fmt::format("embed_dim {} is not a multiple of num_heads {}", embed, heads));
  auto part = [&](Value* t, int64_t k) { return call1(b, "slice", {T(t), TValue::integer(0), TValue::integer(k * embed), TValue::integer((k + 1) * embed), TValue::integer(1)}); };
  auto heads_of = [&](Value* x) {  // [B, S, E] -> [B, H, S, D]
    const ir::Shape& s = shape_of(b, x);
    Value* r = call1(b, "view", {T(x), TValue::list({TValue::integer(s[0].value()), TValue::integer(s[1].value()),
                                                      TValue::integer(heads), TValue::integer(embed / heads)})});
    return call1(b, "transpose", {T(r), TValue::integer(1), TValue::integer(2)});
  };
  Value* q = heads_of(call1(b, "linear", {T(query), T(part(qkv_w, 0)), T(part(qkv_b, 0))}));
  Value* k = heads_of(call1(b, "linear", {T(key), T(part(qkv_w, 1)), T(part(qkv_b, 1))}));
  Value* v = heads_of(call1(b, "linear", {T(value), T(part(qkv_w, 2)), T(part(qkv_b, 2))}));
  TValue attn_mask = TValue::none();
  if (!mask.is_none()) {
    // a key padding mask [B, S] (True: ignore the key) or an attention mask [S, S]
    Value* m = mask.tensor;
    if (rank_of(m) == 2 && shape_of(b, m)[0].value() == shape_of(b, query)[0].value() &&
        shape_of(b, m)[1].value() == shape_of(b, key)[1].value() && shape_of(b, query)[0].value() != shape_of(b, query)[1].value())
      m = call1(b, "view", {T(m), TValue::list({TValue::integer(shape_of(b, m)[0].value()), TValue::integer(1), TValue::integer(1),
                                                TValue::integer(shape_of(b, m)[1].value())})});
    if (m->dtype() == ir::DType::Bool) m = call1(b, "logical_not", {T(m)});
    attn_mask = T(m);
  }
  Value* o = call1(b, "scaled_dot_product_attention", {T(q), T(k), T(v), attn_mask});
  o = call1(b, "transpose", {T(o), TValue::integer(1), TValue::integer(2)});
  const ir::Shape& qs = shape_of(b, query);
  o = call1(b, "view", {T(o), TValue::list({TValue::integer(qs[0].value()), TValue::integer(qs[1].value()), TValue::integer(embed)})});
  return call1(b, "linear", {T(o), T(proj_w), T(proj_b)});
}

// _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
// proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
// ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, mask_type)
TValue lower_encoder_layer(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  const int64_t embed = a.integer(1), heads = a.integer(2);
  const bool gelu = a.boolean(7), norm_first = a.boolean(8);
  const double eps = a.real(9);
  auto norm = [&](Value* v, size_t w) {
    return call1(b, "layer_norm", {T(v), TValue::list({TValue::integer(embed)}), a[w], a[w + 1], TValue::real(eps)});
  };
  auto attn = [&](Value* v) {
    return attention(b, v, v, v, embed, heads, a.tensor(3), a.tensor(4), a.tensor(5), a.tensor(6), a[18]);
  };
  auto ffn = [&](Value* v) {
    Value* h = call1(b, "linear", {T(v), a[14], a[15]});
    h = call1(b, gelu ? "gelu" : "relu", {T(h)});
    return call1(b, "linear", {T(h), a[16], a[17]});
  };
  if (norm_first) {
    x = call1(b, "add", {T(x), T(attn(norm(x, 10)))});
    x = call1(b, "add", {T(x), T(ffn(norm(x, 12)))});
  } else {
    x = norm(call1(b, "add", {T(x), T(attn(x))}), 10);
    x = norm(call1(b, "add", {T(x), T(ffn(x))}), 12);
  }
  return tensor_result(x);
}

// _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
// proj_weight, proj_bias, mask, need_weights, average_attn_weights, mask_type) -> (out, weights)
TValue lower_native_mha(Args& a) {
  if (a.boolean(10)) a.b().fail_op("attention weights (need_weights=True) are not supported");
  Value* o = attention(a.b(), a.tensor(0), a.tensor(1), a.tensor(2), a.integer(3), a.integer(4), a.tensor(5),
                       a.tensor(6), a.tensor(7), a.tensor(8), a[9]);
  return TValue::tuple({T(o), TValue::none()});
}

TValue lower_lstm(Args& a) { return recurrent(a, true); }
TValue lower_gru(Args& a) { return recurrent(a, false); }

}  // namespace

std::vector<OpEntry> sequence_ops() {
  const char* spec = "input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first";
  return {
      {"lstm", spec, lower_lstm},
      {"gru", spec, lower_gru},
      {"_transformer_encoder_layer_fwd",
       "src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps, "
       "norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, "
       "mask=None, mask_type=None", lower_encoder_layer},
      {"_native_multi_head_attention",
       "query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask=None, "
       "need_weights=True, average_attn_weights=True, mask_type=None", lower_native_mha},
  };
}

}  // namespace kiln::frontend::torchscript::aten
