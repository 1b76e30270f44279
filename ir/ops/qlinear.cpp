// Integer matrix products and convolutions of quantized models: MatMulInteger and ConvInteger
// (int32 results), QLinearMatMul and QLinearConv (8-bit results, requantized). The loops are
// runtime/include/kiln/rt/qlinear.h, shared with generated code; with f32 scales the interpreter
// runs the compiled code's int8 kernels instead (kiln/rt/qgemm.h, qconv.h).
#include "ir/ops/qlinear.h"

#include "ir/ops/conv.h"
#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"
#include "kiln/rt/qconv.h"
#include "kiln/rt/qlinear.h"

namespace kiln::ir {

IntegerMatmulPlan integer_matmul_plan(const Node& node, size_t a, size_t b) {
  const Shape& as = node.input(a)->shape();
  const Shape& bs = node.input(b)->shape();
  if (!as.is_static() || !bs.is_static())
    fail("{}: shapes {} and {} must be known", node.describe(), as.str(), bs.str());
  if (as.rank() < 2 || bs.rank() < 2)
    fail("{}: A {} and B {} must have rank 2 or more", node.describe(), as.str(), bs.str());
  const std::vector<int64_t> ad = as.values(), bd = bs.values();
  IntegerMatmulPlan p;
  p.M = ad[ad.size() - 2];
  p.K = ad.back();
  p.N = bd.back();
  if (bd[bd.size() - 2] != p.K)
    fail("{}: inner dimension mismatch: A {} and B {}", node.describe(), as.str(), bs.str());
  const std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  const std::vector<int64_t> batch = broadcast_dims(a_batch, b_batch);
  std::vector<int64_t> sa = broadcast_strides(a_batch, batch), sb = broadcast_strides(b_batch, batch);
  if (batch.empty()) {
    p.a_offsets = {0};
    p.b_offsets = {0};
    return p;
  }
  for_each_broadcast(batch, sa, sb, [&](int64_t, int64_t ia, int64_t ib) {
    p.a_offsets.push_back(ia * p.M * p.K);
    p.b_offsets.push_back(ib * p.K * p.N);
  });
  return p;
}

namespace {

// Output shape and window of an integer conv; spatial dims -1 where symbolic.
std::pair<Shape, ResolvedWindow> integer_conv_geometry(const Node& node, size_t xi, size_t wi) {
  const Shape& x = node.input(xi)->shape();
  const Shape& w = node.input(wi)->shape();
  if (x.rank() < 3 || x.rank() > 4 || w.rank() != x.rank())
    fail("{}: X {} and W {} must both be 3-D or 4-D (N, C, spatial...)", node.describe(), x.str(), w.str());
  const int64_t group = node.i("group");
  if (group < 1) fail("{}: group must be positive, got {}", node.describe(), group);
  if (x[1].is_static() && w[1].is_static() && w[1].value() * group != x[1].value())
    fail("{}: W {} expects {} channels per group, X {} has {} in {} groups", node.describe(), w.str(),
         w[1].value(), x.str(), x[1].value(), group);
  if (w[0].is_static() && w[0].value() % group != 0)
    fail("{}: group {} does not divide the {} output channels", node.describe(), group, w[0].value());
  std::vector<int64_t> kernel, in;
  for (size_t i = 2; i < x.rank(); ++i) {
    if (!w[i].is_static()) fail("{}: kernel dims of W {} must be known", node.describe(), w.str());
    kernel.push_back(w[i].value());
    in.push_back(x[i].is_static() ? x[i].value() : -1);
  }
  if (node.has_attr("kernel_shape") && node.ints("kernel_shape") != kernel)
    fail("{}: kernel_shape {} does not match W {}", node.describe(), ints_str(node.ints("kernel_shape")), w.str());
  ResolvedWindow win = resolve_window(node, in, kernel);
  std::vector<Dim> dims = {x[0], w[0]};
  for (const Dim& d : window_out_dims(win)) dims.push_back(d);
  return {Shape(std::move(dims)), std::move(win)};
}

}  // namespace

kiln::rt::Conv2dParams integer_conv_params(const Node& node, size_t xi, size_t wi) {
  const Shape& xs = node.input(xi)->shape();
  const Shape& ws = node.input(wi)->shape();
  if (!xs.is_static() || !ws.is_static())
    fail("{}: shapes {} and {} must be known", node.describe(), xs.str(), ws.str());
  return conv2d_params(xs.values(), ws.values(), node.i("group"), integer_conv_geometry(node, xi, wi).second);
}

std::vector<float> qlinear_multipliers(const Tensor& x_scale, const Tensor& w_scale, const Tensor& y_scale,
                                       int64_t count) {
  const float* ws = w_scale.data<float>();
  const bool per_channel = w_scale.numel() > 1;
  std::vector<float> m(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j)
    m[j] = static_cast<float>(kiln::rt::qlinear_multiplier<float>(x_scale.data<float>()[0], ws[per_channel ? j : 0],
                                                                  y_scale.data<float>()[0]));
  return m;
}

std::vector<int32_t> int32_values(const Tensor& t) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<int32_t>(t.as_int64(static_cast<int64_t>(k)));
  return v;
}

