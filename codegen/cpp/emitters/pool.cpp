// MaxPool and AveragePool (1-D and 2-D f32, and MaxPool on u8/s8, through the fast 2-D
// kernels; other ranks and dtypes, and MaxPool's Indices, through pool_nd), LpPool (pool_nd), GlobalAveragePool (f32),
// GlobalMaxPool (any ordered dtype).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/emitters/pool.h"
#include "ir/ops/pool.h"
#include "ir/ops/window.h"
#include "ir/symbolic_params.h"
#include "kiln/rt/pool.h"

namespace kiln::codegen::cpp {

namespace {

kiln::rt::Pool2dParams pool_params_at(const ir::Node& node, const std::map<std::string, int64_t>& at) {
  std::vector<int64_t> x = ir::bound_dims(node.input(0), at);
  Window2d win = window_2d(node, {x.begin() + 2, x.end()}, node.ints("kernel_shape"));
  kiln::rt::Pool2dParams p{x[0],         x[1],         win.H,        win.W,       win.KH,
                           win.KW,       win.OH,       win.OW,       win.stride_h, win.stride_w,
                           win.pad_top,  win.pad_left, win.dil_h,    win.dil_w};
  p.pad_bottom = win.pad_bottom;
  p.pad_right = win.pad_right;
  return p;
}

std::vector<int64_t> pool_fields(const kiln::rt::Pool2dParams& p) {
  return {p.N,        p.C,        p.H,       p.W,        p.KH,    p.KW,    p.OH,         p.OW,
          p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.dil_h, p.dil_w, p.pad_bottom, p.pad_right};
}

// With symbolic dims: the fields as polynomials of the node's symbols (symbolic_params.h).
std::optional<std::vector<ir::Dim>> symbolic_pool_fields(const ir::Node& node) {
  return ir::lift_params(ir::node_symbols(node), ranges_of(node), [&](const std::map<std::string, int64_t>& at) {
    return pool_fields(pool_params_at(node, at));
  });
}

// "const kiln::rt::Pool2dParams p{...};": numbers, or expressions of the symbolic dims.
std::string params_decl(EmitContext& ctx, const ir::Node& node) {
  if (!has_symbols(node)) return fmt::format("const kiln::rt::Pool2dParams p{{{}}};", fmt::join(pool_fields(pool_params_at(node, {})), ", "));
  std::optional<std::vector<ir::Dim>> f = symbolic_pool_fields(node);
  if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
  return fmt::format("const kiln::rt::Pool2dParams p{{{}}};", ctx.dim_list(*f));
}

// Whether the fast 2-D kernels (pool.h) take the node's shape and outputs.
bool fast_2d_shape(const ir::Node& node) {
  const size_t rank = node.input(0)->shape().rank();
  return (rank == 3 || rank == 4) && !(node.num_outputs() > 1 && node.output(1));
}

// Whether the fast 2-D f32 kernels (pool.h) run the node.
bool fast_2d(const ir::Node& node) { return node.input(0)->dtype() == ir::DType::F32 && fast_2d_shape(node); }

}  // namespace

std::optional<std::vector<int64_t>> pool2d_fields(const ir::Node& node) {
  if (!fast_2d(node)) return std::nullopt;
  return pool_fields(pool_params_at(node, {}));
}

namespace {

std::string unsupported_window(const ir::Node& node) {
  const ir::DType t = node.input(0)->dtype();
  if (has_symbols(node) && !(fast_2d_shape(node) && (fast_2d(node) || (node.op() == "MaxPool" && ir::dtype_size(t) == 1))))
    return "with symbolic dims, only the 2-D kernels (f32, and MaxPool of u8/s8) are compiled";
  if (has_symbols(node) && !symbolic_pool_fields(node))
    return "its geometry is not a polynomial of the symbolic dims (give the spatial dims a step that its strides divide)";
  if (node.op() != "MaxPool" && !ir::is_float(t))
    return fmt::format("compiled {} supports floating types, not {}", node.op(), ir::dtype_name(t));
  if (t == ir::DType::Bool) return "compiled MaxPool does not support bool";
  return "";
}

// pool_nd: any rank and dtype, MaxPool's Indices, LpPool.
void emit_pool_nd(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const std::vector<int64_t> in(x.begin() + 2, x.end());
  const ir::ResolvedWindow w = ir::resolve_window(node, in, node.ints("kernel_shape"));
  ctx.line(fmt::format("const kiln::rt::PoolNdParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};", x[0], x[1],
                       in.size(), ctx.array(in), ctx.array(w.out_dims), ctx.array(w.kernel), ctx.array(w.strides),
                       ctx.array(w.dilations), ctx.array(w.pads_begin), ctx.array(w.pads_end)));
  std::string kind = "Max", lp = "0.0";
  if (node.op() == "AveragePool") kind = node.i("count_include_pad") ? "AverageIncludePad" : "Average";
  if (node.op() == "LpPool") {
    kind = "Lp";
    lp = fmt::format("{}.0", node.i("p"));
  }
  const bool indices = node.op() == "MaxPool" && node.num_outputs() > 1 && node.output(1);
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::pool_nd<{}, {}>(p, kiln::rt::PoolKind::{}, {}, {}, {}, {}, {});", cpp_type(t),
                       cpp_compute_type(t), kind, lp, ctx.in(node, 0), ctx.out(node, 0),
                       indices ? ctx.out(node, 1) : "nullptr",
                       node.op() == "MaxPool" && node.i("storage_order") == 1 ? "true" : "false"));
}

