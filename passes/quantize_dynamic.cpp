// Pass (`--precision int8-dynamic` only, not in any -O pipeline): dynamic quantization of the
// MatMul and Gemm whose weight is a constant 2-D f32 matrix, as onnxruntime.quantization's
// quantize_dynamic writes it (per_channel, QInt8 weights):
//
//   MatMul(x, W)  ->  xq, xs, xz = DynamicQuantizeLinear(x)        (u8, per tensor, each run)
//                     acc = MatMulInteger(xq, Wq, xz)              (Wq: s8 constant, packed at compile time)
//                     y = Cast(acc, f32) * (xs * ws)               (ws: f32 [N] constant)
//
// Wq[k, n] = round_half_even(W[k, n] / ws[n]) with ws[n] = max_k |W[k, n]| / 127 (symmetric,
// per output column, in [-127, 127]). Gemm(A, B, C) (transA = 0) transposes B first when
// transB, folds alpha into ws and adds beta * C. Every op already exists: the interpreter runs
// the reference loops and the compiled code the int8 GEMM (MatMulInteger's emitter packs Wq
// and reads the zero point at run time); fuse_elementwise, which runs later, makes one loop of
// Cast, Mul, the bias Add and whatever activation follows.
#include "passes/integer_matmul.h"
#include "passes/pass_manager.h"

namespace kiln::passes {

namespace {

bool try_quantize(ir::Graph& graph, ir::Node& node) {
  std::optional<ConstantWeightMatMul> m = constant_weight_matmul(node);
  if (!m) return false;
  ir::Node* dql = insert_before(graph, node, "DynamicQuantizeLinear", {m->x}, {"xq", "xs", "xz"});
  lower_to_matmul_integer(graph, node, *m, dql->output(0), dql->output(1), dql->output(2));
  return true;
}

}  // namespace

void quantize_dynamic(ir::Graph& graph) {
  std::vector<ir::Node*> candidates;
  for (const auto& n : graph.nodes()) candidates.push_back(n.get());
  for (ir::Node* n : candidates) try_quantize(graph, *n);
  graph.remove_unused_values();
}

}  // namespace kiln::passes
