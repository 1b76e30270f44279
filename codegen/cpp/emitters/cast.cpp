// Cast and CastLike: one loop through kiln::rt::cast, the conversion rule the reference uses.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

void emit_cast(EmitContext& ctx, const ir::Node& node) {
  std::string si = cpp_type(node.input(0)->dtype()), so = cpp_type(node.output(0)->dtype());
  ctx.line(fmt::format(
      "kiln::rt::map_unary<{0}, {1}>({2}, {3}, {4}, []({0} v) -> {1} {{ return kiln::rt::cast<{1}>(v); }});",
      si, so, numel_of(node.output(0)), ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_cast_emitters(EmitterRegistry& r) {
  r.add("Cast", Emitter{.emit = emit_cast});
  r.add("CastLike", Emitter{.emit = emit_cast});
}

}  // namespace kiln::codegen::cpp
