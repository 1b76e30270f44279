#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kiln/rt/gemm_f64.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using kiln::rt::gemm_f64;
using kiln::rt::ThreadPool;

namespace {

std::vector<double> random_doubles(size_t n, uint32_t seed) { return kiln_test::random_uniform<double>(n, seed); }

// A dot product in twice the working precision (Ogita, Rump and Oishi's Dot2: each product's
// rounding error from an FMA, each sum's from TwoSum), so the reference is as good as a
// double-double one. Not long double: on ARM64 that is a software quad type, and the
// reference alone took 20 s of the cross-built run under qemu.
struct Dot2 {
  double hi = 0.0, lo = 0.0;
  void add(double a, double b) {
    const double p = a * b, pe = std::fma(a, b, -p);
    const double s = hi + p, bb = s - hi, se = (hi - (s - bb)) + (p - bb);
    hi = s;
    lo += pe + se;
  }
  double value() const { return hi + lo; }
};

// One case with padded leading dimensions against a compensated triple loop; the padding
// columns of C must stay untouched and beta == 0 must not read C (NaN there).
void check_case(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, double beta, ThreadPool* pool) {
  const int64_t pad = 3;
  const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  const auto A = random_doubles(static_cast<size_t>((ta ? K : M) * lda), 1);
  const auto B = random_doubles(static_cast<size_t>((tb ? N : K) * ldb), 2);
  auto C = random_doubles(static_cast<size_t>(M * ldc), 3);
  if (beta == 0.0)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[static_cast<size_t>(i * ldc + j)] = std::numeric_limits<double>::quiet_NaN();
  const auto before = C;
  gemm_f64(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc, pool);
  double worst = 0.0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= N) {
        REQUIRE(C[at] == before[at]);
        continue;
      }
      Dot2 s;
      for (int64_t k = 0; k < K; ++k)
        s.add(ta ? A[static_cast<size_t>(k * lda + i)] : A[static_cast<size_t>(i * lda + k)],
              tb ? B[static_cast<size_t>(j * ldb + k)] : B[static_cast<size_t>(k * ldb + j)]);
      // alpha * s + beta * C: each product and sum compensated too.
      Dot2 r;
      r.add(alpha, s.hi);
      r.add(alpha, s.lo);
      if (beta != 0.0) r.add(beta, before[at]);
      const double want = r.value();
      worst = std::fmax(worst, static_cast<double>(std::fabs(C[at] - want)) / (1.0 + std::sqrt(double(K))));
    }
  CHECK(worst < 1e-13);
}

}  // namespace

TEST_CASE("gemm_f64 matches a double-double reference across shapes, transposes, alpha and beta") {
  ThreadPool pool(3);
  for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_case(ta, tb, 1, 1, 1, 1.0, 0.0, tp);
        check_case(ta, tb, 7, 13, 5, 1.0, 0.0, tp);
        check_case(ta, tb, 97, 35, 300, 0.5, 1.0, tp);      // K over one block, M over kMC
        check_case(ta, tb, 6, 1030, 17, 1.0, -2.0, tp);     // N over one column block
        check_case(ta, tb, 130, 64, 513, 2.0, 0.0, tp);
        // Edges of the AVX-512 8 x 24 and AVX2 6 x 8 tiles, and K in two blocks (1100 > 1024).
        check_case(ta, tb, 8, 24, 3, 1.0, 0.0, tp);
        check_case(ta, tb, 9, 25, 1100, 1.0, 1.0, tp);
        check_case(ta, tb, 53, 71, 1030, -1.5, 0.5, tp);
        check_case(ta, tb, 5, 2100, 7, 1.0, 0.0, tp);  // N over one 2040-column block
      }
}

TEST_CASE("gemm_f64 with K == 0 or alpha == 0 scales C by beta") {
  std::vector<double> C = {1, 2, 3, 4}, A = {1, 1}, B = {1, 1};
  gemm_f64(false, false, 2, 2, 0, 1.0, A.data(), 1, B.data(), 2, 2.0, C.data(), 2, nullptr);
  CHECK(C == std::vector<double>{2, 4, 6, 8});
  gemm_f64(false, false, 2, 2, 1, 0.0, A.data(), 1, B.data(), 2, 0.0, C.data(), 2, nullptr);
  CHECK(C == std::vector<double>{0, 0, 0, 0});
}
