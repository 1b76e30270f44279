#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/rt/gemm.h"
#include "kiln/rt/recurrent.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/sequence_state.h"
#include "kiln/rt/vector_math.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

RnnParams one_unit(RnnCell cell) {
  RnnParams p;
  p.cell = cell;
  p.seq = 1;
  p.batch = 1;
  p.input = 1;
  p.hidden = 1;
  const RnnFunc sigmoid{RnnActivation::Sigmoid}, tanh{RnnActivation::Tanh};
  p.funcs[0][0] = cell == RnnCell::Rnn ? tanh : sigmoid;
  p.funcs[0][1] = tanh;
  p.funcs[0][2] = tanh;
  return p;
}

// Seeded X, W, R and the biases for p (every direction), R's values within +-r_scale.
struct RnnWeights {
  std::vector<float> x, w, r, bias;
};
RnnWeights rnn_weights(const RnnParams& p, uint32_t seed, float r_scale = 0.4f) {
  const auto G = static_cast<size_t>(rnn_gates(p.cell) * p.hidden), D = static_cast<size_t>(p.directions);
  return {kiln_test::random_floats(static_cast<size_t>(p.seq * p.batch * p.input), seed),
          kiln_test::random_floats(D * G * static_cast<size_t>(p.input), seed + 1, -0.4f, 0.4f),
          kiln_test::random_floats(D * G * static_cast<size_t>(p.hidden), seed + 2, -r_scale, r_scale),
          kiln_test::random_floats(D * 2 * G, seed + 3, -0.2f, 0.2f)};
}

double sigmoid_ref(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// ONNX's RNN / GRU / LSTM with the default activations, Y only ([seq, dirs, batch, hidden]), in
// doubles straight from the operator's formulas: the reference for rnn_f32. One direction runs
// forward unless p.reverse; two run forward then in reverse.
std::vector<float> rnn_reference(const RnnParams& p, const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& r, const std::vector<float>& bias) {
  const int64_t H = p.hidden, I = p.input, gates = rnn_gates(p.cell), G = gates * H, D = p.directions;
  std::vector<float> y(static_cast<size_t>(p.seq * D * p.batch * H));
  for (int64_t d = 0; d < D; ++d) {
    const bool backward = D == 2 ? d == 1 : p.reverse;
    const float* wd = &w[d * G * I];
    const float* rd = &r[d * G * H];
    const float* bd = &bias[d * 2 * G];
    for (int64_t b = 0; b < p.batch; ++b) {
      std::vector<double> h(H, 0.0), c(H, 0.0), xw(G), hr(G);
      for (int64_t step = 0; step < p.seq; ++step) {
        const int64_t t = backward ? p.seq - 1 - step : step;
        const float* xt = &x[(t * p.batch + b) * I];
        for (int64_t g = 0; g < G; ++g) {
          double sx = bd[g], sh = bd[G + g];
          for (int64_t k = 0; k < I; ++k) sx += double(wd[g * I + k]) * xt[k];
          for (int64_t k = 0; k < H; ++k) sh += double(rd[g * H + k]) * h[k];
          xw[g] = sx;
          hr[g] = sh;
        }
        std::vector<double> hn(H);
        for (int64_t k = 0; k < H; ++k) {
          if (p.cell == RnnCell::Rnn) {
            hn[k] = std::tanh(xw[k] + hr[k]);
          } else if (p.cell == RnnCell::Lstm) {  // gates i, o, f, c
            const double i = sigmoid_ref(xw[k] + hr[k]), o = sigmoid_ref(xw[H + k] + hr[H + k]);
            const double f = sigmoid_ref(xw[2 * H + k] + hr[2 * H + k]), g = std::tanh(xw[3 * H + k] + hr[3 * H + k]);
            c[k] = f * c[k] + i * g;
            hn[k] = o * std::tanh(c[k]);
          } else {  // gates z, r, h
            const double z = sigmoid_ref(xw[k] + hr[k]), rg = sigmoid_ref(xw[H + k] + hr[H + k]);
            double hh = 0.0;
            if (p.linear_before_reset) {
              hh = std::tanh(xw[2 * H + k] + rg * hr[2 * H + k]);
            } else {
              double s = bd[G + 2 * H + k];
              for (int64_t q = 0; q < H; ++q)
                s += double(rd[(2 * H + k) * H + q]) * sigmoid_ref(xw[H + q] + hr[H + q]) * h[q];
              hh = std::tanh(xw[2 * H + k] + s);
            }
            hn[k] = (1.0 - z) * hh + z * h[k];
          }
        }
        h = hn;
        for (int64_t k = 0; k < H; ++k) y[((t * D + d) * p.batch + b) * H + k] = static_cast<float>(h[k]);
      }
    }
  }
  return y;
}

}  // namespace

