// RNN, GRU and LSTM, one direction at a time: XW = X W^T + biases for every step in one GEMM,
// then per step HR = H R^T (one product for the whole batch, over R packed at compile time or,
// with a batch, once per direction per run; see RLayout) and the cell's elementwise update.
// Each batch entry runs its own sequence length: a reverse direction starts at its last step.
#include "kiln/rt/recurrent.h"

#include <cmath>

#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/vector_math.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

float activate(const RnnFunc& f, float x) {
  switch (f.kind) {
    case RnnActivation::Relu: return x > 0.f ? x : 0.f;
    case RnnActivation::Tanh: return tanh_f32(x);
    case RnnActivation::Sigmoid: return sigmoid_f32(x);
    case RnnActivation::Affine: return f.alpha * x + f.beta;
    case RnnActivation::LeakyRelu: return x >= 0.f ? x : f.alpha * x;
    case RnnActivation::ThresholdedRelu: return x > f.alpha ? x : 0.f;
    case RnnActivation::ScaledTanh: return f.alpha * tanh_f32(f.beta * x);
    case RnnActivation::HardSigmoid: {
      const float v = f.alpha * x + f.beta;
      return v < 0.f ? 0.f : v > 1.f ? 1.f : v;
    }
    case RnnActivation::Elu: return x >= 0.f ? x : f.alpha * (std::exp(x) - 1.f);
    case RnnActivation::Softsign: return x / (1.f + std::fabs(x));
    case RnnActivation::Softplus: return std::log1p(std::exp(x));
  }
  return x;
}

// v[k] = f(v[k]) for k < n. The switch sits outside the loops so that the common activations
// (sigmoid, tanh, relu) run as loops of plain arithmetic that vectorize.
void activate_n(const RnnFunc& f, float* __restrict v, int64_t n) {
  switch (f.kind) {
    case RnnActivation::Sigmoid:
      for (int64_t k = 0; k < n; ++k) v[k] = sigmoid_f32(v[k]);
      return;
    case RnnActivation::Tanh:
      for (int64_t k = 0; k < n; ++k) v[k] = tanh_f32(v[k]);
      return;
    case RnnActivation::Relu:
      for (int64_t k = 0; k < n; ++k) v[k] = v[k] > 0.f ? v[k] : 0.f;
      return;
    default:
      for (int64_t k = 0; k < n; ++k) v[k] = activate(f, v[k]);
  }
}

struct Scratch {
  float* xw;  // [seq * batch, gates * hidden], rows in X's order
  float* hr;  // [batch, gates * hidden]
  float* h;   // [batch, hidden]
  float* c;   // [batch, hidden]
  float* rh;  // [batch, hidden]: GRU's r * H
};

// How one direction's R is laid out for the step products H R^T.
enum class RLayout {
  // As stored, through gemm_f32: at batch 1 its GEMV over rows of R (8 rows at a time).
  Plain,
  // The GEMM's packed B (gemm_f32_pack_b). A batch of more than one sequence runs each step
  // through the GEMM's register tiles, which would repack all of R (4 MB for hidden 512) at
  // every step: R is packed once per direction instead, by rnn_f32 or at compile time.
  GemmB,
  // Batch 1, packed at compile time: blocks of 8 rows of R (the last padded with zero rows),
  // each as H / 8 steps (rounded up, zero-padded) of 8 columns of its 8 rows, so that the GEMV
  // reads one contiguous stream instead of 8 rows H floats apart.
  Rows8,
};

// Only the compiler, which packs once, uses Rows8: rnn_f32 at batch 1 reads R as stored and
// needs no scratch for it. (Packing hidden 512's R per run would cost ~0.3 ms a direction
// against ~20 us a step saved, so it would pay from ~15 steps on; not done.)
RLayout r_layout(const RnnParams& p, bool prepacked) {
  if (p.batch > 1) return RLayout::GemmB;
  return prepacked ? RLayout::Rows8 : RLayout::Plain;
}

