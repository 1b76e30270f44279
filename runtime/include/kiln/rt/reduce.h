// Reductions and scans, header-only so that the element type and the reduction inline:
// Reduce* over any set of axes, ArgMax/ArgMin, CumSum, CumProd, TopK. T is the storage type, Acc the
// type sums are kept in (float for f16/bf16/f32, double for f64, int64_t for integers and bool).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln::rt {

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

namespace detail {

// Calls fn(offset) for each index of dims (rank >= 1), offset = sum index[d] * strides[d].
template <class F>
void for_each_offset(int rank, const int64_t* dims, const int64_t* strides, int64_t base, F&& fn) {
  for (int d = 0; d < rank; ++d)
    if (dims[d] == 0) return;
  int64_t idx[32] = {};
  int64_t off = base;
  for (;;) {
    fn(off);
    int d = rank - 1;
    for (; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace detail

// y[o] = reduction over the `red` dims of x, for each index o of the kept `out` dims; the
// strides are x's (in elements). Both ranks are 1..32 (pass a dim of 1 for none).
template <Reduce K, class T, class Acc>
void reduce(int out_rank, const int64_t* out_dims, const int64_t* out_strides, int red_rank, const int64_t* red_dims,
            const int64_t* red_strides, const T* x, T* y) {
  int64_t count = 1;
  for (int d = 0; d < red_rank; ++d) count *= red_dims[d];
  int64_t o = 0;
  detail::for_each_offset(out_rank, out_dims, out_strides, 0, [&](int64_t base) {
    Acc acc = 0, peak = 0;
    if constexpr (K == Reduce::Prod) acc = 1;
    if constexpr (K == Reduce::Max || K == Reduce::Min) {
      if constexpr (std::is_floating_point_v<Acc>)
        acc = K == Reduce::Max ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
      else
        acc = K == Reduce::Max ? static_cast<Acc>(std::numeric_limits<T>::lowest())
                               : static_cast<Acc>(std::numeric_limits<T>::max());
    }
    if constexpr (K == Reduce::LogSumExp) {
      peak = -std::numeric_limits<Acc>::infinity();
      detail::for_each_offset(red_rank, red_dims, red_strides, base, [&](int64_t i) {
        const Acc v = static_cast<Acc>(x[i]);
        if (v > peak) peak = v;
      });
      if (count > 0 && std::isinf(peak)) peak = 0;
    }
    detail::for_each_offset(red_rank, red_dims, red_strides, base, [&](int64_t i) {
      const Acc v = static_cast<Acc>(x[i]);
      if constexpr (K == Reduce::Sum || K == Reduce::Mean || K == Reduce::LogSum) acc += v;
      else if constexpr (K == Reduce::Max) acc = v > acc ? v : acc;
      else if constexpr (K == Reduce::Min) acc = v < acc ? v : acc;
      else if constexpr (K == Reduce::Prod) acc *= v;
      else if constexpr (K == Reduce::L1) acc += v < 0 ? -v : v;
      else if constexpr (K == Reduce::L2 || K == Reduce::SumSquare) acc += v * v;
      else acc += static_cast<Acc>(std::exp(v - peak));  // LogSumExp
    });
    if constexpr (K == Reduce::Mean) acc = static_cast<Acc>(acc / static_cast<Acc>(count));
    if constexpr (K == Reduce::L2) acc = static_cast<Acc>(std::sqrt(acc));
    if constexpr (K == Reduce::LogSum) acc = static_cast<Acc>(std::log(acc));
    if constexpr (K == Reduce::LogSumExp) acc = static_cast<Acc>(peak + std::log(acc));
    y[o++] = static_cast<T>(acc);
  });
}

// y[o][i] = the index k along len of the largest (IsMax) or smallest x[o][k][i]; ties take the
// first index, or the last with `last`.
template <bool IsMax, class T, class C>
void arg_reduce(int64_t outer, int64_t len, int64_t inner, bool last, const T* x, int64_t* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* p = x + o * len * inner + i;
      int64_t best = 0;
      C bv = static_cast<C>(p[0]);
      for (int64_t k = 1; k < len; ++k) {
        const C v = static_cast<C>(p[k * inner]);
        const bool better = IsMax ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
        if (better) {
          best = k;
          bv = v;
        }
      }
      y[o * inner + i] = best;
    }
}

// Running sums (CumSum) or products (CumProd, Product) along len of x[outer][len][inner];
// exclusive leaves the element itself out, reverse runs from the end.
template <bool Product, class T, class Acc>
void scan(int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse, const T* x, T* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      Acc acc = Product ? 1 : 0;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t at = (o * len + (reverse ? len - 1 - s : s)) * inner + i;
        const Acc v = static_cast<Acc>(x[at]);
        if (!exclusive) acc = Product ? acc * v : acc + v;
        y[at] = static_cast<T>(acc);
        if (exclusive) acc = Product ? acc * v : acc + v;
      }
    }
}

template <class T, class Acc>
void cumsum(int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse, const T* x, T* y) {
  scan<false, T, Acc>(outer, len, inner, exclusive, reverse, x, y);
}

// The k largest (or smallest) of each lane along len, sorted, ties by lower index; scratch
// holds len int64_t.
template <class T, class C>
void topk(int64_t outer, int64_t len, int64_t inner, int64_t k, bool largest, const T* x, T* values,
          int64_t* indices, int64_t* scratch) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* p = x + o * len * inner + i;
      for (int64_t j = 0; j < len; ++j) scratch[j] = j;
      std::partial_sort(scratch, scratch + k, scratch + len, [&](int64_t a, int64_t b) {
        const C va = static_cast<C>(p[a * inner]), vb = static_cast<C>(p[b * inner]);
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        values[at] = p[scratch[j] * inner];
        indices[at] = scratch[j];
      }
    }
}

}  // namespace kiln::rt
