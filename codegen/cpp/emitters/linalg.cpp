// Einsum and Det through the runtime's typed templates (kiln/rt/linalg.h). Einsum's equation
// is resolved here, at compile time, into label sizes and strides.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/linalg.h"

namespace kiln::codegen::cpp {

namespace {

std::string acc_type(ir::DType t) { return ir::is_float(t) ? cpp_compute_type(t) : "int64_t"; }

void emit_einsum(EmitContext& ctx, const ir::Node& node) {
  std::vector<std::vector<int64_t>> dims;
  std::string ptrs;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    dims.push_back(dims_of(node.input(i)));
    ptrs += (i ? ", " : "") + ctx.in(node, i);
  }
  const ir::EinsumPlan plan = ir::einsum_plan(node, dims);
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("const {}* const xs[] = {{{}}};", cpp_type(t), ptrs));
  ctx.line(fmt::format("kiln::rt::einsum<{}, {}>({}, {}, {}, {}, xs, {}, {});", cpp_type(t), acc_type(t), plan.n_out,
                       plan.dims.size() - plan.n_out, ctx.array(plan.dims), node.num_inputs(),
                       ctx.array(plan.strides), ctx.out(node, 0)));
}

std::string unsupported_det(const ir::Node& node) {
  if (!ir::is_float(node.input(0)->dtype()))
    return fmt::format("input '{}' is {}; Det needs a float type", node.input(0)->name(),
                       ir::dtype_name(node.input(0)->dtype()));
  return "";
}

size_t det_scratch(const ir::Node& node, const EmitOptions&) {
  const int64_t n = dims_of(node.input(0)).back();
  return static_cast<size_t>(n * n) * (node.input(0)->dtype() == ir::DType::F64 ? 8 : 4);
}

void emit_det(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t n = x.back();
  const ir::DType t = node.input(0)->dtype();
  const std::string c = cpp_compute_type(t);
  ctx.line(fmt::format("kiln::rt::det<{}, {}>({}, {}, {}, {}, reinterpret_cast<{}*>{});", cpp_type(t), c,
                       numel_of(node.input(0)) / (n * n == 0 ? 1 : n * n), n, ctx.in(node, 0), ctx.out(node, 0), c,
                       ctx.scratch(node)));
}

}  // namespace

void register_linalg_emitters(EmitterRegistry& r) {
  r.add("Einsum", Emitter{.emit = emit_einsum});
  r.add("Det", Emitter{.emit = emit_det, .unsupported = unsupported_det, .scratch_bytes = det_scratch});
}

}  // namespace kiln::codegen::cpp