// The step products: GRU without linear_before_reset multiplies rows [0, 2H) of R by H and rows
// [2H, 3H) by r * H, two products packed one after the other; other cells use all of R.
bool gru_split(const RnnParams& p) { return p.cell == RnnCell::Gru && !p.linear_before_reset; }

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Floats of one product's part of R (`rows` rows of H) packed in `layout`, a multiple of
// kGemmF32AlignFloats so that each part starts as aligned as the first.
size_t part_floats(RLayout layout, int64_t rows, int64_t H) {
  size_t n = 0;
  switch (layout) {
    case RLayout::Plain: return 0;
    case RLayout::GemmB: n = gemm_f32_packed_b_floats(H, rows); break;
    case RLayout::Rows8: n = static_cast<size_t>(round_up(rows, 8) * round_up(H, 8)); break;
  }
  const size_t a = static_cast<size_t>(kGemmF32AlignFloats);
  return (n + a - 1) / a * a;
}

// Rows of R in each step product: {2H, H} (gru_split) or {G}.
struct Parts {
  int64_t rows[2];
  int count;
};
Parts parts_of(const RnnParams& p) {
  const int64_t H = p.hidden;
  if (gru_split(p)) return {{2 * H, H}, 2};
  return {{rnn_gates(p.cell) * H, 0}, 1};
}

size_t direction_floats(const RnnParams& p, RLayout layout) {
  const Parts parts = parts_of(p);
  size_t n = 0;
  for (int i = 0; i < parts.count; ++i) n += part_floats(layout, parts.rows[i], p.hidden);
  return n;
}

void pack_rows8(const float* r, int64_t rows, int64_t H, float* out) {
  const int64_t steps = round_up(H, 8) / 8;
  for (int64_t j0 = 0; j0 < rows; j0 += 8)
    for (int64_t s = 0; s < steps; ++s)
      for (int64_t q = 0; q < 8; ++q)
        for (int64_t k = s * 8; k < s * 8 + 8; ++k) *out++ = j0 + q < rows && k < H ? r[(j0 + q) * H + k] : 0.f;
}

// One direction's R [G, H] packed in `layout` (not Plain), its parts one after the other: what
// rnn_f32 does on each run with a batch and rnn_pack_r at compile time.
void pack_direction(const RnnParams& p, RLayout layout, const float* r, float* out) {
  const Parts parts = parts_of(p);
  const int64_t H = p.hidden;
  for (int i = 0; i < parts.count; ++i) {
    const int64_t rows = parts.rows[i];
    if (layout == RLayout::GemmB)
      gemm_f32_pack_b(true, H, rows, r, H, out);
    else if (layout == RLayout::Rows8)
      pack_rows8(r, rows, H, out);
    r += rows * H;
    out += part_floats(layout, rows, H);
  }
}

// y[q] = a . row q of one Rows8 block, for q < 8: lane l of each sum gathers the columns
// k = l mod 8, and the lanes are summed pairwise (as gemm_f32's GEMV sums its rows). `a` has H
// floats; its last partial step is read through a zero-padded copy.
using Rows8BlockFn = void (*)(const float* a, int64_t H, const float* block, float* y);

void rows8_block_portable(const float* a, int64_t H, const float* block, float* y) {
  float s[8][8] = {};
  for (int64_t k = 0; k < H; k += 8, block += 64) {
    float av[8] = {};
    for (int64_t l = 0; l < 8 && k + l < H; ++l) av[l] = a[k + l];
    for (int q = 0; q < 8; ++q)
      for (int l = 0; l < 8; ++l) s[q][l] += av[l] * block[q * 8 + l];
  }
  for (int q = 0; q < 8; ++q) {
    const float* t = s[q];
    y[q] = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  }
}

