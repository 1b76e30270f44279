// aten ops of neural-network layers: convolution, linear algebra, normalization, pooling,
// activations, dropout, resampling and attention, each lowered onto the IR's ONNX-form ops.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>

#include "frontend/torchscript/aten_internal.h"

namespace kiln::frontend::torchscript::aten {
namespace {

using ir::AttributeMap;
using ir::Value;

TValue unary(Args& a, const char* op, AttributeMap attrs = {}) {
  return tensor_result(a.b().node1(op, {a.tensor(0)}, std::move(attrs)));
}

ir::Value* filled(AtenBuilder& b, ir::DType dt, int64_t n, double value) {
  std::vector<double> v(static_cast<size_t>(n), value);
  return b.constant(ir::Tensor::from_vector<double>(dt, {n}, v));
}

// ---------------------------------------------------------------- convolution

struct ConvSpec {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  std::string pad_mode;  // "same"/"valid" for conv*d's string padding
};

TValue convolution(Args& a, Value* x, Value* w, Value* bias, ConvSpec s) {
  AtenBuilder& b = a.b();
  const ir::Shape& ws = shape_of(b, w);
  const int64_t n = static_cast<int64_t>(ws.rank()) - 2;
  if (n < 1) b.fail_op(fmt::format("the weight of a convolution must have rank 3 or more, found {}", ws.str()));
  bool unbatched = rank_of(x) == n + 1;
  if (unbatched) x = b.node1("Unsqueeze", {x, b.constant_i64s({0})});
  auto fit = [&](std::vector<int64_t> v, int64_t dflt) {
    if (v.empty()) v.assign(static_cast<size_t>(n), dflt);
    if (v.size() == 1 && n > 1) v.assign(static_cast<size_t>(n), v[0]);
    if (static_cast<int64_t>(v.size()) != n) b.fail_op(fmt::format("expected {} values for a {}-d convolution", n, n));
    return v;
  };
  s.stride = fit(s.stride, 1);
  s.dilation = fit(s.dilation, 1);
  std::vector<int64_t> pads(2 * static_cast<size_t>(n), 0);
  if (s.pad_mode == "same") {
    for (int64_t k = 0; k < n; ++k) {
      int64_t total = s.dilation[k] * (ws[2 + k].value() - 1);
      pads[k] = total / 2;
      pads[n + k] = total - total / 2;
    }
  } else if (s.pad_mode.empty()) {
    s.padding = fit(s.padding, 0);
    for (int64_t k = 0; k < n; ++k) pads[k] = pads[n + k] = s.padding[k];
  } else if (s.pad_mode != "valid") {
    b.fail_op(fmt::format("padding '{}' is not one of 'same', 'valid'", s.pad_mode));
  }
  AttributeMap attrs{{"strides", s.stride}, {"dilations", s.dilation}, {"pads", pads}, {"group", s.groups}};
  std::vector<Value*> in{x, w};
  if (bias) in.push_back(bias);
  Value* y;
  if (s.transposed) {
    attrs["output_padding"] = fit(s.output_padding, 0);
    y = b.node1("ConvTranspose", in, attrs);
  } else {
    y = b.node1("Conv", in, attrs);
  }
  if (unbatched) y = b.node1("Squeeze", {y, b.constant_i64s({0})});
  return tensor_result(y);
}

TValue lower_convolution(Args& a) {  // _convolution and convolution share their first 9 arguments
  ConvSpec s{a.ints(3), a.ints(4), a.ints(5), a.ints(7), a.boolean(6), a.integer(8), ""};
  return convolution(a, a.tensor(0), a.tensor(1), a.tensor_or_null(2), s);
}

TValue lower_conv_nd(Args& a) {  // conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups)
  ConvSpec s;
  s.stride = a.ints(3);
  if (a[4].kind == TKind::String)
    s.pad_mode = a.string(4);
  else
    s.padding = a.ints(4);
  s.dilation = a.ints(5);
  s.groups = a.integer(6);
  return convolution(a, a.tensor(0), a.tensor(1), a.tensor_or_null(2), s);
}

TValue lower_conv_transpose_nd(Args& a) {  // (input, weight, bias, stride, padding, output_padding, groups, dilation)
  ConvSpec s{a.ints(3), a.ints(4), a.ints(7), a.ints(5), true, a.integer(6), ""};
  return convolution(a, a.tensor(0), a.tensor(1), a.tensor_or_null(2), s);
}

// ---------------------------------------------------------------- linear algebra

TValue lower_linear(Args& a) {
  AtenBuilder& b = a.b();
  Value *x = a.tensor(0), *w = a.tensor(1), *bias = a.tensor_or_null(2);
  if (rank_of(x) == 2 && rank_of(w) == 2) {
    std::vector<Value*> in{x, w};
    if (bias) in.push_back(bias);
    return tensor_result(b.node1("Gemm", in, {{"transB", int64_t{1}}}));
  }
  Value* wt = rank_of(w) == 2 ? b.node1("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}}) : w;
  Value* y = b.node1("MatMul", {x, wt});
  if (bias) y = b.node1("Add", {y, bias});
  return tensor_result(y);
}

Value* scaled(AtenBuilder& b, Value* v, double k) {
  if (k == 1) return v;
  return b.node1("Mul", {v, b.scalar_tensor(TValue::real(k), v->dtype())});
}

TValue lower_addmm(Args& a) {  // addmm(self, mat1, mat2, beta, alpha)
  AtenBuilder& b = a.b();
  Value *c = a.tensor(0), *m1 = a.tensor(1), *m2 = a.tensor(2);
  if (rank_of(m1) == 2 && rank_of(m2) == 2)
    return tensor_result(b.node1("Gemm", {m1, m2, c}, {{"alpha", static_cast<float>(a.real(4))},
                                                        {"beta", static_cast<float>(a.real(3))}}));
  Value* y = scaled(b, b.node1("MatMul", {m1, m2}), a.real(4));
  return tensor_result(b.node1("Add", {y, scaled(b, c, a.real(3))}));
}

TValue lower_baddbmm(Args& a) {  // baddbmm(self, batch1, batch2, beta, alpha)
  AtenBuilder& b = a.b();
  Value* y = scaled(b, b.node1("MatMul", {a.tensor(1), a.tensor(2)}), a.real(4));
  if (a.real(3) == 0) return tensor_result(y);
  return tensor_result(b.node1("Add", {y, scaled(b, a.tensor(0), a.real(3))}));
}

TValue lower_matmul(Args& a) { return tensor_result(a.b().node1("MatMul", {a.tensor(0), a.tensor(1)})); }

TValue lower_t(Args& a) {
  Value* x = a.tensor(0);
  if (rank_of(x) < 2) return tensor_result(x);
  return tensor_result(a.b().node1("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}}));
}

// ---------------------------------------------------------------- normalization

Value* channel_param(AtenBuilder& b, Value* p, Value* x, double fill) {
  if (p) return p;
  return filled(b, x->dtype(), shape_of(b, x)[1].value(), fill);
}

TValue batch_norm(Args& a, Value* x, Value* w, Value* bias, Value* mean, Value* var, bool training, double eps) {
  AtenBuilder& b = a.b();
  if (training || !mean || !var)
    b.fail_op("batch_norm in training mode (batch statistics) is not supported: save the model in eval mode");
  return tensor_result(b.node1("BatchNormalization",
                               {x, channel_param(b, w, x, 1), channel_param(b, bias, x, 0), mean, var},
                               {{"epsilon", static_cast<float>(eps)}}));
}

TValue lower_batch_norm(Args& a) {  // (input, weight, bias, running_mean, running_var, training, momentum, eps, ...)
  return batch_norm(a, a.tensor(0), a.tensor_or_null(1), a.tensor_or_null(2), a.tensor_or_null(3),
                    a.tensor_or_null(4), a.boolean(5), a.real(7));
}

TValue triple(TValue y) { return TValue::tuple({y, TValue::none(), TValue::none()}); }

TValue lower_native_batch_norm(Args& a) {  // native_batch_norm / _native_batch_norm_legit (same order)
  return triple(batch_norm(a, a.tensor(0), a.tensor_or_null(1), a.tensor_or_null(2), a.tensor_or_null(3),
                           a.tensor_or_null(4), a.boolean(5), a.real(7)));
}

TValue lower_batch_norm_no_training(Args& a) {  // (input, weight, bias, mean, var, momentum, eps)
  return triple(batch_norm(a, a.tensor(0), a.tensor_or_null(1), a.tensor_or_null(2), a.tensor(3), a.tensor(4),
                           false, a.real(6)));
}

TValue layer_norm(Args& a) {  // (input, normalized_shape, weight, bias, eps)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> normalized = a.ints(1);
  Value *w = a.tensor_or_null(2), *bias = a.tensor_or_null(3);
  if (!w) {
    int64_t n = 1;
    for (int64_t d : normalized) n *= d;
    w = b.node1("Reshape", {filled(b, x->dtype(), n, 1), b.constant_i64s(normalized)});
  }
  std::vector<Value*> in{x, w};
  if (bias) in.push_back(bias);
  return tensor_result(b.node1("LayerNormalization", in,
                               {{"axis", -static_cast<int64_t>(normalized.size())},
                                {"epsilon", static_cast<float>(a.real(4))}}));
}

TValue lower_native_layer_norm(Args& a) { return triple(layer_norm(a)); }

TValue lower_group_norm(Args& a) {  // (input, num_groups, weight, bias, eps, cudnn)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  return tensor_result(b.node1("GroupNormalization",
                               {x, channel_param(b, a.tensor_or_null(2), x, 1), channel_param(b, a.tensor_or_null(3), x, 0)},
                               {{"num_groups", a.integer(1)}, {"epsilon", static_cast<float>(a.real(4))}}));
}

TValue lower_instance_norm(Args& a) {  // (input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (!a.boolean(5)) {
    return batch_norm(a, x, a.tensor_or_null(1), a.tensor_or_null(2), a.tensor_or_null(3), a.tensor_or_null(4), false,
                      a.real(7));
  }
  return tensor_result(b.node1("InstanceNormalization",
                               {x, channel_param(b, a.tensor_or_null(1), x, 1), channel_param(b, a.tensor_or_null(2), x, 0)},
                               {{"epsilon", static_cast<float>(a.real(7))}}));
}

// ---------------------------------------------------------------- activations

Value* clip(AtenBuilder& b, Value* x, std::optional<double> lo, std::optional<double> hi) {
  Value* none = nullptr;
  return b.node1("Clip", {x, lo ? b.scalar_tensor(TValue::real(*lo), x->dtype()) : none,
                          hi ? b.scalar_tensor(TValue::real(*hi), x->dtype()) : none});
}

std::optional<double> opt_real(Args& a, size_t i) {
  return a.none(i) ? std::nullopt : std::optional<double>(a.real(i));
}

TValue lower_clamp(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if ((a.none(1) || !a.is_tensor(1)) && (a.none(2) || !a.is_tensor(2)))
    return tensor_result(clip(b, x, opt_real(a, 1), opt_real(a, 2)));
  Value* y = x;  // tensor bounds: Max/Min broadcast
  if (!a.none(1)) y = b.node1("Max", {y, cast_to(b, a.tensor(1), x->dtype())});
  if (!a.none(2)) y = b.node1("Min", {y, cast_to(b, a.tensor(2), x->dtype())});
  return tensor_result(y);
}
TValue lower_clamp_min(Args& a) { return tensor_result(clip(a.b(), a.tensor(0), a.real(1), std::nullopt)); }
TValue lower_clamp_max(Args& a) { return tensor_result(clip(a.b(), a.tensor(0), std::nullopt, a.real(1))); }
TValue lower_hardtanh(Args& a) { return tensor_result(clip(a.b(), a.tensor(0), a.real(1), a.real(2))); }
TValue lower_relu6(Args& a) { return tensor_result(clip(a.b(), a.tensor(0), 0.0, 6.0)); }
TValue lower_relu(Args& a) { return unary(a, "Relu"); }
TValue lower_sigmoid(Args& a) { return unary(a, "Sigmoid"); }
TValue lower_tanh(Args& a) { return unary(a, "Tanh"); }
TValue lower_hardswish(Args& a) { return unary(a, "HardSwish"); }
TValue lower_hardsigmoid(Args& a) { return unary(a, "HardSigmoid", {{"alpha", 1.0f / 6}, {"beta", 0.5f}}); }
TValue lower_silu(Args& a) {
  Value* x = a.tensor(0);
  return tensor_result(a.b().node1("Mul", {x, a.b().node1("Sigmoid", {x})}));
}
TValue lower_gelu(Args& a) { return unary(a, "Gelu", {{"approximate", a.string(1)}}); }
TValue lower_mish(Args& a) { return unary(a, "Mish"); }
TValue lower_elu(Args& a) {  // elu(self, alpha, scale, input_scale)
  if (a.real(2) != 1 || a.real(3) != 1) a.b().fail_op("elu with scale or input_scale other than 1 is not supported");
  return unary(a, "Elu", {{"alpha", static_cast<float>(a.real(1))}});
}
TValue lower_selu(Args& a) { return unary(a, "Selu"); }
TValue lower_celu(Args& a) { return unary(a, "Celu", {{"alpha", static_cast<float>(a.real(1))}}); }
TValue lower_leaky_relu(Args& a) { return unary(a, "LeakyRelu", {{"alpha", static_cast<float>(a.real(1))}}); }
TValue lower_softplus(Args& a) {  // softplus(self, beta, threshold): log(1 + exp(beta x)) / beta
  AtenBuilder& b = a.b();
  double beta = a.real(1);
  Value* x = a.tensor(0);
  if (beta == 1) return unary(a, "Softplus");
  return tensor_result(scaled(b, b.node1("Softplus", {scaled(b, x, beta)}), 1 / beta));
}
TValue lower_prelu(Args& a) {
  AtenBuilder& b = a.b();
  Value *x = a.tensor(0), *w = a.tensor(1);
  if (rank_of(x) >= 2 && shape_of(b, w).numel() > 1) {  // one slope a channel: shape it [C, 1, ...]
    std::vector<int64_t> shape(static_cast<size_t>(rank_of(x) - 1), 1);
    shape[0] = shape_of(b, w).numel();
    w = b.node1("Reshape", {w, b.constant_i64s(shape)});
  }
  return tensor_result(b.node1("PRelu", {x, w}));
}
TValue lower_softmax(Args& a) {  // softmax(self, dim, dtype) / _softmax(self, dim, half_to_float)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (a[2].kind == TKind::Int) {
    if (auto dt = dtype_from_scalar_type(a.integer(2))) x = cast_to(b, x, *dt);
  }
  return tensor_result(b.node1("Softmax", {x}, {{"axis", a.integer(1)}}));
}
TValue lower_log_softmax(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (a[2].kind == TKind::Int) {
    if (auto dt = dtype_from_scalar_type(a.integer(2))) x = cast_to(b, x, *dt);
  }
  return tensor_result(b.node1("LogSoftmax", {x}, {{"axis", a.integer(1)}}));
}
TValue lower_identity(Args& a) { return tensor_result(a.tensor(0)); }
TValue lower_dropout(Args& a) {  // dropout(input, p, train): inference only
  if (a.boolean(2) && a.real(1) > 0)
    a.b().fail_op("dropout in training mode is not supported: save the model in eval mode");
  return tensor_result(a.tensor(0));
}

// ---------------------------------------------------------------- pooling

std::vector<int64_t> pool_pads(const std::vector<int64_t>& p) {
  std::vector<int64_t> pads(p);
  pads.insert(pads.end(), p.begin(), p.end());
  return pads;
}

TValue pool(Args& a, size_t n, bool max) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> kernel = a.ints(1, n);
  std::vector<int64_t> stride = a.ints(2, n);
  if (stride.empty()) stride = kernel;
  std::vector<int64_t> padding = a.ints(3, n);
  bool unbatched = rank_of(x) == static_cast<int64_t>(n) + 1;
  if (unbatched) x = b.node1("Unsqueeze", {x, b.constant_i64s({0})});
  AttributeMap attrs{{"kernel_shape", kernel}, {"strides", stride}, {"pads", pool_pads(padding)}};
  Value* y;
  if (max) {
    attrs["dilations"] = a.ints(4, n);
    attrs["ceil_mode"] = int64_t{a.boolean(5)};
    y = b.node1("MaxPool", {x}, attrs);
  } else {
    attrs["ceil_mode"] = int64_t{a.boolean(4)};
    attrs["count_include_pad"] = int64_t{a.boolean(5)};
    if (!a.none(6)) b.fail_op("avg_pool with divisor_override is not supported");
    y = b.node1("AveragePool", {x}, attrs);
  }
  if (unbatched) y = b.node1("Squeeze", {y, b.constant_i64s({0})});
  return tensor_result(y);
}
TValue lower_max_pool1d(Args& a) { return pool(a, 1, true); }
TValue lower_max_pool2d(Args& a) { return pool(a, 2, true); }
TValue lower_max_pool3d(Args& a) { return pool(a, 3, true); }
TValue lower_max_pool2d_with_indices(Args& a) { return TValue::tuple({pool(a, 2, true), TValue::none()}); }
TValue lower_avg_pool1d(Args& a) { return pool(a, 1, false); }
TValue lower_avg_pool2d(Args& a) { return pool(a, 2, false); }
TValue lower_avg_pool3d(Args& a) { return pool(a, 3, false); }

