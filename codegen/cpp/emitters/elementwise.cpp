// Elementwise ops: every op whose IR registry entry carries a scalar expression is emitted
// from that expression, so the compiled code computes exactly what the reference does.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

void emit_unary(EmitContext& ctx, const ir::Node& node) {
  ir::DType t = node.input(0)->dtype();
  std::string s = cpp_type(t), c = cpp_compute_type(t);
  ctx.line(fmt::format(
      "kiln::rt::map_unary<{0}, {0}>({2}, {3}, {4}, []({0} v) -> {0} {{ using T = {1}; const T x = "
      "static_cast<T>(v); return static_cast<{0}>({5}); }});",
      s, c, numel_of(node.output(0)), ctx.in(node, 0), ctx.out(node, 0), node.def().scalar_expr));
}

void emit_binary(EmitContext& ctx, const ir::Node& node) {
  ir::DType t = node.input(0)->dtype();
  std::string s = cpp_type(t), c = cpp_compute_type(t);
  BroadcastArgs b = broadcast_args(ctx, dims_of(node.output(0)), {node.input(0), node.input(1)});
  ctx.line(fmt::format(
      "kiln::rt::broadcast_binary({2}, {3}, {4}, {5}, {6}, {7}, {8}, [](const {0}& va, const {0}& vb) "
      "-> {0} {{ using T = {1}; const T a = static_cast<T>(va), b = static_cast<T>(vb); return "
      "static_cast<{0}>({9}); }});",
      s, c, b.rank, b.out_dims, ctx.in(node, 0), b.strides[0], ctx.in(node, 1), b.strides[1],
      ctx.out(node, 0), node.def().scalar_expr));
}

void emit_clip(EmitContext& ctx, const ir::Node& node) {
  ir::DType t = node.input(0)->dtype();
  std::string s = cpp_type(t), c = cpp_compute_type(t);
  auto bound = [&](size_t i, const char* fallback) {
    return node.has_input(i) ? fmt::format("static_cast<{}>({}[0])", c, ctx.in(node, i))
                             : fmt::format("std::numeric_limits<{}>::{}()", c, fallback);
  };
  ctx.line(fmt::format("const {} lo = {}, hi = {};", c, bound(1, "lowest"), bound(2, "max")));
  ctx.line(fmt::format(
      "kiln::rt::map_unary<{0}, {0}>({2}, {3}, {4}, [lo, hi]({0} v) -> {0} {{ const {1} x = "
      "static_cast<{1}>(v); return static_cast<{0}>(x < lo ? lo : (x > hi ? hi : x)); }});",
      s, c, numel_of(node.output(0)), ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_elementwise_emitters(EmitterRegistry& r) {
  for (const ir::OpDef* def : ir::registry().all()) {
    if (def->scalar_expr.empty()) continue;
    r.add(def->name, Emitter{.emit = def->inputs.size() == 1 ? emit_unary : emit_binary});
  }
  r.add("Clip", Emitter{.emit = emit_clip});
}

}  // namespace kiln::codegen::cpp
