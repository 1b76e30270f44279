#include "kiln/rt/index_copy.h"

#include <cstring>

namespace kiln::rt {
namespace {

constexpr int kMaxRank = 32;

template <class I>
bool gather_elements_impl(size_t es, int rank, const int64_t* idx_dims, const int64_t* data_dims, int axis,
                          const unsigned char* data, const I* indices, unsigned char* y) noexcept {
  if (rank < 1 || rank > kMaxRank) return false;
  int64_t n = 1, strides[kMaxRank], idx[kMaxRank] = {};
  int64_t st = 1;
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
    std::memcpy(y + static_cast<size_t>(p) * es, data + static_cast<size_t>(off) * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < idx_dims[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

}  // namespace

void table_copy_bytes(size_t es, int rank, const int64_t* out_dims, const int64_t* tables, const void* src,
                      const void* fill, void* y) noexcept {
  const int64_t* table[kMaxRank];
  int64_t n = 1;
  for (int d = 0, at = 0; d < rank && d < kMaxRank; ++d) {
    table[d] = tables + at;
    at += static_cast<int>(out_dims[d]);
    n *= out_dims[d];
  }
  if (rank > kMaxRank || n == 0) return;
  const unsigned char* s = static_cast<const unsigned char*>(src);
  unsigned char* dst = static_cast<unsigned char*>(y);
  int64_t idx[kMaxRank] = {};
  for (int64_t p = 0; p < n; ++p) {
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      const int64_t t = table[d][idx[d]];
      inside = inside && t >= 0;
      off += t;
    }
    std::memcpy(dst + static_cast<size_t>(p) * es, inside ? s + static_cast<size_t>(off) * es : fill, es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out_dims[d]) break;
      idx[d] = 0;
    }
  }
}

void trilu_bytes(size_t es, int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper, const void* x,
                 void* y) noexcept {
  const unsigned char* s = static_cast<const unsigned char*>(x);
  unsigned char* d = static_cast<unsigned char*>(y);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const size_t at = static_cast<size_t>((b * rows + r) * cols + c) * es;
        if (upper ? c - r >= k : c - r <= k)
          std::memcpy(d + at, s + at, es);
        else
          std::memset(d + at, 0, es);
      }
}

bool gather_elements_bytes(size_t es, int rank, const int64_t* idx_dims, const int64_t* data_dims, int axis,
                           const void* data, const int64_t* indices, void* y) noexcept {
  return gather_elements_impl(es, rank, idx_dims, data_dims, axis, static_cast<const unsigned char*>(data),
                              indices, static_cast<unsigned char*>(y));
}

bool gather_elements_bytes(size_t es, int rank, const int64_t* idx_dims, const int64_t* data_dims, int axis,
                           const void* data, const int32_t* indices, void* y) noexcept {
  return gather_elements_impl(es, rank, idx_dims, data_dims, axis, static_cast<const unsigned char*>(data),
                              indices, static_cast<unsigned char*>(y));
}

bool gather_nd_bytes(size_t es, int64_t batch, int64_t batch_elems, int64_t n_tuples, int tuple,
                     const int64_t* tuple_dims, int64_t slice, const void* data, const int64_t* indices,
                     void* y) noexcept {
  const unsigned char* s = static_cast<const unsigned char*>(data);
  unsigned char* d = static_cast<unsigned char*>(y);
  const size_t row = es * static_cast<size_t>(slice);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < n_tuples; ++t) {
      const int64_t off = tuple_offset(tuple, tuple_dims, indices + (b * n_tuples + t) * tuple, slice);
      if (off < 0) return false;
      std::memcpy(d, s + static_cast<size_t>(b * batch_elems + off) * es, row);
      d += row;
    }
  return true;
}

}  // namespace kiln::rt
