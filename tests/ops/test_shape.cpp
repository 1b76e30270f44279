// Shape, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Constant.
#include "op_test_util.h"

namespace kiln::ir::test {

namespace {
std::vector<int64_t> dims_of(const Tensor& t) { return t.dims(); }
}  // namespace

TEST_CASE("Shape with start and end") {
  auto run = [](AttributeMap attrs) {
    OpTest t;
    Node* n = t.node("Shape", {t.input("x", iota(DType::F32, {2, 3, 4}))}, std::move(attrs));
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::I64);
    return y.to_int64_vector();
  };
  CHECK(run({}) == std::vector<int64_t>{2, 3, 4});
  CHECK(run({{"start", int64_t{1}}}) == std::vector<int64_t>{3, 4});
  CHECK(run({{"end", int64_t{-1}}}) == std::vector<int64_t>{2, 3});
  CHECK(run({{"start", int64_t{-1}}}) == std::vector<int64_t>{4});
  CHECK(run({{"start", int64_t{-10}}, {"end", int64_t{10}}}) == std::vector<int64_t>{2, 3, 4});
  CHECK(run({{"start", int64_t{2}}, {"end", int64_t{1}}}).empty());
}

TEST_CASE("Shape of symbolic dims: type, and folding only what is static") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 3, 4}));
  Node* all = t.node("Shape", {x});
  CHECK(infer(all) == Shape{3});
  CHECK(all->output(0)->dtype() == DType::I64);
  CHECK_FALSE(all->def().fold(*all).has_value());
  Node* tail = t.node("Shape", {x}, {{"start", int64_t{1}}});
  infer_node(*tail);
  auto folded = tail->def().fold(*tail);
  REQUIRE(folded.has_value());
  CHECK(folded->at(0).to_int64_vector() == std::vector<int64_t>{3, 4});
}

TEST_CASE("Reshape: 0 copies, -1 infers, allowzero keeps zeros") {
  {
    OpTest t;
    Node* n =
        t.node("Reshape", {t.input("x", iota(DType::F32, {2, 3})), t.constant("s", i64s({3, -1}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{3, 2});
    check_close(y, {0, 1, 2, 3, 4, 5});
  }
  {
    OpTest t;
    Node* n = t.node("Reshape",
                     {t.input("x", iota(DType::I32, {2, 3, 4})), t.constant("s", i64s({0, -1}))});
    CHECK(dims_of(t.run1(n)) == std::vector<int64_t>{2, 12});
  }
  {
    OpTest t;
    Node* n =
        t.node("Reshape", {t.input("x", iota(DType::F32, {0, 3})), t.constant("s", i64s({3, 0}))},
               {{"allowzero", int64_t{1}}});
    CHECK(dims_of(t.run1(n)) == std::vector<int64_t>{3, 0});
  }
}

TEST_CASE("Reshape shape rule: symbolic dims, unknown shapes, errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 3, 4}));
  CHECK(infer(t.node("Reshape", {x, t.constant("a", i64s({0, -1}))})) ==
        sym({Dim::symbol("N"), 12}));
  // The -1 is the input's element count (N*12) divided by the rest, wherever N ends up.
  CHECK(infer(t.node("Reshape", {x, t.constant("b", i64s({-1, 2, 6}))})) ==
        sym({Dim::symbol("N"), 2, 6}));
  CHECK(infer(t.node("Reshape", {x, t.constant("c", i64s({2, 0, 2, -1}))})) ==
        sym({2, 3, 2, Dim::symbol("N")}));
  // Where the rest does not divide it, the -1 stays unknown.
  CHECK(infer(t.node("Reshape", {x, t.constant("g", i64s({-1, 5, 0}))})) == sym({Dim::unknown(), 5, 4}));
  Value* dynamic = t.input("d", DType::I64, Shape{2});
  CHECK(infer(t.node("Reshape", {x, dynamic})) == sym({Dim::unknown(), Dim::unknown()}));

  Value* s = t.input("s", DType::F32, Shape{2, 3});
  CHECK(infer_error(t.node("Reshape", {s, t.constant("e", i64s({-1, -1}))})) ==
        "node 'n' (Reshape): shape [-1,-1] has more than one -1");
  CHECK(infer_error(t.node("Reshape", {s, t.constant("f", i64s({4}))})) ==
        "node 'n' (Reshape): cannot reshape input [2,3] (6 elements) to [4] (4 elements)");
  CHECK(infer_error(t.node("Reshape", {s, t.constant("g", i64s({4, -1}))})) ==
        "node 'n' (Reshape): cannot reshape input [2,3] to [4,-1]");
  CHECK(infer_error(t.node("Reshape", {s, t.constant("h", i64s({-2, 3}))})) ==
        "node 'n' (Reshape): shape [-2,3] has invalid dim -2");
  Value* unknown_len = t.input("u", DType::I64, sym({Dim::symbol("K")}));
  CHECK(infer_error(t.node("Reshape", {s, unknown_len})) ==
        "node 'n' (Reshape): input 'u' is neither constant nor of known length, output rank is "
        "unknown");
}

TEST_CASE("Flatten") {
  auto run = [](int64_t axis) {
    OpTest t;
    Node* n = t.node("Flatten", {t.input("x", iota(DType::F32, {2, 3, 4}))}, {{"axis", axis}});
    return dims_of(t.run1(n));
  };
  CHECK(run(1) == std::vector<int64_t>{2, 12});
  CHECK(run(0) == std::vector<int64_t>{1, 24});
  CHECK(run(-1) == std::vector<int64_t>{6, 4});
  CHECK(run(3) == std::vector<int64_t>{24, 1});

  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 3, 4}));
  CHECK(infer(t.node("Flatten", {x})) == sym({Dim::symbol("N"), 12}));
  CHECK(infer(t.node("Flatten", {x}, {{"axis", int64_t{2}}})) == sym({Dim::symbol("N") * Dim(3), 4}));
  CHECK(infer_error(t.node("Flatten", {x}, {{"axis", int64_t{4}}})) ==
        "node 'n' (Flatten): axis 4 is out of range [-3, 3] for input [N,3,4]");
}

