// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss; values worked out by hand.
#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

// x [2, 3] = [[-1, -2, -3], [-4, -5, -6]] with targets [2, 0]: losses [3, 4].
Tensor nll_x() { return f32({2, 3}, {-1, -2, -3, -4, -5, -6}); }

Tensor nll(const std::string& reduction, AttributeMap extra = {}, const Tensor* weight = nullptr) {
  OpTest t;
  std::vector<Value*> in = {t.input("x", nll_x()), t.input("t", i64({2}, {2, 0}))};
  if (weight) in.push_back(t.constant("w", *weight));
  extra["reduction"] = Attribute(reduction);
  return t.run1(t.node("NegativeLogLikelihoodLoss", in, extra));
}

}  // namespace

TEST_CASE("NegativeLogLikelihoodLoss reductions, weights and ignore_index") {
  check_close(nll("none"), {3, 4});
  check_close(nll("sum"), {7});
  check_close(nll("mean"), {3.5});
  // Weights [1, 2, 0.5]: losses [3 * 0.5, 4 * 1]; the mean divides by the weights used, 1.5.
  const Tensor w = f32({3}, {1, 2, 0.5});
  check_close(nll("none", {}, &w), {1.5, 4});
  check_close(nll("mean", {}, &w), {5.5 / 1.5});
  // Ignoring class 0 drops the second loss; the mean counts only the first.
  check_close(nll("none", {{"ignore_index", int64_t{0}}}), {3, 0});
  check_close(nll("mean", {{"ignore_index", int64_t{0}}}), {3});
  check_close(nll("mean", {{"ignore_index", int64_t{0}}}, &w), {3});
}

TEST_CASE("NegativeLogLikelihoodLoss with trailing dims and int32 targets") {
  // x [1, 2, 2]: x[0][c][d] = [[-1, -2], [-3, -4]]; targets [[1, 0]] pick -3 and -2.
  OpTest t;
  Node* n = t.node("NegativeLogLikelihoodLoss",
                   {t.input("x", f32({1, 2, 2}, {-1, -2, -3, -4})),
                    t.input("t", Tensor::from_vector<int32_t>(DType::I32, {1, 2}, {1, 0}))},
                   {{"reduction", Attribute("none")}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 2});
  check_close(y, {3, 2});
}

TEST_CASE("NegativeLogLikelihoodLoss errors: target out of range, shapes, reduction") {
  {
    OpTest t;
    Node* n = t.node("NegativeLogLikelihoodLoss", {t.input("x", nll_x()), t.input("t", i64({2}, {2, 3}))});
    infer_node(*n);
    CHECK(t.eval_error(n) ==
          "node 'n' (NegativeLogLikelihoodLoss): target 3 at position 1 is outside the 3 classes [0, 3)");
  }
  OpTest t;
  Value* x = t.input("x", DType::F32, Shape{2, 3, 4});
  CHECK(infer_error(t.node("NegativeLogLikelihoodLoss", {x, t.input("t", DType::I64, Shape{2, 3})})) ==
        "node 'n' (NegativeLogLikelihoodLoss): target [2,3] must have the input's shape [2,3,4] without its class "
        "dim (dim 1)");
  Value* target = t.input("t2", DType::I64, Shape{2, 4});
  CHECK(infer_error(t.node("NegativeLogLikelihoodLoss", {x, target, t.input("w", DType::F32, Shape{4})})) ==
        "node 'n' (NegativeLogLikelihoodLoss): weight [4] must be 1-D with one value per class of input [2,3,4]");
  CHECK(infer_error(t.node("NegativeLogLikelihoodLoss", {x, target}, {{"reduction", Attribute("max")}})) ==
        "node 'n' (NegativeLogLikelihoodLoss): reduction 'max' is not one of none, sum, mean");
}

TEST_CASE("SoftmaxCrossEntropyLoss: NLL of LogSoftmax over the classes, with log_prob") {
  // Scores [[0, 0], [0, ln 3]]: log-probabilities [[-ln 2, -ln 2], [-ln 4, ln 3 - ln 4]].
  // Labels [1, 1]: losses [ln 2, ln 4 - ln 3]; mean is their average.
  OpTest t;
  Node* n = t.node("SoftmaxCrossEntropyLoss",
                   {t.input("x", f32({2, 2}, {0, 0, 0, static_cast<float>(std::log(3.0))})),
                    t.input("y", i64({2}, {1, 1}))},
                   {}, 2);
  std::vector<Tensor> out = t.run(n);
  const double l2 = std::log(2.0), l3 = std::log(3.0), l4 = std::log(4.0);
  check_close(out[0], {(l2 + l4 - l3) / 2});
  check_close(out[1], {-l2, -l2, -l4, l3 - l4});
  CHECK(n->output(1)->shape() == Shape{2, 2});
}

}  // namespace kiln::ir::test
