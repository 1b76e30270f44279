#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "kiln/rt/qconv.h"
#include "kiln/rt/qgemm.h"
#include "kiln/rt/qlinear.h"
#include "kiln/rt/quantize.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

const QGemmIsa kIsas[] = {QGemmIsa::portable, QGemmIsa::avx2, QGemmIsa::avx_vnni, QGemmIsa::avx512_vnni};

using kiln_test::random_ints;

// sum_k (a - za)(b - zb[j]) modulo 2^32, element by element.
template <class A, class B>
std::vector<int32_t> reference(int64_t M, int64_t N, int64_t K, const A* a, int64_t lda, int32_t za, const B* b,
                               const std::vector<int32_t>& zb) {
  std::vector<int32_t> c(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      uint32_t s = 0;
      const int32_t z = zb.empty() ? 0 : zb[zb.size() > 1 ? j : 0];
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<uint32_t>(int32_t(a[i * lda + k]) - za) * static_cast<uint32_t>(int32_t(b[k * N + j]) - z);
      c[i * N + j] = static_cast<int32_t>(s);
    }
  return c;
}

template <class A, class B>
void check_i32(int64_t M, int64_t N, int64_t K, const std::vector<A>& a, int32_t za, const std::vector<B>& b,
               const std::vector<int32_t>& zb, ThreadPool* pool) {
  const int64_t lda = K + 3;  // padded rows
  std::vector<A> ap(static_cast<size_t>(M * lda), A(7));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) ap[i * lda + k] = a[i * K + k];
  std::vector<unsigned char> packed(qgemm_packed_b_bytes(K, N) + 1);
  qgemm_pack_b(K, N, b.data(), N, 1, packed.data());
  const auto want = reference(M, N, K, ap.data(), lda, za, b.data(), zb);
  for (QGemmIsa isa : kIsas) {
    if (!qgemm_isa_supported(isa)) continue;
    CAPTURE(qgemm_isa_name(isa));
    std::vector<int32_t> got(static_cast<size_t>(M * N), -1);
    QGemmOutput out;
    out.type = KILN_I32;
    out.y = got.data();
    out.row_stride = N;
    QGemmA qa{ap.data(), lda, std::is_signed_v<A>, za};
    qgemm(M, N, K, qa, packed.data(), zb.empty() ? nullptr : zb.data(), static_cast<int64_t>(zb.size()), out, pool,
          isa);
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("qgemm u8 x s8 int32 matches the reference at odd sizes, every kernel") {
  const int64_t sizes[][3] = {{1, 1, 1}, {1, 17, 5}, {7, 19, 13}, {6, 16, 4}, {13, 33, 70}, {37, 50, 301}, {64, 3, 9}};
  uint32_t seed = 1;
  for (const auto& s : sizes) {
    const int64_t M = s[0], N = s[1], K = s[2];
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    const auto a = random_ints<uint8_t>(static_cast<size_t>(M * K), seed++, 0, 255);
    const auto b = random_ints<int8_t>(static_cast<size_t>(K * N), seed++, -128, 127);
    check_i32(M, N, K, a, 0, b, {}, nullptr);
    check_i32(M, N, K, a, 131, b, {-3}, nullptr);
    check_i32(M, N, K, a, 17, b, random_ints<int32_t>(static_cast<size_t>(N), seed++, -128, 127), nullptr);
  }
}

TEST_CASE("qgemm s8 activations and u8 weights") {
  const int64_t M = 11, N = 21, K = 35;
  const auto a = random_ints<int8_t>(M * K, 5, -128, 127);
  const auto b = random_ints<uint8_t>(K * N, 6, 0, 255);
  check_i32(M, N, K, a, -5, b, {128}, nullptr);
  check_i32(M, N, K, a, 0, b, random_ints<int32_t>(N, 7, 0, 255), nullptr);
}

TEST_CASE("qgemm does not saturate on 255 x -128 (int16 pair sums would)") {
  for (int64_t K : {2, 4, 7, 1024}) {
    CAPTURE(K);
    const int64_t M = 7, N = 17;
    std::vector<uint8_t> a(static_cast<size_t>(M * K), 255);
    std::vector<int8_t> b(static_cast<size_t>(K * N), -128);
    check_i32(M, N, K, a, 0, b, {}, nullptr);
    std::vector<int8_t> bmax(static_cast<size_t>(K * N), 127);
    check_i32(M, N, K, a, 0, bmax, {}, nullptr);
    // Zero points that make every term (255 - 0) * (-128 - 127)
    check_i32(M, N, K, a, 0, b, {127}, nullptr);
    std::vector<int8_t> s8a(static_cast<size_t>(M * K), -128);
    check_i32(M, N, K, s8a, 127, b, {127}, nullptr);
  }
}

TEST_CASE("qgemm threaded gives the single-thread result") {
  ThreadPool pool(3);
  for (const auto& s : std::vector<std::array<int64_t, 3>>{{97, 40, 64}, {5, 200, 90}, {300, 20, 31}}) {
    const auto a = random_ints<uint8_t>(static_cast<size_t>(s[0] * s[2]), 11, 0, 255);
    const auto b = random_ints<int8_t>(static_cast<size_t>(s[2] * s[1]), 12, -128, 127);
    check_i32(s[0], s[1], s[2], a, 3, b, random_ints<int32_t>(static_cast<size_t>(s[1]), 13, -10, 10), &pool);
  }
}

TEST_CASE("qgemm single rows (a classifier's GEMV): 1 to 4 panels at once, pairs within 128 and beyond, threads") {
  // On AVX2 a row whose B pairs (k 0-1 and 2-3 of each group) are within 128 of one sign runs
  // on the vpmaddubsw row kernel, others on the widening tile; on VNNI every row on its row kernel.
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 40;
  for (const auto& s : std::vector<std::array<int64_t, 2>>{
           {1, 1}, {16, 4}, {17, 5}, {48, 9}, {64, 8}, {65, 3}, {100, 33}, {1000, 1280}, {130, 67}}) {
    const int64_t N = s[0], K = s[1];
    CAPTURE(N);
    CAPTURE(K);
    const auto a = random_ints<uint8_t>(static_cast<size_t>(K), seed++, 0, 255);
    const auto narrow = random_ints<int8_t>(static_cast<size_t>(K * N), seed++, -64, 64);
    const auto wide = random_ints<int8_t>(static_cast<size_t>(K * N), seed++, -128, 127);
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
      check_i32(1, N, K, a, 0, narrow, {}, pool);
      check_i32(1, N, K, a, 201, narrow, random_ints<int32_t>(static_cast<size_t>(N), seed++, -5, 5), pool);
      check_i32(1, N, K, a, 9, wide, {}, pool);
      const auto as8 = random_ints<int8_t>(static_cast<size_t>(K), seed++, -128, 127);
      check_i32(1, N, K, as8, -3, narrow, {}, pool);
    }
  }
  // The bounds: pairs of 128 (64 + 64, -128 + 0) against 255 fit int16 exactly; 127 + 2 does not
  // (255 x 129 > 32767), so that B takes the widening tile.
  for (int64_t K : {4, 8, 1280}) {
    CAPTURE(K);
    const int64_t N = 70;
    const std::vector<uint8_t> a(static_cast<size_t>(K), 255);
    std::vector<int8_t> at_bound(static_cast<size_t>(K * N)), past(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) {
        const int8_t low_pair = k % 2 ? int8_t(0) : int8_t(-128);  // (-128, 0)
        at_bound[k * N + j] = j % 3 == 0 ? int8_t(64) : j % 3 == 1 ? low_pair : int8_t(-64);
        past[k * N + j] = k % 2 ? int8_t(2) : int8_t(127);
      }
    check_i32(1, N, K, a, 0, at_bound, {}, nullptr);
    check_i32(1, N, K, a, 0, past, {}, nullptr);
  }
}

