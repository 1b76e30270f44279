// Native bf16 GEMM (kiln/rt/gemm_bf16.h). The register tile is kMR = 6 rows by 32 columns
// (two zmm of 16 fp32 sums a row: 12 accumulators); a step of the K loop is one k-pair: two
// loads of B (32 columns x 2 rows of bf16), one 32-bit broadcast of A's pair per row, and two
// vdpbf16ps per row. Blocking as gemm.cpp's: an A block of kMC rows (bf16) in L2, a B panel
// of kKC x 32 bf16 (32 KiB) streamed from L1/L2.
#include "kiln/rt/gemm_bf16.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "kiln/rt/dtype.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/widen.h"
#include "kiln/rt/x86_dispatch.h"

#if KILN_X86_KERNELS && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 11))
#define KILN_GEMM_BF16 1
#define KILN_BF16_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16")))
#else
#define KILN_GEMM_BF16 0
#endif

namespace kiln::rt {
namespace {

constexpr int64_t kNR = kGemmBf16PanelN;
constexpr int64_t kKC = kGemmBf16BlockK;
constexpr int64_t kMR = 6;
constexpr int64_t kMC = 72;           // multiple of kMR: 72 x 512 bf16 of A (72 KiB) in L2
constexpr int64_t kFinishCols = 128;  // a generic epilogue runs on row segments this wide

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The panel of column j (a multiple of kNR) in K block pc (kc rows, padded to kcp = even).
const uint16_t* b_panel(const uint16_t* b, int64_t N, int64_t pc, int64_t kcp, int64_t j) {
  return b + pc * round_up(N, kNR) + j / kNR * (kcp * kNR);
}

}  // namespace

size_t gemm_bf16_packed_b_halves(int64_t K, int64_t N) noexcept {
  return K <= 0 || N <= 0 ? 0 : static_cast<size_t>(round_up(K, 2) * round_up(N, kNR));
}

void gemm_bf16_pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb, uint16_t* packed) noexcept {
  std::memset(packed, 0, gemm_bf16_packed_b_halves(K, N) * sizeof(uint16_t));
  for (int64_t pc = 0; pc < K; pc += kKC) {
    const int64_t kc = K - pc < kKC ? K - pc : kKC, kcp = round_up(kc, 2);
    for (int64_t j0 = 0; j0 < N; j0 += kNR) {
      uint16_t* panel = packed + (b_panel(packed, N, pc, kcp, j0) - packed);
      const int64_t nr = N - j0 < kNR ? N - j0 : kNR;
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = 0; j < nr; ++j) {
          const float v = trans_b ? B[(j0 + j) * ldb + pc + k] : B[(pc + k) * ldb + j0 + j];
          panel[k / 2 * (2 * kNR) + j * 2 + k % 2] = f32_to_bf16_bits(v);
        }
    }
  }
}

bool gemm_bf16_widen_b(int64_t K, int64_t N, const uint16_t* packed, float* f32_packed) noexcept {
  if (K <= 0 || N <= 0) return true;
  // Through a plain K x N matrix, so that gemm_f32_pack_b alone knows its own layout.
  std::vector<float> plain;
  try {
    plain.resize(static_cast<size_t>(K * N));
  } catch (...) {
    return false;
  }
  for (int64_t pc = 0; pc < K; pc += kKC) {
    const int64_t kc = K - pc < kKC ? K - pc : kKC, kcp = round_up(kc, 2);
    for (int64_t j0 = 0; j0 < N; j0 += kNR) {
      const uint16_t* panel = b_panel(packed, N, pc, kcp, j0);
      const int64_t nr = N - j0 < kNR ? N - j0 : kNR;
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = 0; j < nr; ++j)
          plain[static_cast<size_t>((pc + k) * N + j0 + j)] = bf16_bits_to_f32(panel[k / 2 * (2 * kNR) + j * 2 + k % 2]);
    }
  }
  gemm_f32_pack_b(false, K, N, plain.data(), N, f32_packed);
  return true;
}

bool widen_gemm_b_weights(const unsigned char* weights, unsigned char* widened, const WidenGemmB* ranges,
                          size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) {
    const WidenGemmB& r = ranges[i];
    if (!gemm_bf16_widen_b(r.K, r.N, reinterpret_cast<const uint16_t*>(weights + r.from),
                           reinterpret_cast<float*>(widened + r.to)))
      return false;
    release_pages(weights + r.from, gemm_bf16_packed_b_halves(r.K, r.N) * sizeof(uint16_t));
  }
  return true;
}