TEST_CASE("rnn_f32 with a batch (R packed once for the step GEMMs) matches the reference") {
  // Batches that fill the GEMM's register tiles or not (6-row tiles), hidden sizes that leave a
  // partial 16-column panel, each cell and GRU's two ways of applying r; 1 and 2 threads.
  ThreadPool pool(2);
  for (const RnnCell cell : {RnnCell::Rnn, RnnCell::Gru, RnnCell::Lstm})
    for (const bool lbr : {false, true}) {
      if (lbr && cell != RnnCell::Gru) continue;
      for (const int64_t batch : {1, 3, 8})
        for (const int64_t hidden : {7, 40})
          for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
            RnnParams p = one_unit(cell);
            p.seq = 5;
            p.batch = batch;
            p.input = 9;
            p.hidden = hidden;
            p.linear_before_reset = lbr;
            const auto [x, w, r, bias] = rnn_weights(p, 1);
            std::vector<float> y(static_cast<size_t>(p.seq * batch * hidden), -1.f);
            std::vector<float> scratch(rnn_scratch_floats(p));
            REQUIRE(rnn_f32(p, x.data(), w.data(), r.data(), bias.data(), nullptr, nullptr, nullptr, nullptr,
                            y.data(), nullptr, nullptr, scratch.data(), tp));
            INFO("cell " << static_cast<int>(cell) << " lbr " << lbr << " batch " << batch << " hidden " << hidden);
            CHECK(kiln_test::max_rel_diff(y, rnn_reference(p, x, w, r, bias)) < 1e-5);
          }
    }
}

TEST_CASE("rnn_f32 splits a large step's cell update across the pool and matches the reference") {
  // batch x hidden >= 2048: the update runs in units of 256 hidden units per batch entry
  // (300 = 256 + 44), with Y and peepholes written by whichever thread takes a unit.
  ThreadPool pool(2);
  for (const RnnCell cell : {RnnCell::Rnn, RnnCell::Lstm})
    for (const bool peepholes : {false, true}) {
      if (peepholes && cell != RnnCell::Lstm) continue;
      RnnParams p = one_unit(cell);
      p.seq = 3;
      p.batch = 8;
      p.input = 5;
      p.hidden = 300;
      const int64_t H = p.hidden;
      const auto [x, w, r, bias] = rnn_weights(p, 11, 0.1f);
      const auto peep = kiln_test::random_floats(static_cast<size_t>(3 * H), 15, -0.3f, 0.3f);
      std::vector<float> serial(static_cast<size_t>(p.seq * p.batch * H), -1.f), split(serial.size(), -2.f);
      std::vector<float> scratch(rnn_scratch_floats(p));
      const float* pp = peepholes ? peep.data() : nullptr;
      REQUIRE(rnn_f32(p, x.data(), w.data(), r.data(), bias.data(), nullptr, nullptr, nullptr, pp, serial.data(),
                      nullptr, nullptr, scratch.data(), nullptr));
      REQUIRE(rnn_f32(p, x.data(), w.data(), r.data(), bias.data(), nullptr, nullptr, nullptr, pp, split.data(),
                      nullptr, nullptr, scratch.data(), &pool));
      INFO("cell " << static_cast<int>(cell) << " peepholes " << peepholes);
      CHECK(split == serial);  // each value by the same operations, whichever thread
      if (!peepholes) CHECK(kiln_test::max_rel_diff(split, rnn_reference(p, x, w, r, bias)) < 1e-5);
    }
}

