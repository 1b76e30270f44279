// Gemm and MatMul (f32) through the runtime's gemm_f32, MatMul (f64) through gemm_f64. Batch
// offsets of a broadcasting MatMul are computed here, at compile time.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/op_helpers.h"

namespace kiln::codegen::cpp {

namespace {

// With symbolic dims (--dim NAME=MIN..MAX) in M, K or N: the batch dims are numbers, so the
// batch offsets are index tables times the run's matrix sizes.
void emit_symbolic_matmul(EmitContext& ctx, const ir::Node& node) {
  std::vector<ir::Dim> a = node.input(0)->shape().dims(), b = node.input(1)->shape().dims();
  if (a.size() == 1) a.insert(a.begin(), ir::Dim(1));
  if (b.size() == 1) b.push_back(ir::Dim(1));
  const ir::Dim M = a[a.size() - 2], K = a.back(), N = b.back();
  std::vector<int64_t> a_batch, b_batch;
  for (size_t i = 0; i + 2 < a.size(); ++i) a_batch.push_back(a[i].is_static() ? a[i].value() : 1);
  for (size_t i = 0; i + 2 < b.size(); ++i) b_batch.push_back(b[i].value());
  std::vector<int64_t> batch = ir::broadcast_dims(a_batch, b_batch);
  const int64_t nb = ir::numel(batch);
  const bool f64 = node.input(0)->dtype() == ir::DType::F64;
  const char* type = f64 ? "double" : "float";
  ctx.line(fmt::format("const int64_t M = {}, K = {}, N = {};", ctx.dim(M), ctx.dim(K), ctx.dim(N)));
  if (ir::numel(b_batch) == 1 && !f64 && K.is_static() && N.is_static()) {
    // B shared by every batch: one GEMM over all rows of A, whose batch dims may be symbolic
    // (B packed now when it is a weight).
    std::string b_expr = is_f32_constant(node.input(1)) ? "" : ctx.in(node, 1);
    ctx.line(fmt::format(
        "kiln::rt::gemm_f32_ex({} * M, N, K, 1.0f, kiln::rt::GemmOperand{{{}, K, false, false}}, {}, 0.0f, {}, N, "
        "nullptr, kiln::rt::Epilogue{{}}, 0, pool);",
        ctx.dim(dims_product(node.input(0)->shape(), 0, node.input(0)->shape().rank() >= 2 ? node.input(0)->shape().rank() - 2 : 0)),
        ctx.in(node, 0), gemm_b_operand(ctx, node.input(1), b_expr, false, K.value(), N.value()),
        ctx.out(node, 0)));
    return;
  }
  std::vector<int64_t> as = ir::broadcast_strides(a_batch, batch);
  std::vector<int64_t> bs = ir::broadcast_strides(b_batch, batch);
  std::vector<int64_t> a_idx(static_cast<size_t>(nb)), b_idx(static_cast<size_t>(nb));
  ir::for_each_broadcast(batch, as, bs, [&](int64_t o, int64_t ia, int64_t ib) {
    a_idx[static_cast<size_t>(o)] = ia;
    b_idx[static_cast<size_t>(o)] = ib;
  });
  ctx.line(fmt::format("const {0}* a = {1}; const {0}* b = {2}; {0}* y = {3};", type, ctx.in(node, 0),
                       ctx.in(node, 1), ctx.out(node, 0)));
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i)", nb));
  ctx.line(fmt::format("  kiln::rt::gemm_{2}(false, false, M, N, K, 1.0, a + {0}[i] * M * K, K, b + {1}[i] * K * N, N, "
                       "0.0, y + i * M * N, N, pool);",
                       ctx.array(a_idx), ctx.array(b_idx), f64 ? "f64" : "f32"));
}

void emit_matmul(EmitContext& ctx, const ir::Node& node) {
  if (!node.input(0)->shape().is_static() || !node.input(1)->shape().is_static() ||
      !node.output(0)->shape().is_static()) {
    emit_symbolic_matmul(ctx, node);
    return;
  }
  std::vector<int64_t> a = dims_of(node.input(0)), b = dims_of(node.input(1));
  // 1-D operands: [K] is a row for A and a column for B.
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  std::vector<int64_t> a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  std::vector<int64_t> batch = ir::broadcast_dims(a_batch, b_batch);
  int64_t nb = ir::numel(batch);

  const bool f64 = node.input(0)->dtype() == ir::DType::F64;
  // B shared by every batch and A contiguous: one GEMM over all rows of A (f32: B packed at
  // compile time when it is a weight).
  if (f64 && ir::numel(b_batch) == 1) {
    ctx.line(fmt::format("kiln::rt::gemm_f64(false, false, {0}, {1}, {2}, 1.0, {3}, {2}, {4}, {1}, 0.0, {5}, {1}, pool);",
                         nb * M, N, K, ctx.in(node, 0), ctx.in(node, 1), ctx.out(node, 0)));
    return;
  }
  if (ir::numel(b_batch) == 1) {
    std::string b_expr = is_f32_constant(node.input(1)) ? "" : ctx.in(node, 1);
    ctx.line(fmt::format(
        "kiln::rt::gemm_f32_ex({}, {}, {}, 1.0f, kiln::rt::GemmOperand{{{}, {}, false, false}}, {}, 0.0f, {}, {}, "
        "nullptr, kiln::rt::Epilogue{{}}, 0, pool);",
        nb * M, N, K, ctx.in(node, 0), K, gemm_b_operand(ctx, node.input(1), b_expr, false, K, N), ctx.out(node, 0),
        N));
    return;
  }
  std::vector<int64_t> as = ir::broadcast_strides(a_batch, batch);
  std::vector<int64_t> bs = ir::broadcast_strides(b_batch, batch);
  std::vector<int64_t> a_off(static_cast<size_t>(nb)), b_off(static_cast<size_t>(nb));
  ir::for_each_broadcast(batch, as, bs, [&](int64_t o, int64_t ia, int64_t ib) {
    a_off[static_cast<size_t>(o)] = ia * M * K;
    b_off[static_cast<size_t>(o)] = ib * K * N;
  });
  const char* type = f64 ? "double" : "float";
  ctx.line(fmt::format("const {0}* a = {1}; const {0}* b = {2}; {0}* y = {3};", type, ctx.in(node, 0),
                       ctx.in(node, 1), ctx.out(node, 0)));
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i)", nb));
  ctx.line(fmt::format("  kiln::rt::gemm_{6}(false, false, {0}, {1}, {2}, 1.0, a + {3}[i], {2}, b + {4}[i], {1}, 0.0, y + i * {5}, {1}, pool);",
                       M, N, K, ctx.array(a_off), ctx.array(b_off), M * N, f64 ? "f64" : "f32"));
}

