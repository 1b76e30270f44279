#include "tests/conformance/compare.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kiln::conformance {

std::string compare_tensor(const std::string& output, const ir::Tensor& expected, const ir::Tensor& got,
                           Tolerance tol) {
  if (expected.dtype() != got.dtype())
    return fmt::format("output '{}': dtype {} expected, got {}", output, ir::dtype_name(expected.dtype()),
                       ir::dtype_name(got.dtype()));
  if (expected.dims() != got.dims())
    return fmt::format("output '{}': shape {} expected, got {}", output, ir::dims_str(expected.dims()),
                       ir::dims_str(got.dims()));
  const int64_t n = expected.numel();
  int64_t bad = 0, worst = -1;
  double worst_excess = 0;
  // The storage-only floats compare by value too (NaN equals NaN, -0 equals 0); their
  // conversions are exact, so any difference is more than the tolerance.
  if (ir::is_float(expected.dtype()) || ir::is_storage_float(expected.dtype())) {
    double rtol = expected.dtype() == ir::DType::BF16 ? std::max(tol.rtol, 1.0 / 64) : tol.rtol;
    for (int64_t i = 0; i < n; ++i) {
      double e = expected.as_double(i), g = got.as_double(i);
      if (e == g || (std::isnan(e) && std::isnan(g))) continue;
      double allowed = tol.atol + rtol * std::fabs(e);
      double err = std::fabs(g - e);
      if (err <= allowed) continue;
      // NaN or an infinity on one side only: worse than any finite error.
      double excess = std::isfinite(err) ? err - allowed : INFINITY;
      ++bad;
      if (worst < 0 || excess > worst_excess) {
        worst = i;
        worst_excess = excess;
      }
    }
    if (bad == 0) return "";
    double e = expected.as_double(worst), g = got.as_double(worst);
    return fmt::format("output '{}' {}: {} of {} elements differ; worst at flat index {}: expected {}, got {} "
                       "(|error| {:.3g}, allowed {:.3g})",
                       output, ir::dims_str(expected.dims()), bad, n, worst, e, g, std::fabs(g - e),
                       tol.atol + rtol * std::fabs(e));
  }
  for (int64_t i = 0; i < n; ++i)
    if (expected.as_int64(i) != got.as_int64(i)) {
      if (bad++ == 0) worst = i;
    }
  if (bad == 0) return "";
  return fmt::format("output '{}' {}: {} of {} elements differ; first at flat index {}: expected {}, got {}",
                     output, ir::dims_str(expected.dims()), bad, n, worst, expected.as_int64(worst),
                     got.as_int64(worst));
}

}  // namespace kiln::conformance
