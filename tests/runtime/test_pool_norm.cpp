#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kiln/rt/norm.h"
#include "kiln/rt/normalize.h"
#include "kiln/rt/pool.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

Pool2dParams pool_params(int64_t H, int64_t W, int64_t K, int64_t S, int64_t OH, int64_t OW, int64_t pt, int64_t pl) {
  Pool2dParams p{};
  p.N = 1; p.C = 1; p.H = H; p.W = W; p.KH = K; p.KW = K; p.OH = OH; p.OW = OW;
  p.stride_h = S; p.stride_w = S; p.pad_top = pt; p.pad_left = pl; p.dil_h = 1; p.dil_w = 1;
  p.pad_bottom = -1; p.pad_right = -1;
  return p;
}

}  // namespace

TEST_CASE("maxpool2d_f32 with padding treats pads as -inf") {
  // x = 1..9 as 3x3; kernel 2, stride 1, pads 1 all round -> 4x4 output.
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (float& v : x) v = -v;  // all negative, so a zero pad would win if pads were 0
  auto p = pool_params(3, 3, 2, 1, 4, 4, 1, 1);
  std::vector<float> y(16);
  maxpool2d_f32(p, x.data(), y.data(), nullptr);
  const std::vector<float> want = {-1, -1, -2, -3, -1, -1, -2, -3, -4, -4, -5, -6, -7, -7, -8, -9};
  CHECK(y == want);
}

TEST_CASE("maxpool2d_f32 stride 2 with dilation") {
  // 1 x 5 input, kernel 2 with dilation 2, stride 2 -> windows {0,2}, {2,4}.
  std::vector<float> x = {5, 1, 3, 9, 4};
  Pool2dParams p{};
  p.N = 1; p.C = 1; p.H = 1; p.W = 5; p.KH = 1; p.KW = 2; p.OH = 1; p.OW = 2;
  p.stride_h = 1; p.stride_w = 2; p.dil_h = 1; p.dil_w = 2;
  std::vector<float> y(2);
  maxpool2d_f32(p, x.data(), y.data(), nullptr);
  CHECK(y == std::vector<float>{5, 4});
}

TEST_CASE("maxpool2d_f32 matches a checked loop over sizes, strides, pads, dilations and NaNs") {
  // Reference: every tap checks its bounds; a NaN anywhere in the window wins.
  auto ref = [](const Pool2dParams& p, const std::vector<float>& x) {
    std::vector<float> y(p.N * p.C * p.OH * p.OW);
    for (int64_t i = 0; i < p.N * p.C; ++i)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          float m = -std::numeric_limits<float>::infinity();
          bool nan = false;
          for (int64_t kh = 0; kh < p.KH; ++kh)
            for (int64_t kw = 0; kw < p.KW; ++kw) {
              const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
              const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
              if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
              const float v = x[(i * p.H + ih) * p.W + iw];
              nan = nan || std::isnan(v);
              m = std::fmax(m, v);
            }
          y[(i * p.OH + oh) * p.OW + ow] = nan ? std::numeric_limits<float>::quiet_NaN() : m;
        }
    return y;
  };
  struct Case { int64_t H, W, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw; };
  const Case cases[] = {
      {112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  // ResNet's stem
      {13, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    // odd sizes
      {9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},     // stride 1, same padding
      {10, 10, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1},    // 2x2 stride 2
      {8, 9, 3, 2, 2, 3, 0, 1, 2, 2, 1, 1},      // asymmetric pads and strides, ceil_mode-like overhang
      {12, 13, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2},    // dilation
      {7, 7, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},      // 5x5
      {1, 19, 1, 4, 1, 3, 0, 1, 0, 3, 1, 1},     // 1-D as H = 1
      {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1},      // every output touches padding
      {2, 5000, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1},   // row too long for the buffer: the checked path
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    Pool2dParams p{};
    p.N = 2; p.C = 3; p.H = c.H; p.W = c.W; p.KH = c.KH; p.KW = c.KW;
    p.stride_h = c.sh; p.stride_w = c.sw; p.pad_top = c.pt; p.pad_left = c.pl; p.dil_h = c.dh; p.dil_w = c.dw;
    p.OH = (c.H + c.pt + c.pb - ((c.KH - 1) * c.dh + 1)) / c.sh + 1;
    p.OW = (c.W + c.pl + c.pr - ((c.KW - 1) * c.dw + 1)) / c.sw + 1;
    auto x = kiln_test::random_floats(p.N * p.C * p.H * p.W, seed++);
    x[x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
    x[x.size() - 1] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> want = ref(p, x);
    std::vector<float> got(want.size(), 7.f);
    ThreadPool tp(2);
    maxpool2d_f32(p, x.data(), got.data(), &tp);
    INFO("H=" << c.H << " W=" << c.W << " K=" << c.KH << "x" << c.KW << " stride=" << c.sh << "," << c.sw);
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        CHECK(std::isnan(got[i]));
      } else {
        CHECK(got[i] == want[i]);
      }
    }
  }
}

