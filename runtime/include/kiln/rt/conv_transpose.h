// ConvTranspose (N-D, with groups) as GEMM + col2im, col2im itself (ONNX Col2Im), and the
// 2-D deformable convolution (DeformConv).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace kiln::rt {

class ThreadPool;

// x is N x C x in..., w is C x M/group x kernel..., y is N x M x out... . Each input
// element x[n, c, i] adds x * w[c, m, k] to y[n, m, i * stride - pad + k * dilation] where
// that lies inside out. Arrays hold one entry per spatial dim (`rank` of them, 1..8).
struct ConvTransposeParams {
  int64_t N, C, M, group, rank;
  const int64_t* in;
  const int64_t* out;
  const int64_t* kernel;
  const int64_t* strides;
  const int64_t* dilations;
  const int64_t* pads;  // begin pads; the end follows from `out`
};

// cols holds channels * kernel rows of in_plane columns (the product of `in`); each adds
// into y (channels x out plane) as ConvTransposeParams describes.
template <class C, class T>
void col2im_add(const ConvTransposeParams& p, int64_t channels, const T* cols, C* y) {
  int64_t in_plane = 1, out_plane = 1, kernel = 1;
  for (int64_t d = 0; d < p.rank; ++d) {
    in_plane *= p.in[d];
    out_plane *= p.out[d];
    kernel *= p.kernel[d];
  }
  const int64_t last = p.rank - 1;
  const int64_t in_w = p.in[last], out_w = p.out[last];
  const int64_t s_w = p.strides[last], pad_w = p.pads[last], dil_w = p.dilations[last];
  int64_t k_idx[8], i_idx[8];
  for (int64_t c = 0; c < channels; ++c) {
    C* yc = y + c * out_plane;
    for (int64_t k = 0; k < kernel; ++k) {
      for (int64_t d = last, r = k; d >= 0; --d) {
        k_idx[d] = r % p.kernel[d];
        r /= p.kernel[d];
      }
      const T* row = cols + (c * kernel + k) * in_plane;
      // Input rows (all spatial dims but the last) one at a time.
      for (int64_t d = 0; d < last; ++d) i_idx[d] = 0;
      for (int64_t start = 0; start < in_plane; start += in_w) {
        int64_t base = 0;
        bool inside = true;
        for (int64_t d = 0; d < last; ++d) {
          const int64_t o = i_idx[d] * p.strides[d] - p.pads[d] + k_idx[d] * p.dilations[d];
          if (o < 0 || o >= p.out[d]) inside = false;
          base = base * p.out[d] + o;
        }
        if (inside) {
          C* yr = yc + base * out_w;
          const int64_t off = k_idx[last] * dil_w - pad_w;
          for (int64_t i = 0; i < in_w; ++i) {
            const int64_t o = i * s_w + off;
            if (o >= 0 && o < out_w) yr[o] += C(row[start + i]);
          }
        }
        for (int64_t d = last - 1; d >= 0; --d) {
          if (++i_idx[d] < p.in[d]) break;
          i_idx[d] = 0;
        }
      }
    }
  }
}

// Col2Im (ONNX Col2Im-18): x is N x (C * kernel) x blocks (blocks: the product of `in`, the
// sliding positions per axis), y is N x C x out... . Uses N, C and the spatial arrays of p.
template <class T>
void col2im(const ConvTransposeParams& p, const T* x, T* y) {
  int64_t in_plane = 1, out_plane = 1, kernel = 1;
  for (int64_t d = 0; d < p.rank; ++d) {
    in_plane *= p.in[d];
    out_plane *= p.out[d];
    kernel *= p.kernel[d];
  }
  for (int64_t i = 0; i < p.N * p.C * out_plane; ++i) y[i] = T(0);
  for (int64_t n = 0; n < p.N; ++n)
    col2im_add<T, T>(p, p.C, x + n * p.C * kernel * in_plane, y + n * p.C * out_plane);
}

// Elements of C scratch conv_transpose<T, C> needs.
size_t conv_transpose_scratch_elements(const ConvTransposeParams& p) noexcept;
// Floats of scratch conv_transpose_f32 needs (one group's columns of one image).
size_t conv_transpose_scratch_floats(const ConvTransposeParams& p) noexcept;

// y = ConvTranspose(x, w) + bias (M values, or nullptr); the columns come from gemm_f32.
void conv_transpose_f32(const ConvTransposeParams& p, const float* x, const float* w, const float* bias, float* y,
                        float* scratch, ThreadPool* pool) noexcept;

