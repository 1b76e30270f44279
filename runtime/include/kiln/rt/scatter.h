// Scatters and one-hot encoding, header-only: the element type and the reduction inline.
// y must already hold a copy of the data; updates are applied in order. Kernels return false
// when an index read at run time is out of range (negative indices count from the end).
#pragma once

#include <cstdint>

#include "kiln/rt/index_copy.h"

namespace kiln::rt {

enum class ScatterReduce { None, Add, Mul, Max, Min };

namespace detail {

template <ScatterReduce R, class T, class C>
inline void scatter_one(T& at, const T& v) {
  if constexpr (R == ScatterReduce::None) at = v;
  else if constexpr (R == ScatterReduce::Add) at = static_cast<T>(static_cast<C>(at) + static_cast<C>(v));
  else if constexpr (R == ScatterReduce::Mul) at = static_cast<T>(static_cast<C>(at) * static_cast<C>(v));
  else if constexpr (R == ScatterReduce::Max) at = static_cast<C>(v) > static_cast<C>(at) ? v : at;
  else at = static_cast<C>(v) < static_cast<C>(at) ? v : at;
}

}  // namespace detail

// ScatterElements: for each index of idx_dims, y[index with its axis coordinate replaced by
// indices[index]] combined with updates[index]. rank 1..32.
template <ScatterReduce R, class T, class C, class I>
bool scatter_elements(int rank, const int64_t* idx_dims, const int64_t* data_dims, int axis, const I* indices,
                      const T* updates, T* y) {
  if (rank < 1 || rank > 32) return false;
  int64_t strides[32], idx[32] = {}, n = 1, st = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = st;
    st *= data_dims[d];
    n *= idx_dims[d];
  }
  const int64_t len = data_dims[axis];
  for (int64_t p = 0; p < n; ++p) {
    int64_t i = static_cast<int64_t>(indices[p]);
    if (i < 0) i += len;
    if (i < 0 || i >= len) return false;
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += (d == axis ? i : idx[d]) * strides[d];
    detail::scatter_one<R, T, C>(y[off], updates[p]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < idx_dims[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

// ScatterND: each of n_tuples index tuples (tuple coordinates into tuple_dims) selects a slice
// of `slice` elements of y, combined with the next `slice` updates.
template <ScatterReduce R, class T, class C>
bool scatter_nd(int64_t n_tuples, int tuple, const int64_t* tuple_dims, int64_t slice, const int64_t* indices,
                const T* updates, T* y) {
  for (int64_t t = 0; t < n_tuples; ++t) {
    const int64_t off = tuple_offset(tuple, tuple_dims, indices + t * tuple, slice);
    if (off < 0) return false;
    for (int64_t s = 0; s < slice; ++s) detail::scatter_one<R, T, C>(y[off + s], updates[t * slice + s]);
  }
  return true;
}

// y[o][k][i] = values[1] if indices[o][i] (negative: + depth) == k, else values[0].
template <class T, class I>
void one_hot(int64_t outer, int64_t depth, int64_t inner, const I* indices, const T* values, T* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < depth; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = static_cast<int64_t>(indices[o * inner + i]);
        if (v < 0) v += depth;
        y[(o * depth + k) * inner + i] = values[v == k ? 1 : 0];
      }
}

}  // namespace kiln::rt
