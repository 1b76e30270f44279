// kiln.FusedConv, kiln.FusedGemm and kiln.FusedMatMul (ir/ops/fused.cpp): the runtime's conv
// and GEMM kernels with an epilogue that adds the residual Z and applies the activation to
// each block of the output while the kernel runs. The activation's text comes from the
// activation op's scalar expression in the IR registry. kiln.FusedConvDepthwise through
// kiln::rt::expand_depthwise3x3_f32 and kiln.FusedDepthwiseConv through
// kiln::rt::depthwise3x3_pointwise_f32, their activations applied in the kernels' registers.
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/emitters/fused.h"
#include "ir/ops/fused.h"
#include "ir/ops/op_helpers.h"

namespace kiln::codegen::cpp {

ChainCode elementwise_chain_code(const ir::Node& node) {
  ChainCode code;
  for (const std::string& text : node.attr("steps").strings()) {
    std::istringstream in(text);
    std::string op, arg;
    in >> op;
    std::vector<std::string> args;
    while (in >> arg) args.push_back((arg[0] == 'i' ? "x" : "t") + arg.substr(1));
    const ir::OpDef* def = ir::registry().find(op);
    const std::string params = args.size() == 1 ? "T x" : "T a, T b";
    const size_t k = code.count++;
    code.lambdas.push_back(fmt::format("const auto f{} = []({}) -> T {{ {}return static_cast<T>({}); }};  // {}", k,
                                       params, attr_constants(*def, {}), def->scalar_expr, op));
    code.body += fmt::format(" const T t{} = f{}({});", k, k, fmt::join(args, ", "));
  }
  return code;
}

std::string activation_expr(const ir::Node& node) {
  ir::FusedActivation act = ir::fused_activation(node);
  if (act.op == "none") return "x";
  if (act.op == "Clip") {
    std::string lo = float_literal(act.clip_min, ir::DType::F32);
    std::string hi = float_literal(act.clip_max, ir::DType::F32);
    return fmt::format("(x < {0} ? {0} : (x > {1} ? {1} : x))", lo, hi);
  }
  const ir::OpDef& def = *ir::registry().find(act.op);
  std::string constants = attr_constants(def, act.attrs);
  if (constants.empty()) return def.scalar_expr;
  return fmt::format("[&] {{ {}return {}; }}()", constants, def.scalar_expr);
}

namespace {

// Declares `ep`, the kiln::rt::Epilogue for the node: adds the bias row of `row` elements
// (input `bias_index`, when present; the kernel calls the epilogue on row segments) and the
// residual (input `z_index`), then applies the activation.
void emit_epilogue(EmitContext& ctx, const ir::Node& node, size_t z_index, size_t bias_index = SIZE_MAX,
                   int64_t row = 0) {
  bool has_z = node.has_input(z_index), has_bias = bias_index != SIZE_MAX && node.has_input(bias_index);
  ctx.line(fmt::format("const float* const refs[2] = {{{}, {}}};", has_z ? ctx.in(node, z_index) : "nullptr",
                       has_bias ? ctx.in(node, bias_index) : "nullptr"));
  std::string setup, sum;
  if (has_z) {
    setup += "const float* const zr = static_cast<const float* const*>(c)[0] + offset; ";
    sum += " + zr[i]";
  }
  if (has_bias) {
    setup += fmt::format("const float* const br = static_cast<const float* const*>(c)[1] + offset % {}; ", row);
    sum += " + br[i]";
  }
  if (!has_z && !has_bias) setup = "(void)c; ";
  if (!has_z && !has_bias) setup += "(void)offset; ";
  // A residual add, a Clip and a Relu are also given as the residual, bounds and flag, which
  // kernels may apply in registers (Epilogue::fn_is_clamp, fn_is_relu, residual).
  ir::FusedActivation act = ir::fused_activation(node);
  const bool is_clip = act.op == "Clip" && act.clip_min <= act.clip_max, is_relu = act.op == "Relu";
  std::string clamp;
  if (!has_bias && (is_clip || is_relu || (act.op == "none" && has_z)))
    clamp = fmt::format(", {}, {}, {}, {}{}", is_clip ? "true" : "false",
                        float_literal(is_clip ? act.clip_min : 0.0, ir::DType::F32),
                        float_literal(is_clip ? act.clip_max : 0.0, ir::DType::F32),
                        has_z ? ctx.in(node, z_index) : "nullptr", is_relu ? ", true" : "");
  const std::string fn = ctx.epilogue_function(
      fmt::format("using T = float; {}for (int64_t i = 0; i < n; ++i) {{ const T x = y[i]{}; y[i] = {}; }}", setup,
                  sum, activation_expr(node)));
  ctx.line(fmt::format("const kiln::rt::Epilogue ep{{KILN_EPILOGUE_PICK({}), refs{}}};", fn, clamp));
}

void emit_conv(EmitContext& ctx, const ir::Node& node) {
  emit_epilogue(ctx, node, 3);
  emit_conv2d(ctx, node, "ep");
}

void emit_fused_gemm(EmitContext& ctx, const ir::Node& node) {
  emit_epilogue(ctx, node, 3);
  emit_gemm(ctx, node, true);
}

std::string unsupported_matmul(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  if (node.input(0)->shape().rank() < 2 || node.input(1)->shape().rank() != 2)
    return "compiled kiln.FusedMatMul needs A of rank >= 2 and a 2-D B";
  const ir::Shape& a = node.input(0)->shape();
  if (!node.input(1)->shape().is_static() || !a[a.rank() - 1].is_static())
    return "compiled kiln.FusedMatMul needs B's dims and A's last dim to be numbers";
  return "";
}

void emit_matmul(EmitContext& ctx, const ir::Node& node) {
  // B is [K, N] and numbers; A's leading dims (the rows) may be symbols bounded with --dim.
  const ir::Shape& a = node.input(0)->shape();
  std::vector<int64_t> b = dims_of(node.input(1));
  int64_t K = b[0], N = b.back();
  std::optional<ir::Dim> rows = a.product().exact_div(ir::Dim(K));
  if (!rows) fail("{}: A {} does not have {} columns", node.describe(), a.str(), K);
  emit_epilogue(ctx, node, 3, 2, N);
  std::string b_expr = is_f32_constant(node.input(1)) ? "" : ctx.in(node, 1);
  ctx.line(fmt::format(
      "kiln::rt::gemm_f32_ex({}, {}, {}, 1.0f, kiln::rt::GemmOperand{{{}, {}, false, false}}, {}, 0.0f, {}, {}, "
      "nullptr, ep, 0, pool);",
      ctx.dim(*rows), N, K, ctx.in(node, 0), K, gemm_b_operand(ctx, node.input(1), b_expr, false, K, N),
      ctx.out(node, 0), N));
}

}  // namespace

// kiln.FusedConvDepthwise: the kernel's parameters, or the reason it does not apply.
std::string conv_depthwise_params(const ir::Node& node, kiln::rt::ExpandDepthwiseParams& p) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  for (const char* prefix : {"expand_activation", "activation"})
    if (!ir::store_activation(ir::fused_activation(node, prefix)))
      return "compiled kiln.FusedConvDepthwise applies the activations none, Relu and Clip only";
  // kiln.FusedConvDepthwiseNchwc: Y, and X where of rank 5, blocked ([N, C / 16, H, W, 16]).
  auto plain = [](std::vector<int64_t> d) {
    return d.size() == 5 ? std::vector<int64_t>{d[0], d[1] * d[4], d[2], d[3]} : d;
  };
  const std::vector<int64_t> x = plain(dims_of(node.input(0))), w = dims_of(node.input(1)),
                             y = plain(dims_of(node.output(0)));
  if (x.size() != 4 || w.size() != 4 || w[2] != 1 || w[3] != 1)
    return "compiled kiln.FusedConvDepthwise needs a 2-D input and a 1x1 expand";
  const int64_t stride = ir::depthwise3x3_stride(node, {x[0], w[0], x[2], x[3]}, dims_of(node.input(3)));
  p = kiln::rt::ExpandDepthwiseParams{x[0], x[1], x[2], x[3], w[0], stride, y[2], y[3]};
  p.x_nchw16c = node.input(0)->shape().rank() == 5;
  p.y_nchw16c = node.output(0)->shape().rank() == 5;
  if (stride == 0 || !kiln::rt::expand_depthwise3x3_applicable(p))
    return "compiled kiln.FusedConvDepthwise needs a depthwise 3x3 with pads 1 and stride 1 or 2, a multiple of 8 "
           "expanded channels and at most 512 input channels";
  return "";
}

