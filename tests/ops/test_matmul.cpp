// Gemm and MatMul.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("Gemm: alpha * A B + beta * C with C broadcast, and transposes") {
  // A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]]: A B = [[4,5],[10,11]].
  // 2 A B + 0.5 [10, 20] = [[13, 20], [25, 32]].
  {
    OpTest t;
    Node* n = t.node(
        "Gemm",
        {t.input("a", f32({2, 3}, {1, 2, 3, 4, 5, 6})),
         t.constant("b", f32({3, 2}, {1, 0, 0, 1, 1, 1})), t.constant("c", f32({2}, {10, 20}))},
        {{"alpha", 2.0f}, {"beta", 0.5f}});
    check_close(t.run1(n), {13, 20, 25, 32});
  }
  {
    // The same operands stored transposed.
    OpTest t;
    Node* n = t.node("Gemm",
                     {t.input("a", f32({3, 2}, {1, 4, 2, 5, 3, 6})),
                      t.constant("b", f32({2, 3}, {1, 0, 1, 0, 1, 1}))},
                     {{"transA", int64_t{1}}, {"transB", int64_t{1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 2});
    check_close(y, {4, 5, 10, 11});
  }
  {
    // C of shape [2, 1] broadcasts along N.
    OpTest t;
    Node* n =
        t.node("Gemm", {t.input("a", f32({2, 1}, {1, 2})), t.constant("b", f32({1, 2}, {1, 1})),
                        t.constant("c", f32({2, 1}, {100, 200}))});
    check_close(t.run1(n), {101, 101, 202, 202});
  }
}

// f32 Gemm and MatMul run kiln::rt's gemm_f32; Gemm's f64 runs the plain loop, MatMul's f64
// gemm_f64, which check it here.
TEST_CASE("Gemm and MatMul f32 (the runtime's GEMM) agree with f64") {
  struct Case {
    const char* what;
    std::vector<int64_t> a, b, c;  // c empty: no C
    AttributeMap attrs;
  };
  const std::vector<Case> cases = {
      {"plain", {7, 13}, {13, 9}, {}, {}},
      {"transposed, alpha, beta, C a row",
       {13, 7},
       {19, 13},
       {19},
       {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}},
      {"C a column", {5, 40}, {40, 33}, {5, 1}, {{"beta", -1.0f}}},
      {"C a scalar, beta 0", {3, 4}, {4, 2}, {1}, {{"beta", 0.0f}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    auto run = [&](DType dt) {
      OpTest t;
      std::vector<Value*> in = {t.input("a", random(dt, c.a, 1)), t.constant("b", random(dt, c.b, 2))};
      if (!c.c.empty()) in.push_back(t.constant("c", random(dt, c.c, 3)));
      return t.run1(t.node("Gemm", in, c.attrs));
    };
    check_close(run(DType::F32), values(run(DType::F64)), 1e-5);
  }
  for (const auto& shapes : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{3, 1, 6, 17}, {4, 17, 5}}, {{17}, {2, 17, 9}}, {{2, 6, 17}, {17}}}) {
    // Not a structured binding: Clang 14 does not let a lambda capture one (C++20 allows it).
    const std::vector<int64_t>& a = shapes.first;
    const std::vector<int64_t>& b = shapes.second;
    auto run = [&](DType dt) {
      OpTest t;
      return t.run1(t.node("MatMul", {t.input("a", random(dt, a, 1)), t.input("b", random(dt, b, 2))}));
    };
    check_close(run(DType::F32), values(run(DType::F64)), 1e-5);
  }
}

TEST_CASE("Gemm shape rule: symbolic dims and errors") {
  OpTest t;
  Value* a = t.input("a", DType::F32, sym({Dim::symbol("M"), 64}));
  Value* b = t.input("b", DType::F32, Shape{10, 64});
  CHECK(infer(t.node("Gemm", {a, b}, {{"transB", int64_t{1}}})) == sym({Dim::symbol("M"), 10}));
  CHECK(infer_error(t.node("Gemm", {a, b})) ==
        "node 'n' (Gemm): inner dimension mismatch: 64 vs 10 (shapes [M,64] and [10,64])");
  Value* c = t.input("c", DType::F32, Shape{3});
  CHECK(infer_error(t.node("Gemm", {a, b, c}, {{"transB", int64_t{1}}})) ==
        "node 'n' (Gemm): C [3] cannot be broadcast to [M, N] = [M,10]");
}

TEST_CASE("MatMul: 2-D, 1-D operands, batch broadcasting, int32") {
  {
    OpTest t;
    Node* n = t.node("MatMul", {t.input("a", f32({2, 2}, {1, 2, 3, 4})),
                                t.constant("b", f32({2, 2}, {5, 6, 7, 8}))});
    check_close(t.run1(n), {19, 22, 43, 50});
  }
  {
    OpTest t;  // dot product: a scalar
    Node* n =
        t.node("MatMul", {t.input("a", f32({3}, {1, 2, 3})), t.input("b", f32({3}, {4, 5, 6}))});
    Tensor y = t.run1(n);
    CHECK(y.rank() == 0);
    check_close(y, {32});
  }
  {
    OpTest t;  // [2,1,2] x [2,1] -> [2,1,1]
    Node* n = t.node(
        "MatMul", {t.input("a", f32({2, 1, 2}, {1, 2, 3, 4})), t.input("b", f32({2, 1}, {1, 1}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 1, 1});
    check_close(y, {3, 7});
  }
  {
    OpTest t;  // [2] x [2,2,2] -> [2,2]: the vector times each batch matrix
    Node* n = t.node(
        "MatMul", {t.input("a", f32({2}, {1, 1})), t.input("b", iota(DType::F32, {2, 2, 2}, 1))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 2});
    check_close(y, {4, 6, 12, 14});
  }
  {
    OpTest t;
    Node* n =
        t.node("MatMul", {t.input("a", Tensor::from_vector<int>(DType::I32, {1, 2}, {1, 2})),
                          t.input("b", Tensor::from_vector<int>(DType::I32, {2, 1}, {3, 4}))});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::I32);
    check_close(y, {11});
  }
}

TEST_CASE("MatMul shape rule: symbolic dims, broadcasting and errors") {
  OpTest t;
  Value* a = t.input("a", DType::F32, sym({Dim::symbol("N"), Dim::symbol("S"), 64}));
  Value* w = t.input("w", DType::F32, Shape{64, 32});
  CHECK(infer(t.node("MatMul", {a, w})) == sym({Dim::symbol("N"), Dim::symbol("S"), 32}));
  Value* b = t.input("b", DType::F32, Shape{5, 1, 4, 3});
  Value* c = t.input("c", DType::F32, Shape{7, 3, 2});
  CHECK(infer(t.node("MatMul", {b, c})) == Shape{5, 7, 4, 2});
  Value* d = t.input("d", DType::F32, Shape{4, 3});
  CHECK(infer_error(t.node("MatMul", {d, d})) ==
        "node 'n' (MatMul): inner dimension mismatch: 3 vs 4 (shapes [4,3] and [4,3])");
  Value* e = t.input("e", DType::F32, Shape{2, 4, 3});
  Value* f = t.input("f", DType::F32, Shape{3, 3, 2});
  CHECK(infer_error(t.node("MatMul", {e, f})) ==
        "node 'n' (MatMul): shapes [2] and [3] cannot be broadcast");
}

TEST_CASE("Gemm and MatMul cost") {
  OpTest t;
  Node* m = t.node("MatMul",
                   {t.input("a", DType::F32, Shape{2, 3}), t.input("b", DType::F32, Shape{3, 4})});
  infer_node(*m);
  CHECK(node_cost(*m).flops == 2.0 * 2 * 4 * 3);
  Node* g =
      t.node("Gemm", {t.input("x", DType::F32, Shape{2, 3}), t.input("y", DType::F32, Shape{3, 4}),
                      t.input("z", DType::F32, Shape{4})});
  infer_node(*g);
  CHECK(node_cost(*g).flops == 2.0 * 2 * 4 * 3 + 2.0 * 2 * 4);
}

}  // namespace kiln::ir::test
