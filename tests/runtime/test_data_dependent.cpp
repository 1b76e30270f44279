// The kernels whose output size depends on the data (kiln/rt/index_copy.h's nonzero,
// kiln/rt/rearrange.h's unique and compress_count), against numpy's answers written out.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/rt/index_copy.h"
#include "kiln/rt/rearrange.h"

using namespace kiln::rt;

TEST_CASE("nonzero lists coordinates row by row, as numpy.nonzero") {
  const int64_t dims[] = {2, 3};
  const float x[] = {0, 1, 0, 2, 0, 3};
  std::vector<int64_t> y(2 * 6, -1);
  REQUIRE(nonzero<float>(2, dims, x, y.data()) == 3);
  CHECK(std::vector<int64_t>(y.begin(), y.begin() + 6) == std::vector<int64_t>{0, 1, 1, 1, 0, 2});
  const float zeros[] = {0, 0, 0, 0, 0, 0};
  CHECK(nonzero<float>(2, dims, zeros, y.data()) == 0);
}

TEST_CASE("unique: sorted and first-occurrence order, indices, inverse and counts; NaN last and equal to NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float x[] = {2, nan, 1, 2, nan, 0};
  std::vector<float> y(6);
  std::vector<int64_t> first(6), inverse(6), counts(6), scratch(4 * 6);
  // numpy.unique(equal_nan=True): [0, 1, 2, nan], first indices [5, 2, 0, 1], counts [1, 1, 2, 2].
  REQUIRE(unique<float>(1, 6, 1, x, true, y.data(), first.data(), inverse.data(), counts.data(), scratch.data()) == 4);
  CHECK(y[0] == 0);
  CHECK(y[1] == 1);
  CHECK(y[2] == 2);
  CHECK(std::isnan(y[3]));
  CHECK(std::vector<int64_t>(first.begin(), first.begin() + 4) == std::vector<int64_t>{5, 2, 0, 1});
  CHECK(inverse == std::vector<int64_t>{2, 3, 1, 2, 3, 0});
  CHECK(std::vector<int64_t>(counts.begin(), counts.begin() + 4) == std::vector<int64_t>{1, 1, 2, 2});
  // In order of first occurrence: [2, nan, 1, 0].
  REQUIRE(unique<float>(1, 6, 1, x, false, y.data(), first.data(), inverse.data(), counts.data(), scratch.data()) == 4);
  CHECK(y[0] == 2);
  CHECK(std::isnan(y[1]));
  CHECK(std::vector<int64_t>(first.begin(), first.begin() + 4) == std::vector<int64_t>{0, 1, 2, 5});
  CHECK(inverse == std::vector<int64_t>{0, 1, 2, 0, 1, 3});
}

TEST_CASE("unique along an axis compares whole slices") {
  // [[1, 0, 1], [2, 3, 2]] along axis 1: columns (1,2), (0,3), (1,2) -> sorted (0,3), (1,2).
  const int32_t x[] = {1, 0, 1, 2, 3, 2};
  std::vector<int32_t> y(6);
  std::vector<int64_t> inverse(3), scratch(4 * 3);
  REQUIRE(unique<int32_t>(2, 3, 1, x, true, y.data(), nullptr, inverse.data(), nullptr, scratch.data()) == 2);
  CHECK(std::vector<int32_t>(y.begin(), y.begin() + 4) == std::vector<int32_t>{0, 1, 3, 2});
  CHECK(inverse == std::vector<int64_t>{1, 0, 1});
}

TEST_CASE("compress_count refuses a condition that selects past the axis") {
  const bool keep[] = {true, false, true};
  CHECK(compress_count(keep, 3, 3) == 2);
  CHECK(compress_count(keep, 3, 2) == -1);
  CHECK(compress_count(keep, 2, 2) == 1);
}
