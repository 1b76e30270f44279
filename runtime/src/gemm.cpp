// Goto-style blocked GEMM: B is packed into KC x NR panels, A into MR x KC
// panels, and an MR x NR register tile is accumulated by a micro-kernel
// written with GCC/Clang vector extensions (lowered to whatever vector ISA
// the flags allow), with a plain-loop fallback for other compilers.
#include "kiln/rt/gemm.h"

#include <cstdlib>
#include <cstring>

#include "kiln/rt/thread_pool.h"

namespace kiln::rt {
namespace {

// The register tile is kMR rows by two vectors. With AVX there are 16 ymm
// registers (12 accumulators + 2 for B + 1 for A); without it, xmm.
#if defined(__AVX__)
constexpr int64_t kVec = 8;
#else
constexpr int64_t kVec = 4;
#endif
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 2 * kVec;
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 120;   // multiple of kMR
constexpr int64_t kNC = 2048;  // multiple of kNR

struct Matrix {
  const float* p;
  int64_t ld;
  bool trans;
  // Element (r, c) of op(X).
  float at(int64_t r, int64_t c) const { return trans ? p[c * ld + r] : p[r * ld + c]; }
};

// Packs rows [0, m) x cols [0, kc) of op(A) (already offset) into panels of kMR rows:
// panel p, step k holds kMR values. Rows past m are zero.
void pack_a(const Matrix& a, int64_t m, int64_t kc, float* out) {
  for (int64_t i0 = 0; i0 < m; i0 += kMR) {
    const int64_t mr = m - i0 < kMR ? m - i0 : kMR;
    if (!a.trans) {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kMR;
        for (int64_t i = 0; i < mr; ++i) o[i] = a.p[(i0 + i) * a.ld + k];
        for (int64_t i = mr; i < kMR; ++i) o[i] = 0.f;
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kMR;
        const float* src = a.p + k * a.ld + i0;
        for (int64_t i = 0; i < mr; ++i) o[i] = src[i];
        for (int64_t i = mr; i < kMR; ++i) o[i] = 0.f;
      }
    }
    out += kc * kMR;
  }
}

// Packs rows [0, kc) x cols [0, n) of op(B) into panels of kNR columns.
void pack_b(const Matrix& b, int64_t kc, int64_t n, float* out) {
  for (int64_t j0 = 0; j0 < n; j0 += kNR) {
    const int64_t nr = n - j0 < kNR ? n - j0 : kNR;
    if (!b.trans) {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kNR;
        const float* src = b.p + k * b.ld + j0;
        if (nr == kNR) {
          std::memcpy(o, src, sizeof(float) * kNR);
        } else {
          for (int64_t j = 0; j < nr; ++j) o[j] = src[j];
          for (int64_t j = nr; j < kNR; ++j) o[j] = 0.f;
        }
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        float* o = out + k * kNR;
        for (int64_t j = 0; j < nr; ++j) o[j] = b.p[(j0 + j) * b.ld + k];
        for (int64_t j = nr; j < kNR; ++j) o[j] = 0.f;
      }
    }
    out += kc * kNR;
  }
}

// acc[kMR][kNR] = sum_k a[k][i] * b[k][j] over kc steps of packed panels.
#if defined(__GNUC__) || defined(__clang__)
typedef float vecf __attribute__((vector_size(kVec * sizeof(float))));
void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict acc) {
  vecf c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {};
  vecf c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {}, c51 = {};
  for (int64_t k = 0; k < kc; ++k) {
    vecf b0, b1;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + kVec, sizeof b1);
    float av;
    av = a[0]; c00 += av * b0; c01 += av * b1;
    av = a[1]; c10 += av * b0; c11 += av * b1;
    av = a[2]; c20 += av * b0; c21 += av * b1;
    av = a[3]; c30 += av * b0; c31 += av * b1;
    av = a[4]; c40 += av * b0; c41 += av * b1;
    av = a[5]; c50 += av * b0; c51 += av * b1;
    a += kMR;
    b += kNR;
  }
  const vecf rows[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  static_assert(sizeof rows == sizeof(float) * kMR * kNR, "tile layout");
  std::memcpy(acc, rows, sizeof rows);
}
#else
void micro_kernel(int64_t kc, const float* a, const float* b, float* acc) {
  float t[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int64_t i = 0; i < kMR; ++i)
      for (int64_t j = 0; j < kNR; ++j) t[i][j] += a[i] * b[j];
    a += kMR;
    b += kNR;
  }
  std::memcpy(acc, t, sizeof t);
}
#endif

