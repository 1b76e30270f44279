// qconv2d_nhwc's dense kernel (1x1 and KxK, group 1) and the NCHW <-> NHWC byte transposes, against qlinear.h's
// reference loops run on the NCHW form of the same tensors.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kiln/rt/qconv_nhwc.h"
#include "kiln/rt/qlinear.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

using kiln_test::random_ints;

// [N][rows][cols] -> [N][cols][rows].
template <class T>
std::vector<T> transposed(const std::vector<T>& v, int64_t N, int64_t rows, int64_t cols) {
  std::vector<T> t(v.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[(n * cols + c) * rows + r] = v[(n * rows + r) * cols + c];
  return t;
}

Conv2dParams pointwise(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t stride) {
  return {N, C, H, W, M, 1, 1, (H - 1) / stride + 1, (W - 1) / stride + 1, stride, stride, 0, 0, 1, 1, 1};
}

// A KxK convolution, group 1, square padding `pad` and dilation `dil`.
Conv2dParams dense(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t K, int64_t stride, int64_t pad,
                   int64_t dil = 1) {
  const int64_t span = (K - 1) * dil + 1;
  return {N, C, H, W, M, K, K, (H + 2 * pad - span) / stride + 1, (W + 2 * pad - span) / stride + 1,
          stride, stride, pad, pad, dil, dil, 1};
}

// qconv2d_nhwc against qlinear_conv2d for inputs X, weights Wt, output Y, every isa, serial
// and on 2 threads; x and w drawn from [x_lo, x_hi], [w_lo, w_hi].
// check_with_weights: the same for given weights w.
template <class X, class Wt, class Y>
void check_with_weights(const Conv2dParams& p, uint32_t seed, int x_lo, int x_hi, const std::vector<Wt>& w,
                        bool per_channel, bool with_bias) {
  const int64_t plane_in = p.H * p.W, plane = p.OH * p.OW;
  const auto x = random_ints<X>(static_cast<size_t>(p.N * p.C * plane_in), seed, x_lo, x_hi);
  const auto bias = random_ints<int32_t>(static_cast<size_t>(p.M), seed + 2, -4000, 4000);
  const Wt wz = std::is_same_v<Wt, uint8_t> ? Wt(128) : Wt(0);
  std::vector<float> w_scale(static_cast<size_t>(p.M));
  for (int64_t m = 0; m < p.M; ++m) w_scale[m] = 0.0015f + 0.0004f * float(m % 5);
  const float x_scale = 0.05f, y_scale = per_channel ? 0.35f : 0.9f;
  const int32_t xz = std::is_signed_v<X> ? -7 : 121, yz = std::is_signed_v<Y> ? -11 : 17;
  const int64_t scales = per_channel ? p.M : 1;
  std::vector<int32_t> acc(static_cast<size_t>(p.N * p.M * plane));
  std::vector<Y> want_nchw(acc.size());
  qlinear_conv2d<X, Wt, Y, float>(p, x.data(), x_scale, xz, w.data(), w_scale.data(), scales, &wz, 1, y_scale, yz,
                                   with_bias ? bias.data() : nullptr, acc.data(), want_nchw.data());
  const std::vector<Y> want = transposed(want_nchw, p.N, p.M, plane);
  const std::vector<X> x_nhwc = transposed(x, p.N, p.C, plane_in);
  std::vector<float> mult(static_cast<size_t>(scales));
  for (int64_t m = 0; m < scales; ++m) mult[m] = float(qlinear_multiplier<float>(x_scale, w_scale[m], y_scale));
  std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(p));
  qconv2d_nhwc_pack_weights(p, w.data(), packed.data());
  std::vector<Y> got(want.size());
  QGemmOutput out;
  out.type = std::is_signed_v<Y> ? KILN_I8 : KILN_U8;
  out.y = got.data();
  if (with_bias) {
    out.bias = bias.data();
    out.bias_count = p.M;
  }
  out.scale = mult.data();
  out.scale_count = scales;
  out.y_zero_point = yz;
  ThreadPool pool(2);
  for (QGemmIsa isa : {QGemmIsa::portable, QGemmIsa::avx2, QGemmIsa::avx_vnni, QGemmIsa::automatic}) {
    CAPTURE(qgemm_isa_name(isa));
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::fill(got.begin(), got.end(), Y(3));
      qconv2d_nhwc(p, QGemmA{x_nhwc.data(), 0, std::is_signed_v<X>, xz}, packed.data(), out, tp, isa);
      CHECK(got == want);
    }
  }
}

