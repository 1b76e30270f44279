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

namespace {

// A B packed by gemm_bf16_pack_b as a plain K x N matrix of floats (exact), or false when out
// of memory.
bool unpack_b(int64_t K, int64_t N, const uint16_t* packed, std::vector<float>& plain) {
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
  return true;
}

ConvNchwcParams one_by_one(int64_t C, int64_t M) { return ConvNchwcParams{1, C, 1, 1, M, 1, 1, 1, 1, 1, 1, 0, 0}; }

}  // namespace

bool gemm_bf16_widen_b(int64_t K, int64_t N, const uint16_t* packed, float* f32_packed) noexcept {
  if (K <= 0 || N <= 0) return true;
  // Through a plain K x N matrix, so that gemm_f32_pack_b alone knows its own layout.
  std::vector<float> plain;
  if (!unpack_b(K, N, packed, plain)) return false;
  gemm_f32_pack_b(false, K, N, plain.data(), N, f32_packed);
  return true;
}

bool conv_nchwc_bf16_applicable(const ConvNchwcParams& p) noexcept {
  return conv_nchwc_applicable(p) && !p.x_nchw && p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 &&
         p.pad_top == 0 && p.pad_left == 0 && p.OH == p.H && p.OW == p.W;
}

size_t conv_nchwc_bf16_packed_halves(const ConvNchwcParams& p) noexcept { return gemm_bf16_packed_b_halves(p.C, p.M); }

void conv_nchwc_bf16_pack_weights(const ConvNchwcParams& p, const float* w, uint16_t* packed) noexcept {
  gemm_bf16_pack_b(true, p.C, p.M, w, p.C, packed);  // B = W^T: [M, C] read transposed
}

bool conv_nchwc_bf16_widen_weights(const ConvNchwcParams& p, const uint16_t* packed, float* f32_packed) noexcept {
  std::vector<float> plain, w;
  if (!unpack_b(p.C, p.M, packed, plain)) return false;
  try {
    w.resize(plain.size());
  } catch (...) {
    return false;
  }
  for (int64_t c = 0; c < p.C; ++c)
    for (int64_t m = 0; m < p.M; ++m) w[static_cast<size_t>(m * p.C + c)] = plain[static_cast<size_t>(c * p.M + m)];
  conv_nchwc_pack_weights(one_by_one(p.C, p.M), w.data(), f32_packed);
  return true;
}

size_t gemm_bf16_widened_floats(const WidenGemmB& r) noexcept {
  return r.conv ? static_cast<size_t>(r.K * r.N) : gemm_f32_packed_b_floats(r.K, r.N);
}