TEST_CASE("rnn_f32_prepacked (R packed as the compiler packs it) matches the reference and rnn_f32") {
  // Batch 1 (the 8-row GEMV layout) and batches through the GEMM's packed B; hidden sizes below,
  // at and past a multiple of 8 (163: the GEMV splits across threads and ends in a partial step
  // and block); forward, reverse and both directions; each cell and GRU's two ways of applying r.
  ThreadPool pool(2);
  for (const RnnCell cell : {RnnCell::Rnn, RnnCell::Gru, RnnCell::Lstm})
    for (const bool lbr : {false, true}) {
      if (lbr && cell != RnnCell::Gru) continue;
      for (const int64_t batch : {1, 3, 8})
        for (const int64_t hidden : {7, 40, 163})
          for (const int dirs : {1, -1, 2}) {  // -1: one direction, reverse
            RnnParams p = one_unit(cell);
            p.seq = 5;
            p.batch = batch;
            p.input = 9;
            p.hidden = hidden;
            p.linear_before_reset = lbr;
            p.directions = dirs == 2 ? 2 : 1;
            p.reverse = dirs == -1;
            for (int d = 1; d < p.directions; ++d)
              for (int i = 0; i < 3; ++i) p.funcs[d][i] = p.funcs[0][i];
            const int64_t D = p.directions;
            const auto [x, w, r, bias] = rnn_weights(p, 11);
            std::vector<float> packed(rnn_packed_r_floats(p) + 16);
            float* packed_r = kiln::rt::gemm_f32_align(packed.data());
            rnn_pack_r(p, r.data(), packed_r);
            const auto ref = rnn_reference(p, x, w, r, bias);
            const size_t y_floats = static_cast<size_t>(p.seq * D * batch * hidden);
            std::vector<float> y_plain(y_floats, -1.f);
            std::vector<float> scratch_plain(rnn_scratch_floats(p));
            REQUIRE(rnn_f32(p, x.data(), w.data(), r.data(), bias.data(), nullptr, nullptr, nullptr, nullptr,
                            y_plain.data(), nullptr, nullptr, scratch_plain.data(), nullptr));
            for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
              INFO("cell " << static_cast<int>(cell) << " lbr " << lbr << " batch " << batch << " hidden " << hidden
                           << " dirs " << dirs << " threads " << (tp ? 2 : 1));
              std::vector<float> y(y_floats, -1.f), y_h(static_cast<size_t>(D * batch * hidden), -1.f);
              std::vector<float> scratch(rnn_prepacked_scratch_floats(p));
              REQUIRE(rnn_f32_prepacked(p, x.data(), w.data(), packed_r, bias.data(), nullptr, nullptr, nullptr,
                                        nullptr, y.data(), y_h.data(), nullptr, scratch.data(), tp));
              CHECK(kiln_test::max_rel_diff(y, ref) < 1e-5);
              CHECK(kiln_test::max_rel_diff(y, y_plain) < 1e-5);
              // With a batch both run the same GEMM over the same packed operand.
              if (batch > 1) CHECK(y == y_plain);
              // Y_h: the last step of each direction (step seq - 1 forward, step 0 in reverse).
              std::vector<float> last;
              for (int64_t d = 0; d < D; ++d) {
                const bool backward = D == 2 ? d == 1 : p.reverse;
                const int64_t t = backward ? 0 : p.seq - 1;
                const float* row = &ref[static_cast<size_t>((t * D + d) * batch * hidden)];
                last.insert(last.end(), row, row + batch * hidden);
              }
              CHECK(kiln_test::max_rel_diff(y_h, last) < 1e-5);
            }
          }
    }
}

TEST_CASE("rnn_f32_prepacked needs no scratch for R") {
  RnnParams p = one_unit(RnnCell::Lstm);
  p.seq = 4;
  p.hidden = 512;
  p.input = 512;
  p.batch = 8;
  CHECK(rnn_scratch_floats(p) >= rnn_prepacked_scratch_floats(p) + rnn_packed_r_floats(p));
  p.batch = 1;
  CHECK(rnn_scratch_floats(p) == rnn_prepacked_scratch_floats(p));  // batch 1 reads R as stored
  CHECK(rnn_packed_r_floats(p) >= static_cast<size_t>(4 * 512 * 512));
}

TEST_CASE("rnn_f32 clips gate inputs") {
  // W = 1, x = 5, clip 1: h = tanh(1).
  RnnParams p = one_unit(RnnCell::Rnn);
  p.clip = 1.f;
  const float x = 5.f, w = 1.f, r = 0.f;
  float y_h = 0.f;
  std::vector<float> scratch(rnn_scratch_floats(p));
  REQUIRE(rnn_f32(p, &x, &w, &r, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &y_h, nullptr,
                  scratch.data(), nullptr));
  CHECK(y_h == doctest::Approx(0.76159416f));
}

TEST_CASE("rnn_f32 GRU with linear_before_reset applies r to the recurrence bias") {
  // Zero weights, Rb_h = 1: z = r = 0.5, h~ = tanh(0.5 * 1), H = 0.5 tanh(0.5).
  RnnParams p = one_unit(RnnCell::Gru);
  p.linear_before_reset = true;
  const float x = 3.f, w[3] = {0, 0, 0}, r[3] = {0, 0, 0};
  const float b[6] = {0, 0, 0, 0, 0, 1};
  float y_h = 0.f;
  std::vector<float> scratch(rnn_scratch_floats(p));
  REQUIRE(rnn_f32(p, &x, w, r, b, nullptr, nullptr, nullptr, nullptr, nullptr, &y_h, nullptr, scratch.data(),
                  nullptr));
  CHECK(y_h == doctest::Approx(0.23105858f));
}

