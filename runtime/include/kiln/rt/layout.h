// Data movement that does not depend on the element type: elements are
// elem_size bytes and are copied, never interpreted.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

// y[out] = src[src_offset + sum_i out_i * src_strides[i]] for every index out
// of out_dims, y dense in row-major order. Strides are in elements and may be
// 0 (broadcast: Expand, Tile-like copies) or negative (reversed slices).
// rank 0 copies one element. y must not overlap src.
void strided_copy_bytes(size_t elem_size, int rank, const int64_t* out_dims, const void* src,
                        const int64_t* src_strides_elems, int64_t src_offset_elems, void* dst) noexcept;

// y has dims in_dims[perm[0]], ..., in_dims[perm[rank-1]].
void transpose_bytes(size_t elem_size, int rank, const int64_t* in_dims, const int64_t* perm, const void* x,
                     void* y) noexcept;

// For each of `outer` steps, appends inner_sizes[i] elements of input i, for
// i in order (concatenation along an axis: inner_sizes[i] = dim_i * inner).
void concat_bytes(size_t elem_size, int64_t outer, int n_inputs, const void* const* inputs,
                  const int64_t* inner_sizes, void* y) noexcept;

// data is outer x axis_len x inner; y is outer x n_indices x inner with
// y[o, j, :] = data[o, indices[j], :]. indices are already normalized and
// bounds-checked by the caller.
void gather_bytes(size_t elem_size, int64_t outer, int64_t axis_len, int64_t inner, const void* data,
                  const int64_t* indices, int64_t n_indices, void* y) noexcept;

}  // namespace kiln::rt
