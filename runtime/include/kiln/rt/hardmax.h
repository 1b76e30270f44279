// Hardmax: 1 at the first maximum along an axis, 0 elsewhere.
#pragma once

#include <cstdint>

namespace kiln::rt {

// x and y are [outer, n, inner] row-major; the axis is the middle one. Elements of storage
// type S compare as C (float for f16 and bf16).
template <class C, class S>
void hardmax(int64_t outer, int64_t n, int64_t inner, const S* x, S* y) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const S* xs = x + o * n * inner + i;
      S* ys = y + o * n * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < n; ++k)
        if (static_cast<C>(xs[k * inner]) > static_cast<C>(xs[best * inner])) best = k;
      for (int64_t k = 0; k < n; ++k) ys[k * inner] = static_cast<S>(static_cast<C>(k == best ? 1 : 0));
    }
  }
}

}  // namespace kiln::rt
