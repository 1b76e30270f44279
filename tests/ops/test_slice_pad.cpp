// Slice, Split, Pad, Expand, Tile, DepthToSpace, SpaceToDepth and the generated-value ops
// (ConstantOfShape, Range, Size, EyeLike, Trilu): hand-computed cases.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("Slice: steps, negative steps, clamping and the shape rule") {
  {
    // x = 0..11 as [3,4]; rows 0..2 step 2, columns 3 down to 1 step -1.
    OpTest t;
    Node* n = t.node("Slice", {t.input("x", iota(DType::F32, {3, 4})), t.constant("s", i64s({0, 3})),
                               t.constant("e", i64s({3, 0})), t.constant("a", i64s({0, 1})),
                               t.constant("p", i64s({2, -1}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 3});
    check_close(y, {3, 2, 1, 11, 10, 9});
  }
  {
    // Out-of-range starts and ends are clamped; axes default to 0..n-1.
    OpTest t;
    Node* n = t.node("Slice", {t.input("x", iota(DType::I32, {5})), t.constant("s", i64s({-100})),
                               t.constant("e", i64s({1000}))});
    CHECK(t.run1(n).to_int64_vector() == std::vector<int64_t>{0, 1, 2, 3, 4});
  }
  OpTest t;
  Value* x = t.input("x", DType::F32, Shape{3, 4});
  CHECK(infer_error(t.node("Slice", {x, t.constant("s", i64s({0})), t.constant("e", i64s({1})),
                                     t.constant("a", i64s({0})), t.constant("p", i64s({0}))})) ==
        "node 'n' (Slice): steps [0] has a 0");
  // Unknown starts: rank known, dims not.
  CHECK(infer(t.node("Slice", {x, t.input("s2", DType::I64, Shape{1}), t.constant("e2", i64s({1}))})) ==
        sym({Dim::unknown(), Dim::unknown()}));
}

TEST_CASE("Split: explicit sizes, num_outputs with a smaller last part") {
  {
    OpTest t;
    Node* n = t.node("Split", {t.input("x", iota(DType::F32, {2, 3})), t.constant("s", i64s({1, 2}))},
                     {{"axis", int64_t{1}}}, 2);
    std::vector<Tensor> y = t.run(n);
    check_close(y[0], {0, 3});
    check_close(y[1], {1, 2, 4, 5});
  }
  OpTest t;
  Node* n = t.node("Split", {t.input("x", iota(DType::I64, {5}))}, {{"num_outputs", int64_t{3}}}, 3);
  std::vector<Tensor> y = t.run(n);
  CHECK(y[0].to_int64_vector() == std::vector<int64_t>{0, 1});
  CHECK(y[1].to_int64_vector() == std::vector<int64_t>{2, 3});
  CHECK(y[2].to_int64_vector() == std::vector<int64_t>{4});
}

TEST_CASE("Pad: every mode on [1,2,3]") {
  auto pad = [](const char* mode) {
    OpTest t;
    Node* n = t.node("Pad", {t.input("x", f32({3}, {1, 2, 3})), t.constant("p", i64s({2, 3}))},
                     {{"mode", mode}});
    return values(t.run1(n));
  };
  CHECK(pad("constant") == std::vector<double>{0, 0, 1, 2, 3, 0, 0, 0});
  CHECK(pad("edge") == std::vector<double>{1, 1, 1, 2, 3, 3, 3, 3});
  CHECK(pad("reflect") == std::vector<double>{3, 2, 1, 2, 3, 2, 1, 2});
  CHECK(pad("wrap") == std::vector<double>{2, 3, 1, 2, 3, 1, 2, 3});
  // Constant value, axes input, negative pads crop.
  OpTest t;
  Node* n = t.node("Pad", {t.input("x", f32({2, 2}, {1, 2, 3, 4})), t.constant("p", i64s({1, -1})),
                           t.constant("v", f32({}, {9})), t.constant("a", i64s({-1}))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{2, 2});
  check_close(y, {9, 1, 9, 3});
}

TEST_CASE("Expand, Tile, DepthToSpace, SpaceToDepth") {
  {
    OpTest t;
    Node* n = t.node("Expand", {t.input("x", f32({2, 1}, {1, 2})), t.constant("s", i64s({2, 1, 3}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 2, 3});
    check_close(y, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  }
  {
    OpTest t;
    Node* n = t.node("Tile", {t.input("x", f32({1, 2}, {1, 2})), t.constant("r", i64s({2, 2}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 4});
    check_close(y, {1, 2, 1, 2, 1, 2, 1, 2});
  }
  {
    // 4 channels of one pixel become a 2x2 tile: DCR reads channel = (i*2 + j).
    OpTest t;
    Node* n = t.node("DepthToSpace", {t.input("x", iota(DType::F32, {1, 4, 1, 1}))},
                     {{"blocksize", int64_t{2}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1, 1, 2, 2});
    check_close(y, {0, 1, 2, 3});
  }
  OpTest t;
  Node* n = t.node("SpaceToDepth", {t.input("x", iota(DType::F32, {1, 1, 2, 2}))},
                   {{"blocksize", int64_t{2}}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 4, 1, 1});
  check_close(y, {0, 1, 2, 3});
}

TEST_CASE("ConstantOfShape, Range, Size, EyeLike, Trilu") {
  {
    OpTest t;
    Node* n = t.node("ConstantOfShape", {t.constant("s", i64s({2, 2}))},
                     {{"value", Tensor::from_vector<int>(DType::I32, {1}, {7})}});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::I32);
    CHECK(y.to_int64_vector() == std::vector<int64_t>{7, 7, 7, 7});
  }
  {
    OpTest t;
    Node* n = t.node("Range", {t.input("a", Tensor::from_vector<int>(DType::I32, {}, {10})),
                               t.input("b", Tensor::from_vector<int>(DType::I32, {}, {4})),
                               t.input("c", Tensor::from_vector<int>(DType::I32, {}, {-3}))});
    CHECK(t.run1(n).to_int64_vector() == std::vector<int64_t>{10, 7});
  }
  {
    OpTest t;
    Node* n = t.node("Size", {t.input("x", iota(DType::F32, {2, 3}))});
    CHECK(t.run1(n).to_int64_vector() == std::vector<int64_t>{6});
  }
  {
    OpTest t;
    Node* n = t.node("EyeLike", {t.input("x", iota(DType::F32, {2, 3}))},
                     {{"k", int64_t{1}}, {"dtype", int64_t{7}}});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::I64);
    CHECK(y.to_int64_vector() == std::vector<int64_t>{0, 1, 0, 0, 0, 1});
  }
  OpTest t;
  Node* n = t.node("Trilu", {t.input("x", iota(DType::F32, {3, 3}, 1)), t.constant("k", i64({}, {-1}))},
                   {{"upper", int64_t{0}}});
  check_close(t.run1(n), {0, 0, 0, 4, 0, 0, 7, 8, 0});
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("CenterCropPad: crops and zero-pads centred, the smaller half first") {
  OpTest t;  // axis 0: 5 -> 2 crops [1, 3) (begin 1, end 2); axis 1: 1 -> 4 pads 1 before, 2 after
  Node* n = t.node("CenterCropPad", {t.input("x", f32({5, 1}, {1, 2, 3, 4, 5})), t.constant("shape", i64s({2, 4}))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{2, 4});
  check_close(y, {0, 2, 0, 0, 0, 3, 0, 0});
  OpTest u;  // negative axes; only the last axis changes
  Node* m = u.node("CenterCropPad", {u.input("x", f32({1, 4}, {1, 2, 3, 4})), u.constant("shape", i64s({3}))},
                   {{"axes", std::vector<int64_t>{-1}}});
  check_close(u.run1(m), {1, 2, 3});
}

}  // namespace kiln::ir::test
