#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kiln/rt/dtype.h"
#include "kiln/rt/elementwise.h"

using namespace kiln::rt;

namespace {

// Reference: y[i,j,k] = a[...] + 10 * b[...] with explicit index arithmetic.
std::vector<float> ref_binary(const std::vector<int64_t>& od, const std::vector<float>& a, const int64_t* as,
                              const std::vector<float>& b, const int64_t* bs) {
  int64_t n = 1;
  for (int64_t d : od) n *= d;
  std::vector<float> y(static_cast<size_t>(n));
  std::vector<int64_t> idx(od.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t ia = 0, ib = 0;
    for (size_t i = 0; i < od.size(); ++i) {
      ia += idx[i] * as[i];
      ib += idx[i] * bs[i];
    }
    y[size_t(o)] = a[size_t(ia)] + 10 * b[size_t(ib)];
    for (size_t i = od.size(); i-- > 0;) {
      if (++idx[i] < od[i]) break;
      idx[i] = 0;
    }
  }
  return y;
}

std::vector<float> seq(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + float(i);
  return v;
}

}  // namespace

TEST_CASE("broadcast_strides") {
  const int64_t out[3] = {2, 3, 4}, in[2] = {3, 1};
  int64_t st[3];
  broadcast_strides(3, out, 2, in, st);
  CHECK(st[0] == 0);
  CHECK(st[1] == 1);
  CHECK(st[2] == 0);
  const int64_t full[3] = {2, 3, 4};
  broadcast_strides(3, out, 3, full, st);
  CHECK(st[0] == 12);
  CHECK(st[1] == 4);
  CHECK(st[2] == 1);
}

TEST_CASE("broadcast_binary over the common broadcasting patterns") {
  auto add = [](float x, float y) { return x + 10 * y; };
  struct Case {
    std::vector<int64_t> out, a, b;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},  // same shape
      {{2, 3, 4}, {2, 3, 4}, {}},         // scalar b
      {{2, 3, 4}, {}, {2, 3, 4}},         // scalar a
      {{2, 3, 4}, {2, 3, 4}, {4}},        // innermost vector
      {{2, 3, 4}, {2, 3, 1}, {1, 1, 4}},  // outer product
      {{2, 3, 4}, {3, 1}, {2, 1, 4}},     // mixed
      {{5, 1, 7}, {5, 1, 7}, {7}},        // size-1 dim
      {{3, 2, 2, 2}, {3, 1, 2, 1}, {2, 2, 2}},
  };
  for (const auto& c : cases) {
    int64_t na = 1, nb = 1, n = 1;
    for (int64_t d : c.a) na *= d;
    for (int64_t d : c.b) nb *= d;
    for (int64_t d : c.out) n *= d;
    const auto a = seq(size_t(na)), b = seq(size_t(nb), 100);
    std::vector<int64_t> as(c.out.size()), bs(c.out.size());
    broadcast_strides(int(c.out.size()), c.out.data(), int(c.a.size()), c.a.data(), as.data());
    broadcast_strides(int(c.out.size()), c.out.data(), int(c.b.size()), c.b.data(), bs.data());
    std::vector<float> y(size_t(n), -1);
    broadcast_binary(int(c.out.size()), c.out.data(), a.data(), as.data(), b.data(), bs.data(), y.data(), add);
    CHECK(y == ref_binary(c.out, a, as.data(), b, bs.data()));
  }
}

TEST_CASE("broadcast_binary with mixed types and a bool result and rank 0") {
  const int64_t out[1] = {4}, sa[1] = {1}, sb[1] = {0};
  const int32_t a[4] = {1, 5, 3, 7};
  const float b[1] = {4.f};
  bool y[4];
  broadcast_binary(1, out, a, sa, b, sb, y, [](int32_t x, float t) { return float(x) > t; });
  CHECK(!y[0]);
  CHECK(y[1]);
  CHECK(!y[2]);
  CHECK(y[3]);
  int64_t s = 0;
  const int64_t two = 2, three = 3;
  broadcast_binary(0, nullptr, &two, nullptr, &three, nullptr, &s, [](int64_t p, int64_t q) { return p * q; });
  CHECK(s == 6);
}

TEST_CASE("broadcast_ternary as Where") {
  const int64_t out[2] = {2, 3};
  const bool cond[3] = {true, false, true};
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const float y0[1] = {-1};
  const int64_t sc[2] = {0, 1}, sx[2] = {3, 1}, sy[2] = {0, 0};
  float y[6];
  broadcast_ternary(2, out, cond, sc, x, sx, y0, sy, y, [](bool c, float a, float b) { return c ? a : b; });
  const float want[6] = {1, -1, 3, 4, -1, 6};
  CHECK(std::equal(y, y + 6, want));
}

TEST_CASE("map_unary with same and different types and f16 operands") {
  const float x[3] = {1, -2, 3};
  float y[3];
  map_unary(3, x, y, [](float v) { return v < 0 ? 0.f : v; });
  CHECK(y[1] == 0.f);
  int64_t yi[3];
  map_unary(3, x, yi, [](float v) { return int64_t(v * 2); });
  CHECK(yi[2] == 6);
  const f16 h[3] = {f16(1.f), f16(2.f), f16(-0.5f)};
  f16 hy[3];
  map_unary(3, h, hy, [](float v) { return v * 2; });
  CHECK(float(hy[2]) == -1.f);
  f16 hs[3];
  const int64_t out[1] = {3}, s1[1] = {1};
  broadcast_binary(1, out, h, s1, hy, s1, hs, [](float p, float q) { return p + q; });
  CHECK(float(hs[0]) == 3.f);
  CHECK(hs[1].bits == f16(6.f).bits);
  bf16 bb[3];
  map_unary(3, x, bb, [](float v) { return v; });
  CHECK(bb[0].bits == 0x3F80);
}
