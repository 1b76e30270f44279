// Einsum and Det: hand-computed cases.
#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

Tensor einsum(const std::string& equation, std::vector<Tensor> inputs) {
  OpTest t;
  std::vector<Value*> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(t.input("x" + std::to_string(i), inputs[i]));
  return t.run1(t.node("Einsum", in, {{"equation", Attribute(equation)}}));
}

}  // namespace

TEST_CASE("Einsum: matmul, transpose, sums, diagonal, inner product, implicit output") {
  const Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {5, 6, 7, 8});
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
  CHECK(values(einsum("ij,jk->ik", {a, b})) == std::vector<double>{19, 22, 43, 50});
  CHECK(values(einsum("ij -> ji", {a})) == std::vector<double>{1, 3, 2, 4});
  CHECK(values(einsum("ij->i", {a})) == std::vector<double>{3, 7});
  CHECK(values(einsum("ii->i", {a})) == std::vector<double>{1, 4});
  CHECK(values(einsum("ii", {a})) == std::vector<double>{5});  // implicit: the trace
  CHECK(values(einsum("i,i", {f32({2}, {1, 2}), f32({2}, {3, 4})})) == std::vector<double>{11});
  // Implicit output: labels used once, alphabetically: "ba" -> "ab" transposes.
  CHECK(values(einsum("ba", {a})) == std::vector<double>{1, 3, 2, 4});
  // Ellipsis: batch diagonal of [2, 2, 2].
  Tensor y = einsum("...ii->...i", {f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  CHECK(y.dims() == std::vector<int64_t>{2, 2});
  CHECK(values(y) == std::vector<double>{1, 4, 5, 8});
  CHECK(values(einsum("->", {f32({}, {3})})) == std::vector<double>{3});
}

TEST_CASE("Einsum errors name the node") {
  OpTest t;
  Value* x = t.input("x", DType::F32, Shape{2, 3});
  CHECK(infer_error(t.node("Einsum", {x}, {{"equation", Attribute("ijk->i")}})) ==
        "node 'n' (Einsum): term 0 of equation 'ijk->i' does not match input 0 of rank 2");
  CHECK(infer_error(t.node("Einsum", {x}, {{"equation", Attribute("ij->k")}})) ==
        "node 'n' (Einsum): output label 'k' is in no input term");
  CHECK(infer_error(t.node("Einsum", {x}, {{"equation", Attribute("ii->i")}})) ==
        "node 'n' (Einsum): label dims disagree: 3 against 2 (input 0 dim 1)");
}

TEST_CASE("Det of 2x2 and 3x3 matrices, batched") {
  OpTest t;
  // det [[1, 2], [3, 4]] = -2; det [[0, 1], [1, 0]] = -1 (needs a row swap).
  Node* n = t.node("Det", {t.input("x", f32({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0}))});
  check_close(t.run1(n), {-2, -1});
  OpTest t3;
  // [[2, 0, 1], [1, 3, 2], [1, 1, 1]]: 2 * (3 - 2) - 0 + 1 * (1 - 3) = 0.
  Node* n3 = t3.node("Det", {t3.input("x", f32({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 1}))});
  check_close(t3.run1(n3), {0}, 1e-6);
  CHECK(infer_error(t3.node("Det", {t3.input("y", DType::F32, Shape{2, 3})})) ==
        "node 'n' (Det): input [2,3] must be square matrices [..., M, M]");
}

}  // namespace kiln::ir::test
