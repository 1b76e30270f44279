// GatherElements, GatherND, ScatterElements, ScatterND, OneHot, NonZero, Unique:
// hand-computed cases and index errors.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("GatherElements: along axis 1, negative indices, out of range") {
  OpTest t;
  Value* x = t.input("x", f32({2, 2}, {1, 2, 3, 4}));
  Node* n = t.node("GatherElements", {x, t.input("i", i64({2, 2}, {0, 0, 1, -2}))},
                   {{"axis", int64_t{1}}});
  check_close(t.run1(n), {1, 1, 4, 3});
  Node* bad = t.node("GatherElements", {x, t.input("j", i64({1, 1}, {2}))}, {{"axis", int64_t{1}}});
  infer_node(*bad);
  CHECK(t.eval_error(bad) ==
        "node 'n' (GatherElements): index 2 is out of range for a dim of size 2");
}

TEST_CASE("ScatterElements: none and add with duplicates") {
  OpTest t;
  Value* x = t.input("x", f32({1, 4}, {1, 2, 3, 4}));
  Value* i = t.input("i", i64({1, 2}, {1, 1}));
  Value* u = t.input("u", f32({1, 2}, {10, 20}));
  check_close(t.run1(t.node("ScatterElements", {x, i, u}, {{"axis", int64_t{1}}})), {1, 20, 3, 4});
  check_close(t.run1(t.node("ScatterElements", {x, i, u},
                            {{"axis", int64_t{1}}, {"reduction", "add"}})),
              {1, 32, 3, 4});
}

TEST_CASE("GatherND and ScatterND") {
  {
    // Tuples of 2 pick elements; batch_dims 1 picks rows per batch.
    OpTest t;
    Value* x = t.input("x", iota(DType::I32, {2, 2}));
    CHECK(t.run1(t.node("GatherND", {x, t.input("i", i64({2, 2}, {0, 0, 1, 1}))}))
              .to_int64_vector() == std::vector<int64_t>{0, 3});
    CHECK(t.run1(t.node("GatherND", {x, t.input("j", i64({2, 1}, {1, 0}))},
                        {{"batch_dims", int64_t{1}}}))
              .to_int64_vector() == std::vector<int64_t>{1, 2});
  }
  OpTest t;
  Node* n = t.node("ScatterND", {t.input("x", f32({2, 2}, {1, 2, 3, 4})), t.input("i", i64({1, 1}, {1})),
                                 t.input("u", f32({1, 2}, {5, 6}))},
                   {{"reduction", "mul"}});
  check_close(t.run1(n), {1, 2, 15, 24});
}

TEST_CASE("OneHot: axis and negative indices") {
  OpTest t;
  Node* n = t.node("OneHot", {t.input("i", i64s({0, -1})), t.constant("d", i64({}, {3})),
                              t.input("v", f32({2}, {0, 5}))},
                   {{"axis", int64_t{0}}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{3, 2});
  check_close(y, {5, 0, 0, 0, 0, 5});
}

TEST_CASE("NonZero and Unique") {
  {
    OpTest t;
    Tensor y = t.run1(t.node("NonZero", {t.input("x", f32({2, 2}, {0, 1, 2, 0}))}));
    CHECK(y.dims() == std::vector<int64_t>{2, 2});
    CHECK(y.to_int64_vector() == std::vector<int64_t>{0, 1, 1, 0});
  }
  OpTest t;
  std::vector<Tensor> y = t.run(t.node("Unique", {t.input("x", f32({5}, {2, 1, 2, 3, 1}))}, {}, 4));
  check_close(y[0], {1, 2, 3});
  CHECK(y[1].to_int64_vector() == std::vector<int64_t>{1, 0, 3});
  CHECK(y[2].to_int64_vector() == std::vector<int64_t>{1, 0, 1, 2, 0});
  CHECK(y[3].to_int64_vector() == std::vector<int64_t>{2, 2, 1});
  // NaN sorts after every number and equals NaN, as the compiled kernel has it (and the order
  // std::map and std::sort need, whatever the data holds).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTest u;
  std::vector<Tensor> z = u.run(u.node("Unique", {u.input("x", f32({6}, {nan, 2, nan, -1, 2, nan}))}, {}, 4));
  REQUIRE(z[0].numel() == 3);
  CHECK(z[0].data<float>()[0] == -1.0f);
  CHECK(z[0].data<float>()[1] == 2.0f);
  CHECK(std::isnan(z[0].data<float>()[2]));
  CHECK(z[1].to_int64_vector() == std::vector<int64_t>{3, 1, 0});
  CHECK(z[2].to_int64_vector() == std::vector<int64_t>{2, 1, 2, 0, 1, 2});
  CHECK(z[3].to_int64_vector() == std::vector<int64_t>{1, 2, 3});
}

}  // namespace kiln::ir::test