// adaptive pooling: PyTorch's cell i of n over a length L spans [floor(i L / n), ceil((i + 1) L / n)).
TValue adaptive_pool(Args& a, size_t n, bool max) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  const ir::Shape& xs = shape_of(b, x);
  std::vector<int64_t> out = a.ints(1, n);
  const size_t r = xs.rank();
  if (r < n + 1) b.fail_op(fmt::format("adaptive pooling of a tensor of shape {}", xs.str()));
  bool global = true, even = true;
  std::vector<int64_t> kernel;
  for (size_t k = 0; k < n; ++k) {
    int64_t in = xs[r - n + k].value();
    if (out[k] < 0) out[k] = in;  // None in output_size keeps the input's size
    global = global && out[k] == 1;
    even = even && out[k] > 0 && in % out[k] == 0;
    kernel.push_back(out[k] > 0 ? in / std::max<int64_t>(out[k], 1) : 0);
  }
  const char* global_op = max ? "GlobalMaxPool" : "GlobalAveragePool";
  if (global && r == n + 2) return tensor_result(b.node1(global_op, {x}));
  if (even && r == n + 2) {
    return tensor_result(b.node1(max ? "MaxPool" : "AveragePool", {x},
                                 {{"kernel_shape", kernel}, {"strides", kernel},
                                  {"pads", std::vector<int64_t>(2 * n, 0)}}));
  }
  // Uneven cells: each output cell a reduction over its slice, concatenated along each axis.
  std::function<Value*(Value*, size_t)> along = [&](Value* v, size_t k) -> Value* {
    if (k == n) return v;
    const int64_t axis = static_cast<int64_t>(r - n + k), in = xs[axis].value();
    std::vector<Value*> cells;
    for (int64_t i = 0; i < out[k]; ++i) {
      int64_t lo = (i * in) / out[k], hi = ((i + 1) * in + out[k] - 1) / out[k];
      Value* s = b.node1("Slice", {v, b.constant_i64s({lo}), b.constant_i64s({hi}), b.constant_i64s({axis})});
      cells.push_back(b.node1(max ? "ReduceMax" : "ReduceMean", {s, b.constant_i64s({axis})}, {{"keepdims", int64_t{1}}}));
    }
    Value* joined = cells.size() == 1 ? cells[0] : b.node1("Concat", cells, {{"axis", axis}});
    return along(joined, k + 1);
  };
  return tensor_result(along(x, 0));
}
TValue lower_adaptive_avg_pool1d(Args& a) { return adaptive_pool(a, 1, false); }
TValue lower_adaptive_avg_pool2d(Args& a) { return adaptive_pool(a, 2, false); }
TValue lower_adaptive_avg_pool3d(Args& a) { return adaptive_pool(a, 3, false); }
TValue lower_adaptive_max_pool1d(Args& a) { return TValue::tuple({adaptive_pool(a, 1, true), TValue::none()}); }
TValue lower_adaptive_max_pool2d(Args& a) { return TValue::tuple({adaptive_pool(a, 2, true), TValue::none()}); }