TEST_CASE("qgemm requantizing epilogue: bias, per-column scale, clamp, u8/s8/f32 with strided output") {
  const int64_t M = 9, N = 18, K = 27;
  const auto a = random_ints<uint8_t>(M * K, 21, 0, 255);
  const auto b = random_ints<int8_t>(K * N, 22, -128, 127);
  const auto bias = random_ints<int32_t>(N, 23, -2000, 2000);
  std::vector<float> scale(N), offset(N);
  for (int64_t j = 0; j < N; ++j) scale[j] = 0.0007f * float(j + 1), offset[j] = 0.37f * float(j % 5) - 0.8f;
  const int32_t za = 100;
  const auto acc = reference(M, N, K, a.data(), K, za, b.data(), std::vector<int32_t>{});
  std::vector<unsigned char> packed(qgemm_packed_b_bytes(K, N));
  qgemm_pack_b(K, N, b.data(), N, 1, packed.data());
  for (kiln_dtype type : {KILN_U8, KILN_I8, KILN_F32}) {
    for (QGemmIsa isa : kIsas) {
      if (!qgemm_isa_supported(isa)) continue;
      CAPTURE(qgemm_isa_name(isa));
      // Transposed output (as a convolution's NCHW output from pixel rows): y(i, j) at j * M + i.
      std::vector<float> yf(M * N, -1.f);
      std::vector<uint8_t> yu(M * N, 1);
      std::vector<int8_t> ys(M * N, 1);
      QGemmOutput out;
      out.type = type;
      out.y = type == KILN_F32 ? static_cast<void*>(yf.data())
                               : (type == KILN_U8 ? static_cast<void*>(yu.data()) : static_cast<void*>(ys.data()));
      out.row_stride = 1;
      out.col_stride = M;
      out.bias = bias.data();
      out.bias_count = N;
      out.scale = scale.data();
      out.scale_count = N;
      out.offset = offset.data();
      out.offset_count = N;
      out.lo = -20.f;
      out.hi = 150.f;
      out.y_zero_point = type == KILN_U8 ? 7 : -3;
      qgemm(M, N, K, QGemmA{a.data(), K, false, za}, packed.data(), nullptr, 0, out, nullptr, isa);
      int64_t bad = 0;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double v = double(acc[i * N + j] + bias[j]) * double(scale[j]) + double(offset[j]);
          v = std::fmin(std::fmax(v, -20.0), 150.0);
          const int64_t at = j * M + i;
          if (type == KILN_F32) {
            bad += yf[at] != float(v);
          } else if (type == KILN_U8) {
            bad += yu[at] != uint8_t(std::fmin(std::fmax(round_half_even(v) + 7, 0.0), 255.0));
          } else {
            bad += ys[at] != int8_t(std::fmin(std::fmax(round_half_even(v) - 3, -128.0), 127.0));
          }
        }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("qgemm with K = 0 writes the epilogue of empty sums") {
  std::vector<int32_t> y(6, 99);
  const int32_t bias[3] = {1, 2, 3};
  QGemmOutput out;
  out.y = y.data();
  out.row_stride = 3;
  out.bias = bias;
  out.bias_count = 3;
  qgemm(2, 3, 0, QGemmA{nullptr, 0, false, 5}, nullptr, nullptr, 0, out, nullptr);
  CHECK(y == std::vector<int32_t>{1, 2, 3, 1, 2, 3});
}

namespace {

// qconv2d with int32 output against conv2d_integer, every kernel, serial and threaded.
template <class X, class W>
void check_qconv_i32(const Conv2dParams& p, const std::vector<X>& x, int32_t xz, const std::vector<W>& w,
                     const std::vector<W>& wz8) {
  const std::vector<int32_t> wz(wz8.begin(), wz8.end());
  std::vector<int32_t> want(static_cast<size_t>(p.N * p.M * p.OH * p.OW)), got(want.size(), -1);
  conv2d_integer<X, W>(p, x.data(), w.data(), want.data(), xz, wz8.empty() ? nullptr : wz8.data(),
                       static_cast<int64_t>(wz8.size()), nullptr);
  std::vector<unsigned char> packed(qconv2d_packed_weight_bytes(p)), scratch(qconv2d_scratch_bytes(p));
  qconv2d_pack_weights(p, w.data(), packed.data());
  QGemmOutput out;
  out.y = got.data();
  ThreadPool pool(2);
  for (QGemmIsa isa : kIsas) {
    if (!qgemm_isa_supported(isa)) continue;
    CAPTURE(qgemm_isa_name(isa));
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::fill(got.begin(), got.end(), -1);
      qconv2d(p, QGemmA{x.data(), 0, std::is_signed_v<X>, xz}, packed.data(), wz.empty() ? nullptr : wz.data(),
              static_cast<int64_t>(wz.size()), out, scratch.empty() ? nullptr : scratch.data(), tp, isa);
      int64_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
      CHECK(bad == 0);
    }
  }
}

// N, C, H, W, M, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw, group
const Conv2dParams kConvCases[] = {
    {2, 3, 7, 6, 5, 3, 3, 7, 6, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 9, 9, 6, 3, 2, 4, 4, 2, 2, 1, 0, 1, 2, 2},
    {1, 6, 5, 5, 6, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 6},    // depthwise
    {2, 4, 8, 7, 4, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1, 4},    // depthwise, stride 2
    {1, 3, 6, 6, 3, 5, 5, 2, 2, 1, 1, 0, 0, 1, 1, 3},    // depthwise 5x5, no padding
    {1, 20, 4, 3, 17, 1, 1, 4, 3, 1, 1, 0, 0, 1, 1, 1},  // 1x1, read directly
    {1, 37, 9, 7, 13, 1, 1, 9, 7, 1, 1, 0, 0, 1, 1, 1},  // 1x1, K not a multiple of 4, 63 pixels
    {1, 16, 11, 11, 7, 1, 1, 6, 6, 2, 2, 0, 0, 1, 1, 1}, // 1x1 stride 2 (im2col)
    {1, 5, 13, 12, 19, 7, 7, 7, 6, 2, 2, 3, 3, 1, 1, 1}, // 7x7 stride 2, padding wider than a stride
    {1, 8, 10, 10, 8, 3, 3, 10, 10, 1, 1, 2, 2, 2, 2, 1},// dilation 2
    {1, 5, 37, 45, 5, 3, 3, 37, 45, 1, 1, 1, 1, 1, 1, 5},// depthwise, rows longer than 32 outputs
    {2, 3, 17, 41, 3, 3, 3, 9, 22, 2, 2, 2, 2, 1, 1, 3}, // depthwise stride 2, padding 2, odd sizes
    {1, 4, 9, 9, 4, 3, 3, 5, 5, 2, 1, 1, 1, 1, 1, 4},    // depthwise, stride 2 rows and 1 columns
    {1, 4, 9, 10, 4, 2, 4, 8, 3, 1, 3, 0, 0, 1, 1, 4},   // depthwise stride 3 (plain loop), even kernel
    {1, 5, 7, 7, 5, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 5},    // depthwise 7x7 (one 8-output block a row)
    {1, 3, 14, 14, 3, 3, 3, 7, 7, 2, 2, 0, 1, 1, 1, 3},  // depthwise 14 -> 7 stride 2, padding left only
    {1, 3, 16, 17, 3, 3, 3, 16, 17, 1, 1, 1, 3, 1, 1, 3},// depthwise, row of 17 + padding 3 (two masked loads)
    {1, 3, 9, 70, 5, 3, 3, 5, 35, 2, 2, 1, 1, 1, 1, 1},  // 3x3 stride 2, rows of 70: vector im2col
    {1, 3, 13, 13, 3, 5, 5, 7, 7, 2, 2, 2, 2, 1, 1, 3},  // depthwise 5x5 stride 2 to 7 x 7 (two rows a block)
    {1, 2, 5, 4, 2, 3, 3, 5, 4, 1, 1, 1, 1, 1, 1, 2},    // depthwise, rows of 4, odd row count
    {1, 2, 20, 40, 2, 7, 7, 20, 40, 1, 1, 3, 3, 1, 1, 2},// depthwise 7x7 (two groups of 4 taps a row)
    {1, 2, 6, 6, 2, 3, 3, 12, 12, 1, 1, 4, 4, 1, 1, 2},  // depthwise, padding wider than the kernel
    {1, 3, 5, 5, 3, 1, 1, 5, 5, 1, 1, 0, 0, 1, 1, 3},    // depthwise 1x1
    {1, 2, 10, 9, 2, 3, 3, 4, 9, 3, 1, 1, 1, 1, 1, 2},   // depthwise 3x3, stride 3 rows and 1 columns
    {1, 2, 6, 7, 2, 3, 2, 6, 8, 1, 1, 1, 1, 1, 1, 2},    // depthwise 3x2, padding both sides
    {1, 3, 30, 30, 3, 3, 3, 15, 15, 2, 2, 1, 1, 1, 1, 3},// depthwise 3x3 stride 2 (blocks of 15 outputs)
    {1, 24, 12, 11, 10, 1, 1, 12, 11, 1, 1, 0, 0, 1, 1, 1},// 1x1, 132 pixels: runs of 4 panels packed at once + a tail
    {1, 4, 10, 13, 6, 3, 3, 10, 13, 1, 1, 1, 1, 1, 1, 1},  // 3x3, K = 36, 130 pixels
    {1, 35, 7, 7, 13, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1},    // 3x3 on 7 x 7: last panel 1 pixel (half tile), 79 groups
    {1, 30, 14, 14, 11, 1, 1, 14, 14, 1, 1, 0, 0, 1, 1, 1},// 1x1 on 14 x 14: last panel 4 pixels, 8 groups
    {1, 9, 8, 12, 7, 1, 1, 8, 12, 1, 1, 0, 0, 1, 1, 1},    // 96 pixels: a last panel of exactly 16
    {1, 9, 5, 5, 7, 1, 1, 5, 3, 1, 2, 0, 0, 1, 1, 1},      // 15 pixels: one panel of 15 (a full tile)
    // stride 1, C a multiple of 4: panels copied from the channel-interleaved input
    {1, 12, 7, 7, 13, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1},    // rows of 7: 3 or 4 runs a panel
    {2, 8, 9, 20, 10, 3, 3, 9, 20, 1, 1, 1, 1, 1, 1, 1},   // two images, rows of 20
    {1, 4, 6, 5, 5, 5, 3, 2, 3, 1, 1, 0, 0, 1, 1, 1},      // 5x3 kernel, no padding
    {1, 8, 5, 6, 6, 3, 3, 7, 4, 1, 1, 2, 0, 1, 1, 1},      // padding 2 at the top only
    {1, 4, 5, 3, 3, 3, 3, 5, 1, 1, 1, 1, 0, 1, 1, 1},      // one output column
    {1, 4, 4, 4, 3, 3, 3, 8, 8, 1, 1, 3, 3, 1, 1, 1},      // padding 3 (rows and columns of padding only)
    {1, 4, 5, 9, 3, 3, 3, 3, 5, 1, 1, 0, 0, 1, 1, 1},      // input columns beyond the last output's reach
    {1, 16, 3, 40, 5, 1, 3, 3, 38, 1, 1, 0, 0, 1, 1, 1},   // 1x3 kernel, rows of 38
    {1, 8, 11, 13, 6, 3, 3, 6, 7, 2, 2, 1, 1, 1, 1, 1},    // stride 2: even and odd columns apart
    {1, 4, 40, 41, 5, 3, 3, 20, 20, 2, 2, 1, 1, 1, 1, 1},  // stride 2, rows of 41 (16 columns at a time)
    {1, 4, 9, 20, 3, 3, 3, 4, 18, 2, 1, 0, 0, 1, 1, 1},    // stride 2 between rows only
    {1, 4, 8, 37, 3, 2, 2, 7, 18, 1, 2, 0, 0, 1, 1, 1},    // stride 2 along rows only, 2x2 kernel
    {1, 4, 23, 23, 5, 7, 7, 12, 12, 2, 2, 3, 3, 1, 1, 1},  // 7x7 stride 2, padding 3
    {1, 4, 5, 41, 3, 1, 1, 3, 21, 2, 2, 0, 0, 1, 1, 1},    // 1x1 stride 2, rows of 41: the last even byte ends the input
    {1, 6, 8, 66, 5, 1, 1, 4, 33, 2, 2, 0, 0, 1, 1, 1},    // 1x1 stride 2, 33 outputs a row (16 + 16 + 1)
    // more than 28 x 28 outputs: panels copied from the interleaved input (smaller planes take
    // pixels as the broadcast operand, below); rows of 30 = 16 + a masked tail of 14
    {1, 4, 30, 30, 5, 3, 3, 30, 30, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 61, 61, 3, 3, 3, 31, 31, 2, 2, 1, 1, 1, 1, 1},  // stride 2, 31 outputs a row
    // pixels as the broadcast operand (tiles of 7 pixels x 16, 32 or 48 channels)
    {1, 8, 5, 5, 70, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1},     // 25 pixels (a last tile of 4), 70 channels: 48 + 16 + 6
    {1, 16, 14, 14, 64, 3, 3, 7, 7, 2, 2, 1, 1, 1, 1, 1},  // 14 -> 7 stride 2 (layer4's), 64 channels: 32 + 32
    {1, 4, 13, 11, 40, 3, 3, 6, 5, 2, 2, 0, 1, 1, 1, 1},   // stride 2, odd input, padding left only, 40 = 48 - 8 channels
    {2, 12, 28, 28, 17, 3, 3, 28, 28, 1, 1, 1, 1, 1, 1, 1},// 784 pixels (split by pixels on threads), two images
    {1, 256, 5, 6, 20, 1, 1, 5, 6, 1, 1, 0, 0, 1, 1, 1},   // 1x1, 30 pixels, K = 256: compact interleaved input
    {1, 260, 9, 13, 35, 1, 1, 5, 7, 2, 2, 0, 0, 1, 1, 1},  // 1x1 stride 2, rows of 7 (masked), odd sizes
    {1, 256, 2, 40, 17, 1, 1, 1, 20, 2, 2, 0, 0, 1, 1, 1}, // 1x1 stride 2, rows of 20 = 16 + 4
    // several pieces for parallel_for_balanced at 2 threads (shares of 50 panels, 20 channels)
    {1, 8, 40, 40, 12, 1, 1, 40, 40, 1, 1, 0, 0, 1, 1, 1}, // 1x1, 100 panels
    {1, 40, 6, 6, 40, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 40},   // depthwise, 40 channels
    // long K: a thread's panels packed and multiplied a block at a time (16 and 14 panels)
    {1, 1024, 40, 40, 5, 1, 1, 40, 40, 1, 1, 0, 0, 1, 1, 1}, // 1x1, 100 panels
    {1, 128, 30, 30, 4, 3, 3, 30, 30, 1, 1, 1, 1, 1, 1, 1},  // 3x3 from the interleaved input, 57 panels
    // a 1x1 widening its input 5 times: split by output channels on threads (without zero points)
    {1, 8, 12, 14, 40, 1, 1, 12, 14, 1, 1, 0, 0, 1, 1, 1},
    {1, 4, 7, 7, 70, 1, 1, 7, 7, 1, 1, 0, 0, 1, 1, 1},      // 49 pixels, 12 weight panels
};

}  // namespace

TEST_CASE("qconv2d int32 matches conv2d_integer: padding, stride, dilation, groups, per-channel zero points") {
  uint32_t seed = 40;
  for (const Conv2dParams& p : kConvCases) {
    CAPTURE(p.C);
    CAPTURE(p.KH);
    const size_t xn = static_cast<size_t>(p.N * p.C * p.H * p.W), wn = static_cast<size_t>(p.M * p.C / p.group * p.KH * p.KW);
    // u8 x s8 with per-channel zero points
    check_qconv_i32(p, random_ints<uint8_t>(xn, seed, 0, 255), 77, random_ints<int8_t>(wn, seed + 1, -128, 127),
                    random_ints<int8_t>(static_cast<size_t>(p.M), seed + 2, -5, 5));
    // s8 x u8, per-tensor zero point
    check_qconv_i32(p, random_ints<int8_t>(xn, seed + 3, -128, 127), -9, random_ints<uint8_t>(wn, seed + 4, 0, 255),
                    std::vector<uint8_t>{131});
    // u8 x s8, symmetric weights (no zero point: no column sums)
    check_qconv_i32(p, random_ints<uint8_t>(xn, seed + 5, 0, 255), 0, random_ints<int8_t>(wn, seed + 6, -128, 127),
                    std::vector<int8_t>{});
    // s8 x u8 with the weights' zero point 128 (0 as stored: depthwise's direct 8-bit kernel)
    check_qconv_i32(p, random_ints<int8_t>(xn, seed + 6, -128, 127), 101, random_ints<uint8_t>(wn, seed + 5, 0, 255),
                    std::vector<uint8_t>{128});
    seed += 7;
  }
}

TEST_CASE("qconv2d does not saturate on 255 x -128 over long K") {
  const Conv2dParams p{1, 64, 5, 5, 7, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1};  // K = 576
  const std::vector<uint8_t> x(static_cast<size_t>(64 * 25), 255);
  for (int8_t wv : {int8_t(-128), int8_t(127)}) {
    const std::vector<int8_t> w(static_cast<size_t>(7 * 576), wv);
    check_qconv_i32(p, x, 0, w, std::vector<int8_t>{});
    check_qconv_i32(p, x, 0, w, std::vector<int8_t>{0});
  }
  const std::vector<int8_t> xs(static_cast<size_t>(64 * 25), -128);
  check_qconv_i32(p, xs, 127, std::vector<int8_t>(static_cast<size_t>(7 * 576), -128), std::vector<int8_t>{});
}

TEST_CASE("qconv2d pixels as the broadcast operand: extreme values exact on every isa (AVX2's int16 pairs)") {
  // 3x3 on 7 x 7 with 64 channels (K = 576) and 1x1 on 7 x 7 with 256 (compact input); 80
  // channels: tiles of 48 + 32. Pairs 255 x -128 + 255 x -128 would saturate vpmaddubsw.
  const Conv2dParams cases[] = {{1, 64, 7, 7, 80, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1},
                                {1, 256, 7, 7, 80, 1, 1, 7, 7, 1, 1, 0, 0, 1, 1, 1}};
  for (const Conv2dParams& p : cases) {
    const size_t xn = static_cast<size_t>(p.C * p.H * p.W), wn = static_cast<size_t>(p.M * p.C * p.KH * p.KW);
    for (int8_t wv : {int8_t(-128), int8_t(127)}) {
      check_qconv_i32(p, std::vector<uint8_t>(xn, 255), 0, std::vector<int8_t>(wn, wv), std::vector<int8_t>{});
      check_qconv_i32(p, std::vector<uint8_t>(xn, 255), 3, std::vector<int8_t>(wn, wv), std::vector<int8_t>{-2});
    }
    // s8 x u8: 127 and 0 become 255 and -128 as the kernels see them
    check_qconv_i32(p, std::vector<int8_t>(xn, 127), 0, std::vector<uint8_t>(wn, 0), std::vector<uint8_t>{128});
    // alternating extremes, random zero points per channel
    std::vector<uint8_t> x(xn);
    std::vector<int8_t> w(wn);
    for (size_t i = 0; i < xn; ++i) x[i] = i % 3 == 0 ? 0 : 255;
    for (size_t i = 0; i < wn; ++i) w[i] = i % 5 == 0 ? 127 : -128;
    check_qconv_i32(p, x, 255, w, random_ints<int8_t>(static_cast<size_t>(p.M), 7, -128, 127));
  }
}

TEST_CASE("qconv2d requantized u8/s8 output matches qlinear_conv2d") {
  uint32_t seed = 90;
  ThreadPool pool(2);
  for (const Conv2dParams& p : kConvCases) {
    CAPTURE(p.C);
    CAPTURE(p.KH);
    const size_t xn = static_cast<size_t>(p.N * p.C * p.H * p.W), wn = static_cast<size_t>(p.M * p.C / p.group * p.KH * p.KW);
    const size_t yn = static_cast<size_t>(p.N * p.M * p.OH * p.OW);
    const auto x = random_ints<uint8_t>(xn, seed++, 0, 255);
    const auto w = random_ints<int8_t>(wn, seed++, -128, 127);
    const auto bias = random_ints<int32_t>(static_cast<size_t>(p.M), seed++, -3000, 3000);
    std::vector<float> w_scale(static_cast<size_t>(p.M));
    for (int64_t m = 0; m < p.M; ++m) w_scale[m] = 0.002f + 0.0005f * float(m % 7);
    const float x_scale = 0.05f, y_scale = 0.4f;
    const int32_t xz = 120;
    std::vector<float> mult(static_cast<size_t>(p.M));
    for (int64_t m = 0; m < p.M; ++m) mult[m] = float(qlinear_multiplier<float>(x_scale, w_scale[m], y_scale));
    std::vector<unsigned char> packed(qconv2d_packed_weight_bytes(p)), scratch(qconv2d_scratch_bytes(p));
    qconv2d_pack_weights(p, w.data(), packed.data());
    std::vector<int32_t> acc(yn);
    for (kiln_dtype type : {KILN_U8, KILN_I8}) {
      const int32_t yz = type == KILN_U8 ? 9 : -20;
      std::vector<uint8_t> want_u(yn), got_u(yn, 1);
      std::vector<int8_t> want_s(yn), got_s(yn, 1);
      if (type == KILN_U8)
        qlinear_conv2d<uint8_t, int8_t, uint8_t, float>(p, x.data(), x_scale, xz, w.data(), w_scale.data(), p.M,
                                                         nullptr, 0, y_scale, yz, bias.data(), acc.data(),
                                                         want_u.data());
      else
        qlinear_conv2d<uint8_t, int8_t, int8_t, float>(p, x.data(), x_scale, xz, w.data(), w_scale.data(), p.M,
                                                        nullptr, 0, y_scale, yz, bias.data(), acc.data(),
                                                        want_s.data());
      QGemmOutput out;
      out.type = type;
      out.y = type == KILN_U8 ? static_cast<void*>(got_u.data()) : static_cast<void*>(got_s.data());
      out.bias = bias.data();
      out.bias_count = p.M;
      out.scale = mult.data();
      out.scale_count = p.M;
      out.y_zero_point = yz;
      for (QGemmIsa isa : kIsas) {
        if (!qgemm_isa_supported(isa)) continue;
        CAPTURE(qgemm_isa_name(isa));
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
          std::fill(got_u.begin(), got_u.end(), 1);
          std::fill(got_s.begin(), got_s.end(), 1);
          qconv2d(p, QGemmA{x.data(), 0, false, xz}, packed.data(), nullptr, 0, out,
                  scratch.empty() ? nullptr : scratch.data(), tp, isa);
          if (type == KILN_U8)
            CHECK(got_u == want_u);
          else
            CHECK(got_s == want_s);
        }
      }
    }
  }
}

