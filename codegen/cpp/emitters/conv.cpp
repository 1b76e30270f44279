// Conv (1-D and 2-D, f32) through the runtime's conv2d kernels (emitter_util's emit_conv2d,
// shared with kiln.FusedConv); 1-D runs as H = 1. ConvTranspose (N-D, f32) through
// conv_transpose_f32 (GEMM + col2im), Col2Im through col2im, DeformConv (2-D, f32).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/conv.h"
#include "ir/symbolic_params.h"
#include "kiln/rt/conv_transpose.h"

namespace kiln::codegen::cpp {

namespace {

// ConvTranspose: the IR's geometry as the runtime's parameters (pointing into `g` and `in`),
// the symbolic dims bound to `at`.
kiln::rt::ConvTransposeParams transpose_params(const ir::Node& node, ir::ConvTransposeGeometry& g,
                                               std::vector<int64_t>& in, const std::map<std::string, int64_t>& at = {}) {
  std::vector<int64_t> x = ir::bound_dims(node.input(0), at);
  g = ir::conv_transpose_geometry(node, x, ir::bound_dims(node.input(1), at));
  in.assign(x.begin() + 2, x.end());
  return kiln::rt::ConvTransposeParams{x[0],          x[1],         g.out_channels, g.group,
                                       static_cast<int64_t>(in.size()), in.data(), g.out.data(),
                                       g.kernel.data(), g.strides.data(), g.dilations.data(),
                                       g.pads_begin.data()};
}

// N, C, M, group, then the input and output extents: what depends on the symbolic dims.
std::vector<int64_t> transpose_fields(const ir::Node& node, const std::map<std::string, int64_t>& at) {
  ir::ConvTransposeGeometry g;
  std::vector<int64_t> in;
  const kiln::rt::ConvTransposeParams p = transpose_params(node, g, in, at);
  std::vector<int64_t> f = {p.N, p.C, p.M, p.group};
  f.insert(f.end(), in.begin(), in.end());
  f.insert(f.end(), g.out.begin(), g.out.end());
  return f;
}

std::optional<std::vector<ir::Dim>> symbolic_transpose_fields(const ir::Node& node) {
  return ir::lift_params(ir::node_symbols(node), ranges_of(node),
                         [&](const std::map<std::string, int64_t>& at) { return transpose_fields(node, at); });
}

size_t transpose_scratch_bytes(const ir::Node& node, const EmitOptions&) {
  return max_over_range(node, [&](const std::map<std::string, int64_t>& at) {
    ir::ConvTransposeGeometry g;
    std::vector<int64_t> in;
    return kiln::rt::conv_transpose_scratch_floats(transpose_params(node, g, in, at)) * sizeof(float);
  });
}

std::string unsupported_transpose(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  if (has_symbols(node) && !symbolic_transpose_fields(node))
    return "its geometry is not a polynomial of the symbolic dims";
  return "";
}

void emit_transpose(EmitContext& ctx, const ir::Node& node) {
  ir::ConvTransposeGeometry g;
  std::vector<int64_t> in;
  kiln::rt::ConvTransposeParams p = transpose_params(node, g, in, tuning_point(node));
  std::string head = fmt::format("{}, {}, {}, {}", p.N, p.C, p.M, p.group), in_dims = ctx.array(in),
              out_dims = ctx.array(g.out);
  if (has_symbols(node)) {
    std::optional<std::vector<ir::Dim>> f = symbolic_transpose_fields(node);
    if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
    const size_t n = in.size();
    head = ctx.dim_list({f->begin(), f->begin() + 4});
    in_dims = ctx.dims({f->begin() + 4, f->begin() + 4 + static_cast<std::ptrdiff_t>(n)});
    out_dims = ctx.dims({f->begin() + 4 + static_cast<std::ptrdiff_t>(n), f->end()});
  }
  ctx.line(fmt::format("const kiln::rt::ConvTransposeParams p{{{}, {}, {}, {}, {}, {}, {}, {}}};", head, p.rank, in_dims,
                       out_dims, ctx.array(g.kernel), ctx.array(g.strides), ctx.array(g.dilations),
                       ctx.array(g.pads_begin)));
  ctx.line(fmt::format("kiln::rt::conv_transpose_f32(p, {}, {}, {}, {}, reinterpret_cast<float*>{}, pool);",
                       ctx.in(node, 0), ctx.in(node, 1), node.has_input(2) ? ctx.in(node, 2) : "nullptr",
                       ctx.out(node, 0),
                       transpose_scratch_bytes(node, ctx.options()) > 0 ? ctx.scratch(node) : "(nullptr)"));
}

std::vector<int64_t> constant_ints(const ir::Node& node, size_t i) {
  const ir::Tensor& t = node.input(i)->constant();
  std::vector<int64_t> v;
  for (int64_t k = 0; k < t.numel(); ++k) v.push_back(static_cast<int64_t>(t.as_double(k)));
  return v;
}

std::string col2im_unsupported(const ir::Node& node) {
  for (size_t i : {size_t{1}, size_t{2}})
    if (!node.input(i)->is_constant())
      return fmt::format("input '{}' decides the output's shape and must be known at compile time",
                         node.input(i)->name());
  const ir::DType t = node.input(0)->dtype();
  if (t != ir::DType::F32 && t != ir::DType::F64)
    return fmt::format("compiled Col2Im supports f32 and f64, not {}", ir::dtype_name(t));
  return "";
}

void emit_col2im(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  ir::Col2ImGeometry g = ir::col2im_geometry(node, x, constant_ints(node, 1), constant_ints(node, 2));
  ctx.line(fmt::format("const kiln::rt::ConvTransposeParams p{{{}, {}, {}, 1, {}, {}, {}, {}, {}, {}, {}}};", x[0],
                       g.channels, g.channels, g.image.size(), ctx.array(g.blocks), ctx.array(g.image),
                       ctx.array(g.block), ctx.array(g.strides), ctx.array(g.dilations), ctx.array(g.pads_begin)));
  ctx.line(fmt::format("kiln::rt::col2im<{}>(p, {}, {});", cpp_type(node.input(0)->dtype()), ctx.in(node, 0),
                       ctx.out(node, 0)));
}

void emit_deform_conv(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> mask;
  if (node.has_input(4)) mask = dims_of(node.input(4));
  const kiln::rt::DeformConvParams p =
      ir::deform_conv_params(node, dims_of(node.input(0)), dims_of(node.input(1)), dims_of(node.input(2)),
                             node.has_input(4) ? &mask : nullptr);
  ctx.line(fmt::format("const kiln::rt::DeformConvParams p{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, "
                       "{}, {}, {}}};",
                       p.N, p.C, p.H, p.W, p.M, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top,
                       p.pad_left, p.dil_h, p.dil_w, p.group, p.offset_group));
  ctx.line(fmt::format("kiln::rt::deform_conv2d<float, float>(p, {}, {}, {}, {}, {}, {});", ctx.in(node, 0),
                       ctx.in(node, 1), ctx.in(node, 2), ctx.in(node, 3), ctx.in(node, 4), ctx.out(node, 0)));
}

}  // namespace

void register_conv_emitters(EmitterRegistry& r) {
  r.add("Conv", Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) {
                          emit_conv2d(ctx, node, "kiln::rt::Epilogue{}");
                        },
                        .unsupported = unsupported_conv2d,
                        .scratch_bytes = conv2d_scratch_bytes,
                        .dynamic_shapes = true,
                        .packs_input = conv2d_packs_weights,
                        .batch_items = every_item});
  r.add("ConvTranspose", Emitter{.emit = emit_transpose,
                                 .unsupported = unsupported_transpose,
                                 .scratch_bytes = transpose_scratch_bytes,
                                 .dynamic_shapes = true,
                                 .batch_items = every_item});
  r.add("Col2Im", Emitter{.emit = emit_col2im, .unsupported = col2im_unsupported});
  r.add("DeformConv", Emitter{.emit = emit_deform_conv, .unsupported = require_f32});
}

}  // namespace kiln::codegen::cpp