// ---------------------------------------------------------------- resampling

// upsample_*(input, output_size, [align_corners,] scale_factors | scales...): both overloads.
TValue upsample(Args& a, size_t n, const char* mode, bool has_align) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  const ir::Shape& xs = shape_of(b, x);
  const size_t r = xs.rank();
  size_t next = has_align ? 3 : 2;
  bool align = has_align && !a.none(2) && a.boolean(2);
  std::vector<int64_t> sizes;
  for (size_t k = 0; k < r; ++k) sizes.push_back(xs[k].value());
  if (!a.none(1)) {
    std::vector<int64_t> out = a.ints(1, n);
    for (size_t k = 0; k < n; ++k) sizes[r - n + k] = out[k];
  } else {
    std::vector<double> scales;
    if (a[next].is_sequence()) {
      for (const TValue& s : a.list(next)) scales.push_back(s.kind == TKind::Float ? s.f : static_cast<double>(s.i));
    } else {
      for (size_t k = 0; k < n; ++k) scales.push_back(a.real(next + k));
    }
    if (scales.size() == 1 && n > 1) scales.assign(n, scales[0]);
    if (scales.size() != n) b.fail_op("upsampling needs an output size or a scale for each spatial dim");
    for (size_t k = 0; k < n; ++k)
      sizes[r - n + k] = static_cast<int64_t>(std::floor(static_cast<double>(xs[r - n + k].value()) * scales[k]));
  }
  AttributeMap attrs{{"mode", std::string(mode)}};
  if (std::string(mode) == "nearest") {
    attrs["coordinate_transformation_mode"] = std::string("asymmetric");
    attrs["nearest_mode"] = std::string("floor");
  } else {
    attrs["coordinate_transformation_mode"] = std::string(align ? "align_corners" : "pytorch_half_pixel");
  }
  Value* none = nullptr;
  return tensor_result(b.node1("Resize", {x, none, none, b.constant_i64s(sizes)}, attrs));  // X, roi, scales, sizes
}
TValue lower_upsample_nearest1d(Args& a) { return upsample(a, 1, "nearest", false); }
TValue lower_upsample_nearest2d(Args& a) { return upsample(a, 2, "nearest", false); }
TValue lower_upsample_linear1d(Args& a) { return upsample(a, 1, "linear", true); }
TValue lower_upsample_bilinear2d(Args& a) { return upsample(a, 2, "linear", true); }
TValue lower_upsample_bicubic2d(Args& a) { return upsample(a, 2, "cubic", true); }