TEST_CASE("avgpool2d_f32 count_include_pad on and off") {
  // 2x2 input of ones; kernel 2, stride 1, pad 1 all round -> 3x3 output.
  std::vector<float> x = {1, 2, 3, 4};
  auto p = pool_params(2, 2, 2, 1, 3, 3, 1, 1);
  std::vector<float> y(9);
  avgpool2d_f32(p, false, x.data(), y.data(), nullptr);
  CHECK(y == std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
  avgpool2d_f32(p, true, x.data(), y.data(), nullptr);
  CHECK(y == std::vector<float>{0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1});
}

TEST_CASE("avgpool2d_f32 count_include_pad does not count the ceil_mode overhang") {
  // 1 x 5 input, kernel 3, stride 2, pads (1, 1): windows start at -1, 1, 3;
  // the first and last each hold one explicit pad, which counts.
  std::vector<float> x = {1, 2, 3, 4, 5};
  Pool2dParams p{};
  p.N = 1; p.C = 1; p.H = 1; p.W = 5; p.KH = 1; p.KW = 3; p.OH = 1; p.OW = 3;
  p.stride_h = 1; p.stride_w = 2; p.pad_top = 0; p.pad_left = 1; p.dil_h = 1; p.dil_w = 1;
  p.pad_bottom = 0; p.pad_right = 1;
  std::vector<float> y(3);
  avgpool2d_f32(p, true, x.data(), y.data(), nullptr);
  CHECK(y == std::vector<float>{1, 3, 3});  // (0+1+2)/3, (2+3+4)/3, (4+5+0)/3
  // 1 x 6 input, no pads, ceil_mode: OW = ceil((6 - 3) / 2) + 1 = 3 (2 without
  // ceil). Windows 0..2, 2..4, 4..6: position 6 is overhang and never counts.
  const std::vector<float> x6 = {1, 2, 3, 4, 5, 6};
  p.W = 6;
  p.pad_left = 0;
  p.pad_right = 0;
  avgpool2d_f32(p, true, x6.data(), y.data(), nullptr);
  CHECK(y == std::vector<float>{2, 4, 5.5f});
  avgpool2d_f32(p, false, x6.data(), y.data(), nullptr);
  CHECK(y == std::vector<float>{2, 4, 5.5f});
  // Left at -1, the end pad is taken from OW (here 1), so the overhang counts.
  p.pad_right = -1;
  avgpool2d_f32(p, true, x6.data(), y.data(), nullptr);
  CHECK(y[2] == doctest::Approx(11.0 / 3));
}

TEST_CASE("pools over several planes with a thread pool match serial") {
  const int64_t N = 2, C = 5, H = 9, W = 8;
  const auto x = kiln_test::random_floats(N * C * H * W, 5);
  Pool2dParams p{};
  p.N = N; p.C = C; p.H = H; p.W = W; p.KH = 3; p.KW = 3; p.OH = 5; p.OW = 4;
  p.stride_h = 2; p.stride_w = 2; p.pad_top = 1; p.pad_left = 0; p.dil_h = 1; p.dil_w = 1;
  std::vector<float> a(N * C * 20), b(a.size());
  ThreadPool tp(3);
  maxpool2d_f32(p, x.data(), a.data(), nullptr);
  maxpool2d_f32(p, x.data(), b.data(), &tp);
  CHECK(a == b);
  avgpool2d_f32(p, true, x.data(), a.data(), nullptr);
  avgpool2d_f32(p, true, x.data(), b.data(), &tp);
  CHECK(a == b);
}

TEST_CASE("global pools") {
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -10};
  std::vector<float> y(2);
  global_avgpool_f32(2, 4, x.data(), y.data());
  CHECK(y == std::vector<float>{2.5f, -4});
  global_maxpool<float>(2, 4, x.data(), y.data());
  CHECK(y == std::vector<float>{4, -1});
  std::vector<float> big(2 * 19);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i);
  global_avgpool_f32(2, 19, big.data(), y.data());
  CHECK(y[0] == doctest::Approx(9));
  CHECK(y[1] == doctest::Approx(28));
}

