// Conv and the shared window resolution (ir/ops/window.h).
#include "ir/ops/window.h"
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("Conv 2-D: the ONNX spec example with and without padding, and strided") {
  // x = 0..24 as [1,1,5,5], W = ones [1,1,3,3].
  auto run = [](AttributeMap attrs) {
    OpTest t;
    Node* n = t.node("Conv",
                     {t.input("x", iota(DType::F32, {1, 1, 5, 5})),
                      t.constant("w", f32({1, 1, 3, 3}, std::vector<float>(9, 1.f)))},
                     std::move(attrs));
    return t.run1(n);
  };
  Tensor padded = run({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  CHECK(padded.dims() == std::vector<int64_t>{1, 1, 5, 5});
  check_close(padded, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                       117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
  Tensor valid = run({});
  CHECK(valid.dims() == std::vector<int64_t>{1, 1, 3, 3});
  check_close(valid, {54, 63, 72, 99, 108, 117, 144, 153, 162});
  Tensor strided = run({{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                        {"strides", std::vector<int64_t>{2, 2}},
                        {"kernel_shape", std::vector<int64_t>{3, 3}}});
  check_close(strided, {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

TEST_CASE("Conv 1-D with groups, dilation and bias") {
  OpTest t;
  // Channel 0 = 1..5 feeds map 0 (weights [1,-1]); channel 1 = 10..50 feeds map 1 ([2,1]).
  Node* n =
      t.node("Conv",
             {t.input("x", f32({1, 2, 5}, {1, 2, 3, 4, 5, 10, 20, 30, 40, 50})),
              t.constant("w", f32({2, 1, 2}, {1, -1, 2, 1})), t.constant("b", f32({2}, {100, 0}))},
             {{"group", int64_t{2}}, {"dilations", std::vector<int64_t>{2}}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 2, 3});
  // map 0: x[i] - x[i+2] + 100; map 1: 2 x[i] + x[i+2]
  check_close(y, {98, 98, 98, 50, 80, 110});
}

TEST_CASE("Conv 3-D and auto_pad SAME_UPPER / SAME_LOWER") {
  {
    OpTest t;
    Node* n = t.node("Conv", {t.input("x", f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1.f))),
                              t.constant("w", f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1.f)))});
    check_close(t.run1(n), {8});
  }
  // x = 0..15 as [1,1,4,4], 2x2 box filter; SAME needs one pad row/col, at the end (UPPER) or
  // at the beginning (LOWER).
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    OpTest t;
    Node* n = t.node("Conv",
                     {t.input("x", iota(DType::F32, {1, 1, 4, 4})),
                      t.constant("w", f32({1, 1, 2, 2}, {1, 1, 1, 1}))},
                     {{"auto_pad", mode}});
    std::vector<double> y = values(t.run1(n));
    REQUIRE(y.size() == 16);
    if (std::string(mode) == "SAME_UPPER") {
      CHECK(y[0] == 10);   // 0+1+4+5
      CHECK(y[3] == 10);   // 3+7
      CHECK(y[15] == 15);  // 15
    } else {
      CHECK(y[0] == 0);    // 0
      CHECK(y[15] == 50);  // 10+11+14+15
    }
  }
}

TEST_CASE("Conv f64 and f16") {
  for (DType dt : {DType::F64, DType::F16}) {
    OpTest t;
    Node* n = t.node("Conv", {t.input("x", iota(dt, {1, 1, 3})),
                              t.constant("w", Tensor::from_vector<float>(dt, {1, 1, 2}, {1, 2}))});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == dt);
    check_close(y, {2, 5});  // 0+2, 1+4
  }
}

// f32 1-D and 2-D Conv runs kiln::rt's conv2d_f32 (im2col + GEMM, 1x1, depthwise); f64 still
// runs the loop over output positions, which checks the kernel here.
TEST_CASE("Conv f32 (the runtime's kernel) agrees with the f64 loop") {
  struct Case {
    const char* what;
    std::vector<int64_t> x, w;
    AttributeMap attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {"3x3, pads 1", {2, 5, 7, 6}, {4, 5, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, true},
      {"strided, dilated, uneven pads",
       {1, 3, 9, 8},
       {6, 3, 3, 2},
       {{"strides", std::vector<int64_t>{2, 3}},
        {"dilations", std::vector<int64_t>{2, 1}},
        {"pads", std::vector<int64_t>{0, 2, 1, 0}}},
       true},
      {"1x1", {1, 8, 4, 5}, {3, 8, 1, 1}, {}, false},
      {"1x1 strided", {1, 8, 5, 5}, {3, 8, 1, 1}, {{"strides", std::vector<int64_t>{2, 2}}}, true},
      {"depthwise 3x3",
       {1, 6, 6, 7},
       {6, 1, 3, 3},
       {{"group", int64_t{6}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
       true},
      {"depthwise strided", {1, 4, 7, 7}, {4, 1, 3, 3}, {{"group", int64_t{4}}, {"strides", std::vector<int64_t>{2, 2}}}, false},
      {"2 groups", {2, 4, 5, 5}, {6, 2, 2, 3}, {{"group", int64_t{2}}}, true},
      {"SAME_LOWER", {1, 3, 6, 5}, {2, 3, 4, 3}, {{"auto_pad", "SAME_LOWER"}}, false},
      {"1-D strided, padded", {2, 3, 11}, {4, 3, 3}, {{"strides", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{1, 2}}}, true},
      {"kernel as large as the padded input", {1, 2, 3, 3}, {2, 2, 5, 5}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    auto run = [&](DType dt) {
      OpTest t;
      std::vector<Value*> in = {t.input("x", random(dt, c.x, 1)), t.constant("w", random(dt, c.w, 2))};
      if (c.bias) in.push_back(t.constant("b", random(dt, {c.w[0]}, 3)));
      return t.run1(t.node("Conv", in, c.attrs));
    };
    Tensor y = run(DType::F32);
    CHECK(y.dtype() == DType::F32);
    check_close(y, values(run(DType::F64)), 1e-5);
  }
}

TEST_CASE("Conv shape rule: symbolic dims and errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 3, Dim::symbol("H"), 32}));
  Value* w = t.input("w", DType::F32, Shape{8, 3, 3, 3});
  Node* n = t.node("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  // The window's output dim as a polynomial of H (symbolic_params.h): 3x3, pads 1, stride 1.
  CHECK(infer(n) == sym({Dim::symbol("N"), 8, Dim::symbol("H"), 32}));
  Node* strided = t.node("Conv", {x, w}, {{"strides", std::vector<int64_t>{2, 2}}});
  CHECK(infer(strided)[2].is_unknown());  // floor((H - 3) / 2) + 1 is no polynomial

  auto error = [&](Shape xs, Shape ws, AttributeMap attrs) {
    OpTest e;
    Node* c = e.node("Conv", {e.input("x", DType::F32, xs), e.input("w", DType::F32, ws)},
                     std::move(attrs));
    std::string msg;
    try {
      infer_node(*c);
    } catch (const Error& err) {
      msg = err.what();
    }
    return msg;
  };
  CHECK(error(Shape{1, 4, 8, 8}, Shape{8, 3, 3, 3}, {}) ==
        "node 'n' (Conv): weight W [8,3,3,3] expects 3 input channels per group, "
        "X [1,4,8,8] has 4 channels in 1 groups");
  CHECK(error(Shape{1, 4, 8, 8}, Shape{8, 2, 3, 3}, {{"group", int64_t{3}}}) ==
        "node 'n' (Conv): group 3 does not divide the 4 input channels");
  CHECK(error(Shape{1, 3, 2, 2}, Shape{8, 3, 3, 3}, {}) ==
        "node 'n' (Conv): kernel extent 3 is larger than the padded input 2 on spatial axis 0");
  CHECK(
      error(Shape{1, 3, 8, 8}, Shape{8, 3, 3, 3}, {{"pads", std::vector<int64_t>{0, -1, 0, 0}}}) ==
      "node 'n' (Conv): pads [0,-1,0,0] must be non-negative");
  CHECK(error(Shape{1, 3, 8}, Shape{8, 3, 3, 3}, {}) ==
        "node 'n' (Conv): weight W has shape [8,3,3,3], expected rank 3 like X [1,3,8]");
  CHECK(error(Shape{1, 3, 8, 8}, Shape{8, 3, 3, 3}, {{"auto_pad", "SAME"}}) ==
        "node 'n' (Conv): unknown auto_pad 'SAME' (expected NOTSET, SAME_UPPER, SAME_LOWER or "
        "VALID)");
}

TEST_CASE("Conv cost counts a multiply-add as two flops") {
  OpTest t;
  Node* n = t.node(
      "Conv",
      {t.input("x", DType::F32, Shape{1, 1, 5, 5}), t.input("w", DType::F32, Shape{1, 1, 3, 3})},
      {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  infer_node(*n);
  CHECK(node_cost(*n).flops == 2.0 * 9 * 25);
}

TEST_CASE("resolve_window: SAME pads, ceil_mode, symbolic dims") {
  OpTest t;
  Node* same = t.node("MaxPool", {t.input("x", DType::F32, Shape{1, 1, 5})},
                      {{"auto_pad", "SAME_UPPER"},
                       {"kernel_shape", std::vector<int64_t>{3}},
                       {"strides", std::vector<int64_t>{2}}});
  ResolvedWindow w = resolve_window(*same, {5}, {3});
  CHECK(w.out_dims == std::vector<int64_t>{3});
  CHECK(w.pads_begin == std::vector<int64_t>{1});
  CHECK(w.pads_end == std::vector<int64_t>{1});
  ResolvedWindow s = resolve_window(*same, {-1}, {3});
  CHECK(s.out_dims == std::vector<int64_t>{-1});

  // ONNX maxpool_2d_ceil_output_size_reduce_by_one: a window may not start past the input.
  Node* ceil = t.node("MaxPool", {t.input("x2", DType::F32, Shape{1, 1, 2, 2})},
                      {{"ceil_mode", int64_t{1}},
                       {"kernel_shape", std::vector<int64_t>{1, 1}},
                       {"strides", std::vector<int64_t>{2, 2}}});
  CHECK(resolve_window(*ceil, {2, 2}, {1, 1}).out_dims == std::vector<int64_t>{1, 1});
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("Conv reference revalidates run-time shapes (untrusted inputs)") {
  OpTest t;
  // Inferred with a symbolic spatial dim; fed an input smaller than the kernel.
  Value* x = t.input("x", f32({1, 1, 2}, {1, 2}));
  Node* n = t.node("Conv", {x, t.constant("w", f32({1, 1, 3}, {1, 1, 1}))});
  CHECK(t.eval_error(n) ==
        "node 'n' (Conv): kernel extent 3 is larger than the padded input 2 on spatial axis 0");
  OpTest u;
  Node* m = u.node(
      "Conv", {u.input("x", f32({1, 1, 3}, {1, 2, 3})), u.constant("w", f32({2, 1, 1}, {1, 1})),
               u.constant("b", f32({3}, {0, 0, 0}))});
  CHECK(u.eval_error(m) == "node 'n' (Conv): bias B [3] does not match the 2 output channels");
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("ConvTranspose 1-D: overlapping taps add up; strides and pads") {
  {
    OpTest t;
    Node* n = t.node("ConvTranspose", {t.input("x", f32({1, 1, 3}, {1, 2, 3})), t.constant("w", f32({1, 1, 2}, {1, 1}))});
    check_close(t.run1(n), {1, 3, 5, 3});
  }
  {
    OpTest t;  // full output [1,1,3,2,5,3,3]; pads drop one element at each end
    Node* n = t.node("ConvTranspose",
                     {t.input("x", f32({1, 1, 3}, {1, 2, 3})), t.constant("w", f32({1, 1, 3}, {1, 1, 1}))},
                     {{"strides", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{1, 1}}});
    check_close(t.run1(n), {1, 3, 2, 5, 3});
  }
  {
    OpTest t;  // SAME_UPPER: output 3 * 2 = 6, total padding 1 goes to the end
    Node* n = t.node("ConvTranspose",
                     {t.input("x", f32({1, 1, 3}, {1, 2, 3})), t.constant("w", f32({1, 1, 3}, {1, 1, 1}))},
                     {{"strides", std::vector<int64_t>{2}}, {"auto_pad", "SAME_UPPER"}});
    check_close(t.run1(n), {1, 1, 3, 2, 5, 3});
  }
}

TEST_CASE("ConvTranspose groups with bias; 2-D output_padding; f64") {
  {
    OpTest t;
    Node* n = t.node("ConvTranspose", {t.input("x", f32({1, 2, 2}, {1, 2, 3, 4})),
                                       t.constant("w", f32({2, 1, 1}, {2, 3})), t.constant("b", f32({2}, {10, 20}))},
                     {{"group", int64_t{2}}});
    check_close(t.run1(n), {12, 14, 29, 32});
  }
  {
    OpTest t;  // one input element, 2x2 kernel, stride 2, one extra row and column of zeros
    Node* n = t.node("ConvTranspose",
                     {t.input("x", f32({1, 1, 1, 1}, {5})), t.constant("w", f32({1, 1, 2, 2}, {1, 2, 3, 4}))},
                     {{"strides", std::vector<int64_t>{2, 2}}, {"output_padding", std::vector<int64_t>{1, 1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1, 1, 3, 3});
    check_close(y, {5, 10, 0, 15, 20, 0, 0, 0, 0});
  }
  {
    OpTest t;
    Node* n = t.node("ConvTranspose",
                     {t.input("x", Tensor::from_vector<double>(DType::F64, {1, 1, 3}, {1, 2, 3})),
                      t.constant("w", Tensor::from_vector<double>(DType::F64, {1, 1, 2}, {1, 1}))});
    check_close(t.run1(n), {1, 3, 5, 3});
  }
}

TEST_CASE("ConvTranspose validates output_padding and W against X") {
  OpTest t;
  Node* n = t.node("ConvTranspose",
                   {t.input("x", DType::F32, Shape{1, 1, 3}), t.input("w", DType::F32, Shape{1, 1, 3})},
                   {{"output_padding", std::vector<int64_t>{1}}});
  CHECK(infer_error(n) ==
        "node 'n' (ConvTranspose): output_padding [1] must be less than the stride or the dilation of its axis");
  OpTest u;
  Node* m = u.node("ConvTranspose",
                   {u.input("x", DType::F32, Shape{1, 2, 3}), u.input("w", DType::F32, Shape{1, 1, 3})});
  CHECK(infer_error(m) == "node 'n' (ConvTranspose): weight W [1,1,3] expects 1 input channels, X [1,2,3] has 2");
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("Col2Im 1-D: overlapping blocks add up; the input must hold every sliding block") {
  OpTest t;  // block 2 over image 3: blocks at 0 and 1; row k holds tap k of each block
  Node* n = t.node("Col2Im", {t.input("x", f32({1, 2, 2}, {1, 2, 3, 4})), t.constant("image", i64s({3})),
                              t.constant("block", i64s({2}))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 1, 3});
  check_close(y, {1, 5, 4});
  OpTest u;
  Node* m = u.node("Col2Im", {u.input("x", f32({1, 2, 3}, {1, 2, 3, 4, 5, 6})), u.constant("image", i64s({3})),
                              u.constant("block", i64s({2}))});
  CHECK(infer_error(m) == "node 'n' (Col2Im): input dim 2 is 3, but the image has 2 sliding blocks");
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("DeformConv 1x1: offsets move the tap (bilinear, zero outside); mask scales it") {
  OpTest t;  // tap (0,0) moves by (0.5, 0.5): the mean of all four; tap (0,1) moves up out of X
  Node* n = t.node("DeformConv",
                   {t.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})), t.constant("w", f32({1, 1, 1, 1}, {1})),
                    t.input("offset", f32({1, 2, 2, 2}, {0.5f, -1, 0, 0, 0.5f, 0, 0, 0})), t.constant("b", f32({1}, {10})),
                    t.input("mask", f32({1, 1, 2, 2}, {1, 1, 1, 0.5f}))});
  check_close(t.run1(n), {12.5, 10, 13, 12});
}

}  // namespace kiln::ir::test