#if KILN_X86_KERNELS
KILN_AVX2_FMA void rows8_block_avx2_fma(const float* a, int64_t H, const float* block, float* y) {
  __m256 acc[8];
  for (int q = 0; q < 8; ++q) acc[q] = _mm256_setzero_ps();
  float tail[8] = {};
  for (int64_t k = 0; k < H; k += 8, block += 64) {
    const float* ak = a + k;
    if (k + 8 > H) {
      for (int64_t l = 0; k + l < H; ++l) tail[l] = a[k + l];
      ak = tail;
    }
    const __m256 av = _mm256_loadu_ps(ak);
    for (int q = 0; q < 8; ++q) acc[q] = _mm256_fmadd_ps(av, _mm256_loadu_ps(block + q * 8), acc[q]);
  }
  // Each sum's lanes pairwise, all eight sums at once: ((l0 + l1) + (l2 + l3)) in the low half,
  // ((l4 + l5) + (l6 + l7)) in the high, then the halves.
  const __m256 t0 = _mm256_hadd_ps(acc[0], acc[1]), t1 = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 t2 = _mm256_hadd_ps(acc[4], acc[5]), t3 = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  _mm256_storeu_ps(y, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
}
#endif

Rows8BlockFn rows8_block_kernel() {
#if KILN_X86_KERNELS
  static const Rows8BlockFn fn = cpu_has_avx2_fma() ? rows8_block_avx2_fma : rows8_block_portable;
  return fn;
#else
  return rows8_block_portable;
#endif
}

// hr[0, N) = a R_part^T for R_part packed as Rows8 (N rows), split across the pool by blocks of
// 8 rows (each sum is computed the same way whatever the split).
void gemv_rows8(const float* a, int64_t H, const float* packed, int64_t N, float* hr, ThreadPool* pool) {
  struct Args {
    const float* a;
    int64_t H;
    const float* packed;
    int64_t N;
    float* hr;
    Rows8BlockFn fn;
  } args{a, H, packed, N, hr, rows8_block_kernel()};
  const int64_t blocks = round_up(N, 8) / 8;
  auto run = [p = &args](int64_t b0, int64_t b1) {
    const int64_t block_floats = 8 * round_up(p->H, 8);
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t j0 = blk * 8;
      if (j0 + 8 <= p->N) {
        p->fn(p->a, p->H, p->packed + blk * block_floats, p->hr + j0);
      } else {
        float y[8];
        p->fn(p->a, p->H, p->packed + blk * block_floats, y);
        for (int64_t q = 0; j0 + q < p->N; ++q) p->hr[j0 + q] = y[q];
      }
    }
  };
  // As gemm_f32: products this small run on one thread.
  if (2.0 * static_cast<double>(N) * static_cast<double>(H) < 2.0e5)
    run(0, blocks);
  else
    parallel_for(pool, blocks, run);
}

// hr[:, 0 : N] (rows G apart) = h R_part^T for one step: R_part is N rows of R, read as stored
// at r_rows (Plain) or packed at `packed`.
void step_product(const RnnParams& p, RLayout layout, const float* h, const float* r_rows, const float* packed,
                  int64_t N, float* hr, ThreadPool* pool) {
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  switch (layout) {
    case RLayout::Plain:
      gemm_f32(false, true, p.batch, N, H, 1.f, h, H, r_rows, H, 0.f, hr, G, pool);
      return;
    case RLayout::GemmB: {
      const GemmOperand a{h, H, false, false};
      const GemmOperand b{packed, 0, false, true};
      gemm_f32_ex(p.batch, N, H, 1.f, a, b, 0.f, hr, G, nullptr, Epilogue{}, 0, pool);
      return;
    }
    case RLayout::Rows8: gemv_rows8(h, H, packed, N, hr, pool); return;
  }
}

