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

using namespace kiln::rt;

namespace {

const QGemmIsa kIsas[] = {QGemmIsa::portable, QGemmIsa::avx2, QGemmIsa::avx512_vnni};

template <class T>
std::vector<T> random_ints(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

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

TEST_CASE("qconv2d int32 matches conv2d_integer: padding, stride, dilation, groups, per-channel zero points") {
  const Conv2dParams cases[] = {
      // N, C, H, W, M, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw, group
      {2, 3, 7, 6, 5, 3, 3, 7, 6, 1, 1, 1, 1, 1, 1, 1},
      {1, 4, 9, 9, 6, 3, 2, 4, 4, 2, 2, 1, 0, 1, 2, 2},
      {1, 6, 5, 5, 6, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 6},   // depthwise
      {2, 4, 8, 7, 4, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1, 4},   // depthwise, stride 2
      {1, 3, 6, 6, 3, 5, 5, 2, 2, 1, 1, 0, 0, 1, 1, 3},   // depthwise 5x5, no padding
      {1, 20, 4, 3, 17, 1, 1, 4, 3, 1, 1, 0, 0, 1, 1, 1},  // 1x1
  };
  uint32_t seed = 40;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.group);
    const auto x = random_ints<uint8_t>(static_cast<size_t>(p.N * p.C * p.H * p.W), seed++, 0, 255);
    const auto w = random_ints<int8_t>(static_cast<size_t>(p.M * p.C / p.group * p.KH * p.KW), seed++, -128, 127);
    const auto wz8 = random_ints<int8_t>(static_cast<size_t>(p.M), seed++, -5, 5);
    const std::vector<int32_t> wz(wz8.begin(), wz8.end());
    const int32_t xz = 77;
    std::vector<int32_t> want(static_cast<size_t>(p.N * p.M * p.OH * p.OW)), got(want.size(), -1);
    conv2d_integer<uint8_t, int8_t>(p, x.data(), w.data(), want.data(), xz, wz8.data(), p.M, nullptr);
    std::vector<unsigned char> packed(qconv2d_packed_weight_bytes(p)), scratch(qconv2d_scratch_bytes(p));
    qconv2d_pack_weights(p, w.data(), packed.data());
    QGemmOutput out;
    out.y = got.data();
    qconv2d(p, QGemmA{x.data(), 0, false, xz}, packed.data(), wz.data(), p.M, out, scratch.data(), nullptr);
    CHECK(got == want);
    ThreadPool pool(2);
    std::fill(got.begin(), got.end(), -1);
    qconv2d(p, QGemmA{x.data(), 0, false, xz}, packed.data(), wz.data(), p.M, out, scratch.data(), &pool);
    CHECK(got == want);
  }
}
