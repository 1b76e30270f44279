// Transpose, Concat, Gather.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("Transpose: default reversal and an explicit perm") {
  {
    OpTest t;
    Node* n = t.node("Transpose", {t.input("x", iota(DType::F32, {2, 3}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{3, 2});
    check_close(y, {0, 3, 1, 4, 2, 5});
  }
  {
    // out[k][i][j] = x[i][j][k] = 12 i + 4 j + k
    OpTest t;
    Node* n = t.node("Transpose", {t.input("x", iota(DType::I64, {2, 3, 4}))},
                     {{"perm", std::vector<int64_t>{2, 0, 1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{4, 2, 3});
    std::vector<int64_t> v = y.to_int64_vector();
    CHECK(v[0] == 0);
    CHECK(v[1] == 4);            // k=0, i=0, j=1
    CHECK(v[3] == 12);           // k=0, i=1, j=0
    CHECK(v[6] == 1);            // k=1, i=0, j=0
    CHECK(v[23] == 12 + 8 + 3);  // k=3, i=1, j=2
  }
  OpTest t;
  Value* x = t.input("x", DType::Bool, sym({Dim::symbol("N"), 3, 4}));
  CHECK(infer(t.node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1}}})) ==
        sym({Dim::symbol("N"), 4, 3}));
  CHECK(infer_error(t.node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 0, 1}}})) ==
        "node 'n' (Transpose): perm [0,0,1] is not a permutation of the 3 input dims");
}

TEST_CASE("Concat along the first and the last axis") {
  {
    OpTest t;
    Node* n = t.node("Concat",
                     {t.input("a", f32({1, 2}, {1, 2})), t.input("b", f32({2, 2}, {3, 4, 5, 6}))},
                     {{"axis", int64_t{0}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{3, 2});
    check_close(y, {1, 2, 3, 4, 5, 6});
  }
  {
    OpTest t;
    Node* n = t.node("Concat",
                     {t.input("a", Tensor::from_vector<int>(DType::U8, {2, 1}, {1, 2})),
                      t.input("b", Tensor::from_vector<int>(DType::U8, {2, 2}, {3, 4, 5, 6})),
                      t.constant("c", Tensor::from_vector<int>(DType::U8, {2, 0}, {}))},
                     {{"axis", int64_t{-1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 3});
    check_close(y, {1, 3, 4, 2, 5, 6});
  }
}

TEST_CASE("Concat shape rule: symbolic dims and errors") {
  OpTest t;
  Value* a = t.input("a", DType::F32, sym({Dim::symbol("N"), 2}));
  Value* b = t.input("b", DType::F32, sym({Dim::symbol("N"), 3}));
  Value* c = t.input("c", DType::F32, Shape{3, 2});
  CHECK(infer(t.node("Concat", {a, b}, {{"axis", int64_t{1}}})) == sym({Dim::symbol("N"), 5}));
  CHECK(infer(t.node("Concat", {a, c}, {{"axis", int64_t{0}}})) == sym({Dim::unknown(), 2}));
  CHECK(infer_error(t.node("Concat", {a, b}, {{"axis", int64_t{0}}})) ==
        "node 'n' (Concat): input 1 has shape [N,3], input 0 has [N,2]: dim 1 differs");
  CHECK(infer_error(t.node("Concat", {a, b})) ==
        "node 'n' (Concat): missing required attribute 'axis'");
  Value* i = t.input("i", DType::I32, Shape{1, 2});
  CHECK(infer_error(t.node("Concat", {a, i}, {{"axis", int64_t{0}}})) ==
        "node 'n' (Concat): inputs 'a' (f32) and 'i' (i32) must have the same dtype");
}

TEST_CASE("Gather: the ONNX spec examples, negative and scalar indices") {
  {
    // axis 0: data [[1, 1.2], [2.3, 3.4], [4.5, 5.7]], indices [[0, 1], [1, 2]].
    OpTest t;
    Node* n = t.node("Gather", {t.input("d", f32({3, 2}, {1, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f})),
                                t.input("i", i64({2, 2}, {0, 1, 1, 2}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 2, 2});
    check_close(y, {1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7});
  }
  {
    // axis 1: indices [[0, 2]] pick the first and last column of each row.
    OpTest t;
    Node* n =
        t.node("Gather",
               {t.input("d", f32({3, 3}, {1, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f})),
                t.input("i", i64({1, 2}, {0, 2}))},
               {{"axis", int64_t{1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{3, 1, 2});
    check_close(y, {1, 1.9, 2.3, 3.9, 4.5, 5.9});
  }
  {
    OpTest t;  // i32 indices, negative wraps
    Node* n = t.node("Gather", {t.input("d", iota(DType::I64, {3}, 10)),
                                t.input("i", Tensor::from_vector<int>(DType::I32, {2}, {-1, 0}))});
    CHECK(t.run1(n).to_int64_vector() == std::vector<int64_t>{12, 10});
  }
  {
    OpTest t;  // a scalar index removes the axis
    Node* n = t.node("Gather", {t.input("d", f32({2, 2}, {1, 2, 3, 4})),
                                t.constant("i", Tensor::scalar_i64(1))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2});
    check_close(y, {3, 4});
  }
}

TEST_CASE("Gather: symbolic dims, out-of-range indices fail cleanly") {
  OpTest t;
  Value* d = t.input("d", DType::F32, sym({Dim::symbol("V"), 16}));
  Value* i = t.input("i", DType::I64, sym({Dim::symbol("B"), Dim::symbol("S")}));
  CHECK(infer(t.node("Gather", {d, i})) == sym({Dim::symbol("B"), Dim::symbol("S"), 16}));
  CHECK(infer_error(t.node("Gather", {d, i}, {{"axis", int64_t{2}}})) ==
        "node 'n' (Gather): axis 2 is out of range for rank 2");
  Value* f = t.input("f", DType::F32, Shape{2});
  CHECK(infer_error(t.node("Gather", {d, f})) ==
        "node 'n' (Gather): input 'f' is f32, op supports i32, i64");

  OpTest e;
  Node* n = e.node("Gather", {e.input("d", iota(DType::F32, {3})), e.input("i", i64({2}, {1, 3}))});
  infer_node(*n);
  CHECK(e.eval_error(n) == "node 'n' (Gather): index 3 is out of range for axis 0 of size 3");
  OpTest e2;
  Node* m =
      e2.node("Gather", {e2.input("d", iota(DType::F32, {3})), e2.input("i", i64({1}, {-4}))});
  infer_node(*m);
  CHECK(e2.eval_error(m) == "node 'n' (Gather): index -4 is out of range for axis 0 of size 3");
}

TEST_CASE("every op of the first set is registered with a shape rule and a reference") {
  for (const char* op : {"Conv",          "MaxPool",
                         "AveragePool",   "GlobalAveragePool",
                         "GlobalMaxPool", "BatchNormalization",
                         "Softmax",       "LogSoftmax",
                         "Gemm",          "MatMul",
                         "Shape",         "Reshape",
                         "Flatten",       "Squeeze",
                         "Unsqueeze",     "Transpose",
                         "Concat",        "Gather",
                         "Identity",      "Constant"}) {
    INFO(op);
    const OpDef* def = registry().find(op);
    REQUIRE(def != nullptr);
    CHECK(static_cast<bool>(def->infer));
    CHECK(static_cast<bool>(def->eval));
    CHECK(!def->summary.empty());
  }
}

}  // namespace kiln::ir::test