template <class X, class Wt, class Y>
void check_against_reference(const Conv2dParams& p, uint32_t seed, int x_lo, int x_hi, int w_lo, int w_hi,
                             bool per_channel, bool with_bias) {
  const auto w = random_ints<Wt>(static_cast<size_t>(p.M * (p.C / p.group) * p.KH * p.KW), seed + 1, w_lo, w_hi);
  check_with_weights<X, Wt, Y>(p, seed, x_lo, x_hi, w, per_channel, with_bias);
}

}  // namespace

TEST_CASE("qconv2d_nhwc 1x1 matches qlinear_conv2d: channel tails, strides, batches, u8/s8 everywhere") {
  const Conv2dParams cases[] = {
      pointwise(1, 96, 14, 14, 576, 1),  // MobileNetV2's expansion at 14 x 14
      pointwise(1, 576, 14, 14, 96, 1),  // its projection
      pointwise(1, 320, 7, 7, 1280, 1),  // its last 1x1
      pointwise(1, 16, 5, 3, 20, 1),     // 15 pixels (2 full tiles + 1), 20 channels (one block + 4)
      pointwise(2, 8, 9, 11, 37, 2),     // stride 2, a batch of 2, 3 blocks less 11
      pointwise(1, 4, 1, 1, 1, 1),
  };
  uint32_t seed = 11;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.C);
    CAPTURE(p.M);
    CAPTURE(p.OH);
    REQUIRE(qconv2d_nhwc_supported(p));
    check_against_reference<uint8_t, int8_t, uint8_t>(p, seed += 3, 0, 255, -128, 127, true, true);
    check_against_reference<int8_t, int8_t, int8_t>(p, seed += 3, -128, 127, -128, 127, false, true);
    check_against_reference<uint8_t, uint8_t, int8_t>(p, seed += 3, 0, 255, 0, 255, true, false);
  }
}

TEST_CASE("qconv2d_nhwc 1x1 does not saturate on 255 x -128 over long K") {
  const Conv2dParams p = pointwise(1, 1024, 3, 3, 48, 1);
  check_against_reference<uint8_t, int8_t, uint8_t>(p, 5, 255, 255, -128, -128, true, true);
  check_against_reference<uint8_t, int8_t, uint8_t>(p, 6, 0, 0, 127, 127, false, false);
}

TEST_CASE("qconv2d_nhwc KxK matches qlinear_conv2d: padding, strides, dilation, borders, batches") {
  const Conv2dParams cases[] = {
      dense(1, 64, 14, 14, 64, 3, 1, 1),   // ResNet's 3x3 at 14 x 14, 4 blocks (2 + 2)
      dense(1, 32, 15, 15, 48, 3, 2, 1),   // 3x3/2, odd plane
      dense(2, 8, 9, 11, 37, 3, 1, 1),     // batch of 2, tiles across rows and images
      dense(1, 12, 10, 9, 20, 5, 1, 2),    // 5x5
      dense(1, 4, 12, 12, 16, 3, 1, 2, 2), // dilation 2
      dense(1, 8, 7, 7, 24, 7, 1, 3),      // 7x7: 49 taps, most in the padding
      dense(1, 16, 4, 4, 16, 3, 1, 3),     // padding wider than the kernel: taps of padding only
      Conv2dParams{1, 8, 9, 10, 19, 2, 3, 5, 3, 2, 3, 1, 0, 1, 1, 1},  // 2x3, strides 2/3, padding at the top only
      dense(1, 16, 9, 9, 16, 1, 2, 1),     // 1x1 with padding
  };
  uint32_t seed = 41;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.C);
    CAPTURE(p.M);
    CAPTURE(p.KH);
    CAPTURE(p.OH);
    REQUIRE(qconv2d_nhwc_supported(p));
    check_against_reference<uint8_t, int8_t, uint8_t>(p, seed += 3, 0, 255, -128, 127, true, true);
    check_against_reference<int8_t, int8_t, int8_t>(p, seed += 3, -128, 127, -128, 127, false, true);
    check_against_reference<uint8_t, uint8_t, int8_t>(p, seed += 3, 0, 255, 0, 255, true, false);
  }
}

