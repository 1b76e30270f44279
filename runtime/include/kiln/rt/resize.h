// Resize (ONNX Resize-19, and Upsample through it): nearest, linear and cubic interpolation
// of an N-D tensor, one axis at a time. Per axis, each output coordinate is mapped back to
// the input (coordinate transformation mode), and reads `taps` neighbours with weights;
// neighbours outside the input repeat the edge element (or are dropped with
// exclude_outside). The element type and its compute type are template parameters.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kiln::rt {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class ResizeCoord { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfCropAndResize };
enum class ResizeNearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

// Everything is given for all `rank` axes: axes the op does not resize have scale 1, the
// same size in and out, and roi [0, 1].
struct ResizeParams {
  int64_t rank;
  const int64_t* in_dims;
  const int64_t* out_dims;
  const double* scales;  // output / input per axis, as the op defines it (scales or sizes)
  const double* roi;     // starts then ends (2 * rank), tf_crop_and_resize only; else nullptr
  ResizeMode mode;
  ResizeCoord coord;
  ResizeNearest nearest;
  double cubic_a;
  bool antialias;
  bool exclude_outside;
  double extrapolation;
};

// Neighbours read per output coordinate along `axis` (1 for nearest).
int64_t resize_taps(const ResizeParams& p, int64_t axis) noexcept;
// Whether the axis is left as it is (the op skips it).
bool resize_axis_is_identity(const ResizeParams& p, int64_t axis) noexcept;
// The axis' table: for each output coordinate o, taps input indices idx[o * taps + j]
// (within the input) with weights w[o * taps + j], and outside[o] = 1 where the coordinate
// maps outside the input under tf_crop_and_resize (the output is then the extrapolation value).
void resize_axis_table(const ResizeParams& p, int64_t axis, int64_t* idx, double* w, unsigned char* outside) noexcept;
// Bytes of scratch resize() needs.
size_t resize_scratch_bytes(const ResizeParams& p) noexcept;

namespace detail {

inline size_t resize_align(size_t n) { return (n + 15) & ~size_t{15}; }
inline size_t resize_buffer_bytes(int64_t elements) { return resize_align(8 * static_cast<size_t>(elements)); }

// One axis: x is outer x in x inner, y is outer x out x inner.
template <class In, class Out, class C>
void resize_pass(int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps, const int64_t* idx,
                 const double* w, const unsigned char* outside, C extrapolation, const In* x, Out* y) {
  for (int64_t o = 0; o < outer; ++o) {
    const In* xo = x + o * in * inner;
    Out* yo = y + o * out * inner;
    for (int64_t k = 0; k < out; ++k) {
      Out* yk = yo + k * inner;
      if (outside[k]) {
        for (int64_t i = 0; i < inner; ++i) yk[i] = Out(extrapolation);
        continue;
      }
      const int64_t* ik = idx + k * taps;
      const double* wk = w + k * taps;
      for (int64_t i = 0; i < inner; ++i) {
        C acc = 0;
        for (int64_t j = 0; j < taps; ++j) acc += C(wk[j]) * C(xo[ik[j] * inner + i]);
        yk[i] = Out(acc);
      }
    }
  }
}

// Nearest: each output row is a copy of one input row.
template <class T>
void resize_copy_pass(int64_t outer, int64_t in, int64_t out, int64_t inner, const int64_t* idx, const T* x, T* y) {
  if (inner == 1) {  // the last axis: element by element
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < out; ++k) y[o * out + k] = x[o * in + idx[k]];
    return;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < out; ++k)
      std::memcpy(y + (o * out + k) * inner, x + (o * in + idx[k]) * inner, sizeof(T) * static_cast<size_t>(inner));
}

}  // namespace detail

// y = Resize(x). T is the element type, C the type interpolation is computed in (float for
// 16-bit floats); nearest only copies, so any T works. scratch holds resize_scratch_bytes(p).
template <class T, class C>
void resize(const ResizeParams& p, const T* x, T* y, void* scratch) {
  unsigned char* s = static_cast<unsigned char*>(scratch);
  int64_t axes[64];
  int64_t n_axes = 0;
  for (int64_t a = 0; a < p.rank && a < 64; ++a)
    if (!resize_axis_is_identity(p, a)) axes[n_axes++] = a;
  int64_t total_out = 1;
  for (int64_t a = 0; a < p.rank; ++a) total_out *= p.out_dims[a];
  if (total_out == 0) return;
  if (n_axes == 0) {
    std::memcpy(y, x, sizeof(T) * static_cast<size_t>(total_out));
    return;
  }
  // Two intermediate buffers (largest intermediate), then the tables.
  int64_t dims[64], biggest = 0;
  for (int64_t a = 0; a < p.rank; ++a) dims[a] = p.in_dims[a];
  for (int64_t k = 0; k + 1 < n_axes; ++k) {
    dims[axes[k]] = p.out_dims[axes[k]];
    int64_t n = 1;
    for (int64_t a = 0; a < p.rank; ++a) n *= dims[a];
    if (n > biggest) biggest = n;
  }
  const bool nearest = p.mode == ResizeMode::Nearest;
  using B = C;  // intermediate element type (at most 8 bytes, as resize_scratch_bytes assumes)
  static_assert(sizeof(T) <= 8 && sizeof(B) <= 8, "resize: element types of up to 8 bytes");
  const size_t buf_bytes = detail::resize_buffer_bytes(biggest);
  unsigned char* bufs[2] = {s, s + buf_bytes};
  unsigned char* tables = s + 2 * buf_bytes;

  for (int64_t a = 0; a < p.rank; ++a) dims[a] = p.in_dims[a];
  const void* src = x;
  for (int64_t k = 0; k < n_axes; ++k) {
    const int64_t a = axes[k];
    const int64_t taps = resize_taps(p, a), out = p.out_dims[a], in = dims[a];
    int64_t* idx = reinterpret_cast<int64_t*>(tables);
    double* w = reinterpret_cast<double*>(tables + detail::resize_align(sizeof(int64_t) * out * taps));
    unsigned char* outside = tables + detail::resize_align(sizeof(int64_t) * out * taps) +
                             detail::resize_align(sizeof(double) * out * taps);
    resize_axis_table(p, a, idx, w, outside);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= dims[d];
    for (int64_t d = a + 1; d < p.rank; ++d) inner *= dims[d];
    const bool last = k + 1 == n_axes;
    void* dst = last ? static_cast<void*>(y) : static_cast<void*>(bufs[k % 2]);
    if (nearest) {
      detail::resize_copy_pass<T>(outer, in, out, inner, idx, static_cast<const T*>(src), static_cast<T*>(dst));
    } else {
      const C e = C(p.extrapolation);
      const bool first = k == 0;
      if (first && last)
        detail::resize_pass<T, T, C>(outer, in, out, inner, taps, idx, w, outside, e, static_cast<const T*>(src),
                                     static_cast<T*>(dst));
      else if (first)
        detail::resize_pass<T, B, C>(outer, in, out, inner, taps, idx, w, outside, e, static_cast<const T*>(src),
                                     static_cast<B*>(dst));
      else if (last)
        detail::resize_pass<B, T, C>(outer, in, out, inner, taps, idx, w, outside, e, static_cast<const B*>(src),
                                     static_cast<T*>(dst));
      else
        detail::resize_pass<B, B, C>(outer, in, out, inner, taps, idx, w, outside, e, static_cast<const B*>(src),
                                     static_cast<B*>(dst));
    }
    dims[a] = out;
    src = dst;
  }
}

}  // namespace kiln::rt
