// HannWindow, HammingWindow, BlackmanWindow: hand-checked values.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("window functions: periodic divides by size, symmetric by size - 1") {
  {
    OpTest t;  // sin^2(pi n / 4)
    Node* n = t.node("HannWindow", {t.constant("size", Tensor::scalar_i64(4))});
    check_close(t.run1(n), {0, 0.5, 1, 0.5});
  }
  {
    OpTest t;  // 25/46 - 21/46 cos(pi n)
    Node* n = t.node("HammingWindow", {t.constant("size", Tensor::scalar_i64(3))}, {{"periodic", int64_t{0}}});
    check_close(t.run1(n), {4.0 / 46, 1, 4.0 / 46});
  }
  {
    OpTest t;  // 0.42 - 0.5 cos(pi n / 2) + 0.08 cos(pi n), as f64
    Node* n = t.node("BlackmanWindow", {t.constant("size", Tensor::scalar_i64(4))},
                     {{"output_datatype", int64_t{11}}});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == DType::F64);
    check_close(y, {0, 0.34, 1, 0.34}, 1e-9);
  }
}

}  // namespace kiln::ir::test

namespace kiln::ir::test {

TEST_CASE("DFT of [1,2,3,4]: full, one-sided, inverse and inverse one-sided (irfft)") {
  {
    OpTest t;
    Node* n = t.node("DFT", {t.input("x", f32({4, 1}, {1, 2, 3, 4}))});
    check_close(t.run1(n), {10, 0, -2, 2, -2, 0, -2, -2});
  }
  {
    OpTest t;
    Node* n = t.node("DFT", {t.input("x", f32({4, 1}, {1, 2, 3, 4}))}, {{"onesided", int64_t{1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{3, 2});
    check_close(y, {10, 0, -2, 2, -2, 0});
  }
  {
    OpTest t;
    Node* n = t.node("DFT", {t.input("x", f32({4, 2}, {10, 0, -2, 2, -2, 0, -2, -2}))}, {{"inverse", int64_t{1}}});
    check_close(t.run1(n), {1, 0, 2, 0, 3, 0, 4, 0});
  }
  {
    OpTest t;  // length 2 * (3 - 1) = 4, real output
    Node* n = t.node("DFT", {t.input("x", f32({3, 2}, {10, 0, -2, 2, -2, 0}))},
                     {{"inverse", int64_t{1}}, {"onesided", int64_t{1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{4, 1});
    check_close(y, {1, 2, 3, 4});
  }
}

TEST_CASE("STFT: frames of 2 with step 2, one-sided bins") {
  OpTest t;
  Node* n = t.node("STFT", {t.input("signal", f32({1, 4, 1}, {1, 2, 3, 4})), t.constant("step", Tensor::scalar_i64(2)),
                            nullptr, t.constant("length", Tensor::scalar_i64(2))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 2, 2, 2});
  check_close(y, {3, 0, -1, 0, 7, 0, -1, 0});
}

}  // namespace kiln::ir::test
