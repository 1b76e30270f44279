// GridSample and AffineGrid: hand-checked values.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("GridSample linear: align_corners maps -1 and 1 to the corner pixels; zeros padding") {
  {
    OpTest t;  // grid (x, y): the centre, the top-left and the top-right corner
    Node* n = t.node("GridSample", {t.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})),
                                    t.input("grid", f32({1, 1, 3, 2}, {0, 0, -1, -1, 1, -1}))},
                     {{"align_corners", int64_t{1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1, 1, 1, 3});
    check_close(y, {2.5, 1, 2});
  }
  {
    OpTest t;  // without align_corners, -1 is half a pixel outside: a quarter of pixel (0, 0)
    Node* n = t.node("GridSample", {t.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})),
                                    t.input("grid", f32({1, 1, 1, 2}, {-1, -1}))});
    check_close(t.run1(n), {0.25});
  }
}

TEST_CASE("GridSample nearest rounds half to even, then border padding clamps") {
  OpTest t;  // x = 2.5 -> 2 -> clamped to 1; y = 0.5 -> 0
  Node* n = t.node("GridSample", {t.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})),
                                  t.input("grid", f32({1, 1, 1, 2}, {2, 0}))},
                   {{"mode", "nearest"}, {"padding_mode", "border"}});
  check_close(t.run1(n), {2});
}

TEST_CASE("AffineGrid 2-D: pixel centres at +-0.5 for a 2x2 output, transformed by theta") {
  OpTest t;
  Node* n = t.node("AffineGrid", {t.input("theta", f32({1, 2, 3}, {1, 0, 0.25f, 0, 2, 0})),
                                  t.constant("size", i64s({1, 1, 2, 2}))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 2, 2, 2});
  check_close(y, {-0.25, -1, 0.75, -1, -0.25, 1, 0.75, 1});
}

TEST_CASE("GridSample validates the grid against X") {
  OpTest t;
  Node* n = t.node("GridSample", {t.input("x", DType::F32, Shape{1, 1, 4, 4}), t.input("g", DType::F32, Shape{1, 2, 2, 3})});
  CHECK(infer_error(n) ==
        "node 'n' (GridSample): grid's last dim is 3, expected 2 (one coordinate per spatial axis of X)");
}

}  // namespace kiln::ir::test
