// Blocked f64 GEMM (Goto): both operands packed per call into register-tile panels, an MR x NR
// tile of doubles accumulated in vector registers and stored from them, with the ISA chosen at
// run time on x86-64 (AVX-512: an 8 x 24 tile in 24 of the 32 zmm registers; AVX2+FMA: 6 x 8
// in 12 of the 16 ymm registers; or whatever the flags allow), plain loops elsewhere. The f32
// GEMM (gemm.cpp) has more (weights packed at compile time, fused epilogues, edge kernels);
// f64 models are rare, and this is here so that they run near the machine's f64 peak.
#include "kiln/rt/gemm_f64.h"

#include <cstring>
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

struct Operand {
  const double* p;
  int64_t ld;
  bool trans;
};

// A kernel's geometry: the register tile (kMR x kNR) and the cache blocks: K in blocks of at
// most kKC steps, kMC rows of A (kMC x kc doubles, in the 1 MiB L2) packed at a time and swept
// by each micro-panel of B (kc x kNR), kNC columns of B (kc x kNC) packed at a time.
template <int kMR_, int kNR_, int kKC_, int kMC_>
struct Geometry {
  static constexpr int64_t kMR = kMR_, kNR = kNR_, kKC = kKC_, kMC = kMC_, kNC = 2048 / kNR_ * kNR_;
};

// Rows [i0, i0 + m) x cols [p0, p0 + kc) of op(A) into panels of G::kMR rows (zero rows past m).
template <class G>
void pack_a(const Operand& a, int64_t i0, int64_t m, int64_t p0, int64_t kc, double* out) {
  constexpr int64_t kMR = G::kMR;
  for (int64_t ir = 0; ir < m; ir += kMR, out += kc * kMR) {
    const int64_t mr = m - ir < kMR ? m - ir : kMR;
    if (!a.trans) {
      const double* src = a.p + (i0 + ir) * a.ld + p0;
      for (int64_t i = 0; i < mr; ++i)
        for (int64_t k = 0; k < kc; ++k) out[k * kMR + i] = src[i * a.ld + k];
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const double* src = a.p + (p0 + k) * a.ld + i0 + ir;
        for (int64_t i = 0; i < mr; ++i) out[k * kMR + i] = src[i];
      }
    }
    for (int64_t i = mr; i < kMR; ++i)
      for (int64_t k = 0; k < kc; ++k) out[k * kMR + i] = 0.0;
  }
}

// Rows [p0, p0 + kc) x cols [j0, j0 + n) of op(B) into panels of G::kNR columns (zero past n).
template <class G>
void pack_b(const Operand& b, int64_t p0, int64_t kc, int64_t j0, int64_t n, double* out) {
  constexpr int64_t kNR = G::kNR;
  for (int64_t jr = 0; jr < n; jr += kNR, out += kc * kNR) {
    const int64_t nr = n - jr < kNR ? n - jr : kNR;
    if (!b.trans) {
      for (int64_t k = 0; k < kc; ++k) {
        const double* src = b.p + (p0 + k) * b.ld + j0 + jr;
        double* o = out + k * kNR;
        if (nr == kNR) {
          std::memcpy(o, src, sizeof(double) * kNR);
        } else {
          for (int64_t j = 0; j < nr; ++j) o[j] = src[j];
          for (int64_t j = nr; j < kNR; ++j) o[j] = 0.0;
        }
      }
    } else {
      for (int64_t j = 0; j < nr; ++j) {
        const double* src = b.p + (j0 + jr + j) * b.ld + p0;
        for (int64_t k = 0; k < kc; ++k) out[k * kNR + j] = src[k];
      }
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = nr; j < kNR; ++j) out[k * kNR + j] = 0.0;
    }
  }
}

// C[0:kMR, 0:kNR] = alpha * sum over kc steps of a panel of A times a panel of B + beta * C
// (beta == 0: C not read).
using TileFn = void (*)(int64_t kc, const double* a, const double* b, double alpha, double beta, double* c,
                        int64_t ldc);

#if defined(__GNUC__) || defined(__clang__)
typedef double vec4d __attribute__((vector_size(4 * sizeof(double))));
typedef double vec8d __attribute__((vector_size(8 * sizeof(double))));