// Whether the packing finds that w's pairs fit int16, for W of the drawn range.
template <class Wt>
bool pairs_fit(const Conv2dParams& p, uint32_t seed, int w_lo, int w_hi) {
  const auto w = random_ints<Wt>(static_cast<size_t>(p.M * p.C * p.KH * p.KW), seed + 1, w_lo, w_hi);
  std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(p));
  qconv2d_nhwc_pack_weights(p, w.data(), packed.data());
  return qconv2d_nhwc_pairs_fit_int16(p, packed.data());
}

TEST_CASE("qconv2d_nhwc with weights in [-64, 64]: the AVX2 vpmaddubsw tile, exact at its bounds") {
  const Conv2dParams cases[] = {
      pointwise(1, 96, 14, 14, 576, 1), pointwise(1, 16, 5, 3, 20, 1), pointwise(2, 8, 9, 11, 37, 2),
      // stride-1 1x1s of each group count the AVX2 pointwise kernel unrolls (C 16, 24, 32, 64, 96)
      // and one it does not (C 20): pixel runs across the 64-pixel chunks and the images,
      // output-channel tails
      pointwise(2, 24, 9, 9, 30, 1), pointwise(1, 32, 11, 7, 17, 1), pointwise(1, 64, 5, 5, 40, 1),
      pointwise(3, 20, 6, 7, 9, 1),
      // small planes of an odd row count, which two threads split by channel blocks (the last
      // one of 8 channels: the half tile)
      pointwise(1, 160, 7, 7, 200, 1), pointwise(3, 24, 3, 5, 72, 1), dense(1, 64, 14, 14, 64, 3, 1, 1), dense(2, 8, 9, 11, 37, 3, 1, 1), dense(1, 8, 7, 7, 24, 7, 1, 3),
      Conv2dParams{1, 8, 9, 10, 19, 2, 3, 5, 3, 2, 3, 1, 0, 1, 1, 1},
  };
  uint32_t seed = 71;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.C);
    CAPTURE(p.M);
    CAPTURE(p.KH);
    seed += 3;
    REQUIRE(pairs_fit<int8_t>(p, seed, -64, 64));
    check_against_reference<uint8_t, int8_t, uint8_t>(p, seed, 0, 255, -64, 64, true, true);
    seed += 3;
    REQUIRE(pairs_fit<int8_t>(p, seed, -64, 64));
    check_against_reference<int8_t, int8_t, int8_t>(p, seed, -128, 127, -64, 64, false, true);
    seed += 3;
    REQUIRE(pairs_fit<uint8_t>(p, seed, 64, 192));  // stored less 128: [-64, 64]
    check_against_reference<uint8_t, uint8_t, int8_t>(p, seed, 0, 255, 64, 192, true, false);
  }
  // 255 x 64 twice is 32640, the largest pair sum: no saturation, and the same over long K.
  const Conv2dParams longk = pointwise(1, 1024, 3, 3, 48, 1);
  REQUIRE(pairs_fit<int8_t>(longk, 5, -64, -64));
  check_against_reference<uint8_t, int8_t, uint8_t>(longk, 5, 255, 255, -64, -64, true, true);
  REQUIRE(pairs_fit<int8_t>(longk, 6, 64, 64));
  check_against_reference<uint8_t, int8_t, uint8_t>(longk, 6, 255, 255, 64, 64, false, false);
  // Pairs of one sign beyond 128 and the layer keeps the vpmaddwd tile.
  CHECK_FALSE(pairs_fit<int8_t>(longk, 7, -65, -65));
  CHECK_FALSE(pairs_fit<int8_t>(longk, 7, 65, 65));
  CHECK_FALSE(pairs_fit<int8_t>(longk, 8, -128, 127));
  CHECK_FALSE(qconv2d_nhwc_pairs_fit_int16(longk, std::vector<unsigned char>(
      qconv2d_nhwc_packed_weight_bytes(longk), 0).data()));  // zeroed bytes: no claim
}

