// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "op_test_util.h"

namespace kiln::ir::test {

namespace {
std::vector<int64_t> ints(std::initializer_list<int64_t> v) { return v; }
}  // namespace

TEST_CASE("MaxPool 2-D: 2x2 stride 2, and ceil_mode (ONNX maxpool_2d_ceil)") {
  {
    OpTest t;
    Node* n = t.node("MaxPool", {t.input("x", iota(DType::F32, {1, 1, 4, 4}, 1))},
                     {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1, 1, 2, 2});
    check_close(y, {6, 8, 14, 16});
  }
  {
    OpTest t;
    Node* n = t.node(
        "MaxPool", {t.input("x", iota(DType::F32, {1, 1, 4, 4}, 1))},
        {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"ceil_mode", int64_t{1}}});
    check_close(t.run1(n), {11, 12, 15, 16});
  }
}

TEST_CASE("MaxPool 1-D with pads and dilation; padding never wins; int8") {
  {
    OpTest t;
    // Windows cover positions (o-1, o+1) of [3,1,4,1,5]; -1 and 5 are padding.
    Node* n =
        t.node("MaxPool", {t.input("x", f32({1, 1, 5}, {3, 1, 4, 1, 5}))},
               {{"kernel_shape", ints({2})}, {"dilations", ints({2})}, {"pads", ints({1, 1})}});
    check_close(t.run1(n), {1, 4, 1, 5, 1});
  }
  {
    OpTest t;
    Node* n = t.node("MaxPool",
                     {t.input("x", Tensor::from_vector<int>(DType::I8, {1, 1, 3}, {-3, -1, -2}))},
                     {{"kernel_shape", ints({2})}});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::I8);
    check_close(y, {-1, -1});
  }
}

TEST_CASE("AveragePool with pads: count_include_pad 0 and 1") {
  // x = [[1,2,3],[4,5,6],[7,8,9]], 2x2 windows, one pad on every side: 4x4 output.
  auto run = [](int64_t cip) {
    OpTest t;
    Node* n = t.node(
        "AveragePool", {t.input("x", iota(DType::F32, {1, 1, 3, 3}, 1))},
        {{"kernel_shape", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"count_include_pad", cip}});
    return t.run1(n);
  };
  check_close(run(0), {1, 1.5, 2.5, 3, 2.5, 3, 4, 4.5, 5.5, 6, 7, 7.5, 7, 7.5, 8.5, 9});
  check_close(run(1),
              {0.25, 0.75, 1.25, 0.75, 1.25, 3, 4, 2.25, 2.75, 6, 7, 3.75, 1.75, 3.75, 4.25, 2.25});
}

TEST_CASE("AveragePool ceil_mode: positions past the end pad are never counted") {
  // x = [1..5], kernel 3, stride 2, pads [1, 0], ceil_mode: windows (-1,0,1), (1,2,3), (3,4,5);
  // position -1 is padding, position 5 is past the padded end.
  auto run = [](int64_t cip) {
    OpTest t;
    Node* n = t.node("AveragePool", {t.input("x", iota(DType::F32, {1, 1, 5}, 1))},
                     {{"kernel_shape", ints({3})},
                      {"strides", ints({2})},
                      {"pads", ints({1, 0})},
                      {"ceil_mode", int64_t{1}},
                      {"count_include_pad", cip}});
    return t.run1(n);
  };
  check_close(run(1), {1, 3, 4.5});
  check_close(run(0), {1.5, 3, 4.5});
}

TEST_CASE("GlobalAveragePool and GlobalMaxPool") {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    OpTest t;
    Node* n = t.node(op, {t.input("x", f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4}))});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1, 2, 1, 1});
    if (std::string(op) == "GlobalMaxPool")
      check_close(y, {4, -1});
    else
      check_close(y, {2.5, -2.5});
    OpTest s;
    Node* m =
        s.node(op, {s.input("x", DType::F16, sym({Dim::symbol("N"), 8, Dim::symbol("H"), 7}))});
    CHECK(infer(m) == sym({Dim::symbol("N"), 8, 1, 1}));
    CHECK(m->output(0)->dtype() == DType::F16);
  }
}