// The vector tile, written once for both widths: kMR rows of kNV vectors V. Each step loads
// kNV vectors of B and broadcasts kMR values of A into kMR * kNV FMAs.
template <class V, int kMR, int kNV>
__attribute__((always_inline)) inline void vector_tile(int64_t kc, const double* __restrict a,
                                                       const double* __restrict b, double alpha, double beta,
                                                       double* __restrict c, int64_t ldc) {
  constexpr int kW = sizeof(V) / sizeof(double);
  V acc[kMR][kNV] = {};
  for (int64_t k = 0; k < kc; ++k) {
    V bv[kNV];
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) std::memcpy(&bv[v], b + v * kW, sizeof(V));
#pragma GCC unroll 12
    for (int i = 0; i < kMR; ++i) {
      const double av = a[i];
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) acc[i][v] += av * bv[v];
    }
    a += kMR;
    b += kNV * kW;
  }
#pragma GCC unroll 12
  for (int i = 0; i < kMR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) {
      double* p = c + i * ldc + v * kW;
      V r = alpha == 1.0 ? acc[i][v] : alpha * acc[i][v];
      if (beta != 0.0) {
        V old;
        std::memcpy(&old, p, sizeof old);
        r += beta * old;
      }
      std::memcpy(p, &r, sizeof r);
    }
  }
}
#endif

// Measured on AMD Zen 4 (1000^3, one core, microbenchmark): AVX-512 8 x 24 reached 47.5
// GFLOP/s at kc 256, 50.6 at 512 and 52.8 at 1024 (91% of the f64 FMA peak: each K block
// costs a pass over C, and Zen 4's L2 feeds the kernel's broadcasts fast enough); 12 x 16 and
// 8 x 16 tiles were 1-3% slower, 14 x 8 half as fast. AVX2 6 x 8: 47.3 at kc 256, 48.6 at 512,
// 45.9 at 1024. kNC about 2048 columns (N = 1000 in one block; 512 was 3% slower): the B
// buffer is at most 16 MiB per thread.
using GeomAvx512 = Geometry<8, 24, 1024, 48>;
using GeomAvx2 = Geometry<6, 8, 512, 48>;
using GeomPortable = Geometry<4, 4, 256, 64>;

#if KILN_GEMM_F64_DISPATCH
KILN_AVX512F void tile_avx512f(int64_t kc, const double* a, const double* b, double alpha, double beta, double* c,
                               int64_t ldc) {
  vector_tile<vec8d, GeomAvx512::kMR, GeomAvx512::kNR / 8>(kc, a, b, alpha, beta, c, ldc);
}
KILN_AVX2_FMA void tile_avx2_fma(int64_t kc, const double* a, const double* b, double alpha, double beta, double* c,
                                 int64_t ldc) {
  vector_tile<vec4d, GeomAvx2::kMR, GeomAvx2::kNR / 4>(kc, a, b, alpha, beta, c, ldc);
}
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__AVX512F__)
void tile_vector(int64_t kc, const double* a, const double* b, double alpha, double beta, double* c, int64_t ldc) {
  vector_tile<vec8d, GeomAvx512::kMR, GeomAvx512::kNR / 8>(kc, a, b, alpha, beta, c, ldc);
}
#elif defined(__GNUC__) || defined(__clang__)
void tile_vector(int64_t kc, const double* a, const double* b, double alpha, double beta, double* c, int64_t ldc) {
  vector_tile<vec4d, GeomAvx2::kMR, GeomAvx2::kNR / 4>(kc, a, b, alpha, beta, c, ldc);
}
#endif

template <class G>
[[maybe_unused]] void tile_portable(int64_t kc, const double* a, const double* b, double alpha, double beta,
                                    double* c, int64_t ldc) {
  double t[G::kMR][G::kNR] = {};
  for (int64_t k = 0; k < kc; ++k, a += G::kMR, b += G::kNR)
    for (int64_t i = 0; i < G::kMR; ++i)
      for (int64_t j = 0; j < G::kNR; ++j) t[i][j] += a[i] * b[j];
  for (int64_t i = 0; i < G::kMR; ++i)
    for (int64_t j = 0; j < G::kNR; ++j) {
      double* p = c + i * ldc + j;
      *p = beta == 0.0 ? alpha * t[i][j] : alpha * t[i][j] + beta * *p;
    }
}