// Weights whose every pair (input channels 2i, 2i + 1 of a tap) fits int16 but not [-64, 64]:
// one weight drawn from [-128, 127], its partner from what keeps the pair's positive sum <= 128
// and its negative sum >= -128 (so 127 beside -128, and 100 beside 28, both fit).
std::vector<int8_t> fitting_pairs(const Conv2dParams& p, uint32_t seed) {
  const int64_t taps = p.KH * p.KW;
  std::mt19937 rng(seed);
  std::vector<int8_t> w(static_cast<size_t>(p.M * p.C * taps));
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t c = 0; c < p.C; c += 2)
      for (int64_t t = 0; t < taps; ++t) {
        const int w0 = std::uniform_int_distribution<int>(-128, 127)(rng);
        const int w1 = w0 >= 0 ? std::uniform_int_distribution<int>(-128, 128 - w0)(rng)
                               : std::uniform_int_distribution<int>(-128 - w0, 127)(rng);
        w[static_cast<size_t>((m * p.C + c) * taps + t)] = static_cast<int8_t>(w0);
        w[static_cast<size_t>((m * p.C + c + 1) * taps + t)] = static_cast<int8_t>(std::min(w1, 127));
      }
  return w;
}

TEST_CASE("qconv2d_nhwc: the vpmaddubsw tile takes every pair of one sign within 128, mixed signs at full range") {
  const Conv2dParams cases[] = {pointwise(1, 96, 14, 14, 576, 1), dense(2, 8, 9, 11, 37, 3, 1, 1),
                                dense(1, 64, 14, 14, 64, 3, 1, 1), pointwise(1, 1024, 3, 3, 48, 1)};
  uint32_t seed = 301;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.C);
    CAPTURE(p.KH);
    const std::vector<int8_t> w = fitting_pairs(p, seed += 3);
    std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(p));
    qconv2d_nhwc_pack_weights(p, w.data(), packed.data());
    REQUIRE(qconv2d_nhwc_pairs_fit_int16(p, packed.data()));
    REQUIRE(*std::max_element(w.begin(), w.end()) > 64);
    check_with_weights<uint8_t, int8_t, uint8_t>(p, seed, 0, 255, w, true, true);
    check_with_weights<uint8_t, int8_t, uint8_t>(p, seed + 1, 255, 255, w, false, false);
    check_with_weights<int8_t, int8_t, int8_t>(p, seed + 2, -128, 127, w, true, false);
  }
  // 127 beside -128 in every pair, inputs all 255: each pair's sum is -255, no saturation.
  const Conv2dParams p = pointwise(1, 1024, 3, 3, 48, 1);
  std::vector<int8_t> alternating(static_cast<size_t>(p.M * p.C));
  for (size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 ? int8_t{-128} : int8_t{127};
  std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(p));
  qconv2d_nhwc_pack_weights(p, alternating.data(), packed.data());
  REQUIRE(qconv2d_nhwc_pairs_fit_int16(p, packed.data()));
  check_with_weights<uint8_t, int8_t, uint8_t>(p, 9, 255, 255, alternating, true, true);
}

