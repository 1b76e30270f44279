// Resize (and so Upsample, which the ONNX frontend turns into it): hand-checked values.
#include "op_test_util.h"

namespace kiln::ir::test {

namespace {
Tensor f32s(const std::vector<float>& v) { return f32({static_cast<int64_t>(v.size())}, v); }
}  // namespace

TEST_CASE("Resize nearest 2x, half_pixel + round_prefer_floor repeats each element") {
  OpTest t;
  Node* n = t.node("Resize", {t.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})), nullptr,
                              t.constant("scales", f32s({1, 1, 2, 2}))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 1, 4, 4});
  check_close(y, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST_CASE("Resize linear: half_pixel clamps at the edges; align_corners hits both ends") {
  {
    OpTest t;  // x = (y + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25
    Node* n = t.node("Resize", {t.input("x", f32s({1, 2})), nullptr, t.constant("s", f32s({2}))},
                     {{"mode", "linear"}});
    check_close(t.run1(n), {1, 1.25, 1.75, 2});
  }
  {
    OpTest t;  // x = y * (2 - 1) / (4 - 1)
    Node* n = t.node("Resize", {t.input("x", f32s({1, 2})), nullptr, t.constant("s", f32s({2}))},
                     {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}});
    check_close(t.run1(n), {1, 4.0 / 3, 5.0 / 3, 2});
  }
}

TEST_CASE("Resize cubic (A = -0.75), asymmetric: weights -3/32, 19/32, 19/32, -3/32 at x.5") {
  OpTest t;
  Node* n = t.node("Resize", {t.input("x", f32s({0, 1, 4, 9})), nullptr, t.constant("s", f32s({2}))},
                   {{"mode", "cubic"}, {"coordinate_transformation_mode", "asymmetric"}});
  Tensor y = t.run1(n);
  REQUIRE(y.numel() == 8);
  // y=1: x=0.5, taps -1..2 clamp to values 0,0,1,4; y=2: x=1 exactly; y=3: x=1.5 over 0,1,4,9;
  // y=5: x=2.5 over 1,4,9,9 (clamped); y=7: x=3.5 over 4,9,9,9.
  check_close(y, {0, 7.0 / 32, 1, 68.0 / 32, 4, 217.0 / 32, 9, 303.0 / 32});
}

TEST_CASE("Resize sizes with axes and keep_aspect_ratio_policy not_larger") {
  OpTest t;  // scale min(1/2, 3/4) = 0.5 on both axes: 1 x 2 output, sources (0.5, 0.5) and (0.5, 2.5)
  Node* n = t.node("Resize", {t.input("x", f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})), nullptr, nullptr,
                              t.constant("sizes", i64s({1, 3}))},
                   {{"axes", std::vector<int64_t>{2, 3}}, {"keep_aspect_ratio_policy", "not_larger"}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 1, 1, 2});
  check_close(y, {1, 3});
}

TEST_CASE("Resize tf_crop_and_resize: roi from 0.5 to 1.5, outside gives the extrapolation value") {
  OpTest t;  // x = 0.5 * 3 + y * (1.5 - 0.5) * 3 / 2 = 1.5, 3, 4.5 (outside)
  Node* n = t.node("Resize", {t.input("x", f32s({1, 2, 3, 4})), t.input("roi", f32s({0.5f, 1.5f})), nullptr,
                              t.constant("sizes", i64s({3}))},
                   {{"mode", "linear"},
                    {"coordinate_transformation_mode", "tf_crop_and_resize"},
                    {"extrapolation_value", 10.0f}});
  check_close(t.run1(n), {2.5, 4, 10});
}

TEST_CASE("Resize shape rule: non-constant scales leave the resized axes unknown; errors name the node") {
  OpTest t;
  Node* n = t.node("Resize", {t.input("x", DType::F32, Shape{1, 3, 4, 4}), nullptr,
                              t.input("scales", DType::F32, Shape{2})},
                   {{"axes", std::vector<int64_t>{2, 3}}});
  Shape s = infer(n);
  CHECK(s[1].value() == 3);
  CHECK(!s[2].is_static());
  OpTest u;
  Node* bad = u.node("Resize", {u.input("x", f32s({1, 2})), nullptr, u.constant("s", f32s({2}))},
                     {{"mode", "bicubic"}});
  CHECK(infer_error(bad) == "node 'n' (Resize): mode 'bicubic' is not one of nearest, linear, cubic");
  OpTest v;
  Node* both = v.node("Resize", {v.input("x", f32s({1, 2})), nullptr, v.constant("s", f32s({2})),
                                 v.constant("sizes", i64s({4}))});
  CHECK(infer_error(both) == "node 'n' (Resize): give exactly one of scales and sizes (non-empty)");
}

}  // namespace kiln::ir::test