// Columns [j0, j1) of C, all rows, with tile kernel `tile` of geometry G. The packing buffers
// are per thread and kept between calls (grown once to the largest block), so repeated runs do
// not allocate.
template <class G>
void gemm_columns(TileFn tile, const Operand& a, const Operand& b, int64_t M, int64_t K, double alpha, double beta,
                  double* C, int64_t ldc, int64_t j0, int64_t j1) {
  constexpr int64_t kMR = G::kMR, kNR = G::kNR, kKC = G::kKC, kMC = G::kMC, kNC = G::kNC;
  thread_local std::vector<double> abuf, bbuf;
  // K in equal blocks of at most kKC (K = 1100 as 2 x 550, not 1024 + 76).
  const int64_t k_blocks = (K + kKC - 1) / kKC, kc_max = (K + k_blocks - 1) / k_blocks;
  const int64_t n = j1 - j0, nc_max = n < kNC ? (n + kNR - 1) / kNR * kNR : kNC;
  const size_t a_need = static_cast<size_t>(kMC * kc_max), b_need = static_cast<size_t>(nc_max * kc_max);
  if (abuf.size() < a_need) abuf.resize(a_need);
  if (bbuf.size() < b_need) bbuf.resize(b_need);
  alignas(64) double acc[kMR * kNR];
  for (int64_t jc = j0; jc < j1; jc += kNC) {
    const int64_t nc = j1 - jc < kNC ? j1 - jc : kNC;
    for (int64_t pc = 0; pc < K; pc += kc_max) {
      const int64_t kc = K - pc < kc_max ? K - pc : kc_max;
      const double beta_k = pc == 0 ? beta : 1.0;
      pack_b<G>(b, pc, kc, jc, nc, bbuf.data());
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = M - ic < kMC ? M - ic : kMC;
        pack_a<G>(a, ic, mc, pc, kc, abuf.data());
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t nr = nc - jr < kNR ? nc - jr : kNR;
          const double* bp = bbuf.data() + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t mr = mc - ir < kMR ? mc - ir : kMR;
            const double* ap = abuf.data() + ir * kc;
            double* ctile = C + (ic + ir) * ldc + jc + jr;
            if (mr == kMR && nr == kNR) {
              tile(kc, ap, bp, alpha, beta_k, ctile, ldc);
              continue;
            }
            // An edge tile: the whole tile (zero-padded panels) into a buffer, then its part.
            tile(kc, ap, bp, 1.0, 0.0, acc, kNR);
            for (int64_t i = 0; i < mr; ++i) {
              double* row = ctile + i * ldc;
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

// The whole product, split across threads by columns in whole register tiles: every element
// of C is computed by the same operations whatever the thread count.
template <class G>
void gemm_run(TileFn tile, const Operand& a, const Operand& b, int64_t M, int64_t N, int64_t K, double alpha,
              double beta, double* C, int64_t ldc, ThreadPool* pool) {
  const int64_t n_tiles = (N + G::kNR - 1) / G::kNR;
  parallel_for(pool, n_tiles, [&](int64_t t0, int64_t t1) {
    gemm_columns<G>(tile, a, b, M, K, alpha, beta, C, ldc, t0 * G::kNR, t1 * G::kNR < N ? t1 * G::kNR : N);
  });
}

using RunFn = void (*)(TileFn tile, const Operand& a, const Operand& b, int64_t M, int64_t N, int64_t K,
                       double alpha, double beta, double* C, int64_t ldc, ThreadPool* pool);

struct Engine {
  TileFn tile;
  RunFn run;
};

Engine choose_engine() {
#if KILN_GEMM_F64_DISPATCH
  if (cpu_has_avx512f()) return {tile_avx512f, gemm_run<GeomAvx512>};
  if (cpu_has_avx2_fma()) return {tile_avx2_fma, gemm_run<GeomAvx2>};
  return {tile_portable<GeomPortable>, gemm_run<GeomPortable>};
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__AVX512F__)
  return {tile_vector, gemm_run<GeomAvx512>};
#elif defined(__GNUC__) || defined(__clang__)
  return {tile_vector, gemm_run<GeomAvx2>};
#else
  return {tile_portable<GeomPortable>, gemm_run<GeomPortable>};
#endif
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
  static const Engine engine = choose_engine();
  engine.run(engine.tile, Operand{A, lda, trans_a}, Operand{B, ldb, trans_b}, M, N, K, alpha, beta, C, ldc, pool);
}

}  // namespace kiln::rt
