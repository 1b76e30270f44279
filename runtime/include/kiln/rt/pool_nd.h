// N-D sliding-window pooling (MaxPool with its Indices, AveragePool, LpPool) for any element
// type: the reference semantics, shared by the interpreter and generated code. pool.h holds
// the faster 2-D f32 kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::rt {

enum class PoolKind { Max, Average, AverageIncludePad, Lp };

// x is N x C x in..., y is N x C x out... . Window k of output position o reads input
// o * stride - pad_begin + k * dilation along each axis; taps outside the input are skipped.
// The padded extent [-pad_begin, in + pad_end) is what AverageIncludePad divides by.
struct PoolNdParams {
  int64_t N, C, rank;  // rank: spatial dims, 1..8
  const int64_t* in;
  const int64_t* out;
  const int64_t* kernel;
  const int64_t* strides;
  const int64_t* dilations;
  const int64_t* pads_begin;
  const int64_t* pads_end;
};

// Max: the largest tap (NaN wins; the lowest value when no tap is inside), and, when indices
// is not nullptr, its flat index into x (row-major, or with column_major the spatial offset
// is column-major, ONNX's storage_order 1). Average: the mean over the taps inside (or over
// the padded extent). Lp: (sum |tap|^p)^(1/p).
template <class T, class C>
void pool_nd(const PoolNdParams& p, PoolKind kind, double lp_p, const T* x, T* y, int64_t* indices = nullptr,
             bool column_major = false) {
  int64_t in_plane = 1, out_plane = 1, kernel = 1;
  for (int64_t d = 0; d < p.rank; ++d) {
    in_plane *= p.in[d];
    out_plane *= p.out[d];
    kernel *= p.kernel[d];
  }
  int64_t o_idx[8] = {}, k_idx[8], pos[8];
  for (int64_t o = 0; o < out_plane; ++o) {
    for (int64_t c = 0; c < p.N * p.C; ++c) {
      const T* xc = x + c * in_plane;
      C acc = kind == PoolKind::Max ? std::numeric_limits<C>::lowest() : C(0);
      int64_t best = -1, inside = 0, padded = 0;
      for (int64_t d = 0; d < p.rank; ++d) k_idx[d] = 0;
      for (int64_t k = 0; k < kernel; ++k) {
        bool in_input = true, in_padded = true;
        int64_t off = 0;
        for (int64_t d = 0; d < p.rank; ++d) {
          pos[d] = o_idx[d] * p.strides[d] - p.pads_begin[d] + k_idx[d] * p.dilations[d];
          if (pos[d] < 0 || pos[d] >= p.in[d]) in_input = false;
          if (pos[d] < -p.pads_begin[d] || pos[d] >= p.in[d] + p.pads_end[d]) in_padded = false;
          off = off * p.in[d] + pos[d];
        }
        padded += in_padded ? 1 : 0;
        if (in_input) {
          ++inside;
          const C v = C(xc[off]);
          if (kind == PoolKind::Max) {
            if (best < 0 || v > acc || (v != v && acc == acc)) {
              acc = v;
              best = off;
            }
          } else if (kind == PoolKind::Lp) {
            acc += C(std::pow(std::fabs(static_cast<double>(v)), lp_p));
          } else {
            acc += v;
          }
        }
        for (int64_t d = p.rank - 1; d >= 0; --d) {
          if (++k_idx[d] < p.kernel[d]) break;
          k_idx[d] = 0;
        }
      }
      T r;
      if (kind == PoolKind::Max) r = T(acc);
      else if (kind == PoolKind::Lp) r = T(C(std::pow(static_cast<double>(acc), 1.0 / lp_p)));
      else {
        const int64_t count = kind == PoolKind::AverageIncludePad ? padded : inside;
        r = T(count > 0 ? acc / C(count) : C(0));
      }
      y[c * out_plane + o] = r;
      if (indices) {
        int64_t flat = best < 0 ? 0 : best;
        if (column_major && best >= 0) {
          flat = 0;
          for (int64_t d = p.rank - 1, rest = best; d >= 0; --d) {
            pos[d] = rest % p.in[d];
            rest /= p.in[d];
          }
          for (int64_t d = p.rank - 1; d >= 0; --d) flat = flat * p.in[d] + pos[d];
        }
        indices[c * out_plane + o] = c * in_plane + flat;
      }
    }
    for (int64_t d = p.rank - 1; d >= 0; --d) {
      if (++o_idx[d] < p.out[d]) break;
      o_idx[d] = 0;
    }
  }
}

// MaxUnpool: each x[i] goes to flat position indices[i] of a zero tensor of `unpooled` dims
// (rank of them), which sits at the start of y (`out` dims, each at least as large; the
// rest is zero). Returns false when an index is outside the unpooled tensor.
template <class T>
bool max_unpool(int64_t rank, const int64_t* unpooled, const int64_t* out, int64_t x_size, const T* x,
                const int64_t* indices, T* y) {
  int64_t unpooled_size = 1, out_size = 1;
  for (int64_t d = 0; d < rank; ++d) {
    unpooled_size *= unpooled[d];
    out_size *= out[d];
  }
  for (int64_t i = 0; i < out_size; ++i) y[i] = T();
  for (int64_t i = 0; i < x_size; ++i) {
    int64_t rest = indices[i];
    if (rest < 0 || rest >= unpooled_size) return false;
    int64_t off = 0, scale = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      off += (rest % unpooled[d]) * scale;
      rest /= unpooled[d];
      scale *= out[d];
    }
    y[off] = x[i];
  }
  return true;
}

}  // namespace kiln::rt