namespace {

namespace rt = kiln::rt;

Shape matmul_shape(const Node& n, size_t a, size_t b) {
  const Shape& as = n.input(a)->shape();
  const Shape& bs = n.input(b)->shape();
  if (as.rank() < 2 || bs.rank() < 2)
    fail("{}: A {} and B {} must have rank 2 or more", n.describe(), as.str(), bs.str());
  std::vector<Dim> ab(as.dims().begin(), as.dims().end() - 2), bb(bs.dims().begin(), bs.dims().end() - 2);
  Shape out = broadcast_shapes(Shape(ab), Shape(bb));
  std::vector<Dim> dims = out.dims();
  dims.push_back(as[as.rank() - 2]);
  dims.push_back(bs[bs.rank() - 1]);
  return Shape(dims);
}

// Per-tensor parameters only: a zero point or scale of one element.
void require_scalar(const Node& n, size_t i) {
  if (!n.has_input(i)) return;
  const Shape& s = n.input(i)->shape();
  if (!s.is_static() || s.numel() != 1)
    fail("{}: '{}' {} must have one element (per-row and per-column parameters are not supported)",
         n.describe(), n.input(i)->name(), s.str());
}

void require_8bit(const Node& n, size_t i) { require_dtype(n, i, {DType::U8, DType::I8}); }

template <class Fn>
void visit_8bit(DType t, Fn&& fn) {
  if (t == DType::U8) fn.template operator()<uint8_t>();
  else fn.template operator()<int8_t>();
}

int32_t zero_point(std::span<const Tensor* const> in, size_t i) {
  const Tensor* t = optional_input(in, i);
  return t ? static_cast<int32_t>(t->as_int64(0)) : 0;
}

void infer_matmul_integer(Node& n) {
  require_8bit(n, 0);
  require_8bit(n, 1);
  for (size_t i = 2; i < 4; ++i)
    if (n.has_input(i)) {
      require_same_dtype(n, i - 2, i);
      require_scalar(n, i);
    }
  n.output(0)->set_type(DType::I32, matmul_shape(n, 0, 1));
}

// MatMulInteger and QLinearMatMul (f32 scales) on the compiled code's kernel, qgemm (B packed
// per call, once per distinct B of the batch): the interpreter runs whole int8 transformers in
// calibration and --max-error. `b` is B's input, `b_zero_point` its zero point's; `out`
// carries the requantization (its y is the whole output, advanced per product here).
void eval_qgemm(const IntegerMatmulPlan& p, std::span<const Tensor* const> in, size_t b, size_t b_zero_point,
                rt::QGemmOutput out) {
  std::vector<unsigned char> packed(rt::qgemm_packed_b_bytes(p.K, p.N));
  const Tensor* bz = optional_input(in, b_zero_point);
  const int32_t bz_value = bz ? static_cast<int32_t>(bz->as_int64(0)) : 0;
  const size_t out_bytes = out.type == KILN_I32 ? 4 : 1;
  out.row_stride = p.N;
  auto* y = static_cast<unsigned char*>(out.y);
  for (size_t i = 0; i < p.a_offsets.size(); ++i) {
    if (i == 0 || p.b_offsets[i] != p.b_offsets[i - 1]) {
      if (in[b]->dtype() == DType::I8)
        rt::qgemm_pack_b(p.K, p.N, in[b]->data<int8_t>() + p.b_offsets[i], p.N, 1, packed.data());
      else
        rt::qgemm_pack_b(p.K, p.N, in[b]->data<uint8_t>() + p.b_offsets[i], p.N, 1, packed.data());
    }
    const rt::QGemmA a{static_cast<const unsigned char*>(in[0]->raw()) + p.a_offsets[i], p.K,
                       in[0]->dtype() == DType::I8, zero_point(in, 2)};
    out.y = y + static_cast<size_t>(static_cast<int64_t>(i) * p.M * p.N) * out_bytes;
    rt::qgemm(p.M, p.N, p.K, a, packed.data(), &bz_value, 1, out, nullptr);
  }
}

void eval_matmul_integer(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const IntegerMatmulPlan p = integer_matmul_plan(n, 0, 1);
  out[0] = Tensor(DType::I32, n.output(0)->shape().values());
  rt::QGemmOutput result;
  result.type = KILN_I32;
  result.y = out[0].mutable_raw();
  eval_qgemm(p, in, 1, 3, result);
}

// QLinearMatMul inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
void infer_qlinear_matmul(Node& n) {
  require_8bit(n, 0);
  require_8bit(n, 3);
  require_float(n, 1);
  require_same_dtype(n, 1, 4);
  require_same_dtype(n, 1, 6);
  for (size_t i = 1; i < 8; ++i)
    if (i != 3) require_scalar(n, i);
  if (n.has_input(2)) require_same_dtype(n, 0, 2);
  if (n.has_input(5)) require_same_dtype(n, 3, 5);
  const DType y = n.has_input(7) ? n.input(7)->dtype() : n.input(0)->dtype();
  if (n.has_input(7)) require_8bit(n, 7);
  n.output(0)->set_type(y, matmul_shape(n, 0, 3));
}

void eval_qlinear_matmul(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const IntegerMatmulPlan p = integer_matmul_plan(n, 0, 3);
  out[0] = Tensor(n.output(0)->dtype(), n.output(0)->shape().values());
  if (in[1]->dtype() == DType::F32) {
    const std::vector<float> scale = qlinear_multipliers(*in[1], *in[4], *in[6], 1);
    rt::QGemmOutput result;
    result.type = out[0].dtype() == DType::I8 ? KILN_I8 : KILN_U8;
    result.y = out[0].mutable_raw();
    result.scale = scale.data();
    result.scale_count = 1;
    result.y_zero_point = zero_point(in, 7);
    return eval_qgemm(p, in, 3, 5, result);
  }
  // Other scale types (f16, bf16, f64): the plain loops.
  float multiplier = 0;
  visit_dtype(in[1]->dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>)
      multiplier = static_cast<float>(
          rt::qlinear_multiplier<S>(in[1]->data<S>()[0], in[4]->data<S>()[0], in[6]->data<S>()[0]));
  });
  visit_8bit(in[0]->dtype(), [&]<class A>() {
    visit_8bit(in[3]->dtype(), [&]<class B>() {
      visit_8bit(out[0].dtype(), [&]<class Y>() {
        for (size_t i = 0; i < p.a_offsets.size(); ++i)
          rt::qlinear_matmul<A, B, Y>(in[0]->data<A>() + p.a_offsets[i], in[3]->data<B>() + p.b_offsets[i],
                                      out[0].mutable_data<Y>() + static_cast<int64_t>(i) * p.M * p.N, p.M, p.K,
                                      p.N, zero_point(in, 2), zero_point(in, 5), multiplier, zero_point(in, 7));
      });
    });
  });
}

