// Elementwise ops: every op whose IR registry entry carries a scalar expression is emitted
// from that expression (ir/ops/*_ops.def), so the compiled code computes exactly what the
// reference does. Attributes become constants of their name inside the lambda.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/elementwise.h"

namespace kiln::codegen::cpp {

namespace {

std::string attr_constants(const ir::Node& node) { return cpp::attr_constants(node.def(), node.attrs()); }

void emit_unary(EmitContext& ctx, const ir::Node& node) {
  ir::DType ti = node.input(0)->dtype(), to = node.output(0)->dtype();
  ctx.line(fmt::format(
      "kiln::rt::map_unary<{0}, {1}>({2}, {3}, {4}, []({0} v) -> {1} {{ using T = {5}; {6}const T x = "
      "static_cast<T>(v); return static_cast<{1}>(static_cast<{7}>({8})); }});",
      cpp_type(ti), cpp_type(to), ctx.numel(node.output(0)), ctx.in(node, 0), ctx.out(node, 0),
      cpp_compute_type(ti), attr_constants(node), cpp_compute_type(to), node.def().scalar_expr));
}

void emit_binary(EmitContext& ctx, const ir::Node& node) {
  ir::DType ta = node.input(0)->dtype(), tb = node.input(1)->dtype(), to = node.output(0)->dtype();
  BroadcastArgs b = broadcast_shape_args(ctx, node.output(0)->shape(), {node.input(0), node.input(1)});
  ctx.line(fmt::format(
      "kiln::rt::broadcast_binary({0}, {1}, {2}, {3}, {4}, {5}, {6}, [](const {7}& va, const {8}& vb) -> {9} "
      "{{ using T = {10}; using U = {11}; {12}const T a = static_cast<T>(va); const U b = static_cast<U>(vb); "
      "return static_cast<{9}>(static_cast<{13}>({14})); }});",
      b.rank, b.out_dims, ctx.in(node, 0), b.strides[0], ctx.in(node, 1), b.strides[1], ctx.out(node, 0),
      cpp_type(ta), cpp_type(tb), cpp_type(to), cpp_compute_type(ta), cpp_compute_type(tb),
      attr_constants(node), cpp_compute_type(to), node.def().scalar_expr));
}

void emit_select(EmitContext& ctx, const ir::Node& node) {
  ir::DType t = node.output(0)->dtype();
  BroadcastArgs b = broadcast_shape_args(ctx, node.output(0)->shape(), {node.input(0), node.input(1), node.input(2)});
  ctx.line(fmt::format(
      "kiln::rt::broadcast_ternary({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, [](const bool& vc, const {9}& va, "
      "const {9}& vb) -> {9} {{ using T = {10}; const bool c = vc; const T a = static_cast<T>(va), b = "
      "static_cast<T>(vb); return static_cast<{9}>(static_cast<T>({11})); }});",
      b.rank, b.out_dims, ctx.in(node, 0), b.strides[0], ctx.in(node, 1), b.strides[1], ctx.in(node, 2),
      b.strides[2], ctx.out(node, 0), cpp_type(t), cpp_compute_type(t), node.def().scalar_expr));
}

void emit_variadic(EmitContext& ctx, const ir::Node& node) {
  const ir::VariadicExprs* e = ir::variadic_exprs(node.op());
  ir::DType t = node.output(0)->dtype();
  std::string s = cpp_type(t), c = cpp_compute_type(t);
  std::vector<const ir::Value*> inputs(node.inputs().begin(), node.inputs().end());
  BroadcastArgs b = broadcast_shape_args(ctx, node.output(0)->shape(), inputs);
  std::vector<std::string> ins;
  for (size_t k = 0; k < inputs.size(); ++k) ins.push_back(ctx.in(node, k));
  ctx.line(fmt::format("const {}* const ins[] = {{{}}};", s, fmt::join(ins, ", ")));
  ctx.line(fmt::format("const int64_t* const strides[] = {{{}}};", fmt::join(b.strides, ", ")));
  ctx.line(fmt::format("int64_t work[{}];", b.rank + inputs.size()));
  ctx.line(fmt::format(
      "kiln::rt::broadcast_nary<{0}>({1}, {2}, {3}, ins, strides, {4}, work, []({0} a, {0} b) -> {0} {{ using T = {0}; "
      "return static_cast<T>({5}); }}, []({0} x) -> {0} {{ using T = {0}; constexpr int64_t n = {3}; (void)n; return "
      "static_cast<T>({6}); }});",
      c, b.rank, b.out_dims, inputs.size(), ctx.out(node, 0), e->combine, e->finish));
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
      "static_cast<{1}>(v); return static_cast<{0}>(kiln::rt::clip(x, lo, hi)); }});",
      s, c, ctx.numel(node.output(0)), ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_elementwise_emitters(EmitterRegistry& r) {
  for (const ir::OpDef* def : ir::registry().all()) {
    if (ir::variadic_exprs(def->name)) {
      r.add(def->name, Emitter{.emit = emit_variadic, .dynamic_shapes = true});
      continue;
    }
    if (def->scalar_expr.empty()) continue;
    switch (def->inputs.size()) {
      case 1: r.add(def->name, Emitter{.emit = emit_unary, .dynamic_shapes = true}); break;
      case 2: r.add(def->name, Emitter{.emit = emit_binary, .dynamic_shapes = true}); break;
      case 3: r.add(def->name, Emitter{.emit = emit_select, .dynamic_shapes = true}); break;
      default: break;
    }
  }
  r.add("Clip", Emitter{.emit = emit_clip, .dynamic_shapes = true});
}

}  // namespace kiln::codegen::cpp