#if KILN_GEMM_BF16
// GCC 12 warns that the placeholder inside _mm512_max_ps / _mm512_min_ps (_mm512_undefined_ps)
// "may be used uninitialized" (GCC bug 105593): a false positive of the header itself.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

// How a tile is stored: C = alpha * sums + beta * C (beta == 0: C not read), then, after the
// last K block (`last`), the row bias, the residual, and a clamp or ReLU (the epilogue's
// promises, as gemm.cpp's StoreOps).
struct TileStore {
  float alpha, beta;
  bool last;
  const float* bias;  // of the tile's first row, or nullptr
  const float* add;   // the residual at the tile's first element, or nullptr
  int64_t add_ld;
  bool clamp;
  float lo, hi;
  bool relu;
};

// A's k-pair at `a` (two bf16) broadcast to every 32-bit lane, as vdpbf16ps pairs it with B's.
KILN_BF16_TARGET inline __m512i broadcast_pair(const uint16_t* a) {
  uint32_t pair;
  std::memcpy(&pair, a, sizeof pair);
  return _mm512_set1_epi32(static_cast<int>(pair));
}

// The first R rows (R <= kMR) of a tile: `pairs` k-pairs of A (row i's at a + i * lda, lda in
// halves) times a B panel, into columns [0, nr) of C. One or two rows keep 4 or 2 sums per
// accumulator (every S-th pair), added at the end, to keep 8 chains of vdpbf16ps in flight.
template <int R>
KILN_BF16_TARGET void tile(int64_t pairs, const uint16_t* a, int64_t lda, const uint16_t* b, float* c, int64_t ldc,
                           int64_t nr, const TileStore& s) {
  constexpr int S = R == 1 ? 4 : (R == 2 ? 2 : 1);
  __m512 acc[S][R][2];
#pragma GCC unroll 4
  for (int q = 0; q < S; ++q)
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) acc[q][i][0] = acc[q][i][1] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + S <= pairs; p += S) {
#pragma GCC unroll 4
    for (int q = 0; q < S; ++q) {
      const __m512i b0 = _mm512_loadu_si512(b + (p + q) * 2 * kNR);
      const __m512i b1 = _mm512_loadu_si512(b + (p + q) * 2 * kNR + kNR);
#pragma GCC unroll 6
      for (int i = 0; i < R; ++i) {
        const __m512i av = broadcast_pair(a + i * lda + (p + q) * 2);
        acc[q][i][0] = _mm512_dpbf16_ps(acc[q][i][0], (__m512bh)av, (__m512bh)b0);
        acc[q][i][1] = _mm512_dpbf16_ps(acc[q][i][1], (__m512bh)av, (__m512bh)b1);
      }
    }
  }
  for (; p < pairs; ++p) {
    const __m512i b0 = _mm512_loadu_si512(b + p * 2 * kNR);
    const __m512i b1 = _mm512_loadu_si512(b + p * 2 * kNR + kNR);
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      const __m512i av = broadcast_pair(a + i * lda + p * 2);
      acc[0][i][0] = _mm512_dpbf16_ps(acc[0][i][0], (__m512bh)av, (__m512bh)b0);
      acc[0][i][1] = _mm512_dpbf16_ps(acc[0][i][1], (__m512bh)av, (__m512bh)b1);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i)
    for (int h = 0; h < 2; ++h) {
      if constexpr (S == 4)
        acc[0][i][h] = _mm512_add_ps(_mm512_add_ps(acc[0][i][h], acc[1][i][h]), _mm512_add_ps(acc[2][i][h], acc[3][i][h]));
      else if constexpr (S == 2)
        acc[0][i][h] = _mm512_add_ps(acc[0][i][h], acc[1][i][h]);
    }
  const __mmask16 mask[2] = {
      static_cast<__mmask16>(nr >= 16 ? 0xFFFF : (1u << nr) - 1),
      static_cast<__mmask16>(nr >= 32 ? 0xFFFF : (nr > 16 ? (1u << (nr - 16)) - 1 : 0))};
  const __m512 alpha = _mm512_set1_ps(s.alpha), beta = _mm512_set1_ps(s.beta);
  const __m512 lo = _mm512_set1_ps(s.lo), hi = _mm512_set1_ps(s.hi), zero = _mm512_setzero_ps();
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i)
    for (int h = 0; h < 2; ++h) {
      if (mask[h] == 0) continue;
      float* row = c + i * ldc + h * 16;
      __m512 v = acc[0][i][h];
      if (s.alpha != 1.f) v = _mm512_mul_ps(v, alpha);
      if (s.beta != 0.f) {
        const __m512 old = _mm512_maskz_loadu_ps(mask[h], row);
        v = s.beta == 1.f ? _mm512_add_ps(v, old) : _mm512_fmadd_ps(beta, old, v);
      }
      if (s.last) {
        if (s.bias) v = _mm512_add_ps(v, _mm512_set1_ps(s.bias[i]));
        if (s.add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[h], s.add + i * s.add_ld + h * 16));
        // clamp_to and relu_of: max/min return their second operand when one is NaN, so a NaN
        // stays NaN through the clamp and becomes 0 through the ReLU.
        if (s.clamp) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
        if (s.relu) v = _mm512_max_ps(v, zero);
      }
      _mm512_mask_storeu_ps(row, mask[h], v);
    }
}

