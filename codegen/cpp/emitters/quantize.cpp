// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv, kiln.QLinearAdd and the channels-last kiln.QLinearConvNhwc,
// kiln.ToNhwc and kiln.FromNhwc (kiln/rt/qconv_nhwc.h) and kiln.DequantizeGlobalAveragePoolNhwc
// (kiln/rt/pool.h):
// calls to the runtime's loops (kiln/rt/quantize.h, kiln/rt/qlinear.h), the functions kiln's
// reference runs too. When the weights and the quantization parameters are constants, the
// integer matmuls and convolutions run on the int8 GEMM instead (kiln/rt/qgemm.h, qconv.h:
// weights packed here, at compile time, with the requantization multipliers), which gives
// the same results as the reference loops.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/channels_last.h"
#include "ir/ops/qlinear.h"
#include "ir/ops/quantize.h"
#include "kiln/rt/qconv.h"
#include "kiln/rt/qconv_nhwc.h"
#include "kiln/rt/qgemm.h"
#include "kiln/rt/qlinear.h"

namespace kiln::codegen::cpp {

namespace {

std::string layout_literal(const kiln::rt::QuantLayout& l) {
  return fmt::format("kiln::rt::QuantLayout{{{}, {}, {}, {}, {}, {}, {}}}", l.outer, l.axis_len, l.inner,
                     l.block, l.outer_stride, l.axis_stride, l.inner_stride);
}

std::string zero_point_arg(EmitContext& ctx, const ir::Node& node, ir::DType q) {
  return node.has_input(2) ? ctx.in(node, 2) : fmt::format("static_cast<const {}*>(nullptr)", cpp_type(q));
}

// An elementwise loop over n elements: `call` (which reads the bounds b and e) once over the
// whole tensor when it is small, else in chunks of 16384 elements across the thread pool, each
// thread a contiguous part (each element is computed alone: the same values however the tensor
// is split).
void emit_chunks(EmitContext& ctx, int64_t n, const std::string& call) {
  constexpr int64_t kChunk = 16384;
  if (n <= kChunk) {
    ctx.line(fmt::format("const int64_t b = 0, e = {};", n));
    ctx.line(call);
    return;
  }
  ctx.line(fmt::format("kiln::rt::parallel_for(pool, {}, [&](int64_t c0, int64_t c1) {{", (n + kChunk - 1) / kChunk));
  ctx.line(fmt::format("  const int64_t b = c0 * {}, e = c1 * {} < {} ? c1 * {} : {};", kChunk, kChunk, n, kChunk, n));
  ctx.line("  " + call);
  ctx.line("});");
}

// emit_chunks for a QLinearAdd after convolutions: one share for each thread, equal (at
// multiples of 64 elements), as the convolutions split their rows (parallel_for's shares), so
// that each thread adds the part of the operands it wrote, in its own cache. In chunks of 16384,
// or alone on the calling thread below that, MobileNetV2's residual Adds at two threads read
// half their operands from the other core's cache and took longer than at one thread (14 x 14 x 64:
// 2.2 us at one, 2.8-4.2 at two).
void emit_shares(EmitContext& ctx, int64_t n, const std::string& call) {
  constexpr int64_t kMinShared = 4096;
  if (n < kMinShared) {
    ctx.line(fmt::format("const int64_t b = 0, e = {};", n));
    ctx.line(call);
    return;
  }
  ctx.line("const int64_t shares = pool != nullptr ? pool->size() : 1;");
  ctx.line("kiln::rt::parallel_for(pool, shares, [&](int64_t c0, int64_t c1) {");
  ctx.line(fmt::format("  const int64_t b = {} * c0 / shares / 64 * 64,", n));
  ctx.line(fmt::format("                e = c1 == shares ? {} : {} * c1 / shares / 64 * 64;", n, n));
  ctx.line("  " + call);
  ctx.line("});");
}

// A per-tensor QuantizeLinear or DequantizeLinear between f32 and 8 bits (the activations at
// the ends of a quantized chain: MobileNetV2's input, 150528 values, and the last convolution's
// output before its f32 GlobalAveragePool) runs in chunks across the pool (emit_chunks): alone on
// one thread it took 19 us and 12 us of MobileNetV2's 1.6 ms at two threads.
bool chunked(const kiln::rt::QuantLayout& l, ir::DType q) {
  return l.outer == 1 && l.axis_len == 1 && l.outer_stride == 0 && l.axis_stride == 0 && l.inner_stride == 0 &&
         (q == ir::DType::U8 || q == ir::DType::I8);
}

void emit_quantize(EmitContext& ctx, const ir::Node& node) {
  const ir::DType q = node.output(0)->dtype();
  const int64_t precision = node.i("precision");
  const ir::DType division = precision != 0 ? static_cast<ir::DType>(precision) : node.input(0)->dtype();
  const kiln::rt::QuantLayout l = ir::quant_layout(node);
  const bool chunks = chunked(l, q);
  const std::string call = fmt::format(
      "kiln::rt::quantize_linear<{}, {}, {}>({}{}, {}, {}, {}{}, {}, {}, {});", cpp_type(node.input(0)->dtype()),
      cpp_type(node.input(1)->dtype()), cpp_type(q), ctx.in(node, 0), chunks ? " + b" : "", ctx.in(node, 1),
      zero_point_arg(ctx, node, q), ctx.out(node, 0), chunks ? " + b" : "",
      chunks ? "kiln::rt::QuantLayout{1, 1, e - b, 1, 0, 0, 0}" : layout_literal(l), kiln_dtype_enum(division),
      node.i("saturate") != 0 ? "true" : "false");
  if (chunks) return emit_chunks(ctx, l.inner, call);
  ctx.line(call);
}

void emit_dequantize(EmitContext& ctx, const ir::Node& node) {
  const ir::DType q = node.input(0)->dtype();
  const kiln::rt::QuantLayout l = ir::quant_layout(node);
  const bool chunks = chunked(l, q);
  const std::string call = fmt::format(
      "kiln::rt::dequantize_linear<{}, {}, {}>({}{}, {}, {}, {}{}, {});", cpp_type(q), cpp_type(node.input(1)->dtype()),
      cpp_type(node.output(0)->dtype()), ctx.in(node, 0), chunks ? " + b" : "", ctx.in(node, 1),
      zero_point_arg(ctx, node, q), ctx.out(node, 0), chunks ? " + b" : "",
      chunks ? "kiln::rt::QuantLayout{1, 1, e - b, 1, 0, 0, 0}" : layout_literal(l));
  if (chunks) return emit_chunks(ctx, l.inner, call);
  ctx.line(call);
}

void emit_dynamic_quantize(EmitContext& ctx, const ir::Node& node) {
  ctx.line("float scale = 0;");
  ctx.line("uint8_t zero_point = 0;");
  ctx.line(fmt::format("kiln::rt::dynamic_quantize_linear_u8({}, {}, {}, &scale, &zero_point);", ctx.in(node, 0),
                       numel_of(node.input(0)), ctx.out(node, 0)));
  if (node.num_outputs() > 1) ctx.line(fmt::format("{}[0] = scale;", ctx.out(node, 1)));
  if (node.num_outputs() > 2) ctx.line(fmt::format("{}[0] = zero_point;", ctx.out(node, 2)));
}

std::string zero_point_value(EmitContext& ctx, const ir::Node& node, size_t i) {
  return node.has_input(i) ? fmt::format("static_cast<int32_t>({}[0])", ctx.in(node, i)) : "0";
}

// One call per [M,K] x [K,N] product; `call` formats it from the A and B offset expressions
// and the output offset.
template <class Call>
void emit_products(EmitContext& ctx, const ir::IntegerMatmulPlan& p, Call call) {
  if (p.a_offsets.size() == 1) {
    ctx.line(call("0", "0", "0"));
    return;
  }
  const std::string a = ctx.array(p.a_offsets), b = ctx.array(p.b_offsets);
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i)", p.a_offsets.size()));
  ctx.line("  " + call(a + "[i]", b + "[i]", fmt::format("i * {}", p.M * p.N)));
}

bool fast_matmul(const ir::Node& n, size_t b);
void emit_fast_matmul(EmitContext& ctx, const ir::Node& n, size_t b);

void emit_matmul_integer(EmitContext& ctx, const ir::Node& node) {
  if (fast_matmul(node, 1)) return emit_fast_matmul(ctx, node, 1);
  const ir::IntegerMatmulPlan p = ir::integer_matmul_plan(node, 0, 1);
  const std::string ta = cpp_type(node.input(0)->dtype()), tb = cpp_type(node.input(1)->dtype());
  const std::string za = zero_point_value(ctx, node, 2), zb = zero_point_value(ctx, node, 3);
  emit_products(ctx, p, [&](const std::string& ao, const std::string& bo, const std::string& yo) {
    return fmt::format("kiln::rt::matmul_integer<{}, {}>({} + {}, {} + {}, {} + {}, {}, {}, {}, {}, {});", ta, tb,
                       ctx.in(node, 0), ao, ctx.in(node, 1), bo, ctx.out(node, 0), yo, p.M, p.K, p.N, za, zb);
  });
}

void emit_qlinear_matmul(EmitContext& ctx, const ir::Node& node) {
  if (fast_matmul(node, 3)) return emit_fast_matmul(ctx, node, 3);
  const ir::IntegerMatmulPlan p = ir::integer_matmul_plan(node, 0, 3);
  const std::string ta = cpp_type(node.input(0)->dtype()), tb = cpp_type(node.input(3)->dtype()),
                    ty = cpp_type(node.output(0)->dtype());
  ctx.line(fmt::format("const auto multiplier = static_cast<float>("
                       "kiln::rt::qlinear_multiplier<{}>({}[0], {}[0], {}[0]));",
                       cpp_type(node.input(1)->dtype()), ctx.in(node, 1), ctx.in(node, 4), ctx.in(node, 6)));
  const std::string za = zero_point_value(ctx, node, 2), zb = zero_point_value(ctx, node, 5),
                    zy = zero_point_value(ctx, node, 7);
  emit_products(ctx, p, [&](const std::string& ao, const std::string& bo, const std::string& yo) {
    return fmt::format("kiln::rt::qlinear_matmul<{}, {}, {}>({} + {}, {} + {}, {} + {}, {}, {}, {}, {}, {}, multiplier, {});",
                       ta, tb, ty, ctx.in(node, 0), ao, ctx.in(node, 3), bo, ctx.out(node, 0), yo, p.M, p.K, p.N,
                       za, zb, zy);
  });
}

std::string conv_params_literal(const kiln::rt::Conv2dParams& p) {
  return fmt::format("kiln::rt::Conv2dParams{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}}", p.N,
                     p.C, p.H, p.W, p.M, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
                     p.dil_h, p.dil_w, p.group);
}

// A weight zero point's pointer and element count (null and 0 when absent).
std::pair<std::string, int64_t> weight_zero_point(EmitContext& ctx, const ir::Node& node, size_t i, size_t w) {
  if (!node.has_input(i))
    return {fmt::format("static_cast<const {}*>(nullptr)", cpp_type(node.input(w)->dtype())), 0};
  return {ctx.in(node, i), numel_of(node.input(i))};
}

// ---- the int8 GEMM path (weights and quantization parameters constant) ----------------------

bool constant_or_absent(const ir::Node& n, size_t i) { return !n.has_input(i) || n.input(i)->is_constant(); }

bool constant_f32(const ir::Node& n, size_t i) {
  return n.has_input(i) && n.input(i)->is_constant() && n.input(i)->dtype() == ir::DType::F32;
}

int32_t constant_zero_point(const ir::Node& n, size_t i) {
  return n.has_input(i) ? static_cast<int32_t>(n.input(i)->constant().as_int64(0)) : 0;
}

// The weight zero points (1 or M values, or none) as an embedded int32 array: pointer and count.
std::pair<std::string, int64_t> constant_zero_points(EmitContext& ctx, const ir::Node& n, size_t i) {
  if (!n.has_input(i)) return {"nullptr", 0};
  const std::vector<int32_t> v = ir::int32_values(n.input(i)->constant());
  return {fmt::format("reinterpret_cast<const int32_t*>({})", ctx.add_weight_bytes(v.data(), v.size() * 4)),
          static_cast<int64_t>(v.size())};
}

bool is_signed_8bit(const ir::Value* v) { return v->dtype() == ir::DType::I8; }

// Weights packed for the kernel, embedded; `pack(buffer)` fills them.
template <class Pack>
std::string packed_weights(EmitContext& ctx, size_t bytes, Pack pack) {
  std::vector<unsigned char> packed(bytes);
  pack(packed.data());
  return ctx.add_weight_bytes(packed.data(), packed.size());
}

template <class Fn>
void visit_weight(const ir::Value* w, Fn&& fn) {
  if (w->dtype() == ir::DType::I8)
    fn(w->constant().data<int8_t>());
  else
    fn(w->constant().data<uint8_t>());
}

// Conv: rank 3 or 4, weights (and for QLinearConv every scale, zero point and the bias) constant.
bool fast_conv(const ir::Node& n, size_t w) {
  const size_t rank = n.input(0)->shape().rank();
  if ((rank != 3 && rank != 4) || !n.input(0)->shape().is_static() || !n.input(w)->is_constant()) return false;
  if (w == 1) return constant_or_absent(n, 2) && constant_or_absent(n, 3);
  return constant_f32(n, 1) && constant_f32(n, 4) && constant_f32(n, 6) && constant_or_absent(n, 2) &&
         constant_or_absent(n, 5) && constant_or_absent(n, 7) && constant_or_absent(n, 8);
}

// A per-tensor zero point: absent or one element, constant or computed (DynamicQuantizeLinear's).
bool one_or_absent(const ir::Node& n, size_t i) {
  return !n.has_input(i) || (n.input(i)->shape().is_static() && n.input(i)->shape().numel() == 1);
}

// MatMul: B 2-D and constant (A's batch folds into its rows), and for QLinearMatMul every
// scale and zero point constant (MatMulInteger's A zero point may be computed per run).
bool fast_matmul(const ir::Node& n, size_t b) {
  if (!n.input(b)->is_constant() || n.input(b)->shape().rank() != 2 || !n.input(0)->shape().is_static())
    return false;
  if (b == 1) return one_or_absent(n, 2) && constant_or_absent(n, 3);
  return constant_f32(n, 1) && constant_f32(n, 4) && constant_f32(n, 6) && constant_or_absent(n, 2) &&
         constant_or_absent(n, 5) && constant_or_absent(n, 7);
}

// QLinear*'s multipliers x_scale * w_scale[m] / y_scale, rounded as the reference rounds them.
std::vector<float> multipliers(const ir::Node& n, int64_t count) {
  return ir::qlinear_multipliers(n.input(1)->constant(), n.input(4)->constant(), n.input(6)->constant(), count);
}

// The lines that declare `qout` (qgemm's epilogue) for the node's output.
void emit_output(EmitContext& ctx, const ir::Node& n, const std::string& bias, const std::string& scale,
                 int64_t count, int32_t y_zero_point) {
  ctx.line("kiln::rt::QGemmOutput qout;");
  ctx.line(fmt::format("qout.type = {};", kiln_dtype_enum(n.output(0)->dtype())));
  ctx.line(fmt::format("qout.y = {};", ctx.out(n, 0)));
  if (!bias.empty()) {
    ctx.line(fmt::format("qout.bias = {};", bias));
    ctx.line(fmt::format("qout.bias_count = {};", count));
  }
  if (!scale.empty()) {
    ctx.line(fmt::format("qout.scale = {};", scale));
    ctx.line(fmt::format("qout.scale_count = {};", count));
  }
  if (y_zero_point != 0) ctx.line(fmt::format("qout.y_zero_point = {};", y_zero_point));
}

// ConvInteger (w = 1) or QLinearConv (w = 3) on qconv2d.
void emit_fast_conv(EmitContext& ctx, const ir::Node& n, size_t w) {
  const kiln::rt::Conv2dParams p = ir::integer_conv_params(n, 0, w);
  const std::string packed = packed_weights(ctx, kiln::rt::qconv2d_packed_weight_bytes(p), [&](unsigned char* out) {
    visit_weight(n.input(w), [&](const auto* data) { kiln::rt::qconv2d_pack_weights(p, data, out); });
  });
  const bool qlinear = w == 3;
  const auto [wz, wz_count] = constant_zero_points(ctx, n, qlinear ? 5 : 3);
  std::string scale;
  if (qlinear) {
    const std::vector<float> m = multipliers(n, p.M);
    scale = fmt::format("reinterpret_cast<const float*>({})", ctx.add_weight_bytes(m.data(), m.size() * 4));
  }
  emit_output(ctx, n, qlinear && n.has_input(8) ? ctx.in(n, 8) : "", scale, p.M,
              qlinear ? constant_zero_point(n, 7) : 0);
  ctx.line(fmt::format("kiln::rt::qconv2d({}, kiln::rt::QGemmA{{{}, 0, {}, {}}}, {}, {}, {}, qout, {}, pool);",
                       conv_params_literal(p), ctx.in(n, 0), is_signed_8bit(n.input(0)), constant_zero_point(n, 2),
                       packed, wz, wz_count,
                       kiln::rt::qconv2d_scratch_bytes(p) > 0 ? ctx.scratch(n) : std::string("nullptr")));
}

// MatMulInteger (b = 1) or QLinearMatMul (b = 3) on qgemm.
void emit_fast_matmul(EmitContext& ctx, const ir::Node& n, size_t b) {
  const std::vector<int64_t> bd = dims_of(n.input(b));
  const int64_t K = bd[0], N = bd[1], rows = K > 0 ? numel_of(n.input(0)) / K : 0;
  const std::string packed = packed_weights(ctx, kiln::rt::qgemm_packed_b_bytes(K, N), [&](unsigned char* out) {
    visit_weight(n.input(b), [&](const auto* data) { kiln::rt::qgemm_pack_b(K, N, data, N, 1, out); });
  });
  const bool qlinear = b == 3;
  const auto [bz, bz_count] = constant_zero_points(ctx, n, qlinear ? 5 : 3);
  std::string scale;
  if (qlinear) {
    const std::vector<float> m = multipliers(n, 1);
    scale = fmt::format("reinterpret_cast<const float*>({})", ctx.add_weight_bytes(m.data(), 4));
  }
  emit_output(ctx, n, "", scale, 1, qlinear ? constant_zero_point(n, 7) : 0);
  ctx.line(fmt::format("qout.row_stride = {};", N));
  const std::string az = !n.has_input(2) || n.input(2)->is_constant() ? std::to_string(constant_zero_point(n, 2))
                                                                       : zero_point_value(ctx, n, 2);
  ctx.line(fmt::format("kiln::rt::qgemm({}, {}, {}, kiln::rt::QGemmA{{{}, {}, {}, {}}}, {}, {}, {}, qout, pool);", rows,
                       N, K, ctx.in(n, 0), K, is_signed_8bit(n.input(0)), az, packed, bz, bz_count));
}

bool packs_conv_integer(const ir::Node& n, size_t i) { return i == 1 && fast_conv(n, 1); }
bool packs_qlinear_conv(const ir::Node& n, size_t i) { return i == 3 && fast_conv(n, 3); }
bool packs_matmul_integer(const ir::Node& n, size_t i) { return i == 1 && fast_matmul(n, 1); }
bool packs_qlinear_matmul(const ir::Node& n, size_t i) { return i == 3 && fast_matmul(n, 3); }

size_t conv_integer_scratch(const ir::Node& node, const EmitOptions&) {
  return fast_conv(node, 1) ? kiln::rt::qconv2d_scratch_bytes(ir::integer_conv_params(node, 0, 1)) : 0;
}

void emit_conv_integer(EmitContext& ctx, const ir::Node& node) {
  if (fast_conv(node, 1)) return emit_fast_conv(ctx, node, 1);
  const auto [wz, wz_count] = weight_zero_point(ctx, node, 3, 1);
  ctx.line(fmt::format("kiln::rt::conv2d_integer<{}, {}>({}, {}, {}, {}, {}, {}, {}, nullptr);",
                       cpp_type(node.input(0)->dtype()), cpp_type(node.input(1)->dtype()),
                       conv_params_literal(ir::integer_conv_params(node, 0, 1)), ctx.in(node, 0), ctx.in(node, 1),
                       ctx.out(node, 0), zero_point_value(ctx, node, 2), wz, wz_count));
}

void emit_qlinear_conv(EmitContext& ctx, const ir::Node& node) {
  if (fast_conv(node, 3)) return emit_fast_conv(ctx, node, 3);
  const auto [wz, wz_count] = weight_zero_point(ctx, node, 5, 3);
  ctx.line(fmt::format(
      "kiln::rt::qlinear_conv2d<{}, {}, {}, {}>({}, {}, {}[0], {}, {}, {}, {}, {}, {}, {}[0], {}, {}, "
      "reinterpret_cast<int32_t*>({}), {});",
      cpp_type(node.input(0)->dtype()), cpp_type(node.input(3)->dtype()), cpp_type(node.output(0)->dtype()),
      cpp_type(node.input(1)->dtype()), conv_params_literal(ir::integer_conv_params(node, 0, 3)), ctx.in(node, 0),
      ctx.in(node, 1), zero_point_value(ctx, node, 2), ctx.in(node, 3), ctx.in(node, 4), numel_of(node.input(4)), wz,
      wz_count, ctx.in(node, 6), zero_point_value(ctx, node, 7),
      node.has_input(8) ? ctx.in(node, 8) : std::string("nullptr"), ctx.scratch(node), ctx.out(node, 0)));
}

size_t qlinear_conv_scratch(const ir::Node& node, const EmitOptions&) {
  if (fast_conv(node, 3)) return kiln::rt::qconv2d_scratch_bytes(ir::integer_conv_params(node, 0, 3));
  return static_cast<size_t>(numel_of(node.output(0))) * 4;
}

// kiln.QLinearAdd: qlinear_add over the whole tensor, scales and zero points read at run time;
// a share for each thread (emit_shares).
void emit_qlinear_add(EmitContext& ctx, const ir::Node& node) {
  const auto zp = [&](size_t i) {
    return node.has_input(i) ? fmt::format("static_cast<float>({}[0])", ctx.in(node, i)) : std::string("0.0f");
  };
  const std::string call = fmt::format(
      "kiln::rt::qlinear_add<{}, {}, {}>({} + b, {}[0], {}, {} + b, {}[0], {}, {}[0], {}, {} + b, e - b);",
      cpp_type(node.input(0)->dtype()), cpp_type(node.input(3)->dtype()), cpp_type(node.output(0)->dtype()),
      ctx.in(node, 0), ctx.in(node, 1), zp(2), ctx.in(node, 3), ctx.in(node, 4), zp(5), ctx.in(node, 6), zp(7),
      ctx.out(node, 0));
  emit_shares(ctx, numel_of(node.output(0)), call);
}

// kiln.QLinearConvNhwc: layout_nhwc makes it only where qconv2d_nhwc runs it (ir::nhwc_conv_runs).
std::string unsupported_qlinear_conv_nhwc(const ir::Node& node) {
  if (!fast_conv(node, 3) || !ir::nhwc_conv_runs(node))
    return "compiled kiln.QLinearConvNhwc needs constant weights, f32 scales, constant zero points (the weights' 0 "
           "for s8, 128 for u8) and bias, and a 1x1 (no padding, C a multiple of 4) or depthwise convolution";
  return "";
}

void emit_qlinear_conv_nhwc(EmitContext& ctx, const ir::Node& n) {
  const kiln::rt::Conv2dParams p = ir::nhwc_conv_params(n);
  const std::string packed =
      packed_weights(ctx, kiln::rt::qconv2d_nhwc_packed_weight_bytes(p), [&](unsigned char* out) {
        visit_weight(n.input(3), [&](const auto* data) { kiln::rt::qconv2d_nhwc_pack_weights(p, data, out); });
      });
  const std::vector<float> m = multipliers(n, p.M);
  const std::string scale =
      fmt::format("reinterpret_cast<const float*>({})", ctx.add_weight_bytes(m.data(), m.size() * 4));
  emit_output(ctx, n, n.has_input(8) ? ctx.in(n, 8) : "", scale, p.M, constant_zero_point(n, 7));
  ctx.line(fmt::format("kiln::rt::qconv2d_nhwc({}, kiln::rt::QGemmA{{{}, 0, {}, {}}}, {}, qout, pool);",
                       conv_params_literal(p), ctx.in(n, 0), is_signed_8bit(n.input(0)), constant_zero_point(n, 2),
                       packed));
}

bool packs_qlinear_conv_nhwc(const ir::Node&, size_t i) { return i == 3; }

std::string unsupported_transpose_nhwc(const ir::Node& node) {
  return ir::dtype_size(node.input(0)->dtype()) == 1 ? "" : "compiled kiln.ToNhwc and kiln.FromNhwc move 8-bit tensors";
}

// kiln.ToNhwc (to_nhwc) or kiln.FromNhwc: each image's [rows][cols] transposed.
void emit_transpose_nhwc(EmitContext& ctx, const ir::Node& node, bool to_nhwc) {
  const std::vector<int64_t> d = dims_of(node.input(0));
  const int64_t rows = to_nhwc ? d[1] : d[1] * d[2], cols = to_nhwc ? d[2] * d[3] : d[3];
  ctx.line(fmt::format("kiln::rt::transpose_planes_8bit({}, {}, {}, {}, {}, pool);", d[0], rows, cols,
                       ctx.in(node, 0), ctx.out(node, 0)));
}

// kiln.DequantizeGlobalAveragePoolNhwc: x [N, H, W, C] averaged per channel, its scale and zero
// point read at run time.
void emit_dequantize_gap_nhwc(EmitContext& ctx, const ir::Node& node) {
  const std::vector<int64_t> d = dims_of(node.input(0));
  const std::string zp =
      node.has_input(2) ? fmt::format("static_cast<float>({}[0])", ctx.in(node, 2)) : std::string("0.0f");
  ctx.line(fmt::format("kiln::rt::dequantize_global_avgpool_nhwc<{}>({}, {}, {}, {}, {}[0], {}, {}, pool);",
                       cpp_type(node.input(0)->dtype()), d[0], d[1] * d[2], d[3], ctx.in(node, 0), ctx.in(node, 1), zp,
                       ctx.out(node, 0)));
}

// The kernel reads one scale and one zero point (fuse_nhwc_global_pool makes the op only so).
std::string unsupported_dequantize_gap_nhwc(const ir::Node& node) {
  const bool one_scale = node.input(1)->dtype() == ir::DType::F32 && numel_of(node.input(1)) == 1;
  if (!one_scale || (node.has_input(2) && numel_of(node.input(2)) != 1))
    return "compiled kiln.DequantizeGlobalAveragePoolNhwc needs one f32 scale and one zero point (per tensor)";
  return "";
}

}  // namespace

