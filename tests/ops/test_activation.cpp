// Swish and Dropout (at inference): hand-computed cases.
#include <cmath>

#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("Swish: x * sigmoid(alpha * x)") {
  OpTest t;
  Node* n = t.node("Swish", {t.input("x", f32({3}, {0, 1, -2}))}, {{"alpha", 2.0f}});
  check_close(t.run1(n), {0, 1 / (1 + std::exp(-2.0)), -2 / (1 + std::exp(4.0))});
}

TEST_CASE("Dropout at inference: the input and an all-true mask") {
  {
    OpTest t;
    Node* n = t.node("Dropout", {t.input("x", f32({2}, {1, 2})), t.input("r", f32({}, {0.5f}))}, {}, 2);
    std::vector<Tensor> out = t.run(n);
    CHECK(values(out[0]) == std::vector<double>{1, 2});
    CHECK(out[1].dtype() == DType::Bool);
    CHECK(values(out[1]) == std::vector<double>{1, 1});
  }
  {
    // Training with ratio 0 drops nothing.
    OpTest t;
    Node* n = t.node("Dropout", {t.input("x", f32({2}, {1, 2})), t.input("r", f32({}, {0.0f})),
                                 t.input("m", Tensor::from_vector<bool>(DType::Bool, {}, {true}))});
    CHECK(values(t.run1(n)) == std::vector<double>{1, 2});
  }
  OpTest t;
  Node* n = t.node("Dropout", {t.input("x", f32({2}, {1, 2})), t.input("r", f32({}, {0.25f})),
                               t.input("m", Tensor::from_vector<bool>(DType::Bool, {}, {true}))});
  infer_node(*n);
  CHECK(t.eval_error(n) ==
        "node 'n' (Dropout): training_mode with ratio 0.25 drops random elements; kiln runs Dropout at inference "
        "only");
}

}  // namespace kiln::ir::test
