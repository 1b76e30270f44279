#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;
using kiln_test::max_rel_diff;
using kiln_test::random_floats;

namespace {

void gemm_ref(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) {
        const float a = ta ? A[k * lda + i] : A[i * lda + k];
        const float b = tb ? B[j * ldb + k] : B[k * ldb + j];
        s += double(a) * double(b);
      }
      float& c = C[i * ldc + j];
      c = beta == 0.f ? float(alpha * s) : float(alpha * s + beta * double(c));
    }
}

// Checks one case, with padded leading dimensions, against the reference.
void check_case(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, ThreadPool* pool,
                uint32_t seed) {
  const int64_t pad = 3;
  const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  const auto A = random_floats(static_cast<size_t>((ta ? K : M) * lda), seed);
  const auto B = random_floats(static_cast<size_t>((tb ? N : K) * ldb), seed + 1);
  auto C = random_floats(static_cast<size_t>(M * ldc), seed + 2);
  auto R = C;
  if (beta == 0.f) {
    for (float& c : C) c = std::numeric_limits<float>::quiet_NaN();  // must be ignored
    R = C;
  }
  gemm_f32(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc, pool);
  gemm_ref(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, R.data(), ldc);
  // Compare only the M x N window; the padding columns must be untouched.
  std::vector<float> got, want;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const float g = C[i * ldc + j], w = R[i * ldc + j];
      if (j >= N) {
        if (!(g == w || (std::isnan(g) && std::isnan(w)))) {
          FAIL("padding column written at " << i << "," << j);
        }
        continue;
      }
      got.push_back(g);
      want.push_back(w);
    }
  const double err = max_rel_diff(got, want);
  INFO("ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K << " alpha=" << alpha
             << " beta=" << beta << " threads=" << (pool ? pool->size() : 1));
  CHECK(err < 1e-4 * std::sqrt(double(K) + 1));
}

}  // namespace

