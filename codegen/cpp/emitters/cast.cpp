// Cast and CastLike: one loop through kiln::rt::cast (kiln::rt::convert when a storage-only
// dtype is involved), the conversion rule the reference uses.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

const char* round_mode_enum(const std::string& mode) {
  if (mode == "down") return "kiln::rt::RoundMode::down";
  if (mode == "nearest") return "kiln::rt::RoundMode::nearest";
  return "kiln::rt::RoundMode::up";  // the only other value infer accepts
}

void emit_cast(EmitContext& ctx, const ir::Node& node) {
  const ir::DType from = node.input(0)->dtype(), to = node.output(0)->dtype();
  std::string si = cpp_type(from), so = cpp_type(to);
  if (ir::is_storage_only(from) || ir::is_storage_only(to)) {
    ctx.line(fmt::format(
        "kiln::rt::map_unary<{0}, {1}>({2}, {3}, {4}, []({0} v) -> {1} {{ return kiln::rt::convert<{1}>(v, "
        "kiln::rt::CastMode{{{5}, {6}}}); }});",
        si, so, ctx.numel(node.output(0)), ctx.in(node, 0), ctx.out(node, 0),
        node.i("saturate") != 0 ? "true" : "false", round_mode_enum(node.s("round_mode"))));
    return;
  }
  ctx.line(fmt::format(
      "kiln::rt::map_unary<{0}, {1}>({2}, {3}, {4}, []({0} v) -> {1} {{ return kiln::rt::cast<{1}>(v); }});",
      si, so, ctx.numel(node.output(0)), ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_bitcast(EmitContext& ctx, const ir::Node& node) {
  const size_t bytes = static_cast<size_t>(numel_of(node.output(0))) * ir::dtype_size(node.output(0)->dtype());
  if (node.output(0)->dtype() == ir::DType::Bool) {
    ctx.line(fmt::format("kiln::rt::map_unary<uint8_t, bool>({}, reinterpret_cast<const uint8_t*>({}), {}, [](uint8_t v) {{ return v != 0; }});",
                         bytes, ctx.in(node, 0), ctx.out(node, 0)));
    return;
  }
  ctx.line(fmt::format("std::memcpy({}, {}, {});", ctx.out(node, 0), ctx.in(node, 0), bytes));
}

}  // namespace

void register_cast_emitters(EmitterRegistry& r) {
  // Element counts at run time where a shape has symbolic dims (a NonZero's count).
  r.add("Cast", Emitter{.emit = emit_cast, .dynamic_shapes = true});
  r.add("CastLike", Emitter{.emit = emit_cast, .dynamic_shapes = true});
  r.add("BitCast", Emitter{.emit = emit_bitcast});
}

}  // namespace kiln::codegen::cpp
