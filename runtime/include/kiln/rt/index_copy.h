// Byte-level copies through index tables and run-time indices (Pad, Trilu, GatherElements,
// GatherND). Elements are elem_size bytes, copied and never interpreted. Kernels that read
// indices at run time check them and return false when one is out of range.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

// y[o] = src[sum_d tables_d[o_d]] for every index o of out_dims, y dense row-major, where
// tables holds one table per dim, concatenated (out_dims[d] entries each, element offsets into
// src); an entry < 0 in any dim's table writes the elem_size bytes at fill instead (Pad).
void table_copy_bytes(size_t elem_size, int rank, const int64_t* out_dims, const int64_t* tables,
                      const void* src, const void* fill, void* y) noexcept;

// x and y are batch x rows x cols; keeps x[r][c] where c - r >= k (upper) or c - r <= k
// (lower), zero bytes elsewhere.
void trilu_bytes(size_t elem_size, int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper,
                 const void* x, void* y) noexcept;

// y (of idx_dims) = data[index with its axis coordinate replaced by indices[index]];
// negative indices count from the end. rank <= 32. False if an index is out of range.
bool gather_elements_bytes(size_t elem_size, int rank, const int64_t* idx_dims, const int64_t* data_dims,
                           int axis, const void* data, const int64_t* indices, void* y) noexcept;
bool gather_elements_bytes(size_t elem_size, int rank, const int64_t* idx_dims, const int64_t* data_dims,
                           int axis, const void* data, const int32_t* indices, void* y) noexcept;

// GatherND: data is batch blocks of batch_elems elements; indices are batch x n_tuples tuples
// of `tuple` coordinates into dims tuple_dims; each tuple copies `slice` elements to y.
// False if an index is out of range.
bool gather_nd_bytes(size_t elem_size, int64_t batch, int64_t batch_elems, int64_t n_tuples, int tuple,
                     const int64_t* tuple_dims, int64_t slice, const void* data, const int64_t* indices,
                     void* y) noexcept;

// The element offset of one index tuple into dims (row-major, in elements, times `slice`), or
// -1 when a coordinate is out of range. Negative coordinates count from the end.
inline int64_t tuple_offset(int tuple, const int64_t* dims, const int64_t* coords, int64_t slice) noexcept {
  int64_t off = 0;
  for (int k = 0; k < tuple; ++k) {
    int64_t c = coords[k];
    if (c < 0) c += dims[k];
    if (c < 0 || c >= dims[k]) return -1;
    off = off * dims[k] + c;
  }
  return off * slice;
}

// NonZero: the coordinates of x's non-zero elements (row-major order) as a rank x count
// matrix in y, which holds at least rank * numel elements; returns count. A scalar counts as
// one element of rank 1 (its row all zeros).
template <typename T>
int64_t nonzero(int rank, const int64_t* dims, const T* x, int64_t* y) noexcept {
  int64_t numel = 1;
  for (int d = 0; d < rank; ++d) numel *= dims[d];
  int64_t count = 0;
  for (int64_t i = 0; i < numel; ++i) count += x[i] != T(0);
  const int rows = rank > 0 ? rank : 1;
  for (int64_t i = 0, j = 0; i < numel; ++i) {
    if (!(x[i] != T(0))) continue;
    int64_t rest = i;
    for (int d = rows - 1; d >= 0; --d) {
      const int64_t extent = rank > 0 ? dims[d] : 1;
      y[d * count + j] = rest % extent;
      rest /= extent;
    }
    ++j;
  }
  return count;
}

}  // namespace kiln::rt