// ---- ConvInteger, QLinearConv ----------------------------------------------------------------

// Zero point or scale of the weights: one element, or one per output channel.
void require_per_channel(const Node& n, size_t i, size_t w) {
  if (!n.has_input(i)) return;
  const Shape& s = n.input(i)->shape();
  const Dim& m = n.input(w)->shape()[0];
  if (!s.is_static() || !(s.numel() == 1 || (s.rank() == 1 && m.is_static() && s[0].value() == m.value())))
    fail("{}: '{}' {} must have one element or one per output channel", n.describe(), n.input(i)->name(), s.str());
}

int64_t count_of(std::span<const Tensor* const> in, size_t i) {
  const Tensor* t = optional_input(in, i);
  return t ? t->numel() : 0;
}

void infer_conv_integer(Node& n) {
  require_8bit(n, 0);
  require_8bit(n, 1);
  if (n.has_input(2)) {
    require_same_dtype(n, 0, 2);
    require_scalar(n, 2);
  }
  if (n.has_input(3)) require_same_dtype(n, 1, 3);
  require_per_channel(n, 3, 1);
  n.output(0)->set_type(DType::I32, integer_conv_geometry(n, 0, 1).first);
}

// ConvInteger and QLinearConv (f32 scales) on the compiled code's kernel, qconv2d (its weights
// packed per call): calibration and the accuracy guard (--max-error) interpret whole int8
// models, which the plain loops of qlinear.h took seconds per ResNet-50 layer for.
// `w` is the weights' input, `w_zero_point` theirs; `out` carries the requantization.
void eval_qconv2d(const rt::Conv2dParams& p, std::span<const Tensor* const> in, size_t w, size_t w_zero_point,
                  rt::QGemmOutput out) {
  std::vector<unsigned char> packed(rt::qconv2d_packed_weight_bytes(p));
  if (in[w]->dtype() == DType::I8)
    rt::qconv2d_pack_weights(p, in[w]->data<int8_t>(), packed.data());
  else
    rt::qconv2d_pack_weights(p, in[w]->data<uint8_t>(), packed.data());
  const Tensor* wz = optional_input(in, w_zero_point);
  const std::vector<int32_t> wz_values = wz ? int32_values(*wz) : std::vector<int32_t>();
  std::vector<unsigned char> scratch(rt::qconv2d_scratch_bytes(p));
  const rt::QGemmA x{in[0]->raw(), 0, in[0]->dtype() == DType::I8, zero_point(in, 2)};
  rt::qconv2d(p, x, packed.data(), wz_values.empty() ? nullptr : wz_values.data(),
              static_cast<int64_t>(wz_values.size()), out, scratch.empty() ? nullptr : scratch.data(), nullptr);
}

