// Data movement: views that share their input's memory (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity), and Transpose, Concat and Gather through the runtime's byte-level
// kernels, for every dtype.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

size_t elem_size(const ir::Value* v) { return ir::dtype_size(v->dtype()); }

void emit_transpose(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  std::vector<int64_t> perm;
  if (node.has_attr("perm")) {
    perm = node.ints("perm");
    for (int64_t& p : perm) p = *ir::normalize_axis(p, static_cast<int64_t>(x.size()));
  } else {
    for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (x.empty()) {
    x = {1};
    perm = {0};
  }
  ctx.line(fmt::format("kiln::rt::transpose_bytes({}, {}, {}, {}, {}, {});", elem_size(node.input(0)),
                       x.size(), ctx.array(x), ctx.array(perm), ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_concat(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> y = dims_of(node.output(0));
  int64_t axis = *ir::normalize_axis(node.i("axis"), static_cast<int64_t>(y.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= y[i];
  for (size_t i = axis + 1; i < y.size(); ++i) inner *= y[i];
  std::vector<int64_t> sizes;
  std::string ptrs;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    sizes.push_back(dims_of(node.input(i))[axis] * inner);
    ptrs += (i ? ", " : "") + ctx.in(node, i);
  }
  ctx.line(fmt::format("const void* const parts[] = {{{}}};", ptrs));
  ctx.line(fmt::format("kiln::rt::concat_bytes({}, {}, {}, parts, {}, {});", elem_size(node.output(0)),
                       outer, node.num_inputs(), ctx.array(sizes), ctx.out(node, 0)));
}

struct GatherGeometry {
  int64_t outer = 1, axis_len = 0, inner = 1, n = 0;
};

GatherGeometry gather_geometry(const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t axis = *ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.size()));
  GatherGeometry g;
  for (int64_t i = 0; i < axis; ++i) g.outer *= x[i];
  for (size_t i = axis + 1; i < x.size(); ++i) g.inner *= x[i];
  g.axis_len = x[axis];
  g.n = numel_of(node.input(1));
  return g;
}

size_t gather_scratch(const ir::Node& node, const EmitOptions&) {
  return node.input(1)->is_constant() ? 0 : static_cast<size_t>(gather_geometry(node).n) * 8;
}

void emit_gather(EmitContext& ctx, const ir::Node& node) {
  GatherGeometry g = gather_geometry(node);
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
    ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", g.n));
    ctx.line(fmt::format("  int64_t v = static_cast<int64_t>(raw[i]); if (v < 0) v += {};", g.axis_len));
    ctx.line(fmt::format("  if (v < 0 || v >= {}) {}", g.axis_len,
                         ctx.fail_stmt(node, fmt::format("index out of range for axis of size {}", g.axis_len))));
    ctx.line("  idx[i] = v;");
    ctx.line("}");
  }
  ctx.line(fmt::format("kiln::rt::gather_bytes({}, {}, {}, {}, {}, {}, {}, {});",
                       elem_size(node.input(0)), g.outer, g.axis_len, g.inner, ctx.in(node, 0),
                       indices, g.n, ctx.out(node, 0)));
}

}  // namespace

void register_shape_emitters(EmitterRegistry& r) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"})
    r.add(op, Emitter{.alias_input = 0, .dynamic_shapes = true});
  r.add("Transpose", Emitter{.emit = emit_transpose});
  r.add("Concat", Emitter{.emit = emit_concat});
  r.add("Gather", Emitter{.emit = emit_gather, .scratch_bytes = gather_scratch});
}

}  // namespace kiln::codegen::cpp
