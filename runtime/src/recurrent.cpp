// RNN, GRU and LSTM, one direction at a time: XW = X W^T + biases for every step in one GEMM,
// then per step HR = H R^T (one GEMM for the whole batch, R packed once per direction when the
// batch has more than one sequence) and the cell's elementwise update.
// Each batch entry runs its own sequence length: a reverse direction starts at its last step.
#include "kiln/rt/recurrent.h"

#include <cmath>

#include "kiln/rt/gemm.h"
#include "kiln/rt/vector_math.h"

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
  float* rp;  // packed_r_floats: one direction's R packed for the step GEMMs, or nullptr
};

// A batch of more than one sequence runs each step's H R^T through the GEMM's register tiles,
// which would repack all of R (4 MB for hidden 512) at every step: R is packed once per
// direction instead. One row (batch 1) stays a GEMV over R as it is stored.
bool pack_r(const RnnParams& p) { return p.batch > 1; }

// The step GEMMs' products: GRU without linear_before_reset multiplies rows [0, 2H) of R by H
// and rows [2H, 3H) by r * H, two products packed one after the other; other cells use all of R.
bool gru_split(const RnnParams& p) { return p.cell == RnnCell::Gru && !p.linear_before_reset; }

size_t packed_r_floats(const RnnParams& p) {
  if (!pack_r(p)) return 0;
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  const size_t n = gru_split(p) ? gemm_f32_packed_b_floats(H, 2 * H) + gemm_f32_packed_b_floats(H, H)
                                : gemm_f32_packed_b_floats(H, G);
  return n + static_cast<size_t>(kGemmF32AlignFloats);
}

// hr[:, 0 : N] (rows G apart) = h R_part^T for one step: R_part is N rows of R, packed at
// `packed` (pack_r) or else read as stored at r_rows.
void step_gemm(const RnnParams& p, const float* h, const float* r_rows, const float* packed, int64_t N, float* hr,
               ThreadPool* pool) {
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  if (packed == nullptr) {
    gemm_f32(false, true, p.batch, N, H, 1.f, h, H, r_rows, H, 0.f, hr, G, pool);
    return;
  }
  const GemmOperand a{h, H, false, false};
  const GemmOperand b{packed, 0, false, true};
  gemm_f32_ex(p.batch, N, H, 1.f, a, b, 0.f, hr, G, nullptr, Epilogue{}, 0, pool);
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

// One step of plain_lstm's cell for one batch entry; gates in ONNX's order i, o, f, c.
void lstm_update(const float* __restrict xw, const float* __restrict hr, float* __restrict c, float* __restrict h,
                 int64_t H) {
  for (int64_t k = 0; k < H; ++k) {
    const float i = sigmoid_f32(xw[k] + hr[k]);
    const float o = sigmoid_f32(xw[H + k] + hr[H + k]);
    const float f = sigmoid_f32(xw[2 * H + k] + hr[2 * H + k]);
    const float g = tanh_f32(xw[3 * H + k] + hr[3 * H + k]);
    const float ct = f * c[k] + i * g;
    c[k] = ct;
    h[k] = o * tanh_f32(ct);
  }
}

void run_direction(const RnnParams& p, int d, bool backward, const float* x, const float* w, const float* r,
                   const float* bias, const int32_t* seq_lens, const float* h0, const float* c0, const float* peep,
                   float* y, float* y_h, float* y_c, const Scratch& s, ThreadPool* pool) {
  const int64_t H = p.hidden, G = rnn_gates(p.cell) * H;
  const RnnFunc* fn = p.funcs[d];
  // Input projection of every step, plus the biases that sit outside any product.
  gemm_f32(false, true, p.seq * p.batch, G, p.input, 1.f, x, p.input, w, p.input, 0.f, s.xw, G, pool);
  if (bias) {
    const float* wb = bias;
    const float* rb = bias + G;
    const bool gru_lbr = p.cell == RnnCell::Gru && p.linear_before_reset;
    for (int64_t row = 0; row < p.seq * p.batch; ++row)
      for (int64_t g = 0; g < G; ++g)
        s.xw[row * G + g] += wb[g] + (gru_lbr && g >= 2 * H ? 0.f : rb[g]);
  }
  // R packed for the step GEMMs: the whole of it, or GRU's two parts.
  const float* rp_zr = nullptr;  // rows [0, 2H) when gru_split
  const float* rp_h = nullptr;   // rows [2H, 3H) when gru_split
  if (s.rp != nullptr) {
    if (gru_split(p)) {
      gemm_f32_pack_b(true, H, 2 * H, r, H, s.rp);
      float* second = s.rp + gemm_f32_packed_b_floats(H, 2 * H);
      gemm_f32_pack_b(true, H, H, r + 2 * H * H, H, second);
      rp_zr = s.rp;
      rp_h = second;
    } else {
      gemm_f32_pack_b(true, H, G, r, H, s.rp);
      rp_zr = s.rp;
    }
  }
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t k = 0; k < H; ++k) {
      s.h[b * H + k] = h0 ? h0[state_row(p, d, b) + k] : 0.f;
      s.c[b * H + k] = c0 ? c0[state_row(p, d, b) + k] : 0.f;
    }
  for (int64_t step = 0; step < p.seq; ++step) {
    // GRU (gru_split): z and r from H R^T; h from (r * H) R_h^T once r is known.
    step_gemm(p, s.h, r, rp_zr, gru_split(p) ? 2 * H : G, s.hr, pool);
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = seq_lens ? seq_lens[b] : p.seq;
      if (step >= len) continue;
      const int64_t t = backward ? len - 1 - step : step;
      const float* xw = s.xw + row_of(p, t, b) * G;
      const float* hr = s.hr + b * G;
      float* h = s.h + b * H;
      float* c = s.c + b * H;
      if (p.cell == RnnCell::Rnn) {
        gate(p, fn[0], xw, hr, h, H);
      } else if (p.cell == RnnCell::Lstm && plain_lstm(p, fn, peep)) {
        lstm_update(xw, hr, c, h, H);
      } else if (p.cell == RnnCell::Lstm) {
        const float* pi = peep ? peep : nullptr;
        for (int64_t k = 0; k < H; ++k) {
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
    }
    if (p.cell == RnnCell::Gru) {
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
      if (!p.linear_before_reset) step_gemm(p, s.rh, r + 2 * H * H, rp_h, H, s.hr + 2 * H, pool);
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

}  // namespace

size_t rnn_scratch_floats(const RnnParams& p) noexcept {
  const int64_t G = rnn_gates(p.cell) * p.hidden;
  return static_cast<size_t>(p.seq * p.batch * G + p.batch * G + 3 * p.batch * p.hidden) + packed_r_floats(p);
}

bool rnn_f32(const RnnParams& p, const float* x, const float* w, const float* r, const float* b,
             const int32_t* seq_lens, const float* h0, const float* c0, const float* peep, float* y, float* y_h,
             float* y_c, float* scratch, ThreadPool* pool) noexcept {
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
  s.rp = pack_r(p) ? gemm_f32_align(s.rh + p.batch * H) : nullptr;
  for (int d = 0; d < p.directions; ++d) {
    const bool backward = p.directions == 2 ? d == 1 : p.reverse;
    run_direction(p, d, backward, x, w + d * G * p.input, r + d * G * H, b ? b + d * 2 * G : nullptr, seq_lens,
                  h0, c0, peep ? peep + d * 3 * H : nullptr, y, y_h, y_c, s, pool);
  }
  return true;
}

}  // namespace kiln::rt