void eval_conv_integer(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const rt::Conv2dParams p = integer_conv_params(n, 0, 1);
  out[0] = Tensor(DType::I32, n.output(0)->shape().values());
  rt::QGemmOutput result;
  result.type = KILN_I32;
  result.y = out[0].mutable_raw();
  eval_qconv2d(p, in, 1, 3, result);
}

// QLinearConv inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
void infer_qlinear_conv(Node& n) {
  require_8bit(n, 0);
  require_8bit(n, 3);
  require_float(n, 1);
  require_same_dtype(n, 1, 4);
  require_same_dtype(n, 1, 6);
  for (size_t i : {size_t{1}, size_t{2}, size_t{6}, size_t{7}}) require_scalar(n, i);
  require_per_channel(n, 4, 3);
  require_per_channel(n, 5, 3);
  if (n.has_input(2)) require_same_dtype(n, 0, 2);
  if (n.has_input(5)) require_same_dtype(n, 3, 5);
  if (n.has_input(7)) require_8bit(n, 7);
  if (n.has_input(8)) require_dtype(n, 8, {DType::I32});
  const DType y = n.has_input(7) ? n.input(7)->dtype() : n.input(0)->dtype();
  n.output(0)->set_type(y, integer_conv_geometry(n, 0, 3).first);
}

