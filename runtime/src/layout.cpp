#include "kiln/rt/layout.h"

#include <cstring>
#include <vector>

namespace kiln::rt {
namespace {

constexpr int kMaxRank = 32;

// Copies n elements of size ES from src with stride (in elements) to dense dst.
template <size_t ES>
void copy_row_fixed(int64_t n, const unsigned char* src, int64_t stride, unsigned char* dst) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ES, src + i * stride * static_cast<int64_t>(ES), ES);
}

void copy_row(size_t es, int64_t n, const unsigned char* src, int64_t stride, unsigned char* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, es * static_cast<size_t>(n));
    return;
  }
  switch (es) {
    case 1: copy_row_fixed<1>(n, src, stride, dst); return;
    case 2: copy_row_fixed<2>(n, src, stride, dst); return;
    case 4: copy_row_fixed<4>(n, src, stride, dst); return;
    case 8: copy_row_fixed<8>(n, src, stride, dst); return;
    default: break;
  }
  const int64_t es64 = static_cast<int64_t>(es);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es64, src + i * stride * es64, es);
}

// Generic recursion, used only beyond kMaxRank dims.
void copy_rec(size_t es, int d, int rank, const int64_t* dims, const unsigned char* src, const int64_t* strides,
              unsigned char*& dst) {
  if (d == rank - 1) {
    copy_row(es, dims[d], src, strides[d], dst);
    dst += es * static_cast<size_t>(dims[d]);
    return;
  }
  for (int64_t i = 0; i < dims[d]; ++i)
    copy_rec(es, d + 1, rank, dims, src + i * strides[d] * static_cast<int64_t>(es), strides, dst);
}

}  // namespace

void strided_copy_bytes(size_t elem_size, int rank, const int64_t* out_dims, const void* src,
                        const int64_t* src_strides_elems, int64_t src_offset_elems, void* dst) noexcept {
  const int64_t es = static_cast<int64_t>(elem_size);
  const unsigned char* s = static_cast<const unsigned char*>(src) + src_offset_elems * es;
  unsigned char* d = static_cast<unsigned char*>(dst);
  for (int i = 0; i < rank; ++i)
    if (out_dims[i] == 0) return;
  if (rank == 0) {
    std::memcpy(d, s, elem_size);
    return;
  }
  if (rank > kMaxRank) {
    copy_rec(elem_size, 0, rank, out_dims, s, src_strides_elems, d);
    return;
  }
  // Drop size-1 dims and merge a dim into the next one when it steps over
  // exactly that dim's extent.
  int64_t dims[kMaxRank], strides[kMaxRank];
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (out_dims[i] == 1) continue;
    if (r > 0 && strides[r - 1] == src_strides_elems[i] * out_dims[i]) {
      dims[r - 1] *= out_dims[i];
      strides[r - 1] = src_strides_elems[i];
    } else {
      dims[r] = out_dims[i];
      strides[r] = src_strides_elems[i];
      ++r;
    }
  }
  if (r == 0) {
    std::memcpy(d, s, elem_size);
    return;
  }
  // Odometer over dims [0, r-1), rows along the last dim.
  // Offsets are kept as integers: a pointer may not step outside the buffer.
  int64_t idx[kMaxRank] = {};
  int64_t off = 0;
  const int64_t row = dims[r - 1], row_stride = strides[r - 1];
  const size_t row_bytes = elem_size * static_cast<size_t>(row);
  for (;;) {
    copy_row(elem_size, row, s + off * es, row_stride, d);
    d += row_bytes;
    int k = r - 2;
    for (; k >= 0; --k) {
      off += strides[k];
      if (++idx[k] < dims[k]) break;
      off -= strides[k] * dims[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

void transpose_bytes(size_t elem_size, int rank, const int64_t* in_dims, const int64_t* perm, const void* x,
                     void* y) noexcept {
  int64_t in_strides_a[kMaxRank] = {}, out_dims_a[kMaxRank] = {}, strides_a[kMaxRank] = {};
  std::vector<int64_t> heap;
  int64_t *in_strides = in_strides_a, *out_dims = out_dims_a, *strides = strides_a;
  if (rank > kMaxRank) {
    try {
      heap.resize(3 * static_cast<size_t>(rank));
    } catch (...) {
      return;  // out of memory for a > 32-d transpose; nothing is copied
    }
    in_strides = heap.data();
    out_dims = in_strides + rank;
    strides = out_dims + rank;
  }
  int64_t st = 1;
  for (int i = rank - 1; i >= 0; --i) {
    in_strides[i] = st;
    st *= in_dims[i];
  }
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  strided_copy_bytes(elem_size, rank, out_dims, x, strides, 0, y);
}

void concat_bytes(size_t elem_size, int64_t outer, int n_inputs, const void* const* inputs,
                  const int64_t* inner_sizes, void* y) noexcept {
  unsigned char* d = static_cast<unsigned char*>(y);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n_inputs; ++i) {
      const size_t bytes = elem_size * static_cast<size_t>(inner_sizes[i]);
      std::memcpy(d, static_cast<const unsigned char*>(inputs[i]) + static_cast<size_t>(o) * bytes, bytes);
      d += bytes;
    }
  }
}

void gather_bytes(size_t elem_size, int64_t outer, int64_t axis_len, int64_t inner, const void* data,
                  const int64_t* indices, int64_t n_indices, void* y) noexcept {
  const size_t row = elem_size * static_cast<size_t>(inner);
  const unsigned char* src = static_cast<const unsigned char*>(data);
  unsigned char* d = static_cast<unsigned char*>(y);
  for (int64_t o = 0; o < outer; ++o) {
    const unsigned char* base = src + static_cast<size_t>(o * axis_len) * row;
    for (int64_t j = 0; j < n_indices; ++j) {
      std::memcpy(d, base + static_cast<size_t>(indices[j]) * row, row);
      d += row;
    }
  }
}

}  // namespace kiln::rt
