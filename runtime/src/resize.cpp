#include "kiln/rt/resize.h"

#include <algorithm>

namespace kiln::rt {
namespace {

// math.isclose(a, b) with Python's default rel_tol (1e-9) and abs_tol 0.
bool isclose(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// The input coordinate output coordinate `o` maps to; `outside` set under
// tf_crop_and_resize when it falls outside the input.
double source_coordinate(const ResizeParams& p, int64_t axis, int64_t o, bool& outside) {
  const double in = static_cast<double>(p.in_dims[axis]);
  const double scale = p.scales[axis];
  const double out_width = scale * in;  // the op's "output_width": before rounding
  const double y = static_cast<double>(o);
  outside = false;
  switch (p.coord) {
    case ResizeCoord::AlignCorners:
      return out_width == 1 ? 0.0 : y * (in - 1) / (out_width - 1);
    case ResizeCoord::Asymmetric:
      return y / scale;
    case ResizeCoord::TfCropAndResize: {
      const double r0 = p.roi ? p.roi[axis] : 0.0, r1 = p.roi ? p.roi[p.rank + axis] : 1.0;
      double x = out_width == 1 ? (r1 - r0) * (in - 1) / 2 : y * (r1 - r0) * (in - 1) / (out_width - 1);
      x += r0 * (in - 1);
      outside = x < 0 || x > in - 1;
      return x;
    }
    case ResizeCoord::PytorchHalfPixel:
      return out_width == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    case ResizeCoord::HalfPixel:
      return (y + 0.5) / scale - 0.5;
    case ResizeCoord::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(p.out_dims[axis]) / out_width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (y + 0.5) / scale - 0.5;
    }
  }
  return 0.0;
}

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// The first tap's offset from the left neighbour; taps are `start`, start + 1, ... .
int64_t first_tap(const ResizeParams& p, int64_t axis) {
  const double s = std::min(p.scales[axis], 1.0);
  switch (p.mode) {
    case ResizeMode::Nearest: return 0;
    case ResizeMode::Linear: return p.antialias ? static_cast<int64_t>(std::floor(-1 / s)) + 1 : 0;
    case ResizeMode::Cubic: return p.antialias ? static_cast<int64_t>(std::floor(-2 / s)) + 1 : -1;
  }
  return 0;
}

}  // namespace

int64_t resize_taps(const ResizeParams& p, int64_t axis) noexcept {
  return p.mode == ResizeMode::Nearest ? 1 : 2 - 2 * first_tap(p, axis);
}

bool resize_axis_is_identity(const ResizeParams& p, int64_t axis) noexcept {
  if (!isclose(p.scales[axis], 1.0) || p.out_dims[axis] != p.in_dims[axis]) return false;
  return p.coord != ResizeCoord::TfCropAndResize || !p.roi ||
         (isclose(p.roi[axis], 0.0) && isclose(p.roi[p.rank + axis], 1.0));
}

void resize_axis_table(const ResizeParams& p, int64_t axis, int64_t* idx, double* w, unsigned char* outside) noexcept {
  const int64_t in = p.in_dims[axis], taps = resize_taps(p, axis), start = first_tap(p, axis);
  const double s = std::min(p.scales[axis], 1.0);
  for (int64_t o = 0; o < p.out_dims[axis]; ++o) {
    bool out_of_input = false;
    const double x = source_coordinate(p, axis, o, out_of_input);
    outside[o] = out_of_input ? 1 : 0;
    // The left neighbour: an exact integer coordinate counts as the right one (ratio 1).
    const double fl = std::floor(x);
    const double ratio = x == fl ? 1.0 : x - fl;
    const int64_t left = static_cast<int64_t>(x - ratio);
    int64_t* io = idx + o * taps;
    double* wo = w + o * taps;
    if (p.mode == ResizeMode::Nearest) {
      bool right = true;
      if (ratio != 1.0) {
        switch (p.nearest) {
          case ResizeNearest::RoundPreferFloor: right = ratio > 0.5; break;
          case ResizeNearest::RoundPreferCeil: right = ratio >= 0.5; break;
          case ResizeNearest::Floor: right = false; break;
          case ResizeNearest::Ceil: right = true; break;
        }
      }
      io[0] = std::clamp<int64_t>(left + (right ? 1 : 0), 0, in - 1);
      wo[0] = 1;
      continue;
    }
    double sum = 0;
    for (int64_t j = 0; j < taps; ++j) {
      const double d = static_cast<double>(start + j) - ratio;  // tap position minus x
      double c;
      if (p.mode == ResizeMode::Linear)
        c = p.antialias ? std::clamp(1 - std::fabs(d * s), 0.0, 1.0) : (j == 0 ? 1 - ratio : ratio);
      else if (p.antialias)
        c = cubic_kernel(d * s, p.cubic_a);
      else
        c = cubic_kernel(d, p.cubic_a);
      io[j] = left + start + j;
      if (p.exclude_outside && (io[j] < 0 || io[j] >= in)) c = 0;
      wo[j] = c;
      sum += c;
    }
    const bool normalize = p.antialias || p.exclude_outside;
    for (int64_t j = 0; j < taps; ++j) {
      if (normalize && sum != 0) wo[j] /= sum;
      io[j] = std::clamp<int64_t>(io[j], 0, in - 1);
    }
  }
}

size_t resize_scratch_bytes(const ResizeParams& p) noexcept {
  int64_t dims[64], biggest = 0, axes[64], n_axes = 0;
  size_t tables = 0;
  for (int64_t a = 0; a < p.rank && a < 64; ++a) {
    dims[a] = p.in_dims[a];
    if (resize_axis_is_identity(p, a)) continue;
    axes[n_axes++] = a;
    const size_t n = static_cast<size_t>(p.out_dims[a] * resize_taps(p, a));
    tables = std::max(tables, detail::resize_align(sizeof(int64_t) * n) + detail::resize_align(sizeof(double) * n) +
                                  detail::resize_align(static_cast<size_t>(p.out_dims[a])));
  }
  for (int64_t k = 0; k + 1 < n_axes; ++k) {
    dims[axes[k]] = p.out_dims[axes[k]];
    int64_t n = 1;
    for (int64_t a = 0; a < p.rank; ++a) n *= dims[a];
    biggest = std::max(biggest, n);
  }
  return 2 * detail::resize_buffer_bytes(biggest) + tables;
}

}  // namespace kiln::rt