TEST_CASE("qconv2d_nhwc row patches (C not a multiple of 4): stems, borders, strides, batches, both tiles") {
  // A kernel row's KW x C bytes are one patch of the padded input rows: check the padding on
  // each side, windows that stop short of the right border, rows outside the image, strides
  // across and down, rows of threads that span images, and C of 1 to 6.
  const Conv2dParams cases[] = {
      dense(1, 3, 17, 19, 32, 3, 2, 1),    // MobileNetV2's stem, 3x3/2
      dense(1, 3, 23, 21, 64, 7, 2, 3),    // ResNet-50's, 7x7/2
      dense(2, 1, 12, 11, 20, 5, 1, 2),    // one channel, 5x5, two images
      dense(3, 2, 7, 9, 17, 3, 1, 1),      // two channels, three images of few rows
      dense(1, 3, 9, 10, 16, 3, 2, 0),     // no padding: the last window ends before the last column
      Conv2dParams{1, 3, 11, 13, 24, 3, 5, 5, 3, 2, 4, 1, 0, 1, 1, 1},  // 3x5, strides 2/4, no left pad
      Conv2dParams{1, 6, 13, 8, 16, 3, 3, 9, 8, 1, 1, 2, 1, 2, 1, 1},   // dilation 2 down (1 across)
      Conv2dParams{1, 5, 6, 7, 16, 1, 3, 6, 5, 1, 1, 0, 0, 1, 1, 1},    // 1x3: one tap a pixel
      Conv2dParams{1, 3, 6, 6, 8, 1, 1, 4, 4, 2, 2, 1, 1, 1, 1, 1},     // 1x1 with padding, stride 2
      dense(1, 3, 4, 4, 16, 3, 1, 3),      // padding wider than the kernel
  };
  uint32_t seed = 501;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.C);
    CAPTURE(p.M);
    CAPTURE(p.KH);
    CAPTURE(p.KW);
    CAPTURE(p.OH);
    REQUIRE(qconv2d_nhwc_supported(p));
    check_against_reference<uint8_t, int8_t, uint8_t>(p, seed += 3, 0, 255, -128, 127, true, true);
    check_against_reference<int8_t, int8_t, int8_t>(p, seed += 3, -128, 127, -128, 127, false, true);
    check_against_reference<uint8_t, uint8_t, int8_t>(p, seed += 3, 0, 255, 0, 255, true, false);
    // Weights within [-64, 64]: the pairs, in (kh, kw, c) order, fit the vpmaddubsw tile.
    seed += 3;
    REQUIRE(pairs_fit<int8_t>(p, seed, -64, 64));
    check_against_reference<uint8_t, int8_t, uint8_t>(p, seed, 0, 255, -64, 64, true, true);
  }
  // A thread whose row buffer cannot grow computes its rows straight from x.
  set_thread_buffer_limit(0);
  check_against_reference<uint8_t, int8_t, uint8_t>(cases[1], 7, 0, 255, -128, 127, true, true);
  check_against_reference<int8_t, int8_t, int8_t>(cases[2], 8, -128, 127, -128, 127, false, true);
  set_thread_buffer_limit(SIZE_MAX);
}

TEST_CASE("qconv2d_nhwc row patches whose flat pairs overflow int16 but whose kernel rows' pairs fit") {
  // The AVX2 kernel multiplies a stem's windows as flat patches ((kh, kw, c) order, pairs across
  // kernel rows) where their pairs fit int16, else as row patches (each kernel row's KW x C
  // bytes padded to 4) where those fit. Weight 8 (kh 0, kw 2, c 2) pairs with weight 9 (kh 1,
  // kw 0, c 0) in the flat order and with a 0 in the rows': 100 and 100 fit only the rows.
  for (const Conv2dParams& p : {dense(1, 3, 17, 19, 32, 3, 2, 1), dense(2, 3, 9, 10, 16, 3, 1, 1)}) {
    CAPTURE(p.N);
    std::vector<int8_t> w = random_ints<int8_t>(static_cast<size_t>(p.M * p.C * 9), 77, -14, 14);
    for (int64_t m = 0; m < p.M; ++m) {
      w[static_cast<size_t>(m * 27 + (2 * 3 + 0) * 3 + 2)] = 100;  // c 2, kh 0, kw 2 ([M, C, KH, KW])
      w[static_cast<size_t>(m * 27 + (0 * 3 + 1) * 3 + 0)] = 100;  // c 0, kh 1, kw 0
    }
    std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(p));
    qconv2d_nhwc_pack_weights(p, w.data(), packed.data());
    CHECK_FALSE(qconv2d_nhwc_pairs_fit_int16(p, packed.data()));
    check_with_weights<uint8_t, int8_t, uint8_t>(p, 91, 0, 255, w, true, true);
    check_with_weights<int8_t, int8_t, int8_t>(p, 93, -128, 127, w, false, true);
  }
}

