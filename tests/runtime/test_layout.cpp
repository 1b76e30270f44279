#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kiln/rt/layout.h"

using namespace kiln::rt;

namespace {

std::vector<int32_t> iota(size_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Reference transpose by index arithmetic.
template <class T>
std::vector<T> transpose_ref(const std::vector<T>& x, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const size_t r = dims.size();
  std::vector<int64_t> in_strides(r), out_dims(r);
  int64_t st = 1;
  for (size_t i = r; i-- > 0;) {
    in_strides[i] = st;
    st *= dims[i];
  }
  for (size_t i = 0; i < r; ++i) out_dims[i] = dims[perm[i]];
  std::vector<T> y(x.size());
  std::vector<int64_t> idx(r, 0);
  for (size_t o = 0; o < y.size(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < r; ++i) src += idx[i] * in_strides[perm[i]];
    y[o] = x[src];
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < out_dims[i]) break;
      idx[i] = 0;
    }
  }
  return y;
}

}  // namespace

TEST_CASE("transpose_bytes matches index arithmetic for several ranks and perms and element sizes") {
  const std::vector<std::vector<int64_t>> dims = {{5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 5}, {2, 3, 1, 4, 3}};
  for (const auto& d : dims) {
    const size_t r = d.size();
    std::vector<int64_t> perm(r);
    std::iota(perm.begin(), perm.end(), 0);
    size_t n = 1;
    for (int64_t v : d) n *= size_t(v);
    do {
      const auto x = iota(n);
      std::vector<int32_t> y(n, -1);
      transpose_bytes(4, int(r), d.data(), perm.data(), x.data(), y.data());
      CHECK(y == transpose_ref(x, d, perm));
      std::vector<uint8_t> x1(n), y1(n);
      for (size_t i = 0; i < n; ++i) x1[i] = uint8_t(i);
      transpose_bytes(1, int(r), d.data(), perm.data(), x1.data(), y1.data());
      CHECK(y1 == transpose_ref(x1, d, perm));
      std::vector<int64_t> x8(n), y8(n);
      for (size_t i = 0; i < n; ++i) x8[i] = int64_t(i) * 1000000007LL;
      transpose_bytes(8, int(r), d.data(), perm.data(), x8.data(), y8.data());
      CHECK(y8 == transpose_ref(x8, d, perm));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("transpose_bytes with an odd element size (3 bytes)") {
  const int64_t dims[2] = {2, 3}, perm[2] = {1, 0};
  const uint8_t x[18] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
  uint8_t y[18];
  transpose_bytes(3, 2, dims, perm, x, y);
  const uint8_t want[18] = {0, 1, 2, 9, 10, 11, 3, 4, 5, 12, 13, 14, 6, 7, 8, 15, 16, 17};
  CHECK(std::equal(y, y + 18, want));
}

TEST_CASE("strided_copy_bytes handles slices and negative steps and broadcast and rank 0") {
  // x is 4 x 5 (0..19).
  const auto x = iota(20);
  {
    // x[1:3, 1:5:2] -> 2 x 2
    const int64_t dims[2] = {2, 2}, strides[2] = {5, 2};
    std::vector<int32_t> y(4);
    strided_copy_bytes(4, 2, dims, x.data(), strides, 6, y.data());
    CHECK(y == std::vector<int32_t>{6, 8, 11, 13});
  }
  {
    // x[::-1, 4:1:-1] -> 4 x 3
    const int64_t dims[2] = {4, 3}, strides[2] = {-5, -1};
    std::vector<int32_t> y(12);
    strided_copy_bytes(4, 2, dims, x.data(), strides, 19, y.data());
    CHECK(y == std::vector<int32_t>{19, 18, 17, 14, 13, 12, 9, 8, 7, 4, 3, 2});
  }
  {
    // Expand row 2 (5 values) to 3 x 5, and one value to 2 x 3.
    const int64_t dims[2] = {3, 5}, strides[2] = {0, 1};
    std::vector<int32_t> y(15);
    strided_copy_bytes(4, 2, dims, x.data(), strides, 10, y.data());
    for (int i = 0; i < 15; ++i) CHECK(y[size_t(i)] == 10 + i % 5);
    const int64_t d2[2] = {2, 3}, s2[2] = {0, 0};
    std::vector<int32_t> z(6);
    strided_copy_bytes(4, 2, d2, x.data(), s2, 7, z.data());
    CHECK(z == std::vector<int32_t>(6, 7));
  }
  {
    // Tile-like: column broadcast 4 x 3 from the first column of x.
    const int64_t dims[3] = {4, 1, 3}, strides[3] = {5, 99, 0};
    std::vector<int32_t> y(12);
    strided_copy_bytes(4, 3, dims, x.data(), strides, 0, y.data());
    CHECK(y == std::vector<int32_t>{0, 0, 0, 5, 5, 5, 10, 10, 10, 15, 15, 15});
  }
  {
    int32_t y = -1;
    strided_copy_bytes(4, 0, nullptr, x.data(), nullptr, 3, &y);
    CHECK(y == 3);
  }
  {
    // A zero-sized output writes nothing.
    const int64_t dims[2] = {0, 3}, strides[2] = {1, 1};
    int32_t y = -1;
    strided_copy_bytes(4, 2, dims, x.data(), strides, 0, &y);
    CHECK(y == -1);
  }
}

TEST_CASE("concat_bytes along an inner axis") {
  // a: 2 x 2, b: 2 x 3 -> y: 2 x 5 (concat along axis 1).
  const std::vector<int16_t> a = {1, 2, 3, 4}, b = {10, 11, 12, 13, 14, 15};
  const void* inputs[2] = {a.data(), b.data()};
  const int64_t inner[2] = {2, 3};
  std::vector<int16_t> y(10);
  concat_bytes(2, 2, 2, inputs, inner, y.data());
  CHECK(y == std::vector<int16_t>{1, 2, 10, 11, 12, 3, 4, 13, 14, 15});
}

TEST_CASE("gather_bytes along a middle axis") {
  // data 2 x 3 x 2, indices {2, 0, 2} along axis 1.
  const auto data = iota(12);
  const int64_t idx[3] = {2, 0, 2};
  std::vector<int32_t> y(12);
  gather_bytes(4, 2, 3, 2, data.data(), idx, 3, y.data());
  CHECK(y == std::vector<int32_t>{4, 5, 0, 1, 4, 5, 10, 11, 6, 7, 10, 11});
}
