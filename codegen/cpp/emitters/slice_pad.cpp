// Copying ops whose geometry the IR works out (ir/ops/slice_pad.h): Slice, Split, Expand,
// Tile, DepthToSpace and SpaceToDepth as strided copies; Pad and CenterCropPad through per-dim
// index tables.
// Every dtype. Inputs that decide the output's shape must be known at compile time.
#include <functional>

#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/symbolic_params.h"
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

// A view's dims, strides and offset as one list (lift_params fits each).
std::vector<int64_t> view_fields(const ir::StridedView& v) {
  std::vector<int64_t> f = v.dims;
  f.insert(f.end(), v.strides.begin(), v.strides.end());
  f.push_back(v.offset);
  return f;
}

using ViewAt = std::function<ir::StridedView(const std::map<std::string, int64_t>& at)>;

// The view's fields as polynomials of the node's symbols, or nullopt when one is not.
std::optional<std::vector<ir::Dim>> symbolic_view(const ir::Node& node, const ir::DimRanges& ranges, const ViewAt& view) {
  return ir::lift_params(ir::node_symbols(node), ranges,
                     [&](const std::map<std::string, int64_t>& at) { return view_fields(view(at)); });
}

// A view of input 0 copied to output `out`: numbers when the shapes are static, else the
// view's geometry as expressions of the symbolic dims (--dim NAME=MIN..MAX).
void emit_view_at(EmitContext& ctx, const ir::Node& node, const ViewAt& view, size_t out) {
  if (node.input(0)->shape().is_static() && node.output(out)->shape().is_static()) {
    emit_view(ctx, node, view({}), out);
    return;
  }
  std::optional<std::vector<ir::Dim>> f = symbolic_view(node, ctx.dim_ranges(), view);
  if (!f) fail("{}: its geometry is not a polynomial of the symbolic dims", node.describe());
  const size_t rank = (f->size() - 1) / 2;
  const std::vector<ir::Dim> dims(f->begin(), f->begin() + static_cast<std::ptrdiff_t>(rank)),
      strides(f->begin() + static_cast<std::ptrdiff_t>(rank), f->end() - 1);
  const std::string d = ctx.dims(dims), s = ctx.dims(strides);
  ctx.line(fmt::format("kiln::rt::strided_copy_bytes({}, {}, {}, {}, {}, {}, {});", elem_size(node.input(0)), rank, d,
                       ctx.in(node, 0), s, ctx.dim(f->back()), ctx.out(node, out)));
}

// "" when the view's geometry lifts to polynomials of the symbolic dims (or needs none).
std::string unsupported_view(const ir::Node& node, const ViewAt& view, const char* why) {
  bool is_static = node.input(0)->shape().is_static();
  for (const ir::Value* v : node.outputs()) is_static = is_static && v->shape().is_static();
  if (is_static || symbolic_view(node, ranges_of(node), view)) return "";
  return fmt::format("its geometry is not a polynomial of the symbolic dims ({})", why);
}

ViewAt slice_at(const ir::Node& node) {
  return [&node](const std::map<std::string, int64_t>& at) { return *ir::slice_view(node, ir::bound_dims(node.input(0), at)); };
}

void emit_slice(EmitContext& ctx, const ir::Node& node) { emit_view_at(ctx, node, slice_at(node), 0); }

std::string unsupported_slice(const ir::Node& node) {
  if (std::string r = need_constants(node, {1, 2, 3, 4}); !r.empty()) return r;
  return unsupported_view(node, slice_at(node), "a slice whose bounds clamp on one");
}

// Output `k` of a Split: the input's contiguous layout, the axis cut to the part's length.
ViewAt split_at(const ir::Node& node, size_t k) {
  return [&node, k](const std::map<std::string, int64_t>& at) {
    std::vector<int64_t> x = ir::bound_dims(node.input(0), at);
    const int64_t axis = ir::split_axis(node, static_cast<int64_t>(x.size()));
    std::vector<int64_t> sizes = *ir::split_sizes(node, x[static_cast<size_t>(axis)]);
    ir::StridedView v{x, ir::contiguous_strides(x), 0};
    for (size_t j = 0; j < k; ++j) v.offset += sizes[j] * v.strides[static_cast<size_t>(axis)];
    v.dims[static_cast<size_t>(axis)] = sizes[k];
    return v;
  };
}

void emit_split(EmitContext& ctx, const ir::Node& node) {
  for (size_t k = 0; k < node.num_outputs(); ++k) emit_view_at(ctx, node, split_at(node, k), k);
}

std::string unsupported_split(const ir::Node& node) {
  if (std::string r = need_constants(node, {1}); !r.empty()) return r;
  for (size_t k = 0; k < node.num_outputs(); ++k)
    if (std::string r = unsupported_view(node, split_at(node, k), "parts whose lengths depend on one"); !r.empty()) return r;
  return "";
}

// Expand reads its output's shape, which the IR knows (symbolically, where a computed shape
// holds symbolic dims), so its shape input need not be a constant.
ViewAt expand_at(const ir::Node& node) {
  return [&node](const std::map<std::string, int64_t>& at) {
    return ir::expand_view(ir::bound_dims(node.input(0), at), ir::bound_dims(node.output(0), at));
  };
}

void emit_expand(EmitContext& ctx, const ir::Node& node) { emit_view_at(ctx, node, expand_at(node), 0); }

std::string unsupported_expand(const ir::Node& node) {
  // An output of unknown extents: the shape input must be known (the conformance runner
  // answers this message by making it a constant).
  const ir::Value* y = node.output(0);
  bool known = y->has_type();
  for (size_t k = 0; known && k < y->shape().rank(); ++k) known = !y->shape()[k].is_unknown();
  if (!known) return need_constants(node, {1});
  return unsupported_view(node, expand_at(node), "a broadcast that depends on one");
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
  r.add("Split", Emitter{.emit = emit_split, .unsupported = unsupported_split, .dynamic_shapes = true});
  // Pad runs item by item when the batch is its only symbolic dim: its pads on that axis are
  // then zero (else the output's batch would be another dim than the input's).
  r.add("Pad", Emitter{.emit = emit_pad,
                       .unsupported = [](const ir::Node& n) { return need_constants(n, {1, 3}); },
                       .batch_items = every_item});
  r.add("CenterCropPad", Emitter{.emit = emit_center_crop_pad, .unsupported = [](const ir::Node& n) {
                                    return need_constants(n, {1});
                                  }});
  r.add("Expand", Emitter{.emit = emit_expand, .unsupported = unsupported_expand, .dynamic_shapes = true});
  r.add("Tile", Emitter{.emit = emit_tile,
                        .unsupported = [](const ir::Node& n) { return need_constants(n, {1}); }});
  r.add("DepthToSpace", Emitter{.emit = emit_depth_space, .batch_items = every_item});
  r.add("SpaceToDepth", Emitter{.emit = emit_depth_space, .batch_items = every_item});
}

}  // namespace kiln::codegen::cpp
