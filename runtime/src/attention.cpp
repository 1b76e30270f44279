// Attention as row blocks x key chunks: for each block of up to kRows query rows of one head,
// the scores against kKeys keys at a time come from one GEMM, the online softmax rescales the
// running output, and a second GEMM adds probabilities x V. When all keys fit in one chunk
// (BERT-sized sequences) the probabilities are normalized first and the second GEMM writes
// Y directly.
#include "kiln/rt/attention.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

constexpr int64_t kRows = 64;
constexpr int64_t kKeys = 512;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// exp(x - shift) of one element (Cephes' expf: x = n ln 2 + r with |r| <= ln 2 / 2, a degree-7
// polynomial for e^r, 2^n from the exponent bits; within 2 ulp). Inputs below -87.3 (masked
// keys at -inf included) give exactly 0.
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kExpLow = -87.3f;
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

float exp_one(float x0) {
  const float x = x0 < kExpLow ? kExpLow : x0;
  const float fx = x * kLog2e + 0.5f;
  int32_t i = static_cast<int32_t>(fx);
  i -= static_cast<float>(i) > fx ? 1 : 0;  // floor
  const float fi = static_cast<float>(i);
  const float r = x - fi * kLn2Hi - fi * kLn2Lo;
  float p = kExpPoly[0];
  for (int c = 1; c < 6; ++c) p = p * r + kExpPoly[c];
  const float e = p * r * r + r + 1.f;
  const int32_t bits = (i + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x0 < kExpLow ? 0.f : e * scale;
}

#if defined(__GNUC__) || defined(__clang__)
// Eight lanes at a time with the vector extensions: GCC does not vectorize exp_one's loop (it
// reads the selects and the exponent bits as control flow). Written out in the loops below,
// not as functions: a function taking or returning a vector changes ABI with the ISA flags.
typedef float vf8 __attribute__((vector_size(8 * sizeof(float))));
typedef int32_t vi8 __attribute__((vector_size(8 * sizeof(int32_t))));
#define KILN_SELECT8(mask, a, b) \
  reinterpret_cast<vf8>(((mask) & reinterpret_cast<vi8>(a)) | (~(mask) & reinterpret_cast<vi8>(b)))
#endif

// row[t] = exp(row[t] - shift) for a row; returns the row's sum.
float exp_row(float* row, int64_t n, float shift) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t t = 0;
#if defined(__GNUC__) || defined(__clang__)
  vf8 sum8 = {};
  const vf8 low = vf8{} + kExpLow, zero = {};
  for (; t + 8 <= n; t += 8) {
    // The steps of exp_one.
    vf8 x0;
    std::memcpy(&x0, row + t, sizeof x0);
    x0 -= shift;
    const vi8 under = x0 < low;
    const vf8 x = KILN_SELECT8(under, low, x0);
    const vf8 fx = x * kLog2e + 0.5f;
    vi8 i = __builtin_convertvector(fx, vi8);
    i += __builtin_convertvector(i, vf8) > fx;  // floor: a true lane is -1
    const vf8 fi = __builtin_convertvector(i, vf8);
    const vf8 r = x - fi * kLn2Hi - fi * kLn2Lo;
    vf8 p = vf8{} + kExpPoly[0];
    for (int c = 1; c < 6; ++c) p = p * r + kExpPoly[c];
    const vf8 scale = reinterpret_cast<vf8>((i + 127) << 23);
    const vf8 e = KILN_SELECT8(under, zero, (p * r * r + r + 1.f) * scale);
    std::memcpy(row + t, &e, sizeof e);
    sum8 += e;
  }
  std::memcpy(acc, &sum8, sizeof acc);
#else
  for (; t + 8 <= n; t += 8)
    for (int j = 0; j < 8; ++j) acc[j] += row[t + j] = exp_one(row[t + j] - shift);
#endif
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; t < n; ++t) sum += row[t] = exp_one(row[t] - shift);
  return sum;
}