TEST_CASE("pool shape rules: symbolic dims, SAME, errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 3, 224, Dim::symbol("W")}));
  Node* n = t.node(
      "MaxPool", {x},
      {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"auto_pad", "SAME_UPPER"}});
  CHECK(infer(n) == sym({Dim::symbol("N"), 3, 112, Dim::unknown()}));

  Node* order = t.node("MaxPool", {x}, {{"kernel_shape", ints({3, 3})}, {"storage_order", int64_t{2}}}, 2);
  CHECK(infer_error(order) ==
        "node 'n' (MaxPool): storage_order must be 0 (row major) or 1 (column major), got 2");
  Value* small = t.input("s", DType::F32, Shape{1, 1, 4, 4});
  Node* big = t.node("AveragePool", {small}, {{"kernel_shape", ints({5, 5})}});
  CHECK(infer_error(big) ==
        "node 'n' (AveragePool): kernel extent 5 is larger than the padded input 4 on spatial axis "
        "0");
  Node* rank = t.node("AveragePool", {small}, {{"kernel_shape", ints({2})}});
  CHECK(infer_error(rank) ==
        "node 'n' (AveragePool): kernel_shape [2] has 1 dims, input [1,1,4,4] has 2 spatial dims");
  Node* stride =
      t.node("MaxPool", {small}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({0, 1})}});
  CHECK(infer_error(stride) ==
        "node 'n' (MaxPool): attribute 'strides' value 0 is out of range [1, 1073741824]");
  Node* nokernel = t.node("MaxPool", {small});
  CHECK(infer_error(nokernel) == "node 'n' (MaxPool): missing required attribute 'kernel_shape'");
}

TEST_CASE("pool cost") {
  OpTest t;
  Node* n = t.node("AveragePool", {t.input("x", DType::F32, Shape{1, 2, 4, 4})},
                   {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
  infer_node(*n);
  CHECK(node_cost(*n).flops == 8 * (4 + 1));  // 8 outputs, 4 adds and a division each
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("MaxPool Indices: flat positions in X, row or column major (storage_order)") {
  for (int64_t order : {0, 1}) {
    OpTest t;  // 2 images of 3x3; 2x2 windows, stride 1: maxima at the bottom-right of each window
    Node* n = t.node("MaxPool", {t.input("x", iota(DType::F32, {2, 1, 3, 3}))},
                     {{"kernel_shape", ints({2, 2})}, {"storage_order", order}}, 2);
    std::vector<Tensor> out = t.run(n);
    check_close(out[0], {4, 5, 7, 8, 13, 14, 16, 17});
    CHECK(out[1].dtype() == DType::I64);
    // (h, w) = (1,1), (1,2), (2,1), (2,2): row major h * 3 + w, column major w * 3 + h.
    if (order == 0) check_close(out[1], {4, 5, 7, 8, 13, 14, 16, 17});
    else check_close(out[1], {4, 7, 5, 8, 13, 16, 14, 17});
  }
}

TEST_CASE("LpPool: p-norm of each window; padding adds nothing") {
  OpTest t;  // windows pad+[3] -> 3, [3,4] -> 5, [4,0] -> 4 with p = 2
  Node* n = t.node("LpPool", {t.input("x", f32({1, 1, 3}, {3, 4, 0}))},
                   {{"kernel_shape", ints({2})}, {"pads", ints({1, 0})}, {"p", int64_t{2}}});
  check_close(t.run1(n), {3, 5, 4});
  OpTest u;  // p = 1: the sum of absolute values
  Node* m = u.node("LpPool", {u.input("x", f32({1, 1, 4}, {-1, 2, -3, 4}))},
                   {{"kernel_shape", ints({2})}, {"strides", ints({2})}, {"p", int64_t{1}}});
  check_close(u.run1(m), {3, 7});
}

TEST_CASE("AveragePool 3-D with count_include_pad") {
  OpTest t;  // one 2x2x2 window per corner with pads 1 at the start: one tap inside of 8 padded
  Node* n = t.node("AveragePool", {t.input("x", iota(DType::F32, {1, 1, 2, 2, 2}, 1))},
                   {{"kernel_shape", ints({2, 2, 2})}, {"pads", ints({1, 1, 1, 0, 0, 0})},
                    {"count_include_pad", int64_t{1}}, {"strides", ints({2, 2, 2})}});
  check_close(t.run1(n), {1.0 / 8});
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("MaxUnpool puts each value at its index in a zero output; bad indices fail") {
  OpTest t;  // 2x2 -> 4x4 (kernel 2, stride 2)
  Node* n = t.node("MaxUnpool", {t.input("x", f32({1, 1, 2, 2}, {5, 6, 7, 8})), t.input("i", i64({1, 1, 2, 2}, {0, 3, 9, 15}))},
                   {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 1, 4, 4});
  check_close(y, {5, 0, 0, 6, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 8});
  OpTest u;
  Node* m = u.node("MaxUnpool", {u.input("x", f32({1, 1, 1, 1}, {5})), u.input("i", i64({1, 1, 1, 1}, {4}))},
                   {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
  CHECK(u.eval_error(m) == "node 'n' (MaxUnpool): an index in I is outside the unpooled shape [1,1,2,2]");
  OpTest v;  // output_shape larger than the unpooled 2x2: it fills the top-left corner
  Node* o = v.node("MaxUnpool", {v.input("x", f32({1, 1, 1, 1}, {5})), v.input("i", i64({1, 1, 1, 1}, {3})),
                                 v.constant("shape", i64s({1, 1, 3, 3}))},
                   {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
  check_close(v.run1(o), {0, 0, 0, 0, 5, 0, 0, 0, 0});
}

}  // namespace kiln::ir::test
