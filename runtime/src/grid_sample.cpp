#include "kiln/rt/grid_sample.h"

#include <algorithm>
#include <cmath>

namespace kiln::rt {
namespace {

// Reflects x by the nearer border until it lies in [lo, hi].
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

double cubic(double x) {
  constexpr double a = -0.75;
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

}  // namespace

void grid_sample_taps(const GridSampleParams& p, const double* g, GridSampleTaps& t) noexcept {
  t.count = p.mode == GridSampleMode::Nearest ? 1 : p.mode == GridSampleMode::Linear ? 2 : 4;
  for (int64_t d = 0; d < p.rank; ++d) {
    const int64_t len = p.in[d];
    // Axis d of X is coordinate rank - 1 - d of the grid (x is the last axis).
    const double v = g[p.rank - 1 - d];
    // Denormalized as the reference does, in single precision.
    double x = static_cast<float>(p.align_corners ? (v + 1) / 2.0 * static_cast<double>(len - 1)
                                                  : ((v + 1) * static_cast<double>(len) - 1) / 2.0);
    const double lo = p.align_corners ? 0.0 : -0.5;
    const double hi = p.align_corners ? static_cast<double>(len - 1) : static_cast<double>(len) - 0.5;
    if (p.mode == GridSampleMode::Nearest) x = std::nearbyint(x);  // half to even, as np.rint
    if (x < lo || x > hi) {
      if (p.padding == GridSamplePadding::Border) x = std::clamp(x, 0.0, static_cast<double>(len - 1));
      else if (p.padding == GridSamplePadding::Reflection) x = reflect(x, lo, hi);
    }
    // The input index a tap reads, or -1 for zeros padding outside.
    auto pixel = [&](int64_t i) -> int64_t {
      if (p.padding == GridSamplePadding::Zeros) return i >= 0 && i < len ? i : -1;
      if (p.padding == GridSamplePadding::Border) return std::clamp<int64_t>(i, 0, len - 1);
      return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi)), 0, len - 1);
    };
    int64_t first;
    if (p.mode == GridSampleMode::Nearest) {
      first = static_cast<int64_t>(x);  // truncation, as astype(int32)
      t.w[d][0] = 1;
    } else {
      const double x0 = std::floor(x), r = x - x0;
      first = static_cast<int64_t>(x0) - (p.mode == GridSampleMode::Cubic ? 1 : 0);
      if (p.mode == GridSampleMode::Linear) {
        t.w[d][0] = 1 - r;
        t.w[d][1] = r;
      } else {
        t.w[d][0] = cubic(r + 1);
        t.w[d][1] = cubic(r);
        t.w[d][2] = cubic(1 - r);
        t.w[d][3] = cubic(2 - r);
      }
    }
    for (int64_t j = 0; j < t.count; ++j) {
      const int64_t i = pixel(first + j);
      t.idx[d][j] = i < 0 ? 0 : i;
      if (i < 0) t.w[d][j] = 0;
    }
  }
}

}  // namespace kiln::rt