TEST_CASE("global_avgpool_f32 split across a pool (MobileNetV2's 1280 planes of 7 x 7) matches the plain mean") {
  ThreadPool tp(2);
  for (const int64_t nc : {int64_t{1280}, int64_t{3}}) {  // split, and too small to split
    const int64_t spatial = 49;
    std::vector<float> x(static_cast<size_t>(nc * spatial));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 7919) % 1000) / 250.f - 2.f;
    std::vector<float> serial(static_cast<size_t>(nc)), split(static_cast<size_t>(nc), -7.f);
    global_avgpool_f32(nc, spatial, x.data(), serial.data());
    global_avgpool_f32(nc, spatial, x.data(), split.data(), &tp);
    CHECK(serial == split);
    for (int64_t i = 0; i < nc; ++i) {
      double s = 0;
      for (int64_t j = 0; j < spatial; ++j) s += x[static_cast<size_t>(i * spatial + j)];
      CHECK(split[static_cast<size_t>(i)] == doctest::Approx(s / spatial).epsilon(1e-5));
    }
  }
}

TEST_CASE("batchnorm_f32") {
  // N=2, C=2, spatial=2.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const float scale[2] = {2, 1}, bias[2] = {0, 1}, mean[2] = {1, 3}, var[2] = {4, 1};
  std::vector<float> y(8);
  batchnorm_f32(2, 2, 2, x.data(), scale, bias, mean, var, 0.f, y.data());
  const std::vector<float> want = {0, 1, 1, 2, 4, 5, 5, 6};
  for (size_t i = 0; i < 8; ++i) CHECK(y[i] == doctest::Approx(want[i]));
}

TEST_CASE("softmax_f32 and log softmax over inner and outer axes") {
  // Shape 2 x 3 x 2, softmax over the middle axis.
  const std::vector<float> x = {1, 0, 2, 0, 3, 0, 1000, -5, 1000, -5, 1000, -5};
  std::vector<float> y(12), l(12);
  softmax_f32(2, 3, 2, x.data(), y.data(), false);
  softmax_f32(2, 3, 2, x.data(), l.data(), true);
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  CHECK(y[0] == doctest::Approx(e1 / s));
  CHECK(y[2] == doctest::Approx(e2 / s));
  CHECK(y[4] == doctest::Approx(e3 / s));
  CHECK(y[1] == doctest::Approx(1.0 / 3));
  CHECK(y[6] == doctest::Approx(1.0 / 3));  // large values stay finite
  CHECK(y[7] == doctest::Approx(1.0 / 3));
  CHECK(l[0] == doctest::Approx(1 - std::log(s)));
  CHECK(l[6] == doctest::Approx(-std::log(3.0)));
  // In place, inner = 1.
  std::vector<float> z = {0, 0, 0, 0};
  softmax_f32(1, 4, 1, z.data(), z.data(), false);
  for (float v : z) CHECK(v == doctest::Approx(0.25));
}