TEST_CASE("Squeeze with and without axes") {
  {
    OpTest t;
    Node* n = t.node("Squeeze", {t.input("x", iota(DType::F32, {1, 3, 1}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{3});
    check_close(y, {0, 1, 2});
  }
  {
    OpTest t;
    Node* n =
        t.node("Squeeze", {t.input("x", iota(DType::F32, {1, 3, 1})), t.constant("a", i64s({-1}))});
    CHECK(dims_of(t.run1(n)) == std::vector<int64_t>{1, 3});
  }
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 1, 3}));
  CHECK(infer(t.node("Squeeze", {x, t.constant("a", i64s({1}))})) == sym({Dim::symbol("N"), 3}));
  CHECK(infer_error(t.node("Squeeze", {x, t.constant("b", i64s({2}))})) ==
        "node 'n' (Squeeze): cannot squeeze axis 2 of size 3 in [N,1,3]");
  CHECK(infer_error(t.node("Squeeze", {x})) ==
        "node 'n' (Squeeze): squeezing all size-1 dims of [N,1,3] needs static dims (give axes)");
  CHECK(infer_error(t.node("Squeeze", {x, t.constant("c", i64s({3}))})) ==
        "node 'n' (Squeeze): axis 3 is out of range for rank 3");
}

TEST_CASE("Unsqueeze: axes index the output, negative ones from its end") {
  {
    OpTest t;
    Node* n =
        t.node("Unsqueeze", {t.input("x", iota(DType::F32, {3})), t.constant("a", i64s({0, -1}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1, 3, 1});
    check_close(y, {0, 1, 2});
  }
  {
    OpTest t;
    Node* n =
        t.node("Unsqueeze", {t.input("x", iota(DType::F32, {2, 3})), t.constant("a", i64s({1}))});
    CHECK(dims_of(t.run1(n)) == std::vector<int64_t>{2, 1, 3});
  }
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N")}));
  CHECK(infer(t.node("Unsqueeze", {x, t.constant("a", i64s({0}))})) == sym({1, Dim::symbol("N")}));
  CHECK(infer_error(t.node("Unsqueeze", {x, t.constant("b", i64s({0, -3}))})) ==
        "node 'n' (Unsqueeze): axis -3 is repeated in [0,-3]");
  CHECK(infer_error(t.node("Unsqueeze", {x})) ==
        "node 'n' (Unsqueeze): has 1 inputs, op takes 2 to 2");
  // A scalar axis counts as a list of one (ONNX's AffineGrid function body writes it so).
  CHECK(infer(t.node("Unsqueeze", {x, t.constant("s", Tensor::scalar_i64(-1))})) == sym({Dim::symbol("N"), 1}));
}

TEST_CASE("Identity and Constant") {
  {
    OpTest t;
    Node* n = t.node("Identity", {t.input("x", Tensor::from_vector<int>(DType::I8, {2}, {-1, 7}))});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::I8);
    check_close(y, {-1, 7});
  }
  {
    OpTest t;
    Node* n = t.node("Constant", {}, {{"value", i64({2, 1}, {4, 5})}});
    Tensor y = t.run1(n);
    CHECK(n->output(0)->dtype() == DType::I64);
    CHECK(n->output(0)->shape() == Shape{2, 1});
    CHECK(y.to_int64_vector() == std::vector<int64_t>{4, 5});
    CHECK(n->def().fold(*n)->at(0).same_as(y));
  }
  OpTest t;
  CHECK(infer_error(t.node("Constant", {})) ==
        "node 'n' (Constant): missing required attribute 'value'");
  CHECK(infer_error(t.node("Constant", {}, {{"value", int64_t{3}}})) ==
        "node 'n' (Constant): attribute 'value' is int, expected tensor");
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("Reshape with an overflowing target shape fails instead of wrapping") {
  OpTest t;
  Value* x = t.input("x", DType::F32, Shape{2, 3});
  int64_t big = int64_t{1} << 40;
  CHECK(infer_error(t.node("Reshape", {x, t.constant("s", i64s({big, big, big}))})) ==
        "node 'n' (Reshape): shape is too large");
}

TEST_CASE("Unsqueeze: axes from a Constant node are known at import (before folding)") {
  // PyTorch writes Shape -> Gather -> Unsqueeze(axes = Constant) -> Concat -> Expand; without
  // the axes' values the Concat's length, and so Expand's rank, would be unknown.
  OpTest t;
  Value* x = t.input("x", DType::I64, Shape{});
  Node* axes = t.node("Constant", {}, {{"value", i64s({0})}});
  infer_node(*axes);
  CHECK(infer(t.node("Unsqueeze", {x, axes->output(0)})) == Shape{1});
}

}  // namespace kiln::ir::test
