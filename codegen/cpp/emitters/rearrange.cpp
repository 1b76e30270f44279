// ReverseSequence, Compress and TensorScatter through the runtime's typed templates
// (kiln/rt/rearrange.h), any element type. Lengths and write indices read at run time that
// fall out of range fail the run.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/rearrange.h"

namespace kiln::codegen::cpp {

namespace {

void emit_reverse_sequence(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const bool batch_major = ir::reverse_sequence_batch_major(node, static_cast<int64_t>(x.size()));
  const int64_t batch = x[batch_major ? 0 : 1], time = x[batch_major ? 1 : 0];
  const int64_t inner = batch * time == 0 ? 0 : numel_of(node.input(0)) / (batch * time);
  ctx.line(fmt::format("const int64_t bad = kiln::rt::reverse_sequence<{}, {}>({}, {}, {}, {}, {}, {}, {});",
                       cpp_type(node.input(0)->dtype()), cpp_type(node.input(1)->dtype()), batch, time, inner,
                       batch_major, ctx.in(node, 1), ctx.in(node, 0), ctx.out(node, 0)));
  ctx.line(fmt::format("if (bad >= 0) {}",
                       ctx.fail_stmt(node, fmt::format("a sequence length is outside [0, {}]", time))));
}

// The count of slices kept is a number when the condition is constant, else a data-dependent
// dim (passes::bound_data_dependent_dims) the node sets when it runs.
std::string unsupported_compress(const ir::Node& node) {
  if (!node.input(1)->is_constant() && !is_data_dependent_dim(node.output(0), axis_or_flat(node)))
    return fmt::format("input '{}' (condition) must be known at compile time: it decides the output shape",
                       node.input(1)->name());
  if (!node.input(0)->shape().is_static() || !node.input(1)->shape().is_static())
    return "compiled Compress needs static input and condition shapes";
  return "";
}

void emit_compress(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t outer = 1, len = numel_of(node.input(0)), inner = 1;
  if (node.has_attr("axis")) {
    const int64_t axis = *ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.size()));
    len = x[axis];
    for (int64_t d = 0; d < axis; ++d) outer *= x[d];
    for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  }
  if (!node.input(1)->is_constant()) {
    ctx.line(fmt::format("const int64_t kept = kiln::rt::compress_count({}, {}, {});", ctx.in(node, 1),
                         numel_of(node.input(1)), len));
    ctx.line(fmt::format("if (kept < 0) {}", ctx.fail_stmt(node, fmt::format("the condition selects past the {} "
                                                                            "entries of the axis", len))));
    ctx.line(fmt::format("{} = kept;", ctx.dim_slot(node.output(0)->shape()[axis_or_flat(node)].name())));
  }
  ctx.line(fmt::format("kiln::rt::compress<{}>({}, {}, {}, {}, {}, {}, {});", cpp_type(node.input(0)->dtype()), outer,
                       len, inner, ctx.in(node, 1), numel_of(node.input(1)), ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_tensor_scatter(EmitContext& ctx, const ir::Node& node) {
  const ir::TensorScatterGeometry g = ir::tensor_scatter_geometry(node, dims_of(node.input(0)), dims_of(node.input(1)));
  const std::string index_type = node.has_input(2) ? cpp_type(node.input(2)->dtype()) : "int64_t";
  ctx.line(fmt::format("const int64_t bad = kiln::rt::tensor_scatter<{}, {}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {});",
                       cpp_type(node.input(0)->dtype()), index_type, g.batch, g.per_batch, g.max_len, g.upd_len,
                       g.inner, g.circular, ctx.in(node, 0), ctx.in(node, 1), ctx.in(node, 2), ctx.out(node, 0)));
  ctx.line(fmt::format(
      "if (bad >= 0) {}",
      ctx.fail_stmt(node, fmt::format("a write index puts the update outside the {} cache entries", g.max_len))));
}

}  // namespace

void register_rearrange_emitters(EmitterRegistry& r) {
  r.add("ReverseSequence", Emitter{.emit = emit_reverse_sequence});
  r.add("Compress", Emitter{.emit = emit_compress, .unsupported = unsupported_compress, .dynamic_shapes = true});
  r.add("TensorScatter", Emitter{.emit = emit_tensor_scatter});
}

}  // namespace kiln::codegen::cpp