// One direction's R for the step products: as stored (r) and, unless Plain, packed (its parts).
struct RView {
  RLayout layout;
  const float* r;       // [G, H] as stored, or nullptr when only the packed form was given
  const float* first;   // packed rows [0, 2H) when gru_split, else all G rows
  const float* second;  // packed rows [2H, 3H) when gru_split
};

RView packed_view(const RnnParams& p, RLayout layout, const float* r, const float* packed) {
  RView v{layout, r, nullptr, nullptr};
  if (layout == RLayout::Plain) return v;
  v.first = packed;
  if (gru_split(p)) v.second = packed + part_floats(layout, 2 * p.hidden, p.hidden);
  return v;
}

// Where (t, b) lives in a [seq, batch, ...] or [batch, seq, ...] tensor, in rows.
int64_t row_of(const RnnParams& p, int64_t t, int64_t b) { return p.batch_first ? b * p.seq + t : t * p.batch + b; }
// Offset of a [dirs, batch, hidden] (or [batch, dirs, hidden]) state's row.
int64_t state_row(const RnnParams& p, int d, int64_t b) {
  return p.batch_first ? (b * p.directions + d) * p.hidden : (d * p.batch + b) * p.hidden;
}

float clipped(const RnnParams& p, float v) {
  if (p.clip > 0.f) return v < -p.clip ? -p.clip : v > p.clip ? p.clip : v;
  return v;
}

// dst[k] = clipped(a[k] + b[k]) for k < n, then the activation; dst may be b.
void gate(const RnnParams& p, const RnnFunc& f, const float* a, const float* b, float* dst, int64_t n) {
  if (p.clip > 0.f) {
    const float lo = -p.clip, hi = p.clip;
    for (int64_t k = 0; k < n; ++k) {
      const float v = a[k] + b[k];
      dst[k] = v < lo ? lo : (v > hi ? hi : v);
    }
  } else {
    for (int64_t k = 0; k < n; ++k) dst[k] = a[k] + b[k];
  }
  activate_n(f, dst, n);
}

// The LSTM everyone exports: sigmoid gates, tanh cell and output, no peepholes, clip or
// coupled input-forget gate. Its update runs as one loop of plain arithmetic that vectorizes.
bool plain_lstm(const RnnParams& p, const RnnFunc* fn, const float* peep) {
  return fn[0].kind == RnnActivation::Sigmoid && fn[1].kind == RnnActivation::Tanh &&
         fn[2].kind == RnnActivation::Tanh && peep == nullptr && p.clip <= 0.f && !p.input_forget;
}

// One step of plain_lstm's cell for hidden units [k0, k1) of one batch entry; gates in ONNX's
// order i, o, f, c, H apart.
void lstm_update(const float* __restrict xw, const float* __restrict hr, float* __restrict c, float* __restrict h,
                 int64_t H, int64_t k0, int64_t k1) {
  for (int64_t k = k0; k < k1; ++k) {
    const float i = sigmoid_f32(xw[k] + hr[k]);
    const float o = sigmoid_f32(xw[H + k] + hr[H + k]);
    const float f = sigmoid_f32(xw[2 * H + k] + hr[2 * H + k]);
    const float g = tanh_f32(xw[3 * H + k] + hr[3 * H + k]);
    const float ct = f * c[k] + i * g;
    c[k] = ct;
    h[k] = o * tanh_f32(ct);
  }
}

// What a step's cell update reads and writes (RNN and LSTM): the units of cell_update.
struct StepUpdate {
  const RnnParams* p;
  int d;
  bool backward;
  const RnnFunc* fn;
  const float* peep;
  const int32_t* seq_lens;
  const Scratch* s;
  float* y;
  int64_t step, parts;  // parts: chunks of hidden units per batch entry
};