void eval_qlinear_conv(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const rt::Conv2dParams p = integer_conv_params(n, 0, 3);
  out[0] = Tensor(n.output(0)->dtype(), n.output(0)->shape().values());
  if (in[1]->dtype() == DType::F32) {
    const std::vector<float> scale = qlinear_multipliers(*in[1], *in[4], *in[6], p.M);
    const Tensor* bias = optional_input(in, 8);
    rt::QGemmOutput result;
    result.type = out[0].dtype() == DType::I8 ? KILN_I8 : KILN_U8;
    result.y = out[0].mutable_raw();
    result.scale = scale.data();
    result.scale_count = p.M;
    if (bias) {
      result.bias = bias->data<int32_t>();
      result.bias_count = bias->numel();
    }
    result.y_zero_point = zero_point(in, 7);
    return eval_qconv2d(p, in, 3, 5, result);
  }
  // Other scale types (f16, bf16, f64): the plain loops.
  Tensor acc(DType::I32, out[0].dims());
  const Tensor* wz = optional_input(in, 5);
  const Tensor* bias = optional_input(in, 8);
  visit_dtype(in[1]->dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) {
      visit_8bit(in[0]->dtype(), [&]<class X>() {
        visit_8bit(in[3]->dtype(), [&]<class W>() {
          visit_8bit(out[0].dtype(), [&]<class Y>() {
            rt::qlinear_conv2d<X, W, Y, S>(p, in[0]->data<X>(), in[1]->data<S>()[0], zero_point(in, 2),
                                           in[3]->data<W>(), in[4]->data<S>(), in[4]->numel(),
                                           wz ? wz->data<W>() : nullptr, count_of(in, 5), in[6]->data<S>()[0],
                                           zero_point(in, 7), bias ? bias->data<int32_t>() : nullptr,
                                           acc.mutable_data<int32_t>(), out[0].mutable_data<Y>());
          });
        });
      });
    }
  });
}

Cost integer_conv_cost(const Node& node) {
  const Shape& y = node.output(0)->shape();
  const size_t wi = node.num_inputs() > 4 ? 3 : 1;
  const Shape& w = node.input(wi)->shape();
  if (!y.is_static() || !w.is_static()) return {0, io_bytes(node)};
  const std::vector<int64_t> wd = w.values();
  return {2.0 * static_cast<double>(numel(wd) / std::max<int64_t>(wd[0], 1)) * static_cast<double>(y.numel()),
          io_bytes(node)};
}

std::vector<AttrSpec> conv_attrs() {
  return {{"auto_pad", AttrType::String, Attribute("NOTSET")},
          {"dilations", AttrType::Ints, std::nullopt, true},
          {"group", AttrType::Int, Attribute(int64_t{1})},
          {"kernel_shape", AttrType::Ints, std::nullopt, true},
          {"pads", AttrType::Ints, std::nullopt, true},
          {"strides", AttrType::Ints, std::nullopt, true}};
}

Cost integer_matmul_cost(const Node& node) {
  const Shape& s = node.output(0)->shape();
  const Shape& a = node.input(0)->shape();
  if (!s.is_static() || !a.is_static()) return {0, 0};
  return {2.0 * static_cast<double>(s.numel()) * static_cast<double>(a[a.rank() - 1].value()), io_bytes(node)};
}

// ---- kiln.QLinearAdd ------------------------------------------------------------------------

// Inputs: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point (as
// com.microsoft's QLinearAdd), per tensor, A and B of one shape (no broadcasting).
void infer_qlinear_add(Node& n) {
  require_8bit(n, 0);
  require_8bit(n, 3);
  for (size_t i : {size_t{1}, size_t{4}, size_t{6}}) require_dtype(n, i, {DType::F32});
  for (size_t i = 1; i < 8; ++i)
    if (i != 3) require_scalar(n, i);
  if (n.has_input(2)) require_same_dtype(n, 0, 2);
  if (n.has_input(5)) require_same_dtype(n, 3, 5);
  if (n.has_input(7)) require_8bit(n, 7);
  const Shape& a = n.input(0)->shape();
  if (a != n.input(3)->shape())
    fail("{}: A {} and B {} must have the same shape", n.describe(), a.str(), n.input(3)->shape().str());
  n.output(0)->set_type(n.has_input(7) ? n.input(7)->dtype() : n.input(0)->dtype(), a);
}