using TileFn = void (*)(int64_t, const uint16_t*, int64_t, const uint16_t*, float*, int64_t, int64_t,
                        const TileStore&);
constexpr TileFn kTiles[kMR + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};

// Rows [i0, i0 + m) and columns [pc, pc + kc) of op(A), rounded to bf16 (vcvtne2ps2bf16:
// nearest even, denormals to zero) into rows of kcp halves (a zero after an odd kc).
KILN_BF16_TARGET void pack_a(const float* A, int64_t lda, bool trans_a, int64_t i0, int64_t m, int64_t pc,
                             int64_t kc, int64_t kcp, uint16_t* out, float* gather) {
  for (int64_t i = 0; i < m; ++i) {
    const float* src = A + (i0 + i) * lda + pc;
    if (trans_a) {  // column i0 + i of the stored K x M matrix
      for (int64_t k = 0; k < kc; ++k) gather[k] = A[(pc + k) * lda + i0 + i];
      src = gather;
    }
    uint16_t* dst = out + i * kcp;
    for (int64_t t = 0; t < kcp; t += 32) {
      const int64_t left = kc - t;
      const __mmask16 m0 = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (left > 0 ? (1u << left) - 1 : 0));
      const __mmask16 m1 = static_cast<__mmask16>(left >= 32 ? 0xFFFF : (left > 16 ? (1u << (left - 16)) - 1 : 0));
      const __m512 lo = _mm512_maskz_loadu_ps(m0, src + t), hi = _mm512_maskz_loadu_ps(m1, src + t + 16);
      const __m512bh h = _mm512_cvtne2ps_pbh(hi, lo);
      const int64_t n = kcp - t < 32 ? kcp - t : 32;
      const __mmask32 ms = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1;
      _mm512_mask_storeu_epi16(dst + t, ms, (__m512i)h);
    }
  }
}

struct Problem {
  int64_t M, N, K;
  float alpha;
  const float* A;
  int64_t lda;
  bool trans_a;
  const uint16_t* B;
  float beta;
  float* C;
  int64_t ldc;
  const float* row_bias;
  const Epilogue* ep;  // with fn, or nullptr
  bool in_kernel;      // ep's promises are applied in the tile's store (then ep is not called)
  int64_t base;
};