TEST_CASE("qconv2d_nhwc_supported: group 1 with C a multiple of 4 up to 7x7, row patches, or depthwise") {
  CHECK(qconv2d_nhwc_supported(pointwise(1, 8, 4, 4, 8, 1)));
  CHECK(qconv2d_nhwc_supported(pointwise(1, 6, 4, 4, 8, 1)));  // C % 4: row patches
  const Conv2dParams k3 = dense(1, 8, 4, 4, 8, 3, 1, 1);
  CHECK(qconv2d_nhwc_supported(k3));
  CHECK_FALSE(qconv2d_nhwc_supported(dense(1, 8, 9, 9, 8, 9, 1, 4)));  // 81 taps
  CHECK(qconv2d_nhwc_supported(dense(1, 3, 16, 16, 8, 7, 2, 3)));  // a stem, C = 3: row patches
  CHECK_FALSE(qconv2d_nhwc_supported(dense(1, 3, 16, 16, 8, 3, 1, 2, 2)));  // ... but not dilated across
  Conv2dParams grouped = k3;
  grouped.group = 2;
  CHECK_FALSE(qconv2d_nhwc_supported(grouped));
  Conv2dParams dw = k3;
  dw.group = 8;
  CHECK(qconv2d_nhwc_supported(dw));
}

TEST_CASE("transpose_planes_8bit: NCHW to NHWC and back, odd sizes, 2 threads") {
  ThreadPool pool(2);
  // 3 rows: an RGB image, interleaved 16 columns at a time (37 = 2 x 16 + a tail of 5).
  for (const std::array<int64_t, 3>& shape : {std::array<int64_t, 3>{1, 32, 112 * 112}, {2, 3, 37}, {1, 3, 224 * 224},
                                              {1, 70, 49}, {1, 1, 1}}) {
    // Plain locals, not a structured binding: CAPTURE's lambda cannot name a binding before C++20's P1091 (clang 14).
    const int64_t N = shape[0], C = shape[1], HW = shape[2];
    CAPTURE(C);
    CAPTURE(HW);
    const auto x = random_ints<uint8_t>(static_cast<size_t>(N * C * HW), 7, 0, 255);
    std::vector<uint8_t> y(x.size()), back(x.size());
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      transpose_planes_8bit(N, C, HW, x.data(), y.data(), tp);
      CHECK(y == transposed(x, N, C, HW));
      transpose_planes_8bit(N, HW, C, y.data(), back.data(), tp);
      CHECK(back == x);
    }
  }
}

// Output channels whose multipliers send the sums past int32 both ways, to +-inf and to NaN,
// beside ordinary ones: every kernel saturates as requantize_f32 (NaN to the type's least; the
// AVX2 kernels clamp only the top in float and leave the rest to their packs' saturation).
template <class X, class Y>
void check_extreme_multipliers(const Conv2dParams& p, const std::vector<int8_t>& w, uint32_t seed) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float cycle[] = {1e9f, -1e9f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 3e-4f, -2e-3f, 1e-30f, 0.f};
  const int64_t plane = p.OH * p.OW;
  std::vector<float> mult(static_cast<size_t>(p.M));
  for (int64_t m = 0; m < p.M; ++m) mult[m] = cycle[m % std::size(cycle)];
  const auto x = random_ints<X>(static_cast<size_t>(p.N * p.C * p.H * p.W), seed, std::is_signed_v<X> ? -128 : 0,
                                std::is_signed_v<X> ? 127 : 255);
  const int32_t xz = std::is_signed_v<X> ? 5 : 130, yz = std::is_signed_v<Y> ? 9 : 200;
  std::vector<int32_t> acc(static_cast<size_t>(p.N * p.M * plane));
  conv2d_integer<X, int8_t>(p, x.data(), w.data(), acc.data(), xz, nullptr, 0, nullptr);
  std::vector<Y> want_nchw(acc.size());
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t i = 0; i < plane; ++i) {
        const size_t k = static_cast<size_t>((n * p.M + m) * plane + i);
        want_nchw[k] = requantize_f32<Y>(acc[k], mult[m], yz);
      }
  const std::vector<Y> want = transposed(want_nchw, p.N, p.M, plane);
  const std::vector<X> x_nhwc = transposed(x, p.N, p.C, p.H * p.W);
  std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(p));
  qconv2d_nhwc_pack_weights(p, w.data(), packed.data());
  std::vector<Y> got(want.size());
  QGemmOutput out;
  out.type = std::is_signed_v<Y> ? KILN_I8 : KILN_U8;
  out.y = got.data();
  out.scale = mult.data();
  out.scale_count = p.M;
  out.y_zero_point = yz;
  for (QGemmIsa isa : {QGemmIsa::portable, QGemmIsa::avx2, QGemmIsa::avx_vnni, QGemmIsa::automatic}) {
    CAPTURE(qgemm_isa_name(isa));
    std::fill(got.begin(), got.end(), Y(3));
    qconv2d_nhwc(p, QGemmA{x_nhwc.data(), 0, std::is_signed_v<X>, xz}, packed.data(), out, nullptr, isa);
    CHECK(got == want);
  }
}