void eval_qlinear_add(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = Tensor(n.output(0)->dtype(), n.output(0)->shape().values());
  const auto zp = [&](size_t i) { return static_cast<float>(zero_point(in, i)); };
  visit_8bit(in[0]->dtype(), [&]<class A>() {
    visit_8bit(in[3]->dtype(), [&]<class B>() {
      visit_8bit(out[0].dtype(), [&]<class Y>() {
        rt::qlinear_add<A, B, Y>(in[0]->data<A>(), in[1]->data<float>()[0], zp(2), in[3]->data<B>(),
                                 in[4]->data<float>()[0], zp(5), in[6]->data<float>()[0], zp(7),
                                 out[0].mutable_data<Y>(), out[0].numel());
      });
    });
  });
}

}  // namespace

void register_qlinear_ops(Registry& r) {
  r.add(OpDef{
      .name = "MatMulInteger",
      .summary = "int32 (A - a_zero_point) x (B - b_zero_point), 8-bit A and B, batched as MatMul",
      .inputs = {{"A"}, {"B"}, {"a_zero_point", true}, {"b_zero_point", true}},
      .outputs = {"Y"},
      .infer = infer_matmul_integer,
      .eval = eval_matmul_integer,
      .cost = integer_matmul_cost,
  });
  r.add(OpDef{
      .name = "QLinearMatMul",
      .summary = "8-bit matmul requantized: rint(int32 product * a_scale * b_scale / y_scale) + y_zero_point",
      .inputs = {{"a"}, {"a_scale"}, {"a_zero_point", true}, {"b"}, {"b_scale"}, {"b_zero_point", true},
                 {"y_scale"}, {"y_zero_point", true}},
      .outputs = {"y"},
      .infer = infer_qlinear_matmul,
      .eval = eval_qlinear_matmul,
      .cost = integer_matmul_cost,
  });
  r.add(OpDef{
      .name = "ConvInteger",
      .summary = "int32 convolution of (x - x_zero_point) by (w - w_zero_point), 8-bit x and w; 1-D and 2-D",
      .inputs = {{"x"}, {"w"}, {"x_zero_point", true}, {"w_zero_point", true}},
      .outputs = {"y"},
      .attrs = conv_attrs(),
      .infer = infer_conv_integer,
      .eval = eval_conv_integer,
      .cost = integer_conv_cost,
  });
  r.add(OpDef{
      .name = "QLinearConv",
      .summary = "8-bit convolution requantized per output channel: rint((conv + B) * x_scale * w_scale / "
                 "y_scale) + y_zero_point; 1-D and 2-D",
      .inputs = {{"x"}, {"x_scale"}, {"x_zero_point", true}, {"w"}, {"w_scale"}, {"w_zero_point", true},
                 {"y_scale"}, {"y_zero_point", true}, {"B", true}},
      .outputs = {"y"},
      .attrs = conv_attrs(),
      .infer = infer_qlinear_conv,
      .eval = eval_qlinear_conv,
      .cost = integer_conv_cost,
  });
  r.add(OpDef{
      .name = "kiln.QLinearAdd",
      .summary = "QuantizeLinear(DequantizeLinear(A) + DequantizeLinear(B)) per tensor, same shapes, computed as "
                 "ONNX Runtime's QLinearAdd: fma(A, A_scale / C_scale, fma(B, B_scale / C_scale, c)) with the zero "
                 "points in c, rounded half to even (fuse_qdq makes it)",
      .inputs = {{"A"}, {"A_scale"}, {"A_zero_point", true}, {"B"}, {"B_scale"}, {"B_zero_point", true},
                 {"C_scale"}, {"C_zero_point", true}},
      .outputs = {"C"},
      .infer = infer_qlinear_add,
      .eval = eval_qlinear_add,
  });
}

}  // namespace kiln::ir