// Rows [r0, r0 + m) x columns [j0, j0 + n) of C (j0 a multiple of kNR), on one thread.
void gemm_block(const Problem& P, int64_t r0, int64_t m, int64_t j0, int64_t n) {
  const int64_t kc_max = P.K < kKC ? P.K : kKC, kcp_max = round_up(kc_max, 2);
  // An A block of kMC rows from this thread's buffer; 6 rows on the stack if it cannot grow.
  alignas(64) uint16_t small[kMR * kKC];
  auto* buf = static_cast<uint16_t*>(thread_buffer(ThreadBuffer::gemm_a, kMC * kcp_max * sizeof(uint16_t)));
  const int64_t mc_block = buf != nullptr ? kMC : kMR;
  if (buf == nullptr) buf = small;
  alignas(64) float gather[kKC];
  const Epilogue* ep = P.ep;
  for (int64_t pc = 0; pc < P.K; pc += kKC) {
    const int64_t kc = P.K - pc < kKC ? P.K - pc : kKC, kcp = round_up(kc, 2);
    TileStore s{P.alpha, pc == 0 ? P.beta : 1.f, pc + kc >= P.K, nullptr, nullptr, P.ldc, false, 0.f, 0.f, false};
    if (s.last && P.in_kernel) {
      s.clamp = ep->fn_is_clamp;
      s.lo = ep->clamp_lo;
      s.hi = ep->clamp_hi;
      s.relu = !ep->fn_is_clamp && ep->fn_is_relu;
    }
    for (int64_t ic = r0; ic < r0 + m; ic += mc_block) {
      const int64_t mc = r0 + m - ic < mc_block ? r0 + m - ic : mc_block;
      pack_a(P.A, P.lda, P.trans_a, ic, mc, pc, kc, kcp, buf, gather);
      for (int64_t jr = j0; jr < j0 + n; jr += kNR) {
        const int64_t nr = j0 + n - jr < kNR ? j0 + n - jr : kNR;
        const uint16_t* bp = b_panel(P.B, P.N, pc, kcp, jr);
        for (int64_t ir = 0; ir < mc; ir += kMR) {
          const int64_t mr = mc - ir < kMR ? mc - ir : kMR;
          const int64_t i = ic + ir;
          if (s.last) {
            s.bias = P.row_bias ? P.row_bias + i : nullptr;
            s.add = P.in_kernel && ep->residual ? ep->residual + P.base + i * P.ldc + jr : nullptr;
          }
          kTiles[mr](kcp / 2, buf + ir * kcp, kcp, bp, P.C + i * P.ldc + jr,
                     P.ldc, nr, s);
        }
        // A generic epilogue on each group of kFinishCols final columns, while in cache.
        const int64_t done = jr + nr - j0;
        if (s.last && ep != nullptr && !P.in_kernel && (done % kFinishCols == 0 || done == n)) {
          const int64_t f0 = j0 + (done - 1) / kFinishCols * kFinishCols, fn = j0 + done - f0;
          for (int64_t i = ic; i < ic + mc; ++i) ep->fn(ep->ctx, P.C + i * P.ldc + f0, P.base + i * P.ldc + f0, fn);
        }
      }
    }
  }
}

}  // namespace
#endif

bool gemm_bf16_native() noexcept {
#if KILN_GEMM_BF16
  static const bool native = [] {
    __builtin_cpu_init();
    if (!cpu_has_avx512f() || !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl") ||
        !__builtin_cpu_supports("avx512bf16"))
      return false;
    const char* env = std::getenv("KILN_NATIVE_BF16");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return native;
#else
  return false;
#endif
}

void gemm_bf16(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
               const uint16_t* B, float beta, float* C, int64_t ldc, const float* row_bias, const Epilogue& epilogue,
               int64_t offset_base, ThreadPool* pool) noexcept {
#if KILN_GEMM_BF16
  if (M <= 0 || N <= 0) return;
  const Epilogue* ep = epilogue.fn != nullptr ? &epilogue : nullptr;
  Problem P{M,    N,    K,   alpha, A, lda, trans_a, B, beta, C, ldc, row_bias, ep,
            ep != nullptr && (ep->fn_is_clamp || ep->fn_is_relu || ep->residual != nullptr), offset_base};
  if (K <= 0) {  // no products: C = beta * C, then the bias and epilogue (one pass, no tiles)
    for (int64_t i = 0; i < M; ++i) {
      float* row = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) row[j] = (beta == 0.f ? 0.f : beta * row[j]) + (row_bias ? row_bias[i] : 0.f);
      if (ep) ep->fn(ep->ctx, row, offset_base + i * ldc, N);
    }
    return;
  }
  const int threads = pool ? pool->size() : 1;
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const int64_t m_tiles = (M + kMR - 1) / kMR, n_panels = (N + kNR - 1) / kNR;
  if (threads == 1 || flops < 2.0e5) {
    gemm_block(P, 0, M, 0, N);
  } else if (n_panels >= m_tiles) {  // by column panels
    parallel_for(pool, n_panels, [p = &P](int64_t t0, int64_t t1) {
      const int64_t j1 = t1 * kNR < p->N ? t1 * kNR : p->N;
      gemm_block(*p, 0, p->M, t0 * kNR, j1 - t0 * kNR);
    });
  } else {  // by row tiles (each tile's rows, and so its sums, as on one thread)
    parallel_for(pool, m_tiles, [p = &P](int64_t t0, int64_t t1) {
      const int64_t i1 = t1 * kMR < p->M ? t1 * kMR : p->M;
      gemm_block(*p, t0 * kMR, i1 - t0 * kMR, 0, p->N);
    });
  }
#else
  (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)trans_a, (void)B, (void)beta, (void)C, (void)ldc,
      (void)row_bias, (void)epilogue, (void)offset_base, (void)pool;
#endif
}

}  // namespace kiln::rt