TEST_CASE("layer_norm and rms_norm over rows longer than the 8 partial sums") {
  // Rows of 19 (two blocks of 8 and a tail of 3), checked against plain double loops.
  const int64_t rows = 3, len = 19;
  std::vector<float> x(rows * len), scale(len), bias(len);
  for (int64_t i = 0; i < rows * len; ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 3 + static_cast<float>(i % 5);
  for (int64_t i = 0; i < len; ++i) {
    scale[i] = 0.5f + 0.1f * static_cast<float>(i);
    bias[i] = 0.25f * static_cast<float>(i) - 1;
  }
  std::vector<float> y(rows * len), mean(rows), inv(rows), r(rows * len);
  layer_norm<float, float, float>(rows, len, x.data(), scale.data(), bias.data(), 1e-5f, y.data(), mean.data(), inv.data());
  rms_norm<float, float>(rows, len, x.data(), scale.data(), 1e-5f, r.data());
  for (int64_t row = 0; row < rows; ++row) {
    double m = 0, v = 0, sq = 0;
    for (int64_t i = 0; i < len; ++i) m += x[row * len + i];
    m /= len;
    for (int64_t i = 0; i < len; ++i) {
      v += (x[row * len + i] - m) * (x[row * len + i] - m);
      sq += static_cast<double>(x[row * len + i]) * x[row * len + i];
    }
    const double is = 1 / std::sqrt(v / len + 1e-5), ir = 1 / std::sqrt(sq / len + 1e-5);
    CHECK(mean[row] == doctest::Approx(m).epsilon(1e-5));
    CHECK(inv[row] == doctest::Approx(is).epsilon(1e-5));
    for (int64_t i = 0; i < len; ++i) {
      CHECK(y[row * len + i] == doctest::Approx((x[row * len + i] - m) * is * scale[i] + bias[i]).epsilon(1e-4));
      CHECK(r[row * len + i] == doctest::Approx(x[row * len + i] * ir * scale[i]).epsilon(1e-4));
    }
  }
}

TEST_CASE("maxpool2d_u8 and maxpool2d_s8 match a checked loop; padding never wins") {
  auto check = [](auto tag, const Pool2dParams& p, uint32_t seed) {
    using T = decltype(tag);
    std::mt19937 gen(seed);
    std::vector<T> x(static_cast<size_t>(p.N * p.C * p.H * p.W));
    for (T& v : x) v = static_cast<T>(gen());
    x[0] = std::numeric_limits<T>::lowest();
    x[1] = std::numeric_limits<T>::max();
    std::vector<T> want(static_cast<size_t>(p.N * p.C * p.OH * p.OW)), got(want.size(), T(7));
    for (int64_t i = 0; i < p.N * p.C; ++i)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          T m = std::numeric_limits<T>::lowest();
          for (int64_t kh = 0; kh < p.KH; ++kh)
            for (int64_t kw = 0; kw < p.KW; ++kw) {
              const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
              const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
              if (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W) m = std::max(m, x[(i * p.H + ih) * p.W + iw]);
            }
          want[(i * p.OH + oh) * p.OW + ow] = m;
        }
    ThreadPool tp(2);
    if constexpr (std::is_same_v<T, uint8_t>)
      maxpool2d_u8(p, x.data(), got.data(), &tp);
    else
      maxpool2d_s8(p, x.data(), got.data(), &tp);
    CHECK(got == want);
  };
  // N, C, H, W, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw
  const Pool2dParams cases[] = {
      {1, 4, 112, 112, 3, 3, 56, 56, 2, 2, 1, 1, 1, 1},  // ResNet's stem
      {1, 2, 9, 66, 3, 3, 5, 33, 2, 2, 1, 1, 1, 1},      // rows of 16 + 16 + 1 outputs
      {1, 2, 6, 48, 3, 3, 3, 24, 2, 2, 1, 1, 1, 1},      // 16 + 8
      {1, 1, 5, 33, 3, 3, 2, 16, 2, 2, 0, 0, 1, 1},      // 16, no padding
      {2, 3, 13, 17, 3, 3, 7, 9, 2, 2, 1, 1, 1, 1},
      {1, 2, 9, 11, 3, 3, 9, 11, 1, 1, 1, 1, 1, 1},
      {1, 2, 12, 13, 3, 2, 4, 6, 3, 2, 0, 1, 2, 1},
      {1, 1, 2, 5000, 1, 3, 2, 5000, 1, 1, 0, 1, 1, 1},  // the checked path
  };
  uint32_t seed = 5;
  for (const Pool2dParams& p : cases) {
    check(uint8_t{}, p, seed++);
    check(int8_t{}, p, seed++);
  }
}
