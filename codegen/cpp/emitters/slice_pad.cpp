// Copying ops whose geometry the IR works out (ir/ops/slice_pad.h): Slice, Split, Expand,
// Tile, DepthToSpace and SpaceToDepth as strided copies; Pad and CenterCropPad through per-dim
// index tables.
// Every dtype. Inputs that decide the output's shape must be known at compile time.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/symbolic_params.h"
#include "ir/ops/slice_pad.h"

namespace kiln::codegen::cpp {

namespace {

size_t elem_size(const ir::Value* v) { return ir::dtype_size(v->dtype()); }

// Why the node's shape inputs (those listed) keep it from compiling, or "".
std::string need_constants(const ir::Node& node, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (node.has_input(i) && !node.input(i)->is_constant())
      return fmt::format("input '{}' decides the output's shape and must be known at compile time",
                         node.input(i)->name());
  return "";
}

void emit_view(EmitContext& ctx, const ir::Node& node, const ir::StridedView& v, size_t out) {
  ctx.line(fmt::format("kiln::rt::strided_copy_bytes({}, {}, {}, {}, {}, {}, {});",
                       elem_size(node.input(0)), v.dims.size(), ctx.array(v.dims), ctx.in(node, 0),
                       ctx.array(v.strides), v.offset, ctx.out(node, out)));
}

// The view's dims, strides and offset with the input's symbols bound to `at`.
std::vector<int64_t> slice_view_fields(const ir::Node& node, const std::map<std::string, int64_t>& at) {
  const ir::StridedView v = *ir::slice_view(node, bound_dims(node.input(0), at));
  std::vector<int64_t> f = v.dims;
  f.insert(f.end(), v.strides.begin(), v.strides.end());
  f.push_back(v.offset);
  return f;
}

std::optional<std::vector<ir::Dim>> symbolic_slice(const ir::Node& node, const ir::DimRanges& ranges) {
  return lift_params(node_symbols(node), ranges,
                     [&](const std::map<std::string, int64_t>& at) { return slice_view_fields(node, at); });
}

void emit_slice(EmitContext& ctx, const ir::Node& node) {
  if (node.input(0)->shape().is_static()) {
    emit_view(ctx, node, *ir::slice_view(node, dims_of(node.input(0))), 0);
    return;
  }
  // Symbolic dims (--dim NAME=MIN..MAX): the view's geometry as expressions of them.
  std::optional<std::vector<ir::Dim>> f = symbolic_slice(node, ctx.dim_ranges());
  if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
  const size_t rank = (f->size() - 1) / 2;
  const std::vector<ir::Dim> dims(f->begin(), f->begin() + static_cast<std::ptrdiff_t>(rank)),
      strides(f->begin() + static_cast<std::ptrdiff_t>(rank), f->end() - 1);
  const std::string d = ctx.dims(dims), s = ctx.dims(strides);
  ctx.line(fmt::format("kiln::rt::strided_copy_bytes({}, {}, {}, {}, {}, {}, {});", elem_size(node.input(0)), rank, d,
                       ctx.in(node, 0), s, ctx.dim(f->back()), ctx.out(node, 0)));
}

std::string unsupported_slice(const ir::Node& node) {
  if (std::string r = need_constants(node, {1, 2, 3, 4}); !r.empty()) return r;
  if (node.input(0)->shape().is_static()) return "";
  const ir::Graph* g = node.input(0)->graph();
  if (!symbolic_slice(node, g ? g->dim_ranges() : ir::DimRanges{}))
    return "its geometry is not a polynomial of the symbolic dims (a slice whose bounds clamp on one)";
  return "";
}

void emit_split(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t axis = ir::split_axis(node, static_cast<int64_t>(x.size()));
  std::vector<int64_t> sizes = *ir::split_sizes(node, x[axis]);
  ir::StridedView v{x, ir::contiguous_strides(x), 0};
  for (size_t k = 0; k < node.num_outputs(); ++k) {
    v.dims[axis] = sizes[k];
    emit_view(ctx, node, v, k);
    v.offset += sizes[k] * v.strides[axis];
  }
}

void emit_expand(EmitContext& ctx, const ir::Node& node) {
  emit_view(ctx, node, ir::expand_view(dims_of(node.input(0)), dims_of(node.output(0))), 0);
}

void emit_tile(EmitContext& ctx, const ir::Node& node) {
  emit_view(ctx, node,
            ir::tile_view(dims_of(node.input(0)), node.input(1)->constant().to_int64_vector()), 0);
}

void emit_depth_space(EmitContext& ctx, const ir::Node& node) {
  emit_view(ctx, node, ir::depth_space_view(node, dims_of(node.input(0))), 0);
}

// Pad and CenterCropPad: a copy through per-dim tables, `fill` (an expression) outside.
void emit_table_copy(EmitContext& ctx, const ir::Node& node, const std::vector<std::vector<int64_t>>& tables,
                     const std::string& fill) {
  std::vector<int64_t> dims, flat;
  for (const auto& t : tables) {
    dims.push_back(static_cast<int64_t>(t.size()));
    flat.insert(flat.end(), t.begin(), t.end());
  }
  if (fill == "zero") ctx.line("static const unsigned char zero[16] = {};");
  if (dims.empty()) {  // a scalar: nothing to pad
    ctx.line(fmt::format("std::memcpy({}, {}, {});", ctx.out(node, 0), ctx.in(node, 0),
                         elem_size(node.input(0))));
    return;
  }
  ctx.line(fmt::format("kiln::rt::table_copy_bytes({}, {}, {}, {}, {}, {}, {});",
                       elem_size(node.input(0)), dims.size(), ctx.array(dims), ctx.array(flat),
                       ctx.in(node, 0), fill, ctx.out(node, 0)));
}

void emit_pad(EmitContext& ctx, const ir::Node& node) {
  emit_table_copy(ctx, node, *ir::pad_tables(node, dims_of(node.input(0))),
                  node.has_input(2) ? ctx.in(node, 2) : "zero");
}

void emit_center_crop_pad(EmitContext& ctx, const ir::Node& node) {
  emit_table_copy(ctx, node, *ir::center_crop_pad_tables(node, dims_of(node.input(0))), "zero");
}

}  // namespace

void register_slice_pad_emitters(EmitterRegistry& r) {
  r.add("Slice", Emitter{.emit = emit_slice, .unsupported = unsupported_slice, .dynamic_shapes = true});
  r.add("Split", Emitter{.emit = emit_split,
                         .unsupported = [](const ir::Node& n) { return need_constants(n, {1}); }});
  r.add("Pad", Emitter{.emit = emit_pad,
                       .unsupported = [](const ir::Node& n) { return need_constants(n, {1, 3}); }});
  r.add("CenterCropPad", Emitter{.emit = emit_center_crop_pad, .unsupported = [](const ir::Node& n) {
                                    return need_constants(n, {1});
                                  }});
  r.add("Expand", Emitter{.emit = emit_expand,
                          .unsupported = [](const ir::Node& n) { return need_constants(n, {1}); }});
  r.add("Tile", Emitter{.emit = emit_tile,
                        .unsupported = [](const ir::Node& n) { return need_constants(n, {1}); }});
  r.add("DepthToSpace", Emitter{.emit = emit_depth_space});
  r.add("SpaceToDepth", Emitter{.emit = emit_depth_space});
}

}  // namespace kiln::codegen::cpp
