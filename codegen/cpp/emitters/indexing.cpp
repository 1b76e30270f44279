// Ops that read indices at run time: GatherElements, GatherND, ScatterElements, ScatterND,
// OneHot. Every index is bounds-checked by the kernel; a bad one fails the run naming the
// node. NonZero's and Unique's counts are known only when they run (data-dependent dims).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

size_t elem_size(const ir::Value* v) { return ir::dtype_size(v->dtype()); }

std::string fail_on_bad_index(EmitContext& ctx, const ir::Node& node) {
  return ctx.fail_stmt(node, "an index is out of range");
}

std::string scatter_kind(const ir::Node& node) {
  const std::string& r = node.s("reduction");
  std::string k = r == "none" ? "None" : r == "add" ? "Add" : r == "mul" ? "Mul" : r == "max" ? "Max" : "Min";
  return "kiln::rt::ScatterReduce::" + k;
}

void copy_data(EmitContext& ctx, const ir::Node& node) {
  ctx.line(fmt::format("std::memcpy({}, {}, {});", ctx.out(node, 0), ctx.in(node, 0),
                       numel_of(node.input(0)) * elem_size(node.input(0))));
}

void emit_gather_elements(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t axis = *ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.size()));
  ctx.line(fmt::format("if (!kiln::rt::gather_elements_bytes({}, {}, {}, {}, {}, {}, {}, {})) {}",
                       elem_size(node.input(0)), x.size(), ctx.array(dims_of(node.input(1))),
                       ctx.array(x), axis, ctx.in(node, 0), ctx.in(node, 1), ctx.out(node, 0),
                       fail_on_bad_index(ctx, node)));
}

void emit_scatter_elements(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t axis = *ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.size()));
  const ir::DType t = node.input(0)->dtype();
  copy_data(ctx, node);
  ctx.line(fmt::format(
      "if (!kiln::rt::scatter_elements<{}, {}, {}>({}, {}, {}, {}, {}, {}, {})) {}",
      scatter_kind(node), cpp_type(t), cpp_compute_type(t), x.size(),
      ctx.array(dims_of(node.input(1))), ctx.array(x), axis, ctx.in(node, 1), ctx.in(node, 2),
      ctx.out(node, 0), fail_on_bad_index(ctx, node)));
}

// GatherND/ScatterND geometry: batch, elements per batch of data, tuples per batch, tuple
// length, the dims a tuple indexes, elements per slice. Dims, so that symbolic ones (--dim
// NAME=MIN..MAX) become expressions of the run's extents; the tuple length is a number.
struct Nd {
  ir::Dim batch{1}, batch_elems{1}, n_tuples{1}, slice{1};
  int64_t tuple = 0;
  std::vector<ir::Dim> tuple_dims;
};

Nd nd_of(const ir::Node& node, int64_t batch_dims) {
  const std::vector<ir::Dim>& x = node.input(0)->shape().dims();
  const std::vector<ir::Dim>& idx = node.input(1)->shape().dims();
  if (!idx.back().is_static()) fail("{}: the index tuples' length must be a number", node.describe());
  Nd g;
  g.tuple = idx.back().value();
  const size_t b = static_cast<size_t>(batch_dims), t = static_cast<size_t>(g.tuple);
  for (size_t d = 0; d < b; ++d) g.batch = g.batch * x[d];
  for (size_t d = b; d < x.size(); ++d) g.batch_elems = g.batch_elems * x[d];
  for (size_t d = b; d + 1 < idx.size(); ++d) g.n_tuples = g.n_tuples * idx[d];
  for (size_t k = 0; k < t; ++k) g.tuple_dims.push_back(x[b + k]);
  for (size_t d = b + t; d < x.size(); ++d) g.slice = g.slice * x[d];
  return g;
}

void emit_gather_nd(EmitContext& ctx, const ir::Node& node) {
  Nd g = nd_of(node, node.i("batch_dims"));
  ctx.line(fmt::format("if (!kiln::rt::gather_nd_bytes({}, {}, {}, {}, {}, {}, {}, {}, {}, {})) {}",
                       elem_size(node.input(0)), ctx.dim(g.batch), ctx.dim(g.batch_elems), ctx.dim(g.n_tuples), g.tuple,
                       ctx.dims(g.tuple_dims), ctx.dim(g.slice), ctx.in(node, 0), ctx.in(node, 1),
                       ctx.out(node, 0), fail_on_bad_index(ctx, node)));
}

void emit_scatter_nd(EmitContext& ctx, const ir::Node& node) {
  Nd g = nd_of(node, 0);
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("std::memcpy({}, {}, {});", ctx.out(node, 0), ctx.in(node, 0), ctx.run_bytes(node.input(0))));
  ctx.line(fmt::format("if (!kiln::rt::scatter_nd<{}, {}, {}>({}, {}, {}, {}, {}, {}, {})) {}",
                       scatter_kind(node), cpp_type(t), cpp_compute_type(t), ctx.dim(g.n_tuples), g.tuple,
                       ctx.dims(g.tuple_dims), ctx.dim(g.slice), ctx.in(node, 1), ctx.in(node, 2),
                       ctx.out(node, 0), fail_on_bad_index(ctx, node)));
}