// C[0:m, 0:n] = alpha * acc + beta * C (beta == 0: C not read).
void store_tile(const float* acc, int64_t m, int64_t n, float alpha, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    const float* t = acc + i * kNR;
    if (beta == 0.f) {
      for (int64_t j = 0; j < n; ++j) row[j] = alpha * t[j];
    } else if (beta == 1.f) {
      for (int64_t j = 0; j < n; ++j) row[j] += alpha * t[j];
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] = alpha * t[j] + beta * row[j];
    }
  }
}

void scale_c(int64_t M, int64_t N, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    float* row = C + i * ldc;
    if (beta == 0.f) {
      for (int64_t j = 0; j < N; ++j) row[j] = 0.f;
    } else if (beta != 1.f) {
      for (int64_t j = 0; j < N; ++j) row[j] *= beta;
    }
  }
}

float* alloc_floats(int64_t n) {
  // 64-byte aligned; size rounded up as aligned_alloc requires.
  size_t bytes = static_cast<size_t>(n) * sizeof(float);
  bytes = (bytes + 63) / 64 * 64;
  return static_cast<float*>(std::aligned_alloc(64, bytes));
}

// Unblocked fallback, used only when the packing buffers cannot be allocated.
void gemm_naive(const Matrix& a, const Matrix& b, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.f;
      for (int64_t k = 0; k < K; ++k) s += a.at(i, k) * b.at(k, j);
      float* c = C + i * ldc + j;
      *c = beta == 0.f ? alpha * s : alpha * s + beta * *c;
    }
}

// Matrix-vector case M == 1: c[j] = alpha * sum_k a[k] * op(B)[k][j] + beta * c[j].
void gemv_row(const float* a, int64_t a_stride, const Matrix& b, int64_t N, int64_t K, float alpha, float beta,
              float* c) {
  if (!b.trans) {
    // Rows of B are contiguous: accumulate a[k] * B[k, :] in blocks of columns.
    constexpr int64_t kBlock = 256;
    float acc[kBlock];
    for (int64_t j0 = 0; j0 < N; j0 += kBlock) {
      const int64_t nb = N - j0 < kBlock ? N - j0 : kBlock;
      for (int64_t j = 0; j < nb; ++j) acc[j] = 0.f;
      for (int64_t k = 0; k < K; ++k) {
        const float av = a[k * a_stride];
        const float* brow = b.p + k * b.ld + j0;
        for (int64_t j = 0; j < nb; ++j) acc[j] += av * brow[j];
      }
      for (int64_t j = 0; j < nb; ++j)
        c[j0 + j] = beta == 0.f ? alpha * acc[j] : alpha * acc[j] + beta * c[j0 + j];
    }
  } else {
    // Columns of op(B) are rows of B: dot products with 8 independent sums.
    for (int64_t j = 0; j < N; ++j) {
      const float* brow = b.p + j * b.ld;
      float s[8] = {};
      int64_t k = 0;
      if (a_stride == 1) {
        for (; k + 8 <= K; k += 8)
          for (int q = 0; q < 8; ++q) s[q] += a[k + q] * brow[k + q];
      }
      float tail = 0.f;
      for (; k < K; ++k) tail += a[k * a_stride] * brow[k];
      const float sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail;
      c[j] = beta == 0.f ? alpha * sum : alpha * sum + beta * c[j];
    }
  }
}

