// The error function for elementwise ops' expressions (Erf, and Gelu's exact form), in its
// own header so that only the code that calls it depends on it.
#pragma once

#include <cmath>
#include <type_traits>

#include "kiln/rt/host_device.h"

namespace kiln::rt {

// float: x * P(x^2) / Q(x^2) on x clamped to [-4, 4] (beyond, erf rounds to +-1 in float),
// within 5e-7 of the exact value (Eigen's generic_fast_erf_float coefficients), branch-free
// so that a loop of it vectorizes, which std::erf does not: the GELU epilogue of BERT's FFN
// GEMM took as long in std::erf as in the GEMM itself. NaN stays NaN. Other types: std::erf.
// The CUDA backend's kernels call it too (KILN_HD), so the GPU computes the same erf.
template <class T>
KILN_HD T erf(T a) noexcept {
  if constexpr (std::is_same_v<T, float>) {
    const float x = a < -4.f ? -4.f : (a > 4.f ? 4.f : a);
    const float x2 = x * x;
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 - 2.10102402082508e-06f;
    p = p * x2 - 5.69250639462346e-05f;
    p = p * x2 - 7.34990630326855e-04f;
    p = p * x2 - 2.95459980854025e-03f;
    p = p * x2 - 1.60960333262415e-02f;
    float q = -1.45660718464996e-05f;
    q = q * x2 - 2.13374055278905e-04f;
    q = q * x2 - 1.68282697438203e-03f;
    q = q * x2 - 7.37332916720468e-03f;
    q = q * x2 - 1.42647390514189e-02f;
    return x * p / q;
  } else {
    return std::erf(a);
  }
}

}  // namespace kiln::rt
