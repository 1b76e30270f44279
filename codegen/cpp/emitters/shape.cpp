// Data movement: views that share their input's memory (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity), and Transpose, Concat and Gather through the runtime's byte-level
// kernels, for every dtype.
#include <algorithm>

#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

size_t elem_size(const ir::Value* v) { return ir::dtype_size(v->dtype()); }

void emit_transpose(EmitContext& ctx, const ir::Node& node) {
  std::vector<ir::Dim> x = node.input(0)->shape().dims();
  std::vector<int64_t> perm;
  if (node.has_attr("perm")) {
    perm = node.ints("perm");
    for (int64_t& p : perm) p = *ir::normalize_axis(p, static_cast<int64_t>(x.size()));
  } else {
    for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (x.empty()) {
    x = {ir::Dim(1)};
    perm = {0};
  }
  ctx.line(fmt::format("kiln::rt::transpose_bytes({}, {}, {}, {}, {}, {});", elem_size(node.input(0)),
                       x.size(), ctx.dims(x), ctx.array(perm), ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_concat(EmitContext& ctx, const ir::Node& node) {
  const ir::Shape& y = node.output(0)->shape();
  const size_t axis = static_cast<size_t>(*ir::normalize_axis(node.i("axis"), static_cast<int64_t>(y.rank())));
  const ir::Dim inner = dims_product(y, axis + 1, y.rank());
  std::vector<ir::Dim> sizes;
  std::string ptrs;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    sizes.push_back(node.input(i)->shape()[axis] * inner);
    ptrs += (i ? ", " : "") + ctx.in(node, i);
  }
  ctx.line(fmt::format("const void* const parts[] = {{{}}};", ptrs));
  const std::string sizes_name = ctx.dims(sizes);
  ctx.line(fmt::format("kiln::rt::concat_bytes({}, {}, {}, parts, {}, {});", elem_size(node.output(0)),
                       ctx.dim(dims_product(y, 0, axis)), node.num_inputs(), sizes_name, ctx.out(node, 0)));
}

// Extents as dims: the indices' count may be symbolic (token ids of a bounded length); the
// gathered axis is a number.
struct GatherGeometry {
  ir::Dim outer = 1, inner = 1, n = 0;
  int64_t axis_len = 0;
};

GatherGeometry gather_geometry(const ir::Node& node) {
  const ir::Shape& x = node.input(0)->shape();
  const size_t axis = static_cast<size_t>(*ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.rank())));
  GatherGeometry g;
  g.outer = dims_product(x, 0, axis);
  g.inner = dims_product(x, axis + 1, x.rank());
  if (!x[axis].is_static()) fail("{}: the gathered axis must be a number, got {}", node.describe(), x.str());
  g.axis_len = x[axis].value();
  g.n = node.input(1)->shape().product();
  return g;
}

std::string unsupported_gather(const ir::Node& node) {
  try {
    gather_geometry(node);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

size_t gather_scratch(const ir::Node& node, const EmitOptions&) {
  if (node.input(1)->is_constant()) return 0;
  const ir::Graph* g = node.input(1)->graph();
  return static_cast<size_t>(node.input(1)->shape().max_numel(g ? g->dim_ranges() : ir::DimRanges{}).value_or(0)) * 8;
}

void emit_gather(EmitContext& ctx, const ir::Node& node) {
  GatherGeometry g = gather_geometry(node);
  const std::string n = ctx.dim(g.n);
  std::string indices;
  if (node.input(1)->is_constant()) {
    // Known indices are normalized and checked now, once.
    std::vector<int64_t> idx = node.input(1)->constant().to_int64_vector();
    for (int64_t& i : idx) {
      if (i < -g.axis_len || i >= g.axis_len)
        fail("{}: index {} is out of range for axis of size {}", node.describe(), i, g.axis_len);
      if (i < 0) i += g.axis_len;
    }
    indices = ctx.array(idx);
  } else {
    indices = "idx";
    ctx.line(fmt::format("int64_t* idx = reinterpret_cast<int64_t*>{};", ctx.scratch(node)));
    ctx.line(fmt::format("const auto* raw = {};", ctx.in(node, 1)));
    ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", n));
    ctx.line(fmt::format("  int64_t v = static_cast<int64_t>(raw[i]); if (v < 0) v += {};", g.axis_len));
    ctx.line(fmt::format("  if (v < 0 || v >= {}) {}", g.axis_len,
                         ctx.fail_stmt(node, fmt::format("index out of range for axis of size {}", g.axis_len))));
    ctx.line("  idx[i] = v;");
    ctx.line("}");
  }
  ctx.line(fmt::format("kiln::rt::gather_bytes({}, {}, {}, {}, {}, {}, {}, {});", elem_size(node.input(0)),
                       ctx.dim(g.outer), g.axis_len, ctx.dim(g.inner), ctx.in(node, 0), indices, n,
                       ctx.out(node, 0)));
}

// Shape: the extents of this run (symbolic where --dim NAME=MIN..MAX left a dim open; a
// static Shape folds at compile time).
void emit_shape(EmitContext& ctx, const ir::Node& node) {
  const ir::Shape& s = node.input(0)->shape();
  const int64_t rank = static_cast<int64_t>(s.rank());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(node.i("start")), end = node.has_attr("end") ? clamp(node.i("end")) : rank;
  for (int64_t i = start; i < end; ++i)
    ctx.line(fmt::format("{}[{}] = {};", ctx.out(node, 0), i - start, ctx.dim(s[static_cast<size_t>(i)])));
}

}  // namespace

void register_shape_emitters(EmitterRegistry& r) {
  r.add("Shape", Emitter{.emit = emit_shape, .dynamic_shapes = true});
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"})
    r.add(op, Emitter{.alias_input = 0, .dynamic_shapes = true});
  r.add("Transpose", Emitter{.emit = emit_transpose, .dynamic_shapes = true});
  r.add("Concat", Emitter{.emit = emit_concat, .dynamic_shapes = true});
  r.add("Gather", Emitter{.emit = emit_gather,
                          .unsupported = unsupported_gather,
                          .scratch_bytes = gather_scratch,
                          .dynamic_shapes = true});
}

}  // namespace kiln::codegen::cpp