// use_gemv must depend on the whole problem only (not on a thread's share of
// it) so that results do not depend on the thread count.
void gemm_serial(const Matrix& a, const Matrix& b, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                 float* C, int64_t ldc, bool use_gemv) {
  if (use_gemv) {
    gemv_row(a.p, a.trans ? a.ld : 1, b, N, K, alpha, beta, C);
    return;
  }
  const int64_t kc_max = K < kKC ? K : kKC;
  const int64_t mc_max = M < kMC ? (M + kMR - 1) / kMR * kMR : kMC;
  const int64_t nc_max = N < kNC ? (N + kNR - 1) / kNR * kNR : kNC;
  float* bufa = alloc_floats(mc_max * kc_max);
  float* bufb = alloc_floats(kc_max * nc_max);
  if (bufa == nullptr || bufb == nullptr) {
    std::free(bufa);
    std::free(bufb);
    gemm_naive(a, b, M, N, K, alpha, beta, C, ldc);
    return;
  }
  alignas(64) float acc[kMR * kNR];
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = N - jc < kNC ? N - jc : kNC;
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = K - pc < kKC ? K - pc : kKC;
      const float beta_k = pc == 0 ? beta : 1.f;
      const Matrix bsub{b.trans ? b.p + jc * b.ld + pc : b.p + pc * b.ld + jc, b.ld, b.trans};
      pack_b(bsub, kc, nc, bufb);
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = M - ic < kMC ? M - ic : kMC;
        const Matrix asub{a.trans ? a.p + pc * a.ld + ic : a.p + ic * a.ld + pc, a.ld, a.trans};
        pack_a(asub, mc, kc, bufa);
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t nr = nc - jr < kNR ? nc - jr : kNR;
          const float* bp = bufb + (jr / kNR) * kc * kNR;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t mr = mc - ir < kMR ? mc - ir : kMR;
            micro_kernel(kc, bufa + (ir / kMR) * kc * kMR, bp, acc);
            store_tile(acc, mr, nr, alpha, beta_k, C + (ic + ir) * ldc + jc + jr, ldc);
          }
        }
      }
    }
  }
  std::free(bufa);
  std::free(bufb);
}

}  // namespace

void gemm_f32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
              int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
              ThreadPool* pool) noexcept {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.f) {
    scale_c(M, N, beta, C, ldc);
    return;
  }
  const Matrix a{A, lda, trans_a};
  const Matrix b{B, ldb, trans_b};
  const int threads = pool ? pool->size() : 1;
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (threads == 1 || flops < 2.0e5) {
    gemm_serial(a, b, M, N, K, alpha, beta, C, ldc, M == 1);
    return;
  }
  // Split the larger dimension (in register tiles) across threads; every
  // element of C is still computed by the same sequence of operations.
  // The lambdas capture one pointer so that std::function does not allocate.
  struct Args {
    Matrix a, b;
    int64_t M, N, K;
    float alpha, beta;
    float* C;
    int64_t ldc;
  } args{a, b, M, N, K, alpha, beta, C, ldc};
  const int64_t m_tiles = (M + kMR - 1) / kMR, n_tiles = (N + kNR - 1) / kNR;
  if (n_tiles >= m_tiles || M == 1) {
    pool->parallel_for(n_tiles, [p = &args](int64_t t0, int64_t t1) {
      const int64_t j0 = t0 * kNR, j1 = t1 * kNR < p->N ? t1 * kNR : p->N;
      const Matrix bs{p->b.trans ? p->b.p + j0 * p->b.ld : p->b.p + j0, p->b.ld, p->b.trans};
      gemm_serial(p->a, bs, p->M, j1 - j0, p->K, p->alpha, p->beta, p->C + j0, p->ldc, p->M == 1);
    });
  } else {
    pool->parallel_for(m_tiles, [p = &args](int64_t t0, int64_t t1) {
      const int64_t i0 = t0 * kMR, i1 = t1 * kMR < p->M ? t1 * kMR : p->M;
      const Matrix as{p->a.trans ? p->a.p + i0 : p->a.p + i0 * p->a.ld, p->a.ld, p->a.trans};
      gemm_serial(as, p->b, i1 - i0, p->N, p->K, p->alpha, p->beta, p->C + i0 * p->ldc, p->ldc, false);
    });
  }
}

void gemm_f32_epilogue(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                       const Epilogue& epilogue, ThreadPool* pool) noexcept {
  gemm_f32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool);
  if (!epilogue.fn || M <= 0 || N <= 0) return;
  struct Args {
    const Epilogue* e;
    float* C;
    int64_t N, ldc;
  } args{&epilogue, C, N, ldc};
  parallel_for(pool, M, [p = &args](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) p->e->fn(p->e->ctx, p->C + i * p->ldc, i * p->ldc, p->N);
  });
}

}  // namespace kiln::rt