// The same for any floating-point T computed in C (plain loops).
template <class T, class C>
void conv_transpose(const ConvTransposeParams& p, const T* x, const T* w, const T* bias, T* y, C* scratch) {
  int64_t in_plane = 1, out_plane = 1, kernel = 1;
  for (int64_t d = 0; d < p.rank; ++d) {
    in_plane *= p.in[d];
    out_plane *= p.out[d];
    kernel *= p.kernel[d];
  }
  const int64_t cg = p.C / p.group, mg = p.M / p.group, rows = mg * kernel;
  C* cols = scratch;
  C* acc = scratch + rows * in_plane;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      for (int64_t i = 0; i < rows * in_plane; ++i) cols[i] = C(0);
      for (int64_t c = 0; c < cg; ++c) {
        const T* xc = x + (n * p.C + g * cg + c) * in_plane;
        const T* wc = w + (g * cg + c) * rows;
        for (int64_t r = 0; r < rows; ++r) {
          const C wv = C(wc[r]);
          C* cr = cols + r * in_plane;
          for (int64_t i = 0; i < in_plane; ++i) cr[i] += wv * C(xc[i]);
        }
      }
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t o = 0; o < out_plane; ++o) acc[m * out_plane + o] = bias ? C(bias[g * mg + m]) : C(0);
      col2im_add<C, C>(p, mg, cols, acc);
      T* yg = y + (n * p.M + g * mg) * out_plane;
      for (int64_t i = 0; i < mg * out_plane; ++i) yg[i] = T(acc[i]);
    }
}

}  // namespace kiln::rt

namespace kiln::rt {

// DeformConv (ONNX DeformConv-19), 2-D: Conv whose kernel taps are moved by per-position
// offsets (N x offset_group*KH*KW*2 x OH x OW, (dy, dx) pairs) and scaled by an optional mask
// (N x offset_group*KH*KW x OH x OW); moved taps read X bilinearly, zero outside.
struct DeformConvParams {
  int64_t N, C, H, W, M, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, group, offset_group;
};

template <class T, class C>
void deform_conv2d(const DeformConvParams& p, const T* x, const T* w, const T* offset, const T* bias, const T* mask,
                   T* y) {
  const int64_t cg = p.C / p.group, mg = p.M / p.group, c_per_og = p.C / p.offset_group;
  const int64_t K = p.KH * p.KW, plane = p.OH * p.OW;
  auto at = [&](const T* xc, int64_t h, int64_t w_) -> C {
    return h >= 0 && h < p.H && w_ >= 0 && w_ < p.W ? C(xc[h * p.W + w_]) : C(0);
  };
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m) {
      const int64_t g = m / mg;
      for (int64_t i = 0; i < p.OH; ++i)
        for (int64_t j = 0; j < p.OW; ++j) {
          C acc = bias ? C(bias[m]) : C(0);
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t c = g * cg + ci, og = c / c_per_og;
            const T* xc = x + (n * p.C + c) * p.H * p.W;
            for (int64_t kh = 0; kh < p.KH; ++kh)
              for (int64_t kw = 0; kw < p.KW; ++kw) {
                const int64_t k = kh * p.KW + kw;
                const T* off = offset + ((n * p.offset_group + og) * K + k) * 2 * plane + i * p.OW + j;
                const double h = static_cast<double>(i * p.stride_h - p.pad_top + kh * p.dil_h) + static_cast<double>(off[0]);
                const double wv = static_cast<double>(j * p.stride_w - p.pad_left + kw * p.dil_w) + static_cast<double>(off[plane]);
                const double h0 = std::floor(h), w0 = std::floor(wv), lh = h - h0, lw = wv - w0;
                const int64_t ih = static_cast<int64_t>(h0), iw = static_cast<int64_t>(w0);
                const C sample = C((1 - lh) * (1 - lw)) * at(xc, ih, iw) + C((1 - lh) * lw) * at(xc, ih, iw + 1) +
                                 C(lh * (1 - lw)) * at(xc, ih + 1, iw) + C(lh * lw) * at(xc, ih + 1, iw + 1);
                C scale = C(w[(m * cg + ci) * K + k]);
                if (mask) scale *= C(mask[((n * p.offset_group + og) * K + k) * plane + i * p.OW + j]);
                acc += scale * sample;
              }
          }
          y[((n * p.M + m) * p.OH + i) * p.OW + j] = T(acc);
        }
    }
}

}  // namespace kiln::rt