// ---------------------------------------------------------------- attention

TValue lower_sdpa(Args& a) {  // (query, key, value, attn_mask, dropout_p, is_causal, scale)
  AtenBuilder& b = a.b();
  Value *q = a.tensor(0), *k = a.tensor(1), *v = a.tensor(2);
  const ir::Shape& qs = shape_of(b, q);
  const ir::Shape& ks = shape_of(b, k);
  const int64_t r = static_cast<int64_t>(qs.rank());
  double scale = a.none(6) ? 1.0 / std::sqrt(static_cast<double>(qs[r - 1].value())) : a.real(6);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i) perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  Value* kt = b.node1("Transpose", {k}, {{"perm", perm}});
  Value* scores = b.node1("MatMul", {scaled(b, q, scale), kt});
  const float neg_inf = -std::numeric_limits<float>::infinity();
  if (a.boolean(5)) {  // causal: position i sees keys j <= i
    int64_t L = qs[r - 2].value(), S = ks[r - 2].value();
    ir::Tensor mask(ir::DType::Bool, {L, S});
    bool* m = mask.mutable_data<bool>();
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j) m[i * S + j] = j <= i;
    scores = b.node1("Where", {b.constant(std::move(mask)), scores, b.scalar_tensor(TValue::real(neg_inf), scores->dtype())});
  }
  if (!a.none(3)) {
    Value* mask = a.tensor(3);
    if (mask->dtype() == ir::DType::Bool)
      scores = b.node1("Where", {mask, scores, b.scalar_tensor(TValue::real(neg_inf), scores->dtype())});
    else
      scores = b.node1("Add", {scores, cast_to(b, mask, scores->dtype())});
  }
  Value* probs = b.node1("Softmax", {scores}, {{"axis", int64_t{-1}}});
  return tensor_result(b.node1("MatMul", {probs, v}));
}

}  // namespace

