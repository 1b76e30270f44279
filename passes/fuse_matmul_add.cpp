// Pass: MatMul+Add into Gemm. A 2-D f32 MatMul whose only reader is an Add of a bias that
// broadcasts along the rows ([N] or [1,N]) or matches the result ([M,N]) becomes
// Gemm(A, B, bias), which adds the bias in the same kernel call.
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool try_fuse(ir::Graph& graph, ir::Node& mm) {
  if (mm.op() != "MatMul" || mm.input(0)->dtype() != ir::DType::F32) return false;
  const ir::Shape& a = mm.input(0)->shape();
  const ir::Shape& b = mm.input(1)->shape();
  const ir::Shape& y = mm.output(0)->shape();
  if (a.rank() != 2 || b.rank() != 2 || !y.is_known() || !y[1].is_static()) return false;
  ir::Node* add = single_user(mm.output(0));
  if (!add || add->op() != "Add") return false;
  ir::Value* bias = add->input(0) == mm.output(0) ? add->input(1) : add->input(0);
  if (bias == mm.output(0) || !bias->has_type() || bias->dtype() != ir::DType::F32) return false;
  const ir::Shape& c = bias->shape();
  if (!c.is_static() || !(add->output(0)->shape() == y)) return false;
  const int64_t n = y[1].value();
  bool row = (c.rank() == 1 && c[0].value() == n) || (c.rank() == 2 && c[0].value() == 1 && c[1].value() == n);
  if (!row && !(c == y)) return false;
  replace_with_node(graph, {&mm, add}, add->output(0), "Gemm", {mm.input(0), mm.input(1), bias}, {},
                    mm.name());
  return true;
}

}  // namespace

void fuse_matmul_add(ir::Graph& graph) {
  rewrite_until_done(graph, try_fuse);
}

}  // namespace kiln::passes
