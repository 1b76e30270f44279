// Comparing outputs with the stored ones the way ONNX's backend test runner does.
#pragma once

#include <string>
#include <vector>

#include "ir/tensor.h"

namespace kiln::conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Empty when `got` matches `expected`: same dtype and dims; floating-point elements within
// |got - expected| <= atol + rtol * |expected| (bfloat16: rtol at least 2^-6, as ONNX's
// runner does), NaN matching NaN and infinities matching exactly; integers and bools equal.
// Otherwise one line naming the output, the worst element (flat index, expected and got
// values, the error and what was allowed) and how many elements differ.
std::string compare_tensor(const std::string& output, const ir::Tensor& expected, const ir::Tensor& got,
                           Tolerance tol);

}  // namespace kiln::conformance