std::string unsupported_conv_depthwise(const ir::Node& node) {
  kiln::rt::ExpandDepthwiseParams p{};
  return conv_depthwise_params(node, p);
}

// Whether the node's weights and biases are all constants (absent biases count): then they are
// packed once, now, in the kernel's layout.
bool conv_depthwise_packs_weights(const ir::Node& node, size_t input) {
  if (input != 1 && input != 2 && input != 3 && input != 4) return false;
  for (size_t i = 1; i <= 4; ++i)
    if ((i == 1 || i == 3 || node.has_input(i)) && !is_f32_constant(node.input(i))) return false;
  return true;
}

namespace {

void emit_conv_depthwise(EmitContext& ctx, const ir::Node& node) {
  kiln::rt::ExpandDepthwiseParams p{};
  conv_depthwise_params(node, p);
  ctx.line(fmt::format("const kiln::rt::ExpandDepthwiseParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};", p.N, p.C,
                       p.H, p.W, p.M, p.stride, p.OH, p.OW, p.x_nchw16c, p.y_nchw16c));
  const std::string act1 = store_activation_expr(node, "expand_activation");
  const std::string act2 = store_activation_expr(node, "activation");
  if (conv_depthwise_packs_weights(node, 1)) {
    // Interleaved now, once, as the kernel's units read them, rather than on every run.
    auto data = [&](size_t i) { return node.has_input(i) ? node.input(i)->constant().data<float>() : nullptr; };
    std::vector<float> packed(static_cast<size_t>(kiln::rt::expand_depthwise3x3_packed_floats(p)));
    kiln::rt::expand_depthwise3x3_pack(p, data(1), data(2), data(3), data(4), packed.data());
    ctx.line(fmt::format("kiln::rt::expand_depthwise3x3_f32_prepacked(p, {}, {}, {}, {}, {}, pool);", ctx.in(node, 0),
                         ctx.add_weight_floats(packed), act1, act2, ctx.out(node, 0)));
    return;
  }
  ctx.line(fmt::format("kiln::rt::expand_depthwise3x3_f32(p, {}, {}, {}, {}, {}, {}, {}, {}, pool);", ctx.in(node, 0),
                       ctx.in(node, 1), node.has_input(2) ? ctx.in(node, 2) : "nullptr", act1, ctx.in(node, 3),
                       node.has_input(4) ? ctx.in(node, 4) : "nullptr", act2, ctx.out(node, 0)));
}

}  // namespace