TEST_CASE("rnn_f32 LSTM peepholes read the previous cell state") {
  // Zero weights and biases, C0 = 1, peepholes i = 1, o = 0, f = 1: i = f = sigmoid(1), g = 0,
  // C = sigmoid(1), o = 0.5, H = 0.5 tanh(C).
  RnnParams p = one_unit(RnnCell::Lstm);
  const float x = 2.f, w[4] = {0, 0, 0, 0}, r[4] = {0, 0, 0, 0}, c0 = 1.f, peep[3] = {1, 0, 1};
  float y_h = 0.f, y_c = 0.f;
  std::vector<float> scratch(rnn_scratch_floats(p));
  REQUIRE(rnn_f32(p, &x, w, r, nullptr, nullptr, nullptr, &c0, peep, nullptr, &y_h, &y_c, scratch.data(), nullptr));
  CHECK(y_c == doctest::Approx(0.73105858f));
  CHECK(y_h == doctest::Approx(0.31185627f));
}

TEST_CASE("rnn_f32 rejects a sequence length past the input") {
  RnnParams p = one_unit(RnnCell::Rnn);
  const float x = 1.f, w = 1.f, r = 0.f;
  const int32_t lens = 2;
  float y_h = 0.f;
  std::vector<float> scratch(rnn_scratch_floats(p));
  CHECK_FALSE(rnn_f32(p, &x, &w, &r, nullptr, &lens, nullptr, nullptr, nullptr, nullptr, &y_h, nullptr,
                      scratch.data(), nullptr));
}

TEST_CASE("linear_attention_f32 shares a kv head between grouped query heads") {
  // Two query heads on one kv head, sizes 1, one step: S = k v = 6; y = scale * q S.
  LinearAttentionParams p;
  p.seq = 1;
  p.q_heads = 2;
  p.kv_heads = 1;
  p.key_dim = 1;
  p.value_dim = 1;
  p.rule = LinearUpdate::Linear;
  p.scale = 0.5f;
  const float q[2] = {1, -2}, k = 2.f, v = 3.f;
  float y[2], state = 0.f;
  linear_attention_f32(p, q, &k, &v, nullptr, nullptr, nullptr, y, &state);
  CHECK(y[0] == doctest::Approx(3.f));
  CHECK(y[1] == doctest::Approx(-6.f));
  CHECK(state == doctest::Approx(6.f));
}

TEST_CASE("causal_conv_with_state_f32 with kernel 1 keeps an empty state") {
  const float x[3] = {1, 2, 3}, w = 2.f;
  float y[3];
  causal_conv_with_state_f32(1, 1, 3, 1, x, &w, nullptr, nullptr, false, y, nullptr);
  CHECK(y[0] == 2.f);
  CHECK(y[2] == 6.f);
}

TEST_CASE("tanh_f32, exp_f32 and sigmoid_f32 stay within a few float ulps of the exact functions") {
  double worst_tanh = 0, worst_sigmoid = 0, worst_exp = 0;
  for (int i = -2000000; i <= 2000000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;  // [-20, 20]
    const double t = std::tanh(static_cast<double>(x)), s = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    worst_tanh = std::fmax(worst_tanh, std::fabs(kiln::rt::tanh_f32(x) - t) / std::fmax(std::fabs(t), 1e-30));
    worst_sigmoid = std::fmax(worst_sigmoid, std::fabs(kiln::rt::sigmoid_f32(x) - s) / s);
  }
  for (int i = -873000; i <= 887000; ++i) {
    const float x = static_cast<float>(i) * 1e-4f;  // [-87.3, 88.7]: e^x a normal float
    const double e = std::exp(static_cast<double>(x));
    worst_exp = std::fmax(worst_exp, std::fabs(kiln::rt::exp_f32(x) - e) / e);
  }
  CHECK(worst_tanh < 5e-7);
  CHECK(worst_sigmoid < 3e-7);
  CHECK(worst_exp < 2.5e-7);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(kiln::rt::tanh_f32(inf) == 1.f);
  CHECK(kiln::rt::tanh_f32(-inf) == -1.f);
  CHECK(std::isnan(kiln::rt::tanh_f32(nan)));
  CHECK(kiln::rt::exp_f32(0.f) == 1.f);
  CHECK(kiln::rt::exp_f32(inf) == inf);
  CHECK(kiln::rt::exp_f32(100.f) == inf);
  CHECK(kiln::rt::exp_f32(-inf) == 0.f);
  CHECK(std::isnan(kiln::rt::exp_f32(nan)));
  CHECK(kiln::rt::sigmoid_f32(-inf) == 0.f);
  CHECK(kiln::rt::sigmoid_f32(inf) == 1.f);
  CHECK(std::isnan(kiln::rt::sigmoid_f32(nan)));
}