// f32 or f64 operands (MatMul only: Gemm is f32); with symbolic dims, numbers for the batch.
std::string require_f32_or_f64(const ir::Node& node) {
  // Symbolic batch dims: only on A against a 2-D f32 B (one GEMM over all of A's rows).
  const ir::Shape &a = node.input(0)->shape(), &b = node.input(1)->shape();
  bool a_symbolic_batch = false;
  for (size_t i = 0; i + 2 < a.rank(); ++i) a_symbolic_batch = a_symbolic_batch || !a[i].is_static();
  for (size_t i = 0; i + 2 < b.rank(); ++i)
    if (!b[i].is_static()) return "with symbolic dims, MatMul's batch dims must be numbers";
  if (a_symbolic_batch && (b.rank() != 2 || node.input(0)->dtype() != ir::DType::F32 || !b.is_static() ||
                           !a[a.rank() - 1].is_static()))
    return "with symbolic dims, MatMul's batch dims must be numbers";
  if (node.input(0)->dtype() == ir::DType::F64 && node.input(1)->dtype() == ir::DType::F64) return "";
  return require_f32(node);
}

// The emitter above packs B when it is an f32 weight shared by every batch.
bool matmul_packs_b(const ir::Node& node, size_t input) {
  if (input != 1 || !is_f32_constant(node.input(1))) return false;
  std::vector<int64_t> b = dims_of(node.input(1));
  return b.size() <= 2;
}

}  // namespace

void register_matmul_emitters(EmitterRegistry& r) {
  r.add("Gemm", Emitter{.emit = [](EmitContext& ctx, const ir::Node& node) { emit_gemm(ctx, node, false); },
                        .unsupported = unsupported_gemm,
                        .dynamic_shapes = true,
                        .packs_input = gemm_packs_b});
  r.add("MatMul", Emitter{.emit = emit_matmul,
                          .unsupported = require_f32_or_f64,
                          .dynamic_shapes = true,
                          .packs_input = matmul_packs_b});
}

}  // namespace kiln::codegen::cpp