// kiln.FusedDepthwiseConv: the kernel's parameters, or the reason it does not apply.
std::string depthwise_conv_params(const ir::Node& node, kiln::rt::DepthwisePointwiseParams& p) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  for (const char* prefix : {"activation", "project_activation"})
    if (!ir::store_activation(ir::fused_activation(node, prefix)))
      return "compiled kiln.FusedDepthwiseConv applies the activations none, Relu and Clip only";
  const std::vector<int64_t> x = dims_of(node.input(0)), w = dims_of(node.input(3)), y = dims_of(node.output(0));
  if (x.size() != 4 || w.size() != 4 || w[2] != 1 || w[3] != 1)
    return "compiled kiln.FusedDepthwiseConv needs a 2-D input and a 1x1 convolution";
  const int64_t stride = ir::depthwise3x3_stride(node, x, dims_of(node.input(1)));
  p = kiln::rt::DepthwisePointwiseParams{x[0], x[1], x[2], x[3], stride, y[2], y[3], w[0]};
  if (stride == 0 || !kiln::rt::depthwise3x3_pointwise_applicable(p))
    return "compiled kiln.FusedDepthwiseConv needs a depthwise 3x3 with pads 1 and stride 1 or 2 on a multiple of 8 "
           "channels";
  return "";
}