// Largest element, NaN ignored (-inf for an empty or all -inf row).
float max_row(const float* row, int64_t n) {
  float acc[8] = {kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf};
  int64_t t = 0;
#if defined(__GNUC__) || defined(__clang__)
  vf8 max8 = vf8{} + kNegInf;
  for (; t + 8 <= n; t += 8) {
    vf8 v;
    std::memcpy(&v, row + t, sizeof v);
    max8 = KILN_SELECT8(v > max8, v, max8);
  }
  std::memcpy(acc, &max8, sizeof acc);
#else
  for (; t + 8 <= n; t += 8)
    for (int j = 0; j < 8; ++j) acc[j] = row[t + j] > acc[j] ? row[t + j] : acc[j];
#endif
  float max = kNegInf;
  for (int j = 0; j < 8; ++j) max = acc[j] > max ? acc[j] : max;
  for (; t < n; ++t) max = row[t] > max ? row[t] : max;
  return max;
}

// Nothing but the scores goes into the softmax: no mask, softcap or copy.
bool plain(const AttentionParams& p) {
  const AttentionMask& mk = p.mask;
  return !mk.bias && !mk.allow && !mk.causal && !mk.nonpad_kv_seqlen && !(p.softcap > 0.f) && !p.scores;
}

// Working memory of one thread: scores, running output and per-row softmax state.
struct Work {
  float* scores;  // rows x chunk
  float* out;     // rows x v_head_dim (only with several chunks)
  float* row_max;
  float* row_sum;
  unsigned char* seen;  // some key of the row is not masked
};

// Position of one block: batch b, query head h, query rows [i0, i0 + rows).
struct Block {
  int64_t b, h, i0, rows;
};

// Turns row `r` (query i) of a chunk of raw scores into softcapped, biased scores, copying
// the stages the caller asked for into p.scores. Returns the row's maximum.
float bias_row(const AttentionParams& p, const Block& blk, int64_t i, int64_t j0, int64_t n, float* row,
               unsigned char& seen) {
  if (plain(p)) {
    seen = 1;
    return max_row(row, n);
  }
  const AttentionMask& mk = p.mask;
  if (mk.bias && mk.stride[3] == 1 && j0 + n <= mk.keys && !mk.allow && !mk.causal && !mk.nonpad_kv_seqlen &&
      !(p.softcap > 0.f) && !p.scores) {
    // Only an additive bias contiguous along the keys (a padding mask): one vector loop. A
    // row whose maximum is -inf ends as zeros whatever `seen` says, so the maximum decides it.
    const float* bias = mk.bias + blk.b * mk.stride[0] + blk.h * mk.stride[1] + i * mk.stride[2] + j0;
    for (int64_t t = 0; t < n; ++t) row[t] += bias[t];
    const float max = max_row(row, n);
    if (max != kNegInf) seen = 1;
    return max;
  }
  float* copy = p.scores ? p.scores + ((blk.b * p.q_heads + blk.h) * p.q_len + i) * p.kv_len + j0 : nullptr;
  const int64_t valid = mk.nonpad_kv_seqlen ? mk.nonpad_kv_seqlen[blk.b] : p.kv_len;
  const int64_t offset = mk.nonpad_kv_seqlen ? valid - p.q_len : mk.causal_offset;
  const int64_t mask_base = blk.b * mk.stride[0] + blk.h * mk.stride[1] + i * mk.stride[2];
  const float cap = p.softcap;
  float max = kNegInf;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t j = j0 + t;
    float s = row[t];
    if (cap > 0.f) s = cap * std::tanh(s / cap);
    if (copy && p.scores_mode <= AttentionScores::Softcapped) copy[t] = s;
    float bias = 0.f;
    if (mk.bias) bias = j < mk.keys ? mk.bias[mask_base + j * mk.stride[3]] : kNegInf;
    if (mk.allow) bias = j < mk.keys && mk.allow[mask_base + j * mk.stride[3]] ? 0.f : kNegInf;
    if (mk.causal && j > i + offset) bias += kNegInf;
    if (j >= valid) bias += kNegInf;
    if (bias != kNegInf) seen = 1;
    s += bias;
    if (copy && p.scores_mode == AttentionScores::Biased) copy[t] = s;
    row[t] = s;
    if (s > max) max = s;
  }
  return max;
}

