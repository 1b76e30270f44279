// Activations that are not elementwise: Hardmax. (Elementwise activations are emitted from
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

}  // namespace

void register_activation_emitters(EmitterRegistry& r) { r.add("Hardmax", Emitter{.emit = emit_hardmax}); }

}  // namespace kiln::codegen::cpp
