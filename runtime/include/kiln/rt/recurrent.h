// Recurrent layers (ONNX RNN, GRU and LSTM), f32. The input projection of all time steps is
// one GEMM; each step adds one GEMM of the hidden state with the recurrence weights.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

class ThreadPool;

enum class RnnCell : int { Rnn = 0, Gru = 1, Lstm = 2 };

// ONNX's activation functions for recurrent cells.
enum class RnnActivation : int {
  Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus
};
struct RnnFunc {
  RnnActivation kind = RnnActivation::Tanh;
  float alpha = 0.f, beta = 0.f;
};

// Gates per cell: 1 (RNN), 3 (GRU: z, r, h), 4 (LSTM: i, o, f, c).
inline int64_t rnn_gates(RnnCell c) { return c == RnnCell::Rnn ? 1 : c == RnnCell::Gru ? 3 : 4; }
// Activation functions per direction: f (RNN), f g (GRU), f g h (LSTM).
inline int rnn_funcs(RnnCell c) { return c == RnnCell::Rnn ? 1 : c == RnnCell::Gru ? 2 : 3; }

struct RnnParams {
  RnnCell cell = RnnCell::Rnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int directions = 1;        // 2: forward then reverse
  bool reverse = false;      // one direction, run from the last step back
  bool batch_first = false;  // layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden],
                             // states [batch, dirs, hidden]
  float clip = 0.f;          // > 0: gate inputs clipped to [-clip, clip] before activation
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: f = 1 - i
  RnnFunc funcs[2][3];               // per direction
};

// Floats of scratch rnn_f32 needs (with room to pack one direction's R when the batch has more
// than one sequence).
size_t rnn_scratch_floats(const RnnParams& p) noexcept;

// X [seq, batch, input]; W [dirs, gates * hidden, input]; R [dirs, gates * hidden, hidden];
// B [dirs, 2 * gates * hidden] (input then recurrence biases) or nullptr; seq_lens [batch] or
// nullptr (all `seq`); h0, c0 [dirs, batch, hidden] or nullptr (zeros); peep [dirs, 3 * hidden]
// (i, o, f) or nullptr. Outputs (each may be nullptr): Y [seq, dirs, batch, hidden], zero past a
// sequence's end; Y_h, Y_c [dirs, batch, hidden], the states after each sequence's last step.
// Returns false when a sequence length is outside [0, seq].
bool rnn_f32(const RnnParams& p, const float* x, const float* w, const float* r, const float* b,
             const int32_t* seq_lens, const float* h0, const float* c0, const float* peep, float* y, float* y_h,
             float* y_c, float* scratch, ThreadPool* pool) noexcept;

// Constant recurrence weights packed once, at compile time, for the step products of p's batch:
// batch 1, rows of R in blocks of 8 interleaved in steps of 8 columns (the GEMV then streams one
// array); more, the GEMM's packed B (rnn_f32 packs that itself on every run). The layout is
// private to this runtime version (the compiler packs with the runtime it emits), and `packed`
// is best 64-byte aligned. rnn_pack_r reads R [dirs, gates * hidden, hidden].
size_t rnn_packed_r_floats(const RnnParams& p) noexcept;
void rnn_pack_r(const RnnParams& p, const float* r, float* packed) noexcept;

// Floats of scratch rnn_f32_prepacked needs (none for R).
size_t rnn_prepacked_scratch_floats(const RnnParams& p) noexcept;

// rnn_f32 with R given as rnn_pack_r packed it for this p.
bool rnn_f32_prepacked(const RnnParams& p, const float* x, const float* w, const float* packed_r, const float* b,
                       const int32_t* seq_lens, const float* h0, const float* c0, const float* peep, float* y,
                       float* y_h, float* y_c, float* scratch, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
