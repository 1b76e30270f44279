// Blocked f64 GEMM: both operands packed per call into register-tile panels, a 6 x 8 tile of
// doubles accumulated in vector registers (AVX2+FMA chosen at run time on x86-64, or whatever
// the flags allow), plain loops elsewhere. The f32 GEMM (gemm.cpp) is the tuned one, with
// weights packed at compile time and fused epilogues; f64 models are rare, and this is here so
// that they compile and run at a reasonable fraction of the machine's f64 peak instead of
// falling back to a naive triple loop.
#include "kiln/rt/gemm_f64.h"

#include <vector>

#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !(defined(__AVX2__) && defined(__FMA__))
#define KILN_GEMM_F64_DISPATCH 1
#else
#define KILN_GEMM_F64_DISPATCH 0
#endif

constexpr int64_t kMR = 6;
constexpr int64_t kNR = 8;
constexpr int64_t kKC = 256;  // a B panel, kKC x kNR doubles (16 KiB), stays in L1
constexpr int64_t kMC = 96;   // kMC x kKC doubles of A (192 KiB) stay in L2
constexpr int64_t kNC = 1024;

struct Operand {
  const double* p;
  int64_t ld;
  bool trans;
  double at(int64_t r, int64_t c) const { return trans ? p[c * ld + r] : p[r * ld + c]; }
};

// Rows [i0, i0 + m) x cols [p0, p0 + kc) of op(A) into panels of kMR rows (zero rows past m).
void pack_a(const Operand& a, int64_t i0, int64_t m, int64_t p0, int64_t kc, double* out) {
  for (int64_t ir = 0; ir < m; ir += kMR, out += kc * kMR)
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t i = 0; i < kMR; ++i) out[k * kMR + i] = ir + i < m ? a.at(i0 + ir + i, p0 + k) : 0.0;
}

// Rows [p0, p0 + kc) x cols [j0, j0 + n) of op(B) into panels of kNR columns (zero past n).
void pack_b(const Operand& b, int64_t p0, int64_t kc, int64_t j0, int64_t n, double* out) {
  for (int64_t jr = 0; jr < n; jr += kNR, out += kc * kNR)
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t j = 0; j < kNR; ++j) out[k * kNR + j] = jr + j < n ? b.at(p0 + k, j0 + jr + j) : 0.0;
}

// acc (kMR x kNR) = sum over kc steps of a panel of A times a panel of B.
using TileFn = void (*)(int64_t kc, const double* a, const double* b, double* acc);

#if defined(__GNUC__) || defined(__clang__)
typedef double vec4d __attribute__((vector_size(4 * sizeof(double))));

__attribute__((always_inline)) inline void vector_tile(int64_t kc, const double* __restrict a,
                                                       const double* __restrict b, double* __restrict acc) {
  vec4d c[kMR][2] = {};
  for (int64_t k = 0; k < kc; ++k) {
    vec4d b0, b1;
    __builtin_memcpy(&b0, b, sizeof b0);
    __builtin_memcpy(&b1, b + 4, sizeof b1);
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) {
      const double av = a[i];
      c[i][0] += av * b0;
      c[i][1] += av * b1;
    }
    a += kMR;
    b += kNR;
  }
  __builtin_memcpy(acc, c, sizeof c);
}
#endif

#if KILN_GEMM_F64_DISPATCH
KILN_AVX2_FMA void tile_avx2_fma(int64_t kc, const double* a, const double* b, double* acc) {
  vector_tile(kc, a, b, acc);
}
#elif defined(__GNUC__) || defined(__clang__)
void tile_vector(int64_t kc, const double* a, const double* b, double* acc) { vector_tile(kc, a, b, acc); }
#endif

[[maybe_unused]] void tile_portable(int64_t kc, const double* a, const double* b, double* acc) {
  for (int64_t i = 0; i < kMR * kNR; ++i) acc[i] = 0.0;
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR)
    for (int64_t i = 0; i < kMR; ++i)
      for (int64_t j = 0; j < kNR; ++j) acc[i * kNR + j] += a[i] * b[j];
}

TileFn choose_tile() {
#if KILN_GEMM_F64_DISPATCH
  if (cpu_has_avx2_fma()) return tile_avx2_fma;
  return tile_portable;
#elif defined(__GNUC__) || defined(__clang__)
  return tile_vector;
#else
  return tile_portable;
#endif
}

// Columns [j0, j1) of C, all rows. The packing buffers are per thread and kept between calls
// (grown once to the largest block), so repeated runs do not allocate.
void gemm_columns(const Operand& a, const Operand& b, int64_t M, int64_t K, double alpha, double beta, double* C,
                  int64_t ldc, int64_t j0, int64_t j1) {
  static const TileFn tile = choose_tile();
  thread_local std::vector<double> abuf, bbuf;
  const int64_t kc_max = K < kKC ? K : kKC;
  const size_t a_need = static_cast<size_t>((kMC + kMR) * kc_max), b_need = static_cast<size_t>(kNC * kc_max);
  if (abuf.size() < a_need) abuf.resize(a_need);
  if (bbuf.size() < b_need) bbuf.resize(b_need);
  alignas(64) double acc[kMR * kNR];
  for (int64_t jc = j0; jc < j1; jc += kNC) {
    const int64_t nc = j1 - jc < kNC ? j1 - jc : kNC;
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = K - pc < kKC ? K - pc : kKC;
      const double beta_k = pc == 0 ? beta : 1.0;
      pack_b(b, pc, kc, jc, nc, bbuf.data());
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = M - ic < kMC ? M - ic : kMC;
        pack_a(a, ic, mc, pc, kc, abuf.data());
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t nr = nc - jr < kNR ? nc - jr : kNR;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t mr = mc - ir < kMR ? mc - ir : kMR;
            tile(kc, abuf.data() + ir * kc, bbuf.data() + jr * kc, acc);
            for (int64_t i = 0; i < mr; ++i) {
              double* row = C + (ic + ir + i) * ldc + jc + jr;
              const double* t = acc + i * kNR;
              if (beta_k == 0.0) {
                for (int64_t j = 0; j < nr; ++j) row[j] = alpha * t[j];
              } else {
                for (int64_t j = 0; j < nr; ++j) row[j] = alpha * t[j] + beta_k * row[j];
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

void gemm_f64(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
              int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc,
              ThreadPool* pool) noexcept {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0 ? 0.0 : beta * C[i * ldc + j];
    return;
  }
  const Operand a{A, lda, trans_a}, b{B, ldb, trans_b};
  // Threads take column ranges in whole register tiles: every element of C is computed by the
  // same operations whatever the thread count.
  const int64_t n_tiles = (N + kNR - 1) / kNR;
  parallel_for(pool, n_tiles, [&](int64_t t0, int64_t t1) {
    gemm_columns(a, b, M, K, alpha, beta, C, ldc, t0 * kNR, t1 * kNR < N ? t1 * kNR : N);
  });
}

}  // namespace kiln::rt
