// quantize_linear and dequantize_linear per tensor between f32 and 8 bits (the loops of
// quantize.h that generated code runs at the ends of a quantized chain) against the definition
// written here: the quotient x / s rounded to f32 by the division, then quantize_value's
// rounding half to even, zero point and clamp (NaN to 0); (x - zp) * s back. Quotients on both
// sides of every half, ulp by ulp, tell a division from a multiplication by 1 / s (which rounds
// differently: a faster kernel must not make that change).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kiln/rt/quantize.h"

using namespace kiln::rt;

namespace {

template <class Q>
Q expected(float x, float s, Q zp) {
  return quantize_value<Q>(static_cast<double>(x / s), zp, true);
}

// Every value of x through the kernel, at every length's tail (the first `n` values for n up to
// 40, then the whole vector), against expected.
template <class Q>
int64_t mismatches(const std::vector<float>& x, float s, Q zp) {
  std::vector<Q> y(x.size());
  int64_t bad = 0;
  for (size_t n : {size_t{1}, size_t{7}, size_t{15}, size_t{16}, size_t{17}, size_t{40}, x.size()}) {
    if (n > x.size()) continue;
    quantize_linear<float, float, Q>(x.data(), &s, &zp, y.data(), QuantLayout{1, 1, static_cast<int64_t>(n)}, KILN_F32,
                                     true);
    for (size_t i = 0; i < n; ++i) bad += y[i] != expected<Q>(x[i], s, zp);
  }
  return bad;
}

// x whose quotients by s lie within a few ulp of each half k + 0.5 in [lo, hi), and of each
// integer (the clamp's bounds), both signs.
std::vector<float> near_halves(float s, int lo, int hi) {
  std::vector<float> x;
  for (int k = lo; k < hi; ++k)
    for (float target : {static_cast<float>(k) + 0.5f, static_cast<float>(k)}) {
      float v = target * s;
      for (int i = 0; i < 6; ++i) v = std::nextafter(v, -std::numeric_limits<float>::infinity());
      for (int i = 0; i < 13; ++i, v = std::nextafter(v, std::numeric_limits<float>::infinity())) x.push_back(v);
    }
  return x;
}

const float kScales[] = {0.018379f, 1.0f / 255.0f, 0.0078125f, 3.7e-5f, 0.1f, 123.4f, 2.0f, 0.3333333f};

}  // namespace

TEST_CASE("quantize_linear per tensor to u8: quotients at every half round as x / s does") {
  for (float s : kScales) {
    CAPTURE(s);
    const std::vector<float> x = near_halves(s, -300, 300);
    for (uint8_t zp : {uint8_t{0}, uint8_t{128}, uint8_t{255}, uint8_t{3}}) {
      CAPTURE(int(zp));
      CHECK(mismatches<uint8_t>(x, s, zp) == 0);
    }
  }
}

TEST_CASE("quantize_linear per tensor to s8: quotients at every half round as x / s does") {
  for (float s : kScales) {
    CAPTURE(s);
    const std::vector<float> x = near_halves(s, -300, 300);
    for (int8_t zp : {int8_t{0}, int8_t{-128}, int8_t{127}, int8_t{-5}}) {
      CAPTURE(int(zp));
      CHECK(mismatches<int8_t>(x, s, zp) == 0);
    }
  }
}

TEST_CASE("quantize_linear per tensor: random values, negative, tiny and huge scales, infinities and NaN") {
  std::mt19937 rng(7);
  std::vector<float> x(100003);
  for (float s : {0.018379f, -0.05f, 1e-30f, 1e30f, 1e-39f /* subnormal */, 3e38f}) {
    CAPTURE(s);
    std::uniform_real_distribution<float> d(-400.0f * std::fabs(s), 400.0f * std::fabs(s));
    for (float& v : x) v = d(rng);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const float specials[] = {0.0f, -0.0f, inf, -inf, nan, -nan, std::numeric_limits<float>::max(),
                              -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::min(), 1e-20f, -1e-20f, 1e20f};
    for (size_t i = 0; i < std::size(specials); ++i) x[i * 17] = specials[i];
    CHECK(mismatches<uint8_t>(x, s, uint8_t{131}) == 0);
    CHECK(mismatches<int8_t>(x, s, int8_t{-7}) == 0);
  }
}

TEST_CASE("dequantize_linear per tensor: (x - zp) * s for every byte, tails") {
  std::vector<uint8_t> u(256 + 13);
  std::vector<int8_t> s8(u.size());
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(i * 7), s8[i] = static_cast<int8_t>(u[i]);
  std::vector<float> y(u.size());
  for (float s : {0.018379f, 1e-30f, 3e38f}) {
    CAPTURE(s);
    for (size_t n : {size_t{5}, size_t{8}, u.size()}) {
      const uint8_t zu = 131;
      const int8_t zs = -7;
      const QuantLayout l{1, 1, static_cast<int64_t>(n)};
      dequantize_linear<uint8_t, float, float>(u.data(), &s, &zu, y.data(), l);
      for (size_t i = 0; i < n; ++i) CHECK(y[i] == (static_cast<float>(u[i]) - 131.0f) * s);
      dequantize_linear<int8_t, float, float>(s8.data(), &s, &zs, y.data(), l);
      for (size_t i = 0; i < n; ++i) CHECK(y[i] == (static_cast<float>(s8[i]) + 7.0f) * s);
    }
  }
}