TEST_CASE("gemm_f32 matches a naive triple loop for all transposes and beta 0 1 other and odd sizes") {
  const int64_t sizes[][3] = {{1, 1, 1},   {1, 7, 5},    {5, 1, 9},     {7, 17, 3},   {13, 33, 65}, {6, 16, 256},
                              {64, 64, 64}, {37, 129, 300}, {121, 19, 513}, {3, 2050, 4}, {1, 300, 257}, {1, 40, 0},
                              {128, 40, 700},  // 128 = 21 * 6 + 2: the last 8 rows as two tiles of 4
                              {8, 35, 70},     // 6 + 2 rows run as 4 + 4 (A packed per call)
                              {14, 24, 9},     // 6 + 6 + 2 as 6 + 4 + 4
                              {80, 20, 40}};   // a second row block of 8 (72 + 8)
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 1;
  for (auto& s : sizes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (float beta : {0.f, 1.f, 0.5f}) {
          check_case(ta, tb, s[0], s[1], s[2], 1.f, beta, nullptr, seed);
          check_case(ta, tb, s[0], s[1], s[2], -0.75f, beta, &pool3, seed);
          seed += 3;
        }
  // Larger ones, threaded, where the work is split by M and by N.
  check_case(false, false, 200, 40, 100, 1.f, 0.f, &pool2, 7);
  check_case(false, true, 40, 300, 100, 1.f, 1.f, &pool2, 8);
  check_case(true, false, 130, 2100, 20, 2.f, 0.f, &pool3, 9);
}

TEST_CASE("gemm_f32 results do not depend on the thread count") {
  const int64_t M = 50, N = 70, K = 600;
  const auto A = random_floats(M * K, 11), B = random_floats(K * N, 12);
  std::vector<float> c1(M * N), c2(M * N), c4(M * N);
  ThreadPool p2(2), p4(4);
  gemm_f32(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, c1.data(), N, nullptr);
  gemm_f32(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, c2.data(), N, &p2);
  gemm_f32(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, c4.data(), N, &p4);
  CHECK(c1 == c2);
  CHECK(c1 == c4);
  // Split by columns, the last panel 8 columns wide (computed as half a tile).
  const int64_t m2 = 20, n2 = 200;
  const auto a2 = random_floats(m2 * K, 15), b2 = random_floats(K * n2, 16);
  std::vector<float> e1(m2 * n2), e2(m2 * n2), e4(m2 * n2);
  gemm_f32(false, false, m2, n2, K, 1.f, a2.data(), K, b2.data(), n2, 0.f, e1.data(), n2, nullptr);
  gemm_f32(false, false, m2, n2, K, 1.f, a2.data(), K, b2.data(), n2, 0.f, e2.data(), n2, &p2);
  gemm_f32(false, false, m2, n2, K, 1.f, a2.data(), K, b2.data(), n2, 0.f, e4.data(), n2, &p4);
  CHECK(e1 == e2);
  CHECK(e1 == e4);
  // M == 1 with B transposed (an LSTM's recurrent step): rows of B eight at a time, the tail
  // one at a time; the split between the two must not move with the threads.
  const int64_t n1 = 1003, k1 = 515;
  const auto a1 = random_floats(k1, 13), b1 = random_floats(n1 * k1, 14);
  std::vector<float> d1(n1), d2(n1), d4(n1);
  gemm_f32(false, true, 1, n1, k1, 1.f, a1.data(), k1, b1.data(), k1, 0.f, d1.data(), n1, nullptr);
  gemm_f32(false, true, 1, n1, k1, 1.f, a1.data(), k1, b1.data(), k1, 0.f, d2.data(), n1, &p2);
  gemm_f32(false, true, 1, n1, k1, 1.f, a1.data(), k1, b1.data(), k1, 0.f, d4.data(), n1, &p4);
  CHECK(d1 == d2);
  CHECK(d1 == d4);
}

// The epilogue of gemm_f32_ex_case: adds the residual, then a clamp to [-0.5, 0.5] or a ReLU.
template <bool kRelu>
void residual_then(const void* r, float* y, int64_t offset, int64_t n) {
  const float* z = static_cast<const float*>(r) + offset;
  for (int64_t i = 0; i < n; ++i) {
    const float v = y[i] + z[i];
    y[i] = kRelu ? (v > 0.f ? v : 0.f) : (v < -0.5f ? -0.5f : (v > 0.5f ? 0.5f : v));
  }
}

TEST_CASE("gemm_f32_ex applies bias, residual and clamp or ReLU in every kind of tile") {
  // M from 1 to 13 covers the whole 6-row tile and every edge-row kernel; N = 40 has two whole
  // 16-column tiles and a partial one; K = 63 leaves a tail after the 1- and 2-row kernels'
  // steps of 4 and 2; K = 600 is two K blocks (the store after the second).
  ThreadPool pool2(2);
  for (bool relu : {false, true})
    for (int64_t M = 1; M <= 13; ++M)
      for (int64_t K : {63, 64, 600}) {
        const int64_t N = 40;
        const auto A = random_floats(M * K, 21), B = random_floats(K * N, 22), bias = random_floats(M, 23);
        const auto res = random_floats(M * N, 24);
        std::vector<float> ref(M * N);
        gemm_ref(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, ref.data(), N);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) ref[i * N + j] += bias[i];
        (relu ? residual_then<true> : residual_then<false>)(res.data(), ref.data(), 0, M * N);
        Epilogue ep;
        ep.fn = relu ? residual_then<true> : residual_then<false>;
        ep.ctx = res.data();
        ep.fn_is_clamp = !relu;
        ep.fn_is_relu = relu;
        ep.clamp_lo = relu ? 0.f : -0.5f;
        ep.clamp_hi = relu ? 0.f : 0.5f;
        ep.residual = res.data();
        std::vector<float> packed(gemm_f32_packed_a_floats(M, K));
        gemm_f32_pack_a(false, M, K, A.data(), K, packed.data());
        for (bool a_packed : {false, true})
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
            std::vector<float> C(M * N, std::numeric_limits<float>::quiet_NaN());
            const GemmOperand a =
                a_packed ? GemmOperand{packed.data(), 0, false, true} : GemmOperand{A.data(), K, false, false};
            gemm_f32_ex(M, N, K, 1.f, a, GemmOperand{B.data(), N, false, false}, 0.f, C.data(), N, bias.data(), ep, 0,
                        pool);
            INFO("relu=" << relu << " M=" << M << " K=" << K << " packed=" << a_packed << " threads=" << (pool ? 2 : 1));
            CHECK(max_rel_diff(C, ref) < 1e-4 * std::sqrt(double(K) + 1));
          }
      }
}

