// Reduce*, ArgMax, ArgMin, CumSum, CumProd, TopK: hand-computed cases.
#include <cmath>

#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

// Reduces x = [[1,2],[3,4]] with `op` over `axes` (none: all), keepdims as given.
Tensor reduce(const std::string& op, std::vector<int64_t> axes, int64_t keepdims = 1) {
  OpTest t;
  std::vector<Value*> in = {t.input("x", f32({2, 2}, {1, -2, 3, 4}))};
  if (!axes.empty()) in.push_back(t.constant("a", i64s(axes)));
  return t.run1(t.node(op, in, {{"keepdims", keepdims}}));
}

}  // namespace

TEST_CASE("Reduce*: each reduction over one axis and over all") {
  check_close(reduce("ReduceSum", {1}), {-1, 7});
  check_close(reduce("ReduceMean", {0}), {2, 1});
  check_close(reduce("ReduceMax", {}), {4});
  check_close(reduce("ReduceMin", {-1}), {-2, 3});
  check_close(reduce("ReduceProd", {}), {-24});
  check_close(reduce("ReduceL1", {}), {10});
  check_close(reduce("ReduceL2", {0}), {std::sqrt(10.0), std::sqrt(20.0)});
  check_close(reduce("ReduceSumSquare", {1}), {5, 25});
  check_close(reduce("ReduceLogSum", {0}), {std::log(4.0), std::log(2.0)});
  check_close(reduce("ReduceLogSumExp", {1}),
              {std::log(std::exp(1.0) + std::exp(-2.0)), std::log(std::exp(3.0) + std::exp(4.0))});
  CHECK(reduce("ReduceSum", {1}, 1).dims() == std::vector<int64_t>{2, 1});
  CHECK(reduce("ReduceSum", {1}, 0).dims() == std::vector<int64_t>{2});
  CHECK(reduce("ReduceSum", {}, 0).dims().empty());
}

TEST_CASE("Reduce*: empty axes with noop_with_empty_axes, empty sets, repeated axes") {
  {
    OpTest t;
    Node* n = t.node("ReduceSum", {t.input("x", f32({2}, {1, 2})), t.constant("a", i64({0}, {}))},
                     {{"noop_with_empty_axes", int64_t{1}}});
    check_close(t.run1(n), {1, 2});
  }
  {
    // Reducing a zero-sized axis gives each reduction's identity.
    OpTest t;
    Node* n = t.node("ReduceProd", {t.input("x", f32({2, 0}, {})), t.constant("a", i64s({1}))});
    check_close(t.run1(n), {1, 1});
  }
  OpTest t;
  Node* n = t.node("ReduceMax", {t.input("x", f32({2, 0}, {})), t.constant("a", i64s({1}))});
  Tensor y = t.run1(n);
  CHECK(std::isinf(y.as_double(0)));
  CHECK(infer_error(t.node("ReduceSum", {t.input("z", DType::F32, Shape{2, 2}),
                                         t.constant("b", i64s({1, -1}))})) ==
        "node 'n' (ReduceSum): axis -1 is repeated in [1,-1]");
}

TEST_CASE("ArgMax and ArgMin: ties, select_last_index, keepdims") {
  OpTest t;
  Value* x = t.input("x", f32({2, 3}, {1, 5, 5, 2, 2, 0}));
  CHECK(t.run1(t.node("ArgMax", {x}, {{"axis", int64_t{1}}})).to_int64_vector() ==
        std::vector<int64_t>{1, 0});
  CHECK(t.run1(t.node("ArgMax", {x}, {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}))
            .to_int64_vector() == std::vector<int64_t>{2, 1});
  Tensor y = t.run1(t.node("ArgMin", {x}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}}));
  CHECK(y.dims() == std::vector<int64_t>{3});
  CHECK(y.to_int64_vector() == std::vector<int64_t>{0, 1, 1});
}

TEST_CASE("CumSum: exclusive and reverse") {
  auto cumsum = [](int64_t exclusive, int64_t reverse) {
    OpTest t;
    Node* n = t.node("CumSum", {t.input("x", f32({4}, {1, 2, 3, 4})), t.constant("a", i64({}, {0}))},
                     {{"exclusive", exclusive}, {"reverse", reverse}});
    return values(t.run1(n));
  };
  CHECK(cumsum(0, 0) == std::vector<double>{1, 3, 6, 10});
  CHECK(cumsum(1, 0) == std::vector<double>{0, 1, 3, 6});
  CHECK(cumsum(0, 1) == std::vector<double>{10, 9, 7, 4});
  CHECK(cumsum(1, 1) == std::vector<double>{9, 7, 4, 0});
}

TEST_CASE("CumProd: exclusive and reverse, int32 along axis 1") {
  auto cumprod = [](int64_t exclusive, int64_t reverse) {
    OpTest t;
    Node* n = t.node("CumProd", {t.input("x", f32({4}, {1, 2, 3, 4})), t.constant("a", i64({}, {0}))},
                     {{"exclusive", exclusive}, {"reverse", reverse}});
    return values(t.run1(n));
  };
  CHECK(cumprod(0, 0) == std::vector<double>{1, 2, 6, 24});
  CHECK(cumprod(1, 0) == std::vector<double>{1, 1, 2, 6});
  CHECK(cumprod(0, 1) == std::vector<double>{24, 24, 12, 4});
  CHECK(cumprod(1, 1) == std::vector<double>{24, 12, 4, 1});
  OpTest t;
  Node* n = t.node("CumProd", {t.input("x", Tensor::from_vector<int32_t>(DType::I32, {2, 2}, {2, 3, 4, 5})),
                               t.constant("a", Tensor::from_vector<int32_t>(DType::I32, {}, {-1}))});
  CHECK(values(t.run1(n)) == std::vector<double>{2, 6, 4, 20});
}

TEST_CASE("TopK: largest and smallest, ties by lower index") {
  OpTest t;
  Value* x = t.input("x", f32({1, 5}, {3, 1, 3, 7, 1}));
  std::vector<Tensor> y = t.run(t.node("TopK", {x, t.constant("k", i64s({3}))}, {}, 2));
  check_close(y[0], {7, 3, 3});
  CHECK(y[1].to_int64_vector() == std::vector<int64_t>{3, 0, 2});
  y = t.run(t.node("TopK", {x, t.constant("k2", i64s({2}))}, {{"largest", int64_t{0}}}, 2));
  check_close(y[0], {1, 1});
  CHECK(y[1].to_int64_vector() == std::vector<int64_t>{1, 4});
}

}  // namespace kiln::ir::test
