// Activations that are not elementwise: Hardmax; and Dropout at inference. (Elementwise activations are emitted from
// their scalar expressions by emitters/elementwise.cpp.)
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

void emit_hardmax(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = *ir::normalize_axis(node.i("axis"), rank);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x[i];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= x[i];
  ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::hardmax<{}>({}, {}, {}, {}, {});", cpp_compute_type(t), outer, x[axis], inner,
                       ctx.in(node, 0), ctx.out(node, 0)));
}

// The shape rule has checked constant inputs: training with a nonzero ratio never gets here.
std::string unsupported_dropout(const ir::Node& node) {
  if (!node.has_input(2)) return "";
  if (!node.input(2)->is_constant())
    return fmt::format("input '{}' (training_mode) must be known at compile time", node.input(2)->name());
  const bool train = node.input(2)->constant().as_double(0) != 0;
  if (train && node.has_input(1) && !node.input(1)->is_constant())
    return fmt::format("input '{}' (ratio) must be known at compile time in training mode", node.input(1)->name());
  return "";
}

void emit_dropout(EmitContext& ctx, const ir::Node& node) {
  const int64_t n = numel_of(node.input(0));
  ctx.line(fmt::format("std::memcpy({}, {}, {});", ctx.out(node, 0), ctx.in(node, 0),
                       n * ir::dtype_size(node.input(0)->dtype())));
  if (node.num_outputs() > 1) ctx.line(fmt::format("std::fill_n({}, {}, true);", ctx.out(node, 1), n));
}

}  // namespace

void register_activation_emitters(EmitterRegistry& r) {
  r.add("Hardmax", Emitter{.emit = emit_hardmax});
  r.add("Dropout", Emitter{.emit = emit_dropout, .unsupported = unsupported_dropout});
}

}  // namespace kiln::codegen::cpp