TEST_CASE("qconv2d_nhwc requantization saturates past int32, at +-inf and NaN multipliers, on every kernel") {
  // A stride-1 1x1 (pointwise_pairs) and a 3x3 (tile_avx2_pairs) with weights whose pairs fit
  // int16, and a 3x3 with full-range weights (the widened tile_avx2).
  const Conv2dParams one = pointwise(1, 24, 9, 7, 45, 1), three = dense(1, 16, 8, 9, 27, 3, 1, 1);
  const auto narrow1 = random_ints<int8_t>(static_cast<size_t>(one.M * one.C), 401, -64, 64);
  const auto narrow3 = random_ints<int8_t>(static_cast<size_t>(three.M * three.C * 9), 402, -64, 64);
  const auto full3 = random_ints<int8_t>(static_cast<size_t>(three.M * three.C * 9), 403, -128, 127);
  for (const auto* w : {&narrow1, &narrow3, &full3}) {
    const Conv2dParams& p = w == &narrow1 ? one : three;
    CAPTURE(p.KH);
    check_extreme_multipliers<uint8_t, uint8_t>(p, *w, 404);
    check_extreme_multipliers<uint8_t, int8_t>(p, *w, 405);
    check_extreme_multipliers<int8_t, int8_t>(p, *w, 406);
    check_extreme_multipliers<int8_t, uint8_t>(p, *w, 407);
  }
  std::vector<unsigned char> packed(qconv2d_nhwc_packed_weight_bytes(one));
  qconv2d_nhwc_pack_weights(one, narrow1.data(), packed.data());
  CHECK(qconv2d_nhwc_pairs_fit_int16(one, packed.data()));
  // Depthwise: the AVX2 3x3 kernel (C a multiple of 8: a block of 32 and one of 8), at stride
  // 1 and 2, and the general AVX2 kernel (C = 20).
  const Conv2dParams dw[] = {{1, 40, 8, 9, 40, 3, 3, 8, 9, 1, 1, 1, 1, 1, 1, 40},
                             {1, 40, 8, 9, 40, 3, 3, 4, 5, 2, 2, 1, 1, 1, 1, 40},
                             {1, 20, 8, 9, 20, 3, 3, 8, 9, 1, 1, 1, 1, 1, 1, 20}};
  for (const Conv2dParams& p : dw) {
    CAPTURE(p.C);
    CAPTURE(p.stride_w);
    const auto w = random_ints<int8_t>(static_cast<size_t>(p.C * 9), 408, -128, 127);
    check_extreme_multipliers<uint8_t, uint8_t>(p, w, 409);
    check_extreme_multipliers<uint8_t, int8_t>(p, w, 410);
    check_extreme_multipliers<int8_t, int8_t>(p, w, 411);
    check_extreme_multipliers<int8_t, uint8_t>(p, w, 412);
  }
}