// Hidden units [k0, k1) of batch entry b at u.step: the new h (and c), and their part of y.
void cell_update(const StepUpdate& u, int64_t b, int64_t k0, int64_t k1) {
  const RnnParams& p = *u.p;
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  const int64_t len = u.seq_lens ? u.seq_lens[b] : p.seq;
  if (u.step >= len) return;
  const int64_t t = u.backward ? len - 1 - u.step : u.step;
  const float* xw = u.s->xw + row_of(p, t, b) * G;
  const float* hr = u.s->hr + b * G;
  float* h = u.s->h + b * H;
  float* c = u.s->c + b * H;
  const RnnFunc* fn = u.fn;
  if (p.cell == RnnCell::Rnn) {
    gate(p, fn[0], xw + k0, hr + k0, h + k0, k1 - k0);
  } else if (plain_lstm(p, fn, u.peep)) {
    lstm_update(xw, hr, c, h, H, k0, k1);
  } else {
    const float* pi = u.peep;
    for (int64_t k = k0; k < k1; ++k) {
      const float ct_1 = c[k];
      const float i = activate(fn[0], clipped(p, xw[k] + hr[k] + (pi ? pi[k] * ct_1 : 0.f)));
      const float f = p.input_forget
                          ? 1.f - i
                          : activate(fn[0], clipped(p, xw[2 * H + k] + hr[2 * H + k] +
                                                            (pi ? pi[2 * H + k] * ct_1 : 0.f)));
      const float g = activate(fn[1], clipped(p, xw[3 * H + k] + hr[3 * H + k]));
      const float ct = f * ct_1 + i * g;
      const float o = activate(fn[0], clipped(p, xw[H + k] + hr[H + k] + (pi ? pi[H + k] * ct : 0.f)));
      c[k] = ct;
      h[k] = o * activate(fn[2], ct);
    }
  }
  if (u.y) {
    float* out = u.y + (p.batch_first ? ((b * p.seq + t) * p.directions + u.d) * H
                                      : ((t * p.directions + u.d) * p.batch + b) * H);
    for (int64_t k = k0; k < k1; ++k) out[k] = h[k];
  }
}

// Hidden units a unit of a step's update takes, and the batch x hidden from which the update
// is split across the pool: at batch 8 and hidden 512 it took ~15 us a step on the caller while
// the other thread waited (the step's product on two threads: ~90 us); at batch 1 a split would
// cost more than the 512 units' update.
constexpr int64_t kUpdateChunk = 256;
constexpr int64_t kSplitUpdate = 2048;

