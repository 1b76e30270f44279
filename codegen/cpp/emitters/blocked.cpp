// Channel-blocked ops (ir/ops/blocked.cpp) through kiln/rt/conv_nchwc.h: the reorders,
// kiln.ConvNchwc with its weights packed now, at compile time, and kiln.MaxPoolNchwc.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp/emitters/blocked.h"
#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/blocked.h"
#include "ir/ops/fused.h"
#include "ir/symbolic_params.h"
#include "kiln/rt/depthwise.h"
#include "kiln/rt/gemm_bf16.h"

namespace kiln::codegen::cpp {

namespace {

// [N, C / 16, H, W, 16] -> {N, C, H, W}, the symbols at `at`.
std::vector<int64_t> unblocked_dims(const ir::Value* v, const std::map<std::string, int64_t>& at = {}) {
  std::vector<int64_t> d = ir::bound_dims(v, at);
  return {d[0], d[1] * d[4], d[2], d[3]};
}

// N, C and H * W (the plain form's): numbers, or expressions of the symbolic dims.
void emit_reorder(EmitContext& ctx, const ir::Node& node, bool to_blocked) {
  const ir::Shape& s = node.input(0)->shape();
  const ir::Dim c = to_blocked ? s[1] : s[1] * s[4];
  ctx.line(fmt::format("kiln::rt::{}({}, {}, {}, {}, {}, pool);", to_blocked ? "nchw_to_nchwc_f32" : "nchwc_to_nchw_f32",
                       ctx.dim(s[0]), ctx.dim(c), ctx.dim(s[2] * s[3]), ctx.in(node, 0), ctx.out(node, 0)));
}

// X of rank 4 is read as plain NCHW (ir/ops/blocked.cpp); the symbols at `at`.
std::optional<kiln::rt::ConvNchwcParams> params_at(const ir::Node& node, const std::map<std::string, int64_t>& at) {
  const bool x_nchw = node.input(0)->shape().rank() == 4;
  return ir::nchwc_conv_params(node, x_nchw ? ir::bound_dims(node.input(0), at) : unblocked_dims(node.input(0), at),
                               dims_of(node.input(1)), x_nchw);
}

std::optional<kiln::rt::ConvNchwcParams> params_of(const ir::Node& node) { return params_at(node, tuning_point(node)); }

std::vector<int64_t> pool_fields(const ir::Node& node, const std::map<std::string, int64_t>& at);

// With symbolic dims: N, C, H, W, M, KH, KW, OH, OW, the strides and the pads as polynomials of
// the node's symbols (ir/symbolic_params.h), or nullopt.
std::optional<std::vector<ir::Dim>> symbolic_conv_fields(const ir::Node& node) {
  return ir::lift_params(ir::node_symbols(node), ranges_of(node), [&](const std::map<std::string, int64_t>& at) {
    const std::optional<kiln::rt::ConvNchwcParams> p = params_at(node, at);
    if (!p) fail("{}: no channel-blocked kernel at a sample point", node.describe());
    return std::vector<int64_t>{p->N,  p->C,  p->H,        p->W,        p->M,       p->KH,      p->KW,
                                p->OH, p->OW, p->stride_h, p->stride_w, p->pad_top, p->pad_left};
  });
}

std::string unsupported_conv(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  if (!is_f32_constant(node.input(1)) || (node.has_input(2) && !is_f32_constant(node.input(2))))
    return "compiled kiln.ConvNchwc needs constant f32 weights and bias";
  if (!params_of(node))
    return "compiled kiln.ConvNchwc runs convolutions without dilation, group 1, on blocks of 16 channels, with "
           "the activations none, Relu or Clip";
  if (has_symbols(node) && !symbolic_conv_fields(node)) return "its geometry is not a polynomial of the symbolic dims";
  return "";
}

bool packs_weights(const ir::Node&, size_t input) { return input == 1; }

void emit_conv(EmitContext& ctx, const ir::Node& node) {
  const kiln::rt::ConvNchwcParams p = *params_of(node);  // the weights' packing needs no extents
  if (has_symbols(node)) {
    std::optional<std::vector<ir::Dim>> f = symbolic_conv_fields(node);
    if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
    ctx.line(fmt::format("const kiln::rt::ConvNchwcParams p{{{}{}}};", ctx.dim_list(*f), p.x_nchw ? ", true" : ""));
  } else {
    ctx.line(fmt::format("const kiln::rt::ConvNchwcParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}{}}};",
                         p.N, p.C, p.H, p.W, p.M, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top,
                         p.pad_left, p.x_nchw ? ", true" : ""));
  }
  const float* w = node.input(1)->constant().data<float>();
  std::string weights, tail;
  if (ctx.stores_gemm_b_bf16(p.C, p.M) && kiln::rt::conv_nchwc_bf16_applicable(p)) {
    // bf16: a 1x1 stored for the native bf16 GEMM (kiln/rt/gemm_bf16.h), widened elsewhere.
    std::vector<uint16_t> halves(kiln::rt::conv_nchwc_bf16_packed_halves(p));
    kiln::rt::conv_nchwc_bf16_pack_weights(p, w, halves.data());
    const EmitContext::Bf16Weights b = ctx.add_bf16_weights(halves, p.C, p.M, true);
    weights = b.widened;
    tail = ", kiln::rt::NchwcIsa::automatic, " + b.bf16;
  } else {
    std::vector<float> packed(kiln::rt::conv_nchwc_packed_floats(p));
    kiln::rt::conv_nchwc_pack_weights(p, w, packed.data());
    weights = ctx.add_weight_floats(packed);
  }
  ctx.line(fmt::format("kiln::rt::conv_nchwc_f32(p, {}, {}, {}, {}, {}, {}, pool{});", ctx.in(node, 0), weights,
                       node.has_input(2) ? ctx.in(node, 2) : "nullptr", node.has_input(3) ? ctx.in(node, 3) : "nullptr",
                       store_activation_expr(node), ctx.out(node, 0), tail));
}


}  // namespace

std::optional<kiln::rt::Conv2dParams> nchwc_depthwise_params(const ir::Node& node) {
  if (!node.input(0)->shape().is_static() || !node.input(1)->shape().is_static()) return std::nullopt;
  return ir::nchwc_depthwise_params(node, unblocked_dims(node.input(0)), dims_of(node.input(1)));
}

std::string unsupported_depthwise(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  if (!is_f32_constant(node.input(1)) || (node.has_input(2) && !is_f32_constant(node.input(2))))
    return "compiled kiln.DepthwiseConvNchwc needs constant f32 weights and bias";
  if (!nchwc_depthwise_params(node))
    return "compiled kiln.DepthwiseConvNchwc runs depthwise 3x3 convolutions of static shape on blocks of 16 "
           "channels, stride 1 or 2, pads up to 2, no residual, with the activations none, Relu or Clip";
  return "";
}

namespace {

void emit_depthwise(EmitContext& ctx, const ir::Node& node) {
  const kiln::rt::Conv2dParams p = *nchwc_depthwise_params(node);
  ctx.line(fmt::format("const kiln::rt::Conv2dParams p{{{}}};", fmt::join(conv_fields(p), ", ")));
  ctx.line(fmt::format("kiln::rt::depthwise3x3_nchw16c_f32(p, {}, {}, {}, {}, {}, pool);", ctx.in(node, 0),
                       ctx.in(node, 1), node.has_input(2) ? ctx.in(node, 2) : "nullptr", store_activation_expr(node),
                       ctx.out(node, 0)));
}

}  // namespace

std::optional<kiln::rt::ConvNchwcParams> nchwc_conv_params(const ir::Node& node) { return params_of(node); }
std::vector<int64_t> nchwc_pool_fields(const ir::Node& node) { return pool_fields(node, {}); }

namespace {

// The pool's parameters (its first 14) with the symbols at `at`.
std::vector<int64_t> pool_fields(const ir::Node& node, const std::map<std::string, int64_t>& at) {
  const std::vector<int64_t> x = unblocked_dims(node.input(0), at);
  const Window2d w = window_2d(node, {x[2], x[3]}, node.ints("kernel_shape"));
  return {x[0], x[1], w.H, w.W, w.KH, w.KW, w.OH, w.OW, w.stride_h, w.stride_w, w.pad_top, w.pad_left, w.dil_h, w.dil_w};
}

std::optional<std::vector<ir::Dim>> symbolic_pool_fields(const ir::Node& node) {
  return ir::lift_params(ir::node_symbols(node), ranges_of(node),
                         [&](const std::map<std::string, int64_t>& at) { return pool_fields(node, at); });
}

std::string unsupported_maxpool(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  if (node.ints("kernel_shape").size() != 2) return "compiled kiln.MaxPoolNchwc pools over 2-D windows";
  if (has_symbols(node) && !symbolic_pool_fields(node)) return "its geometry is not a polynomial of the symbolic dims";
  return "";
}

void emit_maxpool(EmitContext& ctx, const ir::Node& node) {
  std::string fields;
  if (has_symbols(node)) {
    std::optional<std::vector<ir::Dim>> f = symbolic_pool_fields(node);
    if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
    fields = ctx.dim_list(*f);
  } else {
    fields = fmt::format("{}", fmt::join(pool_fields(node, {}), ", "));
  }
  ctx.line(fmt::format("const kiln::rt::Pool2dParams p{{{}}};", fields));
  ctx.line(fmt::format("kiln::rt::maxpool_nchwc_f32(p, {}, {}, pool);", ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_blocked_emitters(EmitterRegistry& r) {
  r.add("kiln.ToNchwc", Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) { emit_reorder(ctx, node, true); },
                                .unsupported = require_f32,
                                .dynamic_shapes = true,
                                .batch_items = every_item});
  r.add("kiln.FromNchwc",
        Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) { emit_reorder(ctx, node, false); },
                .unsupported = require_f32,
                .dynamic_shapes = true,
                .batch_items = every_item});
  r.add("kiln.ConvNchwc", Emitter{.emit = emit_conv,
                                  .unsupported = unsupported_conv,
                                  .dynamic_shapes = true,
                                  .packs_input = packs_weights,
                                  .batch_items = every_item});
  r.add("kiln.DepthwiseConvNchwc",
        Emitter{.emit = emit_depthwise, .unsupported = unsupported_depthwise, .batch_items = every_item});
  r.add("kiln.MaxPoolNchwc", Emitter{.emit = emit_maxpool,
                                     .unsupported = unsupported_maxpool,
                                     .dynamic_shapes = true,
                                     .batch_items = every_item});
}

}  // namespace kiln::codegen::cpp