void emit_maxpool(EmitContext& ctx, const ir::Node& node) {
  const ir::DType t = node.input(0)->dtype();
  const bool byte = t == ir::DType::U8 || t == ir::DType::I8;  // quantized models' MaxPool
  if (!fast_2d(node) && !(byte && fast_2d_shape(node))) return emit_pool_nd(ctx, node);
  ctx.line(params_decl(ctx, node));
  ctx.line(fmt::format("kiln::rt::maxpool2d_{}(p, {}, {}, pool);",
                       t == ir::DType::U8 ? "u8" : (t == ir::DType::I8 ? "s8" : "f32"), ctx.in(node, 0),
                       ctx.out(node, 0)));
}

void emit_avgpool(EmitContext& ctx, const ir::Node& node) {
  if (!fast_2d(node)) return emit_pool_nd(ctx, node);
  ctx.line(params_decl(ctx, node));
  ctx.line(fmt::format("kiln::rt::avgpool2d_f32(p, {}, {}, {}, pool);",
                       node.i("count_include_pad") ? "true" : "false", ctx.in(node, 0),
                       ctx.out(node, 0)));
}

// N * C and the spatial size: numbers, or expressions of the symbolic dims.
std::pair<std::string, std::string> nc_and_spatial(const EmitContext& ctx, const ir::Node& node) {
  const ir::Shape& x = node.input(0)->shape();
  return {ctx.dim(dims_product(x, 0, 2)), ctx.dim(dims_product(x, 2, x.rank()))};
}

void emit_global_avg(EmitContext& ctx, const ir::Node& node) {
  auto [nc, spatial] = nc_and_spatial(ctx, node);
  ctx.line(fmt::format("kiln::rt::global_avgpool_f32({}, {}, {}, {}, pool);", nc, spatial,
                       ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_global_max(EmitContext& ctx, const ir::Node& node) {
  auto [nc, spatial] = nc_and_spatial(ctx, node);
  ctx.line(fmt::format("kiln::rt::global_maxpool({}, {}, {}, {});", nc, spatial, ctx.in(node, 0),
                       ctx.out(node, 0)));
}

std::string max_unpool_unsupported(const ir::Node& node) {
  if (node.has_input(2) && !node.input(2)->is_constant())
    return fmt::format("input '{}' (output_shape) must be known at compile time", node.input(2)->name());
  if (node.input(0)->dtype() == ir::DType::Bool) return "compiled MaxUnpool does not support bool";
  return "";
}

void emit_max_unpool(EmitContext& ctx, const ir::Node& node) {
  const std::vector<int64_t> unpooled = ir::max_unpool_dims(node, dims_of(node.input(0)));
  ctx.line(fmt::format("if (!kiln::rt::max_unpool<{}>({}, {}, {}, {}, {}, {}, {})) {}",
                       cpp_type(node.input(0)->dtype()), unpooled.size(), ctx.array(unpooled),
                       ctx.array(dims_of(node.output(0))), numel_of(node.input(0)), ctx.in(node, 0), ctx.in(node, 1),
                       ctx.out(node, 0), ctx.fail_stmt(node, "an index in I is out of range")));
}

}  // namespace

void register_pool_emitters(EmitterRegistry& r) {
  // MaxPool's Indices count across the batch: only its one-output form runs item by item.
  r.add("MaxPool", Emitter{.emit = emit_maxpool, .unsupported = unsupported_window, .dynamic_shapes = true, .batch_items = [](const ir::Node& n) {
                             return n.num_outputs() == 1;
                           }});
  r.add("AveragePool", Emitter{.emit = emit_avgpool, .unsupported = unsupported_window, .dynamic_shapes = true, .batch_items = every_item});
  r.add("LpPool", Emitter{.emit = emit_pool_nd, .unsupported = unsupported_window, .batch_items = every_item});
  r.add("MaxUnpool", Emitter{.emit = emit_max_unpool, .unsupported = max_unpool_unsupported});
  r.add("GlobalAveragePool", Emitter{.emit = emit_global_avg, .unsupported = require_f32, .dynamic_shapes = true, .batch_items = every_item});
  r.add("GlobalMaxPool", Emitter{.emit = emit_global_max, .dynamic_shapes = true, .batch_items = every_item});
}

}  // namespace kiln::codegen::cpp