std::vector<OpEntry> nn_ops() {
  const char* conv = "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1";
  const char* conv_t = "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1";
  const char* max_pool = "self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False";
  const char* avg_pool = "self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None";
  const char* up = "input, output_size=None, scales_a=None, scales_b=None, scales_c=None";
  const char* up_align = "input, output_size=None, align_corners=None, scales_a=None, scales_b=None";
  return {
      {"_convolution", "input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, "
                       "benchmark=False, deterministic=False, cudnn_enabled=True, allow_tf32=True", lower_convolution},
      {"convolution", "input, weight, bias, stride, padding, dilation, transposed, output_padding, groups",
       lower_convolution},
      {"conv1d", conv, lower_conv_nd},
      {"conv2d", conv, lower_conv_nd},
      {"conv3d", conv, lower_conv_nd},
      {"conv_transpose1d", conv_t, lower_conv_transpose_nd},
      {"conv_transpose2d", conv_t, lower_conv_transpose_nd},
      {"conv_transpose3d", conv_t, lower_conv_transpose_nd},
      {"linear", "input, weight, bias=None", lower_linear},
      {"addmm", "self, mat1, mat2, *, beta=1, alpha=1", lower_addmm},
      {"baddbmm", "self, batch1, batch2, *, beta=1, alpha=1", lower_baddbmm},
      {"matmul", "self, other", lower_matmul},
      {"mm", "self, mat2", lower_matmul},
      {"bmm", "self, mat2", lower_matmul},
      {"t", "self", lower_t},
      {"batch_norm", "input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True",
       lower_batch_norm},
      {"native_batch_norm", "input, weight, bias, running_mean, running_var, training, momentum, eps",
       lower_native_batch_norm},
      {"_native_batch_norm_legit", "input, weight, bias, running_mean, running_var, training, momentum, eps",
       lower_native_batch_norm},
      {"_native_batch_norm_legit_no_training", "input, weight, bias, running_mean, running_var, momentum, eps",
       lower_batch_norm_no_training},
      {"layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True", layer_norm},
      {"native_layer_norm", "input, normalized_shape, weight, bias, eps", lower_native_layer_norm},
      {"group_norm", "input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True", lower_group_norm},
      {"instance_norm", "input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled",
       lower_instance_norm},
      {"relu", "self", lower_relu},
      {"relu_", "self", lower_relu},
      {"relu6", "self", lower_relu6},
      {"hardtanh", "self, min_val=-1.0, max_val=1.0", lower_hardtanh},
      {"hardtanh_", "self, min_val=-1.0, max_val=1.0", lower_hardtanh},
      {"hardswish", "self", lower_hardswish},
      {"hardswish_", "self", lower_hardswish},
      {"hardsigmoid", "self", lower_hardsigmoid},
      {"hardsigmoid_", "self", lower_hardsigmoid},
      {"sigmoid", "self", lower_sigmoid},
      {"sigmoid_", "self", lower_sigmoid},
      {"tanh", "self", lower_tanh},
      {"tanh_", "self", lower_tanh},
      {"silu", "self", lower_silu},
      {"silu_", "self", lower_silu},
      {"gelu", "self, *, approximate='none'", lower_gelu},
      {"mish", "self", lower_mish},
      {"elu", "self, alpha=1, scale=1, input_scale=1", lower_elu},
      {"elu_", "self, alpha=1, scale=1, input_scale=1", lower_elu},
      {"selu", "self", lower_selu},
      {"celu", "self, alpha=1.0", lower_celu},
      {"leaky_relu", "self, negative_slope=0.01", lower_leaky_relu},
      {"leaky_relu_", "self, negative_slope=0.01", lower_leaky_relu},
      {"softplus", "self, beta=1, threshold=20", lower_softplus},
      {"prelu", "self, weight", lower_prelu},
      {"clamp", "self, min=None, max=None", lower_clamp},
      {"clamp_", "self, min=None, max=None", lower_clamp},
      {"clip", "self, min=None, max=None", lower_clamp},
      {"clamp_min", "self, min", lower_clamp_min},
      {"clamp_max", "self, max", lower_clamp_max},
      {"softmax", "self, dim, dtype=None", lower_softmax},
      {"_softmax", "self, dim, half_to_float", lower_softmax},
      {"log_softmax", "self, dim, dtype=None", lower_log_softmax},
      {"_log_softmax", "self, dim, half_to_float", lower_log_softmax},
      {"dropout", "input, p=0.5, train=False", lower_dropout},
      {"dropout_", "input, p=0.5, train=False", lower_dropout},
      {"feature_dropout", "input, p=0.5, train=False", lower_dropout},
      {"alpha_dropout", "input, p=0.5, train=False", lower_dropout},
      {"feature_alpha_dropout", "input, p=0.5, train=False", lower_dropout},
      {"detach", "self", lower_identity},
      {"max_pool1d", max_pool, lower_max_pool1d},
      {"max_pool2d", max_pool, lower_max_pool2d},
      {"max_pool3d", max_pool, lower_max_pool3d},
      {"max_pool2d_with_indices", max_pool, lower_max_pool2d_with_indices},
      {"avg_pool1d", avg_pool, lower_avg_pool1d},
      {"avg_pool2d", avg_pool, lower_avg_pool2d},
      {"avg_pool3d", avg_pool, lower_avg_pool3d},
      {"adaptive_avg_pool1d", "self, output_size", lower_adaptive_avg_pool1d},
      {"adaptive_avg_pool2d", "self, output_size", lower_adaptive_avg_pool2d},
      {"_adaptive_avg_pool2d", "self, output_size", lower_adaptive_avg_pool2d},
      {"adaptive_avg_pool3d", "self, output_size", lower_adaptive_avg_pool3d},
      {"adaptive_max_pool1d", "self, output_size", lower_adaptive_max_pool1d},
      {"adaptive_max_pool2d", "self, output_size", lower_adaptive_max_pool2d},
      {"upsample_nearest1d", up, lower_upsample_nearest1d},
      {"upsample_nearest2d", up, lower_upsample_nearest2d},
      {"upsample_linear1d", up_align, lower_upsample_linear1d},
      {"upsample_bilinear2d", up_align, lower_upsample_bilinear2d},
      {"upsample_bicubic2d", up_align, lower_upsample_bicubic2d},
      {"scaled_dot_product_attention",
       "query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None", lower_sdpa},
  };
}

}  // namespace kiln::frontend::torchscript::aten
