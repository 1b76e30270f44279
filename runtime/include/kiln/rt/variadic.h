// Variadic elementwise ops with broadcasting (Sum, Mean, Min, Max): every output element
// folds the inputs' elements in order, so the output may share memory with any input of
// the output's shape (each element is read before it is written).
#pragma once

#include <cstdint>

namespace kiln::rt {

// y[idx] = finish(combine(...combine(T(in[0][idx . strides[0]]), T(in[1][...]))...)) for
// every idx of out_dims, y dense row-major. Strides are in elements, 0 on broadcast dims.
// `work` holds rank + n int64_t.
template <class T, class S, class O, class Combine, class Finish>
void broadcast_nary(int rank, const int64_t* out_dims, int n, const S* const* in,
                    const int64_t* const* strides, O* y, int64_t* work, Combine combine, Finish finish) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= out_dims[d];
  if (total == 0 || n == 0) return;
  int64_t* index = work;
  int64_t* offset = work + rank;
  for (int d = 0; d < rank; ++d) index[d] = 0;
  for (int k = 0; k < n; ++k) offset[k] = 0;
  for (int64_t o = 0; o < total; ++o) {
    T acc = static_cast<T>(in[0][offset[0]]);
    for (int k = 1; k < n; ++k) acc = combine(acc, static_cast<T>(in[k][offset[k]]));
    y[o] = static_cast<O>(finish(acc));
    for (int d = rank - 1; d >= 0; --d) {
      for (int k = 0; k < n; ++k) offset[k] += strides[k][d];
      if (++index[d] < out_dims[d]) break;
      for (int k = 0; k < n; ++k) offset[k] -= strides[k][d] * out_dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace kiln::rt