TEST_CASE("qgemm_requantize_row equals requantize_f32: saturation, ties, wrapping, every tail length") {
  // Values around both ends of the range, exact halves (multiplier 0.5), large sums.
  std::vector<int32_t> acc;
  for (int32_t v = -700; v <= 700; v += 3) acc.push_back(v);
  for (int32_t v : {INT32_MIN, INT32_MAX, 1 << 24, (1 << 24) + 1, -(1 << 25) - 3, 2147483000}) acc.push_back(v);
  const auto noise = random_ints<int32_t>(300, 95, -100000, 100000);
  acc.insert(acc.end(), noise.begin(), noise.end());
  for (float scale : {0.5f, 0.37f, 1.0f / 3.0f, 2.5e-4f})
    for (int32_t add : {0, 7, -1000, INT32_MAX})
      for (kiln_dtype type : {KILN_U8, KILN_I8})
        for (int32_t zp : type == KILN_U8 ? std::vector<int32_t>{0, 128, 255} : std::vector<int32_t>{-128, 0, 5, 127})
          for (int64_t n : {int64_t(1), int64_t(15), int64_t(16), int64_t(17), int64_t(acc.size())}) {
            CAPTURE(scale);
            CAPTURE(add);
            CAPTURE(zp);
            CAPTURE(n);
            QGemmOutput out;
            out.type = type;
            out.y_zero_point = zp;
            std::vector<unsigned char> got(static_cast<size_t>(n) + 1, 0xA5);
            qgemm_requantize_row(out, acc.data(), n, add, scale, got.data());
            int64_t bad = 0;
            for (int64_t k = 0; k < n; ++k) {
              const auto t = static_cast<int32_t>(static_cast<uint32_t>(acc[k]) + static_cast<uint32_t>(add));
              const unsigned char want = type == KILN_U8
                                             ? requantize_f32<uint8_t>(t, scale, zp)
                                             : static_cast<unsigned char>(requantize_f32<int8_t>(t, scale, zp));
              bad += got[k] != want;
            }
            CHECK(bad == 0);
            CHECK(got[n] == 0xA5);  // nothing written past n
          }
}

TEST_CASE("requantize_f32 rounds half to even and saturates") {
  CHECK(requantize_f32<uint8_t>(5, 0.5f, 0) == 2);    // 2.5 -> 2
  CHECK(requantize_f32<uint8_t>(7, 0.5f, 0) == 4);    // 3.5 -> 4
  CHECK(requantize_f32<uint8_t>(-7, 0.5f, 10) == 6);  // -3.5 -> -4, + 10
  CHECK(requantize_f32<uint8_t>(1000, 1.0f, 3) == 255);
  CHECK(requantize_f32<uint8_t>(-1000, 1.0f, 3) == 0);
  CHECK(requantize_f32<int8_t>(1000, 1.0f, -3) == 127);
  CHECK(requantize_f32<int8_t>(-1000, 1.0f, -3) == -128);
  CHECK(requantize_f32<int8_t>(INT32_MIN, 1.0f, 0) == -128);
}