void run_direction(const RnnParams& p, int d, bool backward, const float* x, const float* w, const RView& rv,
                   const float* bias, const int32_t* seq_lens, const float* h0, const float* c0, const float* peep,
                   float* y, float* y_h, float* y_c, const Scratch& s, ThreadPool* pool) {
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  const RnnFunc* fn = p.funcs[d];
  // Input projection of every step, plus the biases that sit outside any product (rows split
  // across the pool: 4096 x 2048 adds for the LSTM at batch 8).
  gemm_f32(false, true, p.seq * p.batch, G, p.input, 1.f, x, p.input, w, p.input, 0.f, s.xw, G, pool);
  if (bias) {
    const struct {
      const RnnParams* p;
      const float* bias;
      float* xw;
    } ba{&p, bias, s.xw};
    parallel_for(pool, p.seq * p.batch, [a = &ba](int64_t r0, int64_t r1) {
      const int64_t H = a->p->hidden, G = rnn_gates(a->p->cell) * H;
      const float* wb = a->bias;
      const float* rb = a->bias + G;
      const bool gru_lbr = a->p->cell == RnnCell::Gru && a->p->linear_before_reset;
      for (int64_t row = r0; row < r1; ++row)
        for (int64_t g = 0; g < G; ++g) a->xw[row * G + g] += wb[g] + (gru_lbr && g >= 2 * H ? 0.f : rb[g]);
    });
  }
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t k = 0; k < H; ++k) {
      s.h[b * H + k] = h0 ? h0[state_row(p, d, b) + k] : 0.f;
      s.c[b * H + k] = c0 ? c0[state_row(p, d, b) + k] : 0.f;
    }
  const bool split = p.batch * H >= kSplitUpdate;
  StepUpdate update{&p, d, backward, fn, peep, seq_lens, &s, y, 0, (H + kUpdateChunk - 1) / kUpdateChunk};
  for (int64_t step = 0; step < p.seq; ++step) {
    // GRU (gru_split): z and r from H R^T; h from (r * H) R_h^T once r is known.
    step_product(p, rv.layout, s.h, rv.r, rv.first, gru_split(p) ? 2 * H : G, s.hr, pool);
    if (p.cell != RnnCell::Gru) {
      update.step = step;
      if (split) {
        parallel_for(pool, p.batch * update.parts, [u = &update](int64_t u0, int64_t u1) {
          const int64_t H = u->p->hidden;
          for (int64_t i = u0; i < u1; ++i) {
            const int64_t k0 = i % u->parts * kUpdateChunk;
            cell_update(*u, i / u->parts, k0, k0 + kUpdateChunk < H ? k0 + kUpdateChunk : H);
          }
        });
      } else {
        for (int64_t b = 0; b < p.batch; ++b) cell_update(update, b, 0, H);
      }
      continue;
    }
    // Gates z (0), r (1), h (2). r * H (or r * (H R_h^T + Rb_h)) feeds the h gate.
    const float* rb_h = bias ? bias + G + 2 * H : nullptr;
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = seq_lens ? seq_lens[b] : p.seq;
      if (step >= len) continue;
      const int64_t t = backward ? len - 1 - step : step;
      const float* xw = s.xw + row_of(p, t, b) * G;
      float* hr = s.hr + b * G;
      gate(p, fn[0], xw, hr, hr, 2 * H);  // z and r
      if (!p.linear_before_reset)
        for (int64_t k = 0; k < H; ++k) s.rh[b * H + k] = hr[H + k] * s.h[b * H + k];
    }
    if (!p.linear_before_reset)
      step_product(p, rv.layout, s.rh, rv.r ? rv.r + 2 * H * H : nullptr, rv.second, H, s.hr + 2 * H, pool);
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = seq_lens ? seq_lens[b] : p.seq;
      if (step >= len) continue;
      const int64_t t = backward ? len - 1 - step : step;
      const float* xw = s.xw + row_of(p, t, b) * G;
      const float* hr = s.hr + b * G;
      float* h = s.h + b * H;
      // The h gate's input goes to rh (free once its product is done), then ht into it.
      float* ht = s.rh + b * H;
      if (p.linear_before_reset)
        for (int64_t k = 0; k < H; ++k) ht[k] = hr[H + k] * (hr[2 * H + k] + (rb_h ? rb_h[k] : 0.f));
      else
        for (int64_t k = 0; k < H; ++k) ht[k] = hr[2 * H + k];
      gate(p, fn[1], xw + 2 * H, ht, ht, H);
      for (int64_t k = 0; k < H; ++k) h[k] = (1.f - hr[k]) * ht[k] + hr[k] * h[k];
    }
    if (y) {
      for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t len = seq_lens ? seq_lens[b] : p.seq;
        if (step >= len) continue;
        const int64_t t = backward ? len - 1 - step : step;
        float* out = y + (p.batch_first ? ((b * p.seq + t) * p.directions + d) * H
                                        : ((t * p.directions + d) * p.batch + b) * H);
        for (int64_t k = 0; k < H; ++k) out[k] = s.h[b * H + k];
      }
    }
  }
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t k = 0; k < H; ++k) {
      if (y_h) y_h[state_row(p, d, b) + k] = s.h[b * H + k];
      if (y_c) y_c[state_row(p, d, b) + k] = s.c[b * H + k];
    }
}

size_t base_scratch_floats(const RnnParams& p) {
  const int64_t G = rnn_gates(p.cell) * p.hidden;
  return static_cast<size_t>(p.seq * p.batch * G + p.batch * G + 3 * p.batch * p.hidden);
}

