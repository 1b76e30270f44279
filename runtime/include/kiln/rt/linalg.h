// Linear algebra beyond matrix products, header-only so that the element type inlines:
// Einsum as one generic loop nest, Det by LU decomposition. T is the storage type, Acc the
// type sums are kept in (float for f16/bf16/f32, double for f64, int64_t for integers).
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::rt {

// Einsum over labels 0 .. n_out + n_sum - 1 of sizes dims: the first n_out are the output's
// dims (row-major y), the rest are summed over. strides holds, for each of the inputs in
// turn, one stride per label (0 where the input lacks the label or broadcasts it; a label an
// input repeats, its diagonal, has the sum of those strides). Ranks up to 32 each.
template <class T, class Acc>
void einsum(int n_out, int n_sum, const int64_t* dims, int num_inputs, const T* const* x, const int64_t* strides,
            T* y) {
  const int n = n_out + n_sum;
  int64_t total_out = 1, total_sum = 1;
  for (int l = 0; l < n_out; ++l) total_out *= dims[l];
  for (int l = n_out; l < n; ++l) total_sum *= dims[l];
  int64_t idx[64] = {};
  for (int64_t o = 0; o < total_out; ++o) {
    // The output index of o.
    for (int64_t rest = o, l = n_out - 1; l >= 0; --l) {
      idx[l] = rest % dims[l];
      rest /= dims[l];
    }
    Acc acc = 0;
    for (int64_t s = 0; s < total_sum; ++s) {
      for (int64_t rest = s, l = n - 1; l >= n_out; --l) {
        idx[l] = rest % dims[l];
        rest /= dims[l];
      }
      Acc p = 1;
      for (int k = 0; k < num_inputs; ++k) {
        int64_t off = 0;
        for (int l = 0; l < n; ++l) off += idx[l] * strides[k * n + l];
        p *= static_cast<Acc>(x[k][off]);
      }
      acc += p;
    }
    y[o] = static_cast<T>(acc);
  }
}

// Determinants of `batch` n x n matrices (row-major, one after another) by LU decomposition
// with partial pivoting; scratch holds n * n Acc values.
template <class T, class Acc>
void det(int64_t batch, int64_t n, const T* x, T* y, Acc* scratch) {
  for (int64_t b = 0; b < batch; ++b) {
    Acc* a = scratch;
    for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<Acc>(x[b * n * n + i]);
    Acc d = 1;
    for (int64_t c = 0; c < n && d != 0; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c])) pivot = r;
      if (a[pivot * n + c] == 0) {
        d = 0;
        break;
      }
      if (pivot != c) {
        for (int64_t k = 0; k < n; ++k) {
          const Acc t = a[c * n + k];
          a[c * n + k] = a[pivot * n + k];
          a[pivot * n + k] = t;
        }
        d = -d;
      }
      d *= a[c * n + c];
      for (int64_t r = c + 1; r < n; ++r) {
        const Acc f = a[r * n + c] / a[c * n + c];
        for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      }
    }
    y[b] = static_cast<T>(d);
  }
}

}  // namespace kiln::rt