void emit_onehot(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> y = dims_of(node.output(0));
  const int64_t axis = *ir::normalize_axis(node.i("axis"), static_cast<int64_t>(y.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y[d];
  for (size_t d = axis + 1; d < y.size(); ++d) inner *= y[d];
  ctx.line(fmt::format("kiln::rt::one_hot({}, {}, {}, {}, {}, {});", outer, y[axis], inner,
                       ctx.in(node, 0), ctx.in(node, 2), ctx.out(node, 0)));
}

std::string data_dependent(const ir::Node&) {
  return "its output shape depends on the input data (runs in the interpreter only)";
}

// NonZero's count is a data-dependent symbol (passes::bound_data_dependent_dims): the output
// is planned for every element being non-zero, and the count found is stored for the nodes
// after it and for the output's shape.
std::string nonzero_unsupported(const ir::Node& node) {
  if (!is_data_dependent_dim(node.output(0), 1)) return data_dependent(node);
  // A scalar has no coordinates to list (its output would have no rows).
  if (node.input(0)->shape().rank() == 0) return "compiled NonZero needs an input of rank 1 or more";
  return require_plain_numeric(node, "NonZero");
}

// Unique: the count of distinct slices is a data-dependent dim, as NonZero's.
std::string unique_unsupported(const ir::Node& node) {
  if (!node.output(0) || !is_data_dependent_dim(node.output(0), axis_or_flat(node))) return data_dependent(node);
  if (!node.input(0)->shape().is_static()) return "compiled Unique needs a static input shape";
  return require_plain_numeric(node, "Unique");
}

int64_t unique_len(const ir::Node& node) {
  const std::vector<int64_t> x = dims_of(node.input(0));
  return node.has_attr("axis") ? x[axis_or_flat(node)] : numel_of(node.input(0));
}

size_t unique_scratch_bytes(const ir::Node& node, const EmitOptions&) {
  return static_cast<size_t>(4 * unique_len(node)) * sizeof(int64_t);
}

void emit_unique(EmitContext& ctx, const ir::Node& node) {
  const std::vector<int64_t> x = dims_of(node.input(0));
  int64_t outer = 1, inner = 1;
  const int64_t len = unique_len(node);
  if (node.has_attr("axis")) {
    const size_t axis = axis_or_flat(node);
    for (size_t d = 0; d < axis; ++d) outer *= x[d];
    for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  }
  auto out_or_null = [&](size_t k) {
    return k < node.num_outputs() && node.output(k) ? ctx.out(node, k) : std::string("nullptr");
  };
  ctx.line(fmt::format("{} = kiln::rt::unique<{}>({}, {}, {}, {}, {}, {}, {}, {}, {}, reinterpret_cast<int64_t*>{});",
                       ctx.dim_slot(node.output(0)->shape()[axis_or_flat(node)].name()), cpp_type(node.input(0)->dtype()),
                       outer, len, inner, ctx.in(node, 0), node.i("sorted") != 0 ? "true" : "false", ctx.out(node, 0),
                       out_or_null(1), out_or_null(2), out_or_null(3), ctx.scratch(node)));
}

void emit_nonzero(EmitContext& ctx, const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const std::string t = cpp_type(x->dtype());
  ctx.line(fmt::format("{} = kiln::rt::nonzero<{}>({}, {}, reinterpret_cast<const {}*>({}), {});",
                       ctx.dim_slot(node.output(0)->shape()[1].name()), t, x->shape().rank(),
                       ctx.dims(x->shape().dims()), t, ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_indexing_emitters(EmitterRegistry& r) {
  r.add("GatherElements", Emitter{.emit = emit_gather_elements});
  r.add("ScatterElements", Emitter{.emit = emit_scatter_elements});
  r.add("GatherND", Emitter{.emit = emit_gather_nd, .dynamic_shapes = true});
  r.add("ScatterND", Emitter{.emit = emit_scatter_nd, .dynamic_shapes = true});
  r.add("OneHot", Emitter{.emit = emit_onehot, .unsupported = [](const ir::Node& n) {
                            return n.input(1)->is_constant()
                                       ? std::string()
                                       : fmt::format("input '{}' (depth) must be known at compile time",
                                                     n.input(1)->name());
                          }});
  r.add("NonZero", Emitter{.emit = emit_nonzero, .unsupported = nonzero_unsupported, .dynamic_shapes = true});
  r.add("Unique", Emitter{.emit = emit_unique,
                          .unsupported = unique_unsupported,
                          .scratch_bytes = unique_scratch_bytes,
                          .dynamic_shapes = true});
}

}  // namespace kiln::codegen::cpp