__attribute__((always_inline)) inline void attend_block(const AttentionParams& p, const float* q, const float* k,
                                                       const float* v, float* y, const Block& blk, int64_t chunk,
                                                       const Work& w) {
  const int64_t kvh = blk.h / (p.q_heads / p.kv_heads);
  const float* qb = q + blk.b * p.q.batch + blk.h * p.q.head + blk.i0 * p.q.seq;
  const float* kb = k + blk.b * p.k.batch + kvh * p.k.head;
  const float* vb = v + blk.b * p.v.batch + kvh * p.v.head;
  float* yb = y + blk.b * p.y.batch + blk.h * p.y.head + blk.i0 * p.y.seq;
  const int64_t m = blk.rows, dv = p.v_head_dim;
  const bool single = chunk >= p.kv_len;
  for (int64_t r = 0; r < m; ++r) {
    w.row_max[r] = kNegInf;
    w.row_sum[r] = 0.f;
    w.seen[r] = 0;
  }
  for (int64_t j0 = 0; j0 < p.kv_len; j0 += chunk) {
    const int64_t n = p.kv_len - j0 < chunk ? p.kv_len - j0 : chunk;
    gemm_f32(false, true, m, n, p.head_dim, p.scale, qb, p.q.seq, kb + j0 * p.k.seq, p.k.seq, 0.f, w.scores, n,
             nullptr);
    for (int64_t r = 0; r < m; ++r) {
      float* row = w.scores + r * n;
      const float cmax = bias_row(p, blk, blk.i0 + r, j0, n, row, w.seen[r]);
      const float old_max = w.row_max[r];
      const float new_max = cmax > old_max ? cmax : old_max;
      float alpha = 1.f;
      if (new_max == kNegInf) {
        for (int64_t t = 0; t < n; ++t) row[t] = 0.f;
      } else {
        alpha = std::exp(old_max - new_max);
        const float sum = exp_row(row, n, new_max);
        w.row_sum[r] = w.row_sum[r] * alpha + sum;
        w.row_max[r] = new_max;
      }
      if (single) {
        // Normalize now; a row with every key masked (or no weight at all) gets zeros.
        const float inv = w.seen[r] && w.row_sum[r] > 0.f ? 1.f / w.row_sum[r] : 0.f;
        for (int64_t t = 0; t < n; ++t) row[t] *= inv;
        if (p.scores && p.scores_mode == AttentionScores::Softmax) {
          float* copy = p.scores + ((blk.b * p.q_heads + blk.h) * p.q_len + blk.i0 + r) * p.kv_len;
          for (int64_t t = 0; t < n; ++t) copy[t] = row[t];
        }
      } else if (j0 > 0 && alpha != 1.f) {
        for (int64_t c = 0; c < dv; ++c) w.out[r * dv + c] *= alpha;
      }
    }
    if (single) {
      gemm_f32(false, false, m, dv, n, 1.f, w.scores, n, vb, p.v.seq, 0.f, yb, p.y.seq, nullptr);
      return;
    }
    gemm_f32(false, false, m, dv, n, 1.f, w.scores, n, vb + j0 * p.v.seq, p.v.seq, j0 == 0 ? 0.f : 1.f, w.out, dv,
             nullptr);
  }
  for (int64_t r = 0; r < m; ++r) {
    const float inv = w.seen[r] && w.row_sum[r] > 0.f ? 1.f / w.row_sum[r] : 0.f;
    for (int64_t c = 0; c < dv; ++c) yb[r * p.y.seq + c] = w.out[r * dv + c] * inv;
  }
}