std::string unsupported_depthwise_conv(const ir::Node& node) {
  kiln::rt::DepthwisePointwiseParams p{};
  return depthwise_conv_params(node, p);
}

namespace {

void emit_depthwise_conv(EmitContext& ctx, const ir::Node& node) {
  kiln::rt::DepthwisePointwiseParams p{};
  depthwise_conv_params(node, p);
  ctx.line(fmt::format("const kiln::rt::DepthwisePointwiseParams p{{{}, {}, {}, {}, {}, {}, {}, {}}};", p.N, p.C, p.H,
                       p.W, p.stride, p.OH, p.OW, p.M));
  ctx.line(fmt::format("kiln::rt::depthwise3x3_pointwise_f32(p, {}, {}, {}, {}, {}, {}, {}, {}, pool);",
                       ctx.in(node, 0), ctx.in(node, 1), node.has_input(2) ? ctx.in(node, 2) : "nullptr",
                       store_activation_expr(node, "activation"), ctx.in(node, 3),
                       node.has_input(4) ? ctx.in(node, 4) : "nullptr",
                       store_activation_expr(node, "project_activation"), ctx.out(node, 0)));
}

// kiln.Elementwise: one loop; each step is a lambda holding its op's scalar expression.
void emit_elementwise_chain(EmitContext& ctx, const ir::Node& node) {
  ir::DType t = node.output(0)->dtype();
  std::string s = cpp_type(t), c = cpp_compute_type(t);
  std::vector<std::string> reads;
  for (size_t k = 0; k < node.num_inputs(); ++k) {
    ctx.line(fmt::format("const {}* const in{} = {};", s, k, ctx.in(node, k)));
    reads.push_back(fmt::format("const T x{0} = static_cast<T>(in{0}[{1}]);", k,
                                node.input(k)->shape().product() == ir::Dim(1) ? "0" : "i"));
  }
  ctx.line(fmt::format("{}* const y = {};", s, ctx.out(node, 0)));
  ctx.line(fmt::format("using T = {};", c));
  const ChainCode chain = elementwise_chain_code(node);
  for (const std::string& l : chain.lambdas) ctx.line(l);
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", ctx.numel(node.output(0))));
  for (const std::string& r : reads) ctx.line("  " + r);
  ctx.line(fmt::format(" {} y[i] = static_cast<{}>(t{}); }}", chain.body, s, chain.count - 1));
}

}  // namespace

void register_fused_emitters(EmitterRegistry& r) {
  r.add("kiln.Elementwise", Emitter{.emit = emit_elementwise_chain, .dynamic_shapes = true});
  r.add("kiln.FusedConv", Emitter{.emit = emit_conv,
                                  .unsupported = unsupported_conv2d,
                                  .scratch_bytes = conv2d_scratch_bytes,
                                  .dynamic_shapes = true,
                                  .packs_input = conv2d_packs_weights,
                                  .batch_items = every_item});
  for (const char* op : {"kiln.FusedConvDepthwise", "kiln.FusedConvDepthwiseNchwc"})
    r.add(op, Emitter{.emit = emit_conv_depthwise,
                      .unsupported = unsupported_conv_depthwise,
                      .packs_input = conv_depthwise_packs_weights,
                      .batch_items = every_item});
  r.add("kiln.FusedDepthwiseConv",
        Emitter{.emit = emit_depthwise_conv, .unsupported = unsupported_depthwise_conv, .batch_items = every_item});
  r.add("kiln.FusedGemm", Emitter{.emit = emit_fused_gemm,
                                  .unsupported = unsupported_gemm,
                                  .dynamic_shapes = true,
                                  .packs_input = gemm_packs_b});
  r.add("kiln.FusedMatMul", Emitter{.emit = emit_matmul,
                                    .unsupported = unsupported_matmul,
                                    .dynamic_shapes = true,
                                    .packs_input = gemm_packs_b});
}

}  // namespace kiln::codegen::cpp
