// RotaryEmbedding (opset 23): rotates pairs of each head's leading dims by the cos/sin cache
// entries of their position. The reference converts to f32 and runs the runtime's kernel.
#include "ir/ops/rotary.h"

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

kiln::rt::RotaryParams rotary_params(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& cos,
                                     const std::vector<int64_t>& sin, const std::vector<int64_t>& position_ids) {
  kiln::rt::RotaryParams p;
  if (x.size() == 4) {
    // [B, H, S, D]
    p.batch = x[0], p.heads = x[1], p.seq = x[2], p.head_dim = x[3];
    p.layout = kiln::rt::attention_layout_bhsd(p.heads, p.seq, p.head_dim);
  } else if (x.size() == 3) {
    if (!node.has_attr("num_heads") || node.i("num_heads") <= 0)
      fail("{}: a 3-D input needs a positive num_heads attribute", node.describe());
    p.batch = x[0], p.seq = x[1], p.heads = node.i("num_heads");
    if (x[2] % p.heads != 0)
      fail("{}: input width {} is not a multiple of num_heads {}", node.describe(), x[2], p.heads);
    p.head_dim = x[2] / p.heads;
    p.layout = kiln::rt::attention_layout_bshd(p.heads, p.seq, p.head_dim);
  } else {
    fail("{}: input must be 3-D [B, S, hidden] or 4-D [B, heads, S, head], got {}", node.describe(), dims_str(x));
  }
  p.rotary_dim = node.i("rotary_embedding_dim") == 0 ? p.head_dim : node.i("rotary_embedding_dim");
  if (p.rotary_dim < 0 || p.rotary_dim > p.head_dim || p.rotary_dim % 2 != 0)
    fail("{}: rotary_embedding_dim {} must be even and at most the head size {}", node.describe(), p.rotary_dim,
         p.head_dim);
  p.interleaved = node.i("interleaved") != 0;
  if (cos != sin) fail("{}: cos_cache {} and sin_cache {} differ in shape", node.describe(), dims_str(cos), dims_str(sin));
  const int64_t half = p.rotary_dim / 2;
  if (!position_ids.empty()) {
    if (position_ids != std::vector<int64_t>{p.batch, p.seq})
      fail("{}: position_ids {} must be [batch {}, seq {}]", node.describe(), dims_str(position_ids), p.batch, p.seq);
    if (cos.size() != 2 || cos[1] != half)
      fail("{}: with position_ids the caches must be [positions, {}], got {}", node.describe(), half, dims_str(cos));
    p.cache_rows = cos[0];
  } else if (cos != std::vector<int64_t>{p.batch, p.seq, half}) {
    fail("{}: without position_ids the caches must be [batch {}, seq {}, {}], got {}", node.describe(), p.batch,
         p.seq, half, dims_str(cos));
  }
  return p;
}

namespace {

void infer_rotary(Node& node) {
  require_float(node, 0);
  require_same_dtype(node, 0, 1);
  require_same_dtype(node, 0, 2);
  if (node.has_input(3)) require_dtype(node, 3, {DType::I64});
  bool known = true;
  for (size_t i = 0; i < node.num_inputs(); ++i)
    known = known && (!node.has_input(i) || node.input(i)->shape().is_static());
  if (known) {
    auto dims = [&](size_t i) { return node.has_input(i) ? node.input(i)->shape().values() : std::vector<int64_t>{}; };
    rotary_params(node, dims(0), dims(1), dims(2), dims(3));
  }
  node.output(0)->set_type(node.input(0)->dtype(), node.input(0)->shape());
}

void eval_rotary(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor* pos = optional_input(in, 3);
  const kiln::rt::RotaryParams p =
      rotary_params(node, in[0]->dims(), in[1]->dims(), in[2]->dims(), pos ? pos->dims() : std::vector<int64_t>{});
  const std::vector<float> x = values_f32(in[0]), cos = values_f32(in[1]), sin = values_f32(in[2]);
  std::vector<float> y(x.size());
  if (!kiln::rt::rotary_embedding_f32(p, x.data(), cos.data(), sin.data(), pos ? pos->data<int64_t>() : nullptr,
                                      y.data()))
    fail("{}: a position id is outside the {} rows of the caches", node.describe(), p.cache_rows);
  out[0] = Tensor(in[0]->dtype(), in[0]->dims());
  visit_dtype(in[0]->dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) {
      S* py = out[0].mutable_data<S>();
      for (size_t i = 0; i < y.size(); ++i) py[i] = S(static_cast<compute_t<S>>(y[i]));
    }
  });
}

}  // namespace

void register_rotary_ops(Registry& r) {
  r.add(OpDef{
      .name = "RotaryEmbedding",
      .summary = "rotates pairs of each head's leading dims by the cos/sin of their position (opset 23)",
      .inputs = {{"X"}, {"cos_cache"}, {"sin_cache"}, {"position_ids", true}},
      .outputs = {"Y"},
      .attrs = {{"interleaved", AttrType::Int, Attribute(int64_t{0})},
                {"num_heads", AttrType::Int, std::nullopt, true},
                {"rotary_embedding_dim", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_rotary,
      .eval = eval_rotary,
  });
}

}  // namespace kiln::ir