void register_quantize_emitters(EmitterRegistry& r) {
  r.add("QuantizeLinear", Emitter{.emit = emit_quantize});
  r.add("DequantizeLinear", Emitter{.emit = emit_dequantize});
  r.add("DynamicQuantizeLinear", Emitter{.emit = emit_dynamic_quantize});
  r.add("MatMulInteger", Emitter{.emit = emit_matmul_integer, .packs_input = packs_matmul_integer});
  r.add("QLinearMatMul", Emitter{.emit = emit_qlinear_matmul, .packs_input = packs_qlinear_matmul});
  r.add("ConvInteger",
        Emitter{.emit = emit_conv_integer, .scratch_bytes = conv_integer_scratch, .packs_input = packs_conv_integer});
  r.add("QLinearConv",
        Emitter{.emit = emit_qlinear_conv, .scratch_bytes = qlinear_conv_scratch, .packs_input = packs_qlinear_conv});
  r.add("kiln.QLinearAdd", Emitter{.emit = emit_qlinear_add});
  r.add("kiln.QLinearConvNhwc", Emitter{.emit = emit_qlinear_conv_nhwc, .unsupported = unsupported_qlinear_conv_nhwc,
                                        .packs_input = packs_qlinear_conv_nhwc});
  r.add("kiln.ToNhwc",
        Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) { emit_transpose_nhwc(ctx, node, true); },
                .unsupported = unsupported_transpose_nhwc});
  r.add("kiln.FromNhwc",
        Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) { emit_transpose_nhwc(ctx, node, false); },
                .unsupported = unsupported_transpose_nhwc});
  r.add("kiln.DequantizeGlobalAveragePoolNhwc",
        Emitter{.emit = emit_dequantize_gap_nhwc, .unsupported = unsupported_dequantize_gap_nhwc});
}

}  // namespace kiln::codegen::cpp
