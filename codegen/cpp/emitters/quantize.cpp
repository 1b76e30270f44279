// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
// ConvInteger and QLinearConv:
// calls to the runtime's loops (kiln/rt/quantize.h, kiln/rt/qlinear.h), the functions kiln's
// reference runs too.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/qlinear.h"
#include "ir/ops/quantize.h"

namespace kiln::codegen::cpp {

namespace {

std::string layout_literal(const kiln::rt::QuantLayout& l) {
  return fmt::format("kiln::rt::QuantLayout{{{}, {}, {}, {}, {}, {}, {}}}", l.outer, l.axis_len, l.inner,
                     l.block, l.outer_stride, l.axis_stride, l.inner_stride);
}

std::string zero_point_arg(EmitContext& ctx, const ir::Node& node, ir::DType q) {
  return node.has_input(2) ? ctx.in(node, 2) : fmt::format("static_cast<const {}*>(nullptr)", cpp_type(q));
}

void emit_quantize(EmitContext& ctx, const ir::Node& node) {
  const ir::DType q = node.output(0)->dtype();
  const int64_t precision = node.i("precision");
  const ir::DType division = precision != 0 ? static_cast<ir::DType>(precision) : node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::quantize_linear<{}, {}, {}>({}, {}, {}, {}, {}, {}, {});",
                       cpp_type(node.input(0)->dtype()), cpp_type(node.input(1)->dtype()), cpp_type(q),
                       ctx.in(node, 0), ctx.in(node, 1), zero_point_arg(ctx, node, q), ctx.out(node, 0),
                       layout_literal(ir::quant_layout(node)), kiln_dtype_enum(division),
                       node.i("saturate") != 0 ? "true" : "false"));
}

void emit_dequantize(EmitContext& ctx, const ir::Node& node) {
  const ir::DType q = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::dequantize_linear<{}, {}, {}>({}, {}, {}, {}, {});", cpp_type(q),
                       cpp_type(node.input(1)->dtype()), cpp_type(node.output(0)->dtype()), ctx.in(node, 0),
                       ctx.in(node, 1), zero_point_arg(ctx, node, q), ctx.out(node, 0),
                       layout_literal(ir::quant_layout(node))));
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

void emit_matmul_integer(EmitContext& ctx, const ir::Node& node) {
  const ir::IntegerMatmulPlan p = ir::integer_matmul_plan(node, 0, 1);
  const std::string ta = cpp_type(node.input(0)->dtype()), tb = cpp_type(node.input(1)->dtype());
  const std::string za = zero_point_value(ctx, node, 2), zb = zero_point_value(ctx, node, 3);
  emit_products(ctx, p, [&](const std::string& ao, const std::string& bo, const std::string& yo) {
    return fmt::format("kiln::rt::matmul_integer<{}, {}>({} + {}, {} + {}, {} + {}, {}, {}, {}, {}, {});", ta, tb,
                       ctx.in(node, 0), ao, ctx.in(node, 1), bo, ctx.out(node, 0), yo, p.M, p.K, p.N, za, zb);
  });
}

void emit_qlinear_matmul(EmitContext& ctx, const ir::Node& node) {
  const ir::IntegerMatmulPlan p = ir::integer_matmul_plan(node, 0, 3);
  const std::string ta = cpp_type(node.input(0)->dtype()), tb = cpp_type(node.input(3)->dtype()),
                    ty = cpp_type(node.output(0)->dtype());
  ctx.line(fmt::format("const double multiplier = kiln::rt::qlinear_multiplier<{}>({}[0], {}[0], {}[0]);",
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

void emit_conv_integer(EmitContext& ctx, const ir::Node& node) {
  const auto [wz, wz_count] = weight_zero_point(ctx, node, 3, 1);
  ctx.line(fmt::format("kiln::rt::conv2d_integer<{}, {}>({}, {}, {}, {}, {}, {}, {}, nullptr);",
                       cpp_type(node.input(0)->dtype()), cpp_type(node.input(1)->dtype()),
                       conv_params_literal(ir::integer_conv_params(node, 0, 1)), ctx.in(node, 0), ctx.in(node, 1),
                       ctx.out(node, 0), zero_point_value(ctx, node, 2), wz, wz_count));
}

void emit_qlinear_conv(EmitContext& ctx, const ir::Node& node) {
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

size_t qlinear_conv_scratch(const ir::Node& node) { return static_cast<size_t>(numel_of(node.output(0))) * 4; }

}  // namespace

void register_quantize_emitters(EmitterRegistry& r) {
  r.add("QuantizeLinear", Emitter{.emit = emit_quantize});
  r.add("DequantizeLinear", Emitter{.emit = emit_dequantize});
  r.add("DynamicQuantizeLinear", Emitter{.emit = emit_dynamic_quantize});
  r.add("MatMulInteger", Emitter{.emit = emit_matmul_integer});
  r.add("QLinearMatMul", Emitter{.emit = emit_qlinear_matmul});
  r.add("ConvInteger", Emitter{.emit = emit_conv_integer});
  r.add("QLinearConv", Emitter{.emit = emit_qlinear_conv, .scratch_bytes = qlinear_conv_scratch});
}

}  // namespace kiln::codegen::cpp
