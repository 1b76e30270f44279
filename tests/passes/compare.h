// Comparing interpreter results before and after a pass: exact for integers and bools,
// within a tolerance relative to the result's scale for floats (folded and fused float math
// rounds differently).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "ir/tensor.h"

namespace kiln::test {

// Empty when `after` matches `before`, else what differs.
inline std::string compare_results(const ir::Tensor& before, const ir::Tensor& after, double rtol = 1e-5) {
  if (before.dtype() != after.dtype() || before.dims() != after.dims())
    return fmt::format("type changed: {}{} became {}{}", ir::dtype_name(before.dtype()),
                       ir::dims_str(before.dims()), ir::dtype_name(after.dtype()), ir::dims_str(after.dims()));
  if (!ir::is_float(before.dtype())) return before.same_as(after) ? "" : "integer results differ";
  double scale = 0, worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < before.numel(); ++i) scale = std::max(scale, std::abs(before.as_double(i)));
  for (int64_t i = 0; i < before.numel(); ++i) {
    double b = before.as_double(i), a = after.as_double(i);
    if (std::isnan(b) && std::isnan(a)) continue;
    double err = std::abs(a - b);
    if (!(err <= worst)) {
      worst = err;
      at = i;
    }
  }
  if (worst <= rtol * std::max(scale, 1.0)) return "";
  return fmt::format("element {}: {} became {} (error {:.3g}, scale {:.3g})", at, before.as_double(at),
                     after.as_double(at), worst, scale);
}

}  // namespace kiln::test
