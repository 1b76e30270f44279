// Elementwise loops, header-only so that the operation inlines. f16/bf16
// operands work through their implicit conversion to float; results are
// stored with static_cast<TO>, which rounds for f16/bf16.
#pragma once

#include <cstdint>

namespace kiln::rt {

template <class T, class F>
void map_unary(int64_t n, const T* x, T* y, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(f(x[i]));
}

template <class TI, class TO, class F>
void map_unary(int64_t n, const TI* x, TO* y, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(x[i]));
}

// Numpy-style strides (in elements) of an input of in_rank dims read as an
// output of out_rank dims: 0 on broadcast (size-1 or missing) dims.
inline void broadcast_strides(int out_rank, const int64_t* out_dims, int in_rank, const int64_t* in_dims,
                              int64_t* strides) {
  int64_t st = 1;
  for (int i = out_rank - 1; i >= 0; --i) {
    const int j = i - (out_rank - in_rank);
    if (j < 0 || in_dims[j] == 1 || out_dims[i] == 1) {
      strides[i] = 0;
    } else {
      strides[i] = st;
    }
    if (j >= 0) st *= in_dims[j];
  }
}

namespace detail {

constexpr int kMaxBroadcastRank = 16;

// Up to 3 operands: collapse size-1 dims and merge adjacent dims where every
// operand steps contiguously across them. Returns the new rank, or -1 when
// rank exceeds kMaxBroadcastRank (the caller then uses the plain recursion).
template <int K>
int collapse_dims(int rank, const int64_t* dims, const int64_t* const* strides, int64_t* out_dims,
                  int64_t (*out_strides)[kMaxBroadcastRank]) {
  if (rank > kMaxBroadcastRank) return -1;
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; k < K && merge; ++k) merge = out_strides[k][r - 1] == strides[k][i] * dims[i];
    if (merge) {
      out_dims[r - 1] *= dims[i];
      for (int k = 0; k < K; ++k) out_strides[k][r - 1] = strides[k][i];
    } else {
      out_dims[r] = dims[i];
      for (int k = 0; k < K; ++k) out_strides[k][r] = strides[k][i];
      ++r;
    }
  }
  return r;
}

template <class TA, class TB, class TO, class F>
void binary_row(int64_t n, const TA* a, int64_t sa, const TB* b, int64_t sb, TO* y, F& f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(a[i], b[i]));
  } else if (sa == 1 && sb == 0) {
    const TB bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(a[i], bv));
  } else if (sa == 0 && sb == 1) {
    const TA av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(av, b[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(a[i * sa], b[i * sb]));
  }
}

template <class TA, class TB, class TO, class F>
void binary_rec(int d, int rank, const int64_t* dims, const TA* a, const int64_t* as, const TB* b,
                const int64_t* bs, TO*& y, F& f) {
  if (d == rank - 1) {
    binary_row(dims[d], a, as[d], b, bs[d], y, f);
    y += dims[d];
    return;
  }
  for (int64_t i = 0; i < dims[d]; ++i) binary_rec(d + 1, rank, dims, a + i * as[d], as, b + i * bs[d], bs, y, f);
}

template <class TA, class TB, class TC, class TO, class F>
void ternary_row(int64_t n, const TA* a, int64_t sa, const TB* b, int64_t sb, const TC* c, int64_t sc, TO* y,
                 F& f) {
  if (sa == 1 && sb == 1 && sc == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(a[i], b[i], c[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<TO>(f(a[i * sa], b[i * sb], c[i * sc]));
  }
}

template <class TA, class TB, class TC, class TO, class F>
void ternary_rec(int d, int rank, const int64_t* dims, const TA* a, const int64_t* as, const TB* b,
                 const int64_t* bs, const TC* c, const int64_t* cs, TO*& y, F& f) {
  if (d == rank - 1) {
    ternary_row(dims[d], a, as[d], b, bs[d], c, cs[d], y, f);
    y += dims[d];
    return;
  }
  for (int64_t i = 0; i < dims[d]; ++i)
    ternary_rec(d + 1, rank, dims, a + i * as[d], as, b + i * bs[d], bs, c + i * cs[d], cs, y, f);
}

inline bool any_zero(int rank, const int64_t* dims) {
  for (int i = 0; i < rank; ++i)
    if (dims[i] == 0) return true;
  return false;
}

}  // namespace detail

// y[idx] = f(a[idx . a_strides], b[idx . b_strides]) for every idx of out_dims,
// y dense row-major. Strides are in elements, 0 on broadcast dims (see
// broadcast_strides). Dims are collapsed first, so equal shapes run as one
// plain loop, and a scalar or a contiguous innermost dim gets its own loop.
template <class TA, class TB, class TO, class F>
void broadcast_binary(int rank, const int64_t* out_dims, const TA* a, const int64_t* a_strides, const TB* b,
                      const int64_t* b_strides, TO* y, F f) {
  if (detail::any_zero(rank, out_dims)) return;
  if (rank == 0) {
    y[0] = static_cast<TO>(f(a[0], b[0]));
    return;
  }
  int64_t dims[detail::kMaxBroadcastRank];
  int64_t st[2][detail::kMaxBroadcastRank];
  const int64_t* in_strides[2] = {a_strides, b_strides};
  const int r = detail::collapse_dims<2>(rank, out_dims, in_strides, dims, st);
  if (r < 0) {
    detail::binary_rec(0, rank, out_dims, a, a_strides, b, b_strides, y, f);
  } else if (r == 0) {
    y[0] = static_cast<TO>(f(a[0], b[0]));
  } else {
    detail::binary_rec(0, r, dims, a, st[0], b, st[1], y, f);
  }
}

// Same scheme with three operands (Where, Clip with tensor bounds, ...).
template <class TA, class TB, class TC, class TO, class F>
void broadcast_ternary(int rank, const int64_t* out_dims, const TA* a, const int64_t* a_strides, const TB* b,
                       const int64_t* b_strides, const TC* c, const int64_t* c_strides, TO* y, F f) {
  if (detail::any_zero(rank, out_dims)) return;
  if (rank == 0) {
    y[0] = static_cast<TO>(f(a[0], b[0], c[0]));
    return;
  }
  int64_t dims[detail::kMaxBroadcastRank];
  int64_t st[3][detail::kMaxBroadcastRank];
  const int64_t* in_strides[3] = {a_strides, b_strides, c_strides};
  const int r = detail::collapse_dims<3>(rank, out_dims, in_strides, dims, st);
  if (r < 0) {
    detail::ternary_rec(0, rank, out_dims, a, a_strides, b, b_strides, c, c_strides, y, f);
  } else if (r == 0) {
    y[0] = static_cast<TO>(f(a[0], b[0], c[0]));
  } else {
    detail::ternary_rec(0, r, dims, a, st[0], b, st[1], c, st[2], y, f);
  }
}

}  // namespace kiln::rt