// rnn_f32 (r: R as stored, packed per direction into the end of scratch when its layout asks for
// it) and rnn_f32_prepacked (r: R as rnn_pack_r packed it for all directions).
bool run(const RnnParams& p, bool prepacked, const float* x, const float* w, const float* r, const float* b,
         const int32_t* seq_lens, const float* h0, const float* c0, const float* peep, float* y, float* y_h,
         float* y_c, float* scratch, ThreadPool* pool) {
  if (seq_lens)
    for (int64_t i = 0; i < p.batch; ++i)
      if (seq_lens[i] < 0 || seq_lens[i] > p.seq) return false;
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  if (y)
    for (int64_t i = 0; i < p.seq * p.directions * p.batch * H; ++i) y[i] = 0.f;
  Scratch s;
  s.xw = scratch;
  s.hr = s.xw + p.seq * p.batch * G;
  s.h = s.hr + p.batch * G;
  s.c = s.h + p.batch * H;
  s.rh = s.c + p.batch * H;
  const RLayout layout = r_layout(p, prepacked);
  float* pack_to = !prepacked && layout != RLayout::Plain ? gemm_f32_align(s.rh + p.batch * H) : nullptr;
  const size_t dir_floats = direction_floats(p, layout);
  for (int d = 0; d < p.directions; ++d) {
    const float* r_d = prepacked ? nullptr : r + d * G * H;
    const float* packed = prepacked ? r + d * dir_floats : pack_to;
    if (pack_to != nullptr) pack_direction(p, layout, r_d, pack_to);
    const bool backward = p.directions == 2 ? d == 1 : p.reverse;
    run_direction(p, d, backward, x, w + d * G * p.input, packed_view(p, layout, r_d, packed),
                  b ? b + d * 2 * G : nullptr, seq_lens, h0, c0, peep ? peep + d * 3 * H : nullptr, y, y_h, y_c, s,
                  pool);
  }
  return true;
}

}  // namespace

size_t rnn_scratch_floats(const RnnParams& p) noexcept {
  const RLayout layout = r_layout(p, false);
  const size_t pack = layout == RLayout::Plain ? 0 : direction_floats(p, layout) + kGemmF32AlignFloats;
  return base_scratch_floats(p) + pack;
}

size_t rnn_prepacked_scratch_floats(const RnnParams& p) noexcept { return base_scratch_floats(p); }

size_t rnn_packed_r_floats(const RnnParams& p) noexcept {
  return static_cast<size_t>(p.directions) * direction_floats(p, r_layout(p, true));
}

void rnn_pack_r(const RnnParams& p, const float* r, float* packed) noexcept {
  const RLayout layout = r_layout(p, true);
  const int64_t G = rnn_gates(p.cell) * p.hidden;
  for (int d = 0; d < p.directions; ++d)
    pack_direction(p, layout, r + d * G * p.hidden, packed + d * direction_floats(p, layout));
}

bool rnn_f32(const RnnParams& p, const float* x, const float* w, const float* r, const float* b,
             const int32_t* seq_lens, const float* h0, const float* c0, const float* peep, float* y, float* y_h,
             float* y_c, float* scratch, ThreadPool* pool) noexcept {
  return run(p, false, x, w, r, b, seq_lens, h0, c0, peep, y, y_h, y_c, scratch, pool);
}

bool rnn_f32_prepacked(const RnnParams& p, const float* x, const float* w, const float* packed_r, const float* b,
                       const int32_t* seq_lens, const float* h0, const float* c0, const float* peep, float* y,
                       float* y_h, float* y_c, float* scratch, ThreadPool* pool) noexcept {
  return run(p, true, x, w, packed_r, b, seq_lens, h0, c0, peep, y, y_h, y_c, scratch, pool);
}

}  // namespace kiln::rt
