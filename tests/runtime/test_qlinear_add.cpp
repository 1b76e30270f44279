// kiln.QLinearAdd (qlinear_add, qlinear_add.cpp): every loop the CPU has against a plain
// per-element reference of the formula, and the formula against DequantizeLinear, Add and
// QuantizeLinear computed one at a time (within one step).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kiln/rt/qlinear.h"
#include "kiln/rt/quantize.h"

using namespace kiln::rt;

namespace {

const QAddIsa kAddIsas[] = {QAddIsa::portable, QAddIsa::avx2, QAddIsa::avx512};

template <class T>
std::vector<T> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

// y = saturate(round_half_even(a ra + b rb + c)), each product and sum one fused multiply-add,
// written out element by element.
template <class A, class B, class Y>
std::vector<Y> naive(const std::vector<A>& a, const std::vector<B>& b, float ra, float rb, float c) {
  std::vector<Y> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    float v = std::fma(float(a[i]), ra, std::fma(float(b[i]), rb, c));
    if (!(v >= float(std::numeric_limits<Y>::lowest()))) v = float(std::numeric_limits<Y>::lowest());
    if (v > float(std::numeric_limits<Y>::max())) v = float(std::numeric_limits<Y>::max());
    y[i] = static_cast<Y>(std::lrint(v));
  }
  return y;
}

template <class A, class B, class Y>
void check_types(uint32_t seed) {
  const int64_t n = 1000 + seed % 37;  // full vectors of 16 and 8 and a remainder
  const auto a = random_bytes<A>(size_t(n), seed);
  const auto b = random_bytes<B>(size_t(n), seed + 1);
  // the second saturates often; the third has zero points at the types' ends
  const float params[][6] = {{0.031f, 7, 0.047f, 3, 0.05f, 0}, {0.031f, 120, 0.047f, 100, 0.011f, 77},
                             {0.02f, float(std::numeric_limits<A>::max()), 0.09f,
                              float(std::numeric_limits<B>::lowest()), 0.07f, float(std::numeric_limits<Y>::max())}};
  for (const auto& q : params) {
    CAPTURE(q[4]);
    CAPTURE(q[5]);
    const QLinearAddParams p = qlinear_add_params(std::is_signed_v<A>, std::is_signed_v<B>, std::is_signed_v<Y>,
                                                  q[0], q[1], q[2], q[3], q[4], q[5]);
    const auto want = naive<A, B, Y>(a, b, p.ra, p.rb, p.c);
    for (const QAddIsa isa : kAddIsas) {
      CAPTURE(static_cast<int>(isa));
      for (const int64_t len : {n, int64_t{1}, int64_t{15}, int64_t{17}}) {
        std::vector<Y> got(size_t(n) + 1, Y(42));
        qlinear_add_8bit(p, a.data(), b.data(), got.data(), len, isa);
        for (int64_t i = 0; i < len; ++i) REQUIRE(int(got[i]) == int(want[i]));
        CHECK(int(got[len]) == 42);  // nothing written past the end
      }
    }
    // the formula against the three ops one at a time: at most one step apart, where the sum
    // lies at or within float rounding of a half-integer (decimal scales as these make exact
    // ties frequent: a few values in a thousand)
    const QuantLayout per_tensor{1, 1, n, 1, 0, 0, 0};
    std::vector<float> fa(a.size()), fb(b.size()), sum(a.size());
    const A za = static_cast<A>(q[1]);
    const B zb = static_cast<B>(q[3]);
    const Y zy = static_cast<Y>(q[5]);
    dequantize_linear<A, float, float>(a.data(), &q[0], &za, fa.data(), per_tensor);
    dequantize_linear<B, float, float>(b.data(), &q[2], &zb, fb.data(), per_tensor);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = fa[i] + fb[i];
    std::vector<Y> steps(a.size()), got(a.size());
    quantize_linear<float, float, Y>(sum.data(), &q[4], &zy, steps.data(), per_tensor, KILN_F32, true);
    qlinear_add<A, B, Y>(a.data(), q[0], q[1], b.data(), q[2], q[3], q[4], q[5], got.data(), n);
    int differ = 0;
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(std::abs(int(got[i]) - int(steps[i])) <= 1);
      differ += got[i] != steps[i];
    }
    CHECK(differ <= n / 100);
  }
}

}  // namespace

TEST_CASE("qlinear_add: every loop equals the reference for all 8-bit type combinations, at both ends") {
  check_types<uint8_t, uint8_t, uint8_t>(1);
  check_types<uint8_t, uint8_t, int8_t>(2);
  check_types<uint8_t, int8_t, uint8_t>(3);
  check_types<uint8_t, int8_t, int8_t>(4);
  check_types<int8_t, uint8_t, uint8_t>(5);
  check_types<int8_t, uint8_t, int8_t>(6);
  check_types<int8_t, int8_t, uint8_t>(7);
  check_types<int8_t, int8_t, int8_t>(8);
}

TEST_CASE("qlinear_add: NaN goes to the low end, infinities saturate") {
  const std::vector<uint8_t> a{0, 10, 200, 255}, b{255, 0, 3, 255};
  for (const QAddIsa isa : kAddIsas) {
    CAPTURE(static_cast<int>(isa));
    std::vector<uint8_t> y(4, 42);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    qlinear_add_8bit(QLinearAddParams{false, false, false, nan, 1.0f, 0.0f}, a.data(), b.data(), y.data(), 4, isa);
    CHECK(y == std::vector<uint8_t>{0, 0, 0, 0});
    qlinear_add_8bit(QLinearAddParams{false, false, false, inf, 0.0f, 0.0f}, a.data(), b.data(), y.data(), 4, isa);
    CHECK(y == std::vector<uint8_t>{0, 255, 255, 255});  // 0 * inf is NaN: the low end
    std::vector<int8_t> z(4, 42);
    qlinear_add_8bit(QLinearAddParams{false, false, true, -inf, 1.0f, 0.0f}, a.data(), b.data(), z.data(), 4, isa);
    CHECK(z == std::vector<int8_t>{-128, -128, -128, -128});
  }
}
