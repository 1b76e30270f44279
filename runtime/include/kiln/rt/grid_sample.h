// GridSample (ONNX GridSample-22): samples X (N x C x in...) at the normalized coordinates of a
// grid (N x out... x rank, the last entry along the last spatial axis of X, as x, y, z are)
// with nearest, linear or cubic interpolation and zeros, border or reflection padding.
#pragma once

#include <cstdint>

namespace kiln::rt {

enum class GridSampleMode { Nearest, Linear, Cubic };
enum class GridSamplePadding { Zeros, Border, Reflection };

struct GridSampleParams {
  int64_t N, C, rank;  // rank: spatial dims of X (1..8)
  const int64_t* in;   // X's spatial dims
  const int64_t* out;  // the grid's (and Y's) spatial dims
  GridSampleMode mode;
  GridSamplePadding padding;
  bool align_corners;
};

// Per spatial axis of one sample: up to 4 input indices and weights; a weight of a tap that
// falls outside under zeros padding is 0 (and its index is 0).
struct GridSampleTaps {
  int64_t count;  // taps per axis: 1, 2 or 4
  int64_t idx[8][4];
  double w[8][4];
};

// The taps of the sample at normalized coordinates `g` (rank values in the grid's order).
void grid_sample_taps(const GridSampleParams& p, const double* g, GridSampleTaps& t) noexcept;

// y = GridSample(x, grid); T is the element type, C the type it is computed in.
template <class T, class C>
void grid_sample(const GridSampleParams& p, const T* x, const T* grid, T* y) {
  int64_t in_plane = 1, out_plane = 1;
  for (int64_t d = 0; d < p.rank; ++d) {
    in_plane *= p.in[d];
    out_plane *= p.out[d];
  }
  int64_t in_strides[8];
  for (int64_t d = p.rank - 1, s = 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= p.in[d];
  }
  GridSampleTaps t;
  double g[8];
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t o = 0; o < out_plane; ++o) {
      const T* go = grid + (n * out_plane + o) * p.rank;
      for (int64_t d = 0; d < p.rank; ++d) g[d] = static_cast<double>(go[d]);
      grid_sample_taps(p, g, t);
      int64_t combos = 1;
      for (int64_t d = 0; d < p.rank; ++d) combos *= t.count;
      for (int64_t c = 0; c < p.C; ++c) {
        const T* xc = x + (n * p.C + c) * in_plane;
        C acc = 0;
        for (int64_t k = 0; k < combos; ++k) {
          double w = 1;
          int64_t off = 0;
          for (int64_t d = p.rank - 1, r = k; d >= 0; --d, r /= t.count) {
            const int64_t j = r % t.count;
            w *= t.w[d][j];
            off += t.idx[d][j] * in_strides[d];
          }
          if (w != 0) acc += C(w) * C(xc[off]);
        }
        y[(n * p.C + c) * out_plane + o] = T(acc);
      }
    }
}

}  // namespace kiln::rt

namespace kiln::rt {

// AffineGrid (ONNX AffineGrid-20): for theta (N x rank x rank+1) and spatial dims `size`
// (rank 2 or 3), grid (N x size... x rank) holds theta times the homogeneous base grid of
// normalized coordinates (x, y[, z], 1); x runs along the last axis.
template <class T>
void affine_grid(int64_t N, int64_t rank, const int64_t* size, bool align_corners, const T* theta, T* grid) {
  int64_t plane = 1;
  for (int64_t d = 0; d < rank; ++d) plane *= size[d];
  int64_t idx[3] = {0, 0, 0};
  double base[4];
  for (int64_t p = 0; p < plane; ++p) {
    // base[k] is the coordinate along spatial axis rank - 1 - k.
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t d = rank - 1 - k, len = size[d];
      const double j = static_cast<double>(idx[d]);
      base[k] = align_corners ? (len > 1 ? -1 + j * (2.0 / static_cast<double>(len - 1)) : -1.0)
                              : -1 + 1.0 / static_cast<double>(len) + j * (2.0 / static_cast<double>(len));
    }
    base[rank] = 1;
    for (int64_t n = 0; n < N; ++n) {
      const T* th = theta + n * rank * (rank + 1);
      T* g = grid + (n * plane + p) * rank;
      for (int64_t k = 0; k < rank; ++k) {
        double acc = 0;
        for (int64_t j = 0; j <= rank; ++j) acc += static_cast<double>(th[k * (rank + 1) + j]) * base[j];
        g[k] = T(acc);
      }
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < size[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace kiln::rt