// attend_block compiled for the build's baseline and, chosen at run time, for AVX2+FMA (the
// softmax loops inlined into it, so that their vf8 operations are compiled for it: built for
// x86-64's SSE2 alone, BERT-base's attention took 6% of its time at one thread against 1% so).
__attribute__((flatten)) void attend_block_baseline(const AttentionParams& p, const float* q, const float* k,
                                                    const float* v, float* y, const Block& blk, int64_t chunk,
                                                    const Work& w) {
  attend_block(p, q, k, v, y, blk, chunk, w);
}

#if KILN_X86_KERNELS
KILN_AVX2_FMA __attribute__((flatten)) void attend_block_avx2(const AttentionParams& p, const float* q, const float* k,
                                                              const float* v, float* y, const Block& blk,
                                                              int64_t chunk, const Work& w) {
  attend_block(p, q, k, v, y, blk, chunk, w);
}
#endif

}  // namespace

bool attention_f32(const AttentionParams& p, const float* q, const float* k, const float* v, float* y,
                   ThreadPool* pool) noexcept {
  if (p.batch <= 0 || p.q_heads <= 0 || p.q_len <= 0 || p.v_head_dim <= 0) return true;
  if (p.kv_len <= 0 || p.kv_heads <= 0) {
    // No keys: every row is fully masked.
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.q_heads; ++h)
        for (int64_t i = 0; i < p.q_len; ++i)
          for (int64_t c = 0; c < p.v_head_dim; ++c) y[b * p.y.batch + h * p.y.head + i * p.y.seq + c] = 0.f;
    return true;
  }
  // The softmax copy needs whole rows normalized at once: one chunk of all keys.
  const bool whole_rows = p.scores && p.scores_mode == AttentionScores::Softmax;
  const int64_t chunk = whole_rows || p.kv_len <= kKeys ? p.kv_len : kKeys;
  const int64_t rows = p.q_len < kRows ? p.q_len : kRows;
  const int64_t blocks = (p.q_len + rows - 1) / rows;
  const size_t floats = static_cast<size_t>(rows * chunk + (chunk < p.kv_len ? rows * p.v_head_dim : 0) + 3 * rows);
  std::atomic<bool> ok{true};
  [[maybe_unused]] const bool avx2 = cpu_has_avx2_fma();
  parallel_for(pool, p.batch * p.q_heads * blocks, [&](int64_t t0, int64_t t1) {
    auto* mem = static_cast<float*>(thread_buffer(ThreadBuffer::attention, floats * sizeof(float)));
    if (mem == nullptr) {
      ok = false;
      return;
    }
    Work w{mem, mem + rows * chunk, nullptr, nullptr, nullptr};
    w.row_max = w.out + (chunk < p.kv_len ? rows * p.v_head_dim : 0);
    w.row_sum = w.row_max + rows;
    w.seen = reinterpret_cast<unsigned char*>(w.row_sum + rows);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t blk = t % blocks, bh = t / blocks;
      const int64_t i0 = blk * rows;
      const Block block{bh / p.q_heads, bh % p.q_heads, i0, p.q_len - i0 < rows ? p.q_len - i0 : rows};
#if KILN_X86_KERNELS
      if (avx2) {
        attend_block_avx2(p, q, k, v, y, block, chunk, w);
        continue;
      }
#endif
      attend_block_baseline(p, q, k, v, y, block, chunk, w);
    }
  });
  return ok;
}

void attention_concat_kv_f32(int64_t batch, int64_t heads, int64_t past_len, int64_t new_len, int64_t dim,
                             const float* past, const float* cur, AttentionLayout cur_layout,
                             float* present) noexcept {
  const int64_t total = past_len + new_len;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      float* dst = present + (b * heads + h) * total * dim;
      const float* src = past + (b * heads + h) * past_len * dim;
      for (int64_t i = 0; i < past_len * dim; ++i) dst[i] = src[i];
      dst += past_len * dim;
      for (int64_t t = 0; t < new_len; ++t) {
        const float* row = cur + b * cur_layout.batch + h * cur_layout.head + t * cur_layout.seq;
        for (int64_t c = 0; c < dim; ++c) dst[t * dim + c] = row[c];
      }
    }
}

}  // namespace kiln::rt