bool widen_gemm_b_weights(const unsigned char* weights, unsigned char* widened, const WidenGemmB* ranges,
                          size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) {
    const WidenGemmB& r = ranges[i];
    const auto* halves = reinterpret_cast<const uint16_t*>(weights + r.from);
    auto* floats = reinterpret_cast<float*>(widened + r.to);
    if (!(r.conv ? conv_nchwc_bf16_widen_weights(one_by_one(r.K, r.N), halves, floats)
                 : gemm_bf16_widen_b(r.K, r.N, halves, floats)))
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
// last K block (`last`), the row or column bias, the residual, and a clamp or ReLU (the
// epilogue's promises, as gemm.cpp's StoreOps; a blocked convolution's activation). A tile's
// second 16 columns lie cblock floats after its first: 16 in a plain C, a plane of 16-channel
// blocks in an NCHW16c output. The residual is laid out as C.
struct TileStore {
  float alpha, beta;
  bool last;
  const float* bias;      // of the tile's first row, or nullptr
  const float* col_bias;  // of the tile's first column, or nullptr
  const float* add;       // the residual at the tile's first element, or nullptr
  int64_t cblock;
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
      float* row = c + i * ldc + h * s.cblock;
      __m512 v = acc[0][i][h];
      if (s.alpha != 1.f) v = _mm512_mul_ps(v, alpha);
      if (s.beta != 0.f) {
        const __m512 old = _mm512_maskz_loadu_ps(mask[h], row);
        v = s.beta == 1.f ? _mm512_add_ps(v, old) : _mm512_fmadd_ps(beta, old, v);
      }
      if (s.last) {
        if (s.bias) v = _mm512_add_ps(v, _mm512_set1_ps(s.bias[i]));
        if (s.col_bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[h], s.col_bias + h * 16));
        if (s.add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[h], s.add + i * ldc + h * s.cblock));
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
// nearest even, denormals to zero) into rows of kcp halves (a zero after an odd kc). With
// a_block > 0, A is an NCHW16c image read as positions x channels: row q, column c at
// A[c / 16 * a_block + q * 16 + c % 16] (pc and kc multiples of 16).
KILN_BF16_TARGET void pack_a(const float* A, int64_t lda, bool trans_a, int64_t a_block, int64_t i0, int64_t m,
                             int64_t pc, int64_t kc, int64_t kcp, uint16_t* out, float* gather) {
  for (int64_t i = 0; i < m; ++i) {
    uint16_t* dst = out + i * kcp;
    if (a_block > 0) {
      const float* src = A + pc / 16 * a_block + (i0 + i) * 16;
      for (int64_t t = 0; t < kc; t += 32) {
        const __m512 lo = _mm512_loadu_ps(src + t / 16 * a_block);
        const __m512 hi = t + 16 < kc ? _mm512_loadu_ps(src + (t / 16 + 1) * a_block) : _mm512_setzero_ps();
        const __m512bh h = _mm512_cvtne2ps_pbh(hi, lo);
        _mm512_mask_storeu_epi16(dst + t, t + 16 < kc ? 0xFFFFFFFFu : 0xFFFFu, (__m512i)h);
      }
      continue;
    }
    const float* src = A + (i0 + i) * lda + pc;
    if (trans_a) {  // column i0 + i of the stored K x M matrix
      for (int64_t k = 0; k < kc; ++k) gather[k] = A[(pc + k) * lda + i0 + i];
      src = gather;
    }
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

// One product: C (rows ldc apart, 16-column blocks cblock floats apart) = alpha * bf16(A) B +
// beta * C, then the store's bias, residual (laid out as C) and clamp or ReLU, then `ep`'s
// generic function (plain C only).
struct Problem {
  int64_t M, N, K;
  float alpha;
  const float* A;
  int64_t lda;
  bool trans_a;
  int64_t a_block;  // > 0: A is an NCHW16c image (pack_a)
  const uint16_t* B;
  float beta;
  float* C;
  int64_t ldc, cblock;
  const float* row_bias;  // M floats, or nullptr
  const float* col_bias;  // N floats, or nullptr
  const float* residual;  // element (i, j) at residual + i * ldc + j / 16 * cblock + j % 16, or nullptr
  bool clamp, relu;
  float lo, hi;
  const Epilogue* ep;  // a generic epilogue called on finished rows (offsets from base), or nullptr
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
    const bool last = pc + kc >= P.K;
    TileStore s{P.alpha, pc == 0 ? P.beta : 1.f, last, nullptr, nullptr, nullptr, P.cblock,
                last && P.clamp, P.lo, P.hi, last && P.relu};
    for (int64_t ic = r0; ic < r0 + m; ic += mc_block) {
      const int64_t mc = r0 + m - ic < mc_block ? r0 + m - ic : mc_block;
      pack_a(P.A, P.lda, P.trans_a, P.a_block, ic, mc, pc, kc, kcp, buf, gather);
      for (int64_t jr = j0; jr < j0 + n; jr += kNR) {
        const int64_t nr = j0 + n - jr < kNR ? j0 + n - jr : kNR;
        const uint16_t* bp = b_panel(P.B, P.N, pc, kcp, jr);
        const int64_t c_off = jr / 16 * P.cblock;  // column jr, a multiple of 16
        for (int64_t ir = 0; ir < mc; ir += kMR) {
          const int64_t mr = mc - ir < kMR ? mc - ir : kMR;
          const int64_t i = ic + ir;
          if (last) {
            s.bias = P.row_bias ? P.row_bias + i : nullptr;
            s.col_bias = P.col_bias ? P.col_bias + jr : nullptr;
            s.add = P.residual ? P.residual + i * P.ldc + c_off : nullptr;
          }
          kTiles[mr](kcp / 2, buf + ir * kcp, kcp, bp, P.C + i * P.ldc + c_off, P.ldc, nr, s);
        }
        // A generic epilogue on each group of kFinishCols final columns, while in cache.
        const int64_t done = jr + nr - j0;
        if (last && ep != nullptr && (done % kFinishCols == 0 || done == n)) {
          const int64_t f0 = j0 + (done - 1) / kFinishCols * kFinishCols, fn = j0 + done - f0;
          for (int64_t i = ic; i < ic + mc; ++i) ep->fn(ep->ctx, P.C + i * P.ldc + f0, P.base + i * P.ldc + f0, fn);
        }
      }
    }
  }
}

// The whole product (K > 0), split across the pool's threads by column panels or row tiles
// (each tile's rows, and so its sums, as on one thread).
void gemm_run(const Problem& P, ThreadPool* pool) {
  const int threads = pool ? pool->size() : 1;
  const double flops = 2.0 * static_cast<double>(P.M) * static_cast<double>(P.N) * static_cast<double>(P.K);
  const int64_t m_tiles = (P.M + kMR - 1) / kMR, n_panels = (P.N + kNR - 1) / kNR;
  if (threads == 1 || flops < 2.0e5) {
    gemm_block(P, 0, P.M, 0, P.N);
  } else if (n_panels >= m_tiles) {
    parallel_for(pool, n_panels, [p = &P](int64_t t0, int64_t t1) {
      const int64_t j1 = t1 * kNR < p->N ? t1 * kNR : p->N;
      gemm_block(*p, 0, p->M, t0 * kNR, j1 - t0 * kNR);
    });
  } else {
    parallel_for(pool, m_tiles, [p = &P](int64_t t0, int64_t t1) {
      const int64_t i1 = t1 * kMR < p->M ? t1 * kMR : p->M;
      gemm_block(*p, t0 * kMR, i1 - t0 * kMR, 0, p->N);
    });
  }
}

}  // namespace
#endif

bool gemm_bf16_native() noexcept {
#if KILN_GEMM_BF16
  static const bool native = [] {
    if (!cpu_has_avx512_bf16()) return false;
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
  if (K <= 0) {  // no products: C = beta * C, then the bias and epilogue (one pass, no tiles)
    for (int64_t i = 0; i < M; ++i) {
      float* row = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) row[j] = (beta == 0.f ? 0.f : beta * row[j]) + (row_bias ? row_bias[i] : 0.f);
      if (ep) ep->fn(ep->ctx, row, offset_base + i * ldc, N);
    }
    return;
  }
  // The epilogue's promises are applied in the tile's store (then its function is not called).
  const bool in_kernel = ep != nullptr && (ep->fn_is_clamp || ep->fn_is_relu || ep->residual != nullptr);
  Problem P{};
  P.M = M, P.N = N, P.K = K, P.alpha = alpha, P.A = A, P.lda = lda, P.trans_a = trans_a, P.B = B, P.beta = beta;
  P.C = C, P.ldc = ldc, P.cblock = 16, P.row_bias = row_bias;
  if (in_kernel) {
    P.residual = ep->residual ? ep->residual + offset_base : nullptr;
    P.clamp = ep->fn_is_clamp;
    P.relu = !ep->fn_is_clamp && ep->fn_is_relu;
    P.lo = ep->clamp_lo;
    P.hi = ep->clamp_hi;
  } else {
    P.ep = ep;
  }
  P.base = offset_base;
  gemm_run(P, pool);
#else
  (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)trans_a, (void)B, (void)beta, (void)C, (void)ldc,
      (void)row_bias, (void)epilogue, (void)offset_base, (void)pool;
#endif
}

void conv_nchwc_bf16(const ConvNchwcParams& p, const float* x, const uint16_t* packed_w, const float* bias,
                     const float* z, const StoreActivation& act, float* y, ThreadPool* pool) noexcept {
#if KILN_GEMM_BF16
  const int64_t HW = p.H * p.W;
  for (int64_t n = 0; n < p.N; ++n) {
    // The image's positions are the rows of A and of C, its channels their columns.
    Problem P{};
    P.M = HW, P.N = p.M, P.K = p.C, P.alpha = 1.f, P.beta = 0.f;
    P.A = x + n * p.C * HW, P.a_block = HW * kNchwcBlock;
    P.B = packed_w;
    P.C = y + n * p.M * HW, P.ldc = kNchwcBlock, P.cblock = HW * kNchwcBlock;
    P.col_bias = bias;
    P.residual = z ? z + n * p.M * HW : nullptr;
    P.clamp = act.kind == StoreActivation::kClamp;
    P.relu = act.kind == StoreActivation::kRelu;
    P.lo = act.lo;
    P.hi = act.hi;
    gemm_run(P, pool);
  }
#else
  (void)p, (void)x, (void)packed_w, (void)bias, (void)z, (void)act, (void)y, (void)pool;
#endif
}

}  // namespace kiln::rt
