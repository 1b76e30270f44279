// LayerNormalization, RMSNormalization, GroupNormalization, InstanceNormalization,
// MeanVarianceNormalization, LpNormalization, LRN; values worked out by hand.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("LayerNormalization over the last axis, with Mean and InvStdDev") {
  // Row [1, 3]: mean 2, var 1 -> [-1, 1]; row [0, 4]: mean 2, var 4 -> [-1, 1].
  // Scale [2, 1] and B [0, 1] give [-2, 2] for both.
  for (DType dt : {DType::F32, DType::F64, DType::F16}) {
    OpTest t;
    Node* n = t.node("LayerNormalization",
                     {t.input("x", Tensor::from_vector<double>(dt, {2, 2}, {1, 3, 0, 4})),
                      t.constant("s", Tensor::from_vector<double>(dt, {2}, {2, 1})),
                      t.constant("b", Tensor::from_vector<double>(dt, {2}, {0, 1}))},
                     {{"epsilon", 0.0f}}, 3);
    std::vector<Tensor> out = t.run(n);
    check_close(out[0], {-2, 2, -2, 2}, dt == DType::F16 ? 1e-3 : 1e-6);
    check_close(out[1], {2, 2});
    check_close(out[2], {1, 0.5});
    CHECK(out[1].dtype() == (dt == DType::F64 ? DType::F64 : DType::F32));
    CHECK(n->output(1)->shape() == Shape{2, 1});
  }
}

TEST_CASE("LayerNormalization over all dims (axis 0) broadcasts a smaller scale") {
  // [1, 3, 0, 4]: mean 2, var (1 + 1 + 4 + 4) / 4 = 2.5, inv = 1 / sqrt(2.5).
  // Scale [1, 2] broadcasts over the rows; no bias.
  OpTest t;
  Node* n = t.node("LayerNormalization", {t.input("x", f32({2, 2}, {1, 3, 0, 4})), t.constant("s", f32({2}, {1, 2}))},
                   {{"axis", int64_t{0}}, {"epsilon", 0.0f}});
  const double inv = 1 / std::sqrt(2.5);
  check_close(t.run1(n), {-1 * inv, 1 * inv * 2, -2 * inv, 2 * inv * 2});
}

TEST_CASE("LayerNormalization shape rule: stats shapes and errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("B"), 4, 6}));
  Node* n = t.node("LayerNormalization", {x, t.input("s", DType::F32, Shape{4, 6})}, {{"axis", int64_t{1}}}, 3);
  infer_node(*n);
  CHECK(n->output(1)->shape() == sym({Dim::symbol("B"), 1, 1}));
  CHECK(infer_error(t.node("LayerNormalization", {x, t.input("w", DType::F32, Shape{5})})) ==
        "node 'n' (LayerNormalization): scale [5] does not broadcast to the normalized shape [6]");
  CHECK(infer_error(t.node("LayerNormalization", {x, t.input("s2", DType::F32, Shape{6})}, {{"axis", int64_t{3}}})) ==
        "node 'n' (LayerNormalization): axis 3 is out of range for rank 3");
}

TEST_CASE("RMSNormalization: x / sqrt(mean(x^2) + eps) * scale") {
  // [3, 4]: mean square 12.5 -> [3, 4] / sqrt(12.5) * [1, 2].
  OpTest t;
  Node* n = t.node("RMSNormalization", {t.input("x", f32({1, 2}, {3, 4})), t.constant("s", f32({2}, {1, 2}))},
                   {{"epsilon", 0.0f}});
  check_close(t.run1(n), {0.84852814, 2.26274170});
}

TEST_CASE("GroupNormalization and InstanceNormalization") {
  // x [1, 2, 2] = channel 0 [1, 3], channel 1 [5, 7]; scale [1, 2], bias [0, 1].
  {
    // One group: mean 4, var 5.
    OpTest t;
    Node* n = t.node("GroupNormalization",
                     {t.input("x", f32({1, 2, 2}, {1, 3, 5, 7})), t.constant("s", f32({2}, {1, 2})),
                      t.constant("b", f32({2}, {0, 1}))},
                     {{"epsilon", 0.0f}, {"num_groups", int64_t{1}}});
    const double r5 = 1 / std::sqrt(5.0);
    check_close(t.run1(n), {-3 * r5, -1 * r5, 1 * r5 * 2 + 1, 3 * r5 * 2 + 1});
  }
  {
    // Per channel: [1, 3] -> [-1, 1]; [5, 7] -> [-1, 1] * 2 + 1 = [-1, 3].
    OpTest t;
    Node* n = t.node("InstanceNormalization",
                     {t.input("x", f32({1, 2, 2}, {1, 3, 5, 7})), t.constant("s", f32({2}, {1, 2})),
                      t.constant("b", f32({2}, {0, 1}))},
                     {{"epsilon", 0.0f}});
    check_close(t.run1(n), {-1, 1, -1, 3});
  }
  OpTest t;
  Node* n = t.node("GroupNormalization",
                   {t.input("x", DType::F32, Shape{1, 6, 2}), t.input("s", DType::F32, Shape{6}),
                    t.input("b", DType::F32, Shape{6})},
                   {{"num_groups", int64_t{4}}});
  CHECK(infer_error(n) == "node 'n' (GroupNormalization): num_groups 4 must be positive and divide the 6 channels");
}

TEST_CASE("MeanVarianceNormalization over the default axes [0, 2, 3]") {
  // Channel 0 [1, 3]: mean 2, std 1; channel 1 [5, 9]: mean 7, std 2.
  OpTest t;
  Node* n = t.node("MeanVarianceNormalization", {t.input("x", f32({1, 2, 1, 2}, {1, 3, 5, 9}))});
  check_close(t.run1(n), {-1, 1, -1, 1});
}

TEST_CASE("LpNormalization with p 2 and p 1") {
  {
    OpTest t;
    check_close(t.run1(t.node("LpNormalization", {t.input("x", f32({1, 2}, {3, 4}))})), {0.6, 0.8});
  }
  {
    OpTest t;
    Node* n = t.node("LpNormalization", {t.input("x", f32({2, 1}, {3, -4}))}, {{"axis", int64_t{0}}, {"p", int64_t{1}}});
    check_close(t.run1(n), {3.0 / 7, -4.0 / 7});
  }
  {
    // A zero norm gives zeros, not 0 / 0.
    OpTest t;
    check_close(t.run1(t.node("LpNormalization", {t.input("x", f32({1, 2}, {0, 0}))})), {0, 0});
  }
  OpTest t;
  CHECK(infer_error(t.node("LpNormalization", {t.input("x", DType::F32, Shape{2})}, {{"p", int64_t{3}}})) ==
        "node 'n' (LpNormalization): p must be 1 or 2, got 3");
}

TEST_CASE("LRN across channels") {
  // x [1, 3, 1] = [1, 2, 3], size 3, alpha 3 (alpha / size = 1), beta 1, bias 1:
  // c0 sums 1 + 4 = 5 -> 1 / 6; c1 sums 14 -> 2 / 15; c2 sums 13 -> 3 / 14.
  OpTest t;
  Node* n = t.node("LRN", {t.input("x", f32({1, 3, 1}, {1, 2, 3}))},
                   {{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}});
  check_close(t.run1(n), {1.0 / 6, 2.0 / 15, 3.0 / 14});
}

}  // namespace kiln::ir::test