TEST_CASE("gemm_f32_ex with a packed B matches the reference, one row (the matrix-vector path) and more") {
  // M = 1 runs gemv_packed_b (four sums a column, the tail in the first); K = 1030 is three K
  // blocks, the last with a tail of 2; N = 70 ends in a panel of 6 columns; A transposed is a
  // strided row.
  ThreadPool pool2(2);
  for (int64_t M : {1, 2, 7})
    for (int64_t K : {1, 5, 515, 1030})
      for (bool ta : {false, true}) {
        const int64_t N = 70, lda = (ta ? M : K) + 2;
        const auto A = random_floats(static_cast<size_t>((ta ? K : M) * lda), 41), B = random_floats(K * N, 42);
        std::vector<float> packed(gemm_f32_packed_b_floats(K, N));
        gemm_f32_pack_b(false, K, N, B.data(), N, packed.data());
        auto ref = random_floats(M * N, 43);
        const auto C0 = ref;
        gemm_ref(ta, false, M, N, K, 0.5f, A.data(), lda, B.data(), N, 2.f, ref.data(), N);
        std::vector<float> one = C0, two = C0;
        const GemmOperand a{A.data(), lda, ta, false}, b{packed.data(), 0, false, true};
        gemm_f32_ex(M, N, K, 0.5f, a, b, 2.f, one.data(), N, nullptr, Epilogue{}, 0, nullptr);
        gemm_f32_ex(M, N, K, 0.5f, a, b, 2.f, two.data(), N, nullptr, Epilogue{}, 0, &pool2);
        INFO("M=" << M << " K=" << K << " trans_a=" << ta);
        CHECK(max_rel_diff(one, ref) < 1e-4 * std::sqrt(double(K) + 1));
        CHECK(one == two);
      }
}

TEST_CASE("gemm_f32 with K == 0 or alpha == 0 scales C by beta") {
  std::vector<float> C = {1, 2, 3, 4};
  gemm_f32(false, false, 2, 2, 0, 1.f, nullptr, 1, nullptr, 2, 2.f, C.data(), 2, nullptr);
  CHECK(C == std::vector<float>{2, 4, 6, 8});
  std::vector<float> D = {NAN, NAN};
  const float a[2] = {1, 2}, b[2] = {3, 4};
  gemm_f32(false, false, 1, 2, 1, 0.f, a, 1, b, 2, 0.f, D.data(), 2, nullptr);
  CHECK(D == std::vector<float>{0, 0});
}

TEST_CASE("gemm_f32 speed (informational)") {
  const int64_t n = 256;
  const auto A = random_floats(n * n, 1), B = random_floats(n * n, 2);
  std::vector<float> C(n * n);
  gemm_f32(false, false, n, n, n, 1.f, A.data(), n, B.data(), n, 0.f, C.data(), n, nullptr);  // warm up
  const int reps = 10;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r)
    gemm_f32(false, false, n, n, n, 1.f, A.data(), n, B.data(), n, 0.f, C.data(), n, nullptr);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("gemm 256^3 single thread: " << 2.0 * n * n * n * reps / s / 1e9 << " GFLOP/s");
}
