#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kiln/rt/attention.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

AttentionParams one_head(int64_t q_len, int64_t kv_len, int64_t dim, int64_t v_dim) {
  AttentionParams p;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_dim = dim;
  p.v_head_dim = v_dim;
  p.q = attention_layout_bhsd(1, q_len, dim);
  p.k = attention_layout_bhsd(1, kv_len, dim);
  p.v = attention_layout_bhsd(1, kv_len, v_dim);
  p.y = attention_layout_bhsd(1, q_len, v_dim);
  return p;
}

// Plain loops: the whole score row, then softmax, then the weighted sum of V.
std::vector<float> naive(const AttentionParams& p, const std::vector<float>& q, const std::vector<float>& k,
                         const std::vector<float>& v, const std::vector<float>& bias) {
  std::vector<float> y(static_cast<size_t>(p.batch * p.q_heads * p.q_len * p.v_head_dim));
  const int64_t reps = p.q_heads / p.kv_heads;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.q_heads; ++h)
      for (int64_t i = 0; i < p.q_len; ++i) {
        std::vector<double> s(static_cast<size_t>(p.kv_len));
        double max = -1e300;
        for (int64_t j = 0; j < p.kv_len; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < p.head_dim; ++c)
            dot += q[b * p.q.batch + h * p.q.head + i * p.q.seq + c] *
                   k[b * p.k.batch + h / reps * p.k.head + j * p.k.seq + c];
          s[j] = dot * p.scale + bias[i * p.kv_len + j];
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - max));
        for (int64_t c = 0; c < p.v_head_dim; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < p.kv_len; ++j)
            acc += s[j] / sum * v[b * p.v.batch + h / reps * p.v.head + j * p.v.seq + c];
          y[b * p.y.batch + h * p.y.head + i * p.y.seq + c] = static_cast<float>(acc);
        }
      }
  return y;
}

std::vector<float> random(size_t n, unsigned seed) { return kiln_test::random_floats(n, seed); }

}  // namespace

TEST_CASE("attention_f32 weighs values by the softmax of the scores") {
  // One query against two keys: scores 0 and ln 3, so probabilities 1/4 and 3/4, and
  // y = 4/4 + 3 * 8/4 = 7.
  AttentionParams p = one_head(1, 2, 1, 1);
  const std::vector<float> q = {1.f}, k = {0.f, std::log(3.f)}, v = {4.f, 8.f};
  std::vector<float> y(1);
  REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
  CHECK(y[0] == doctest::Approx(7.f));
}

TEST_CASE("attention_f32 causal mask, fully masked rows and the scores copy") {
  // Two queries, two keys, all scores 0. Causal: query 0 sees key 0 only; query 1 both.
  AttentionParams p = one_head(2, 2, 1, 1);
  const std::vector<float> q = {0.f, 0.f}, k = {1.f, 1.f}, v = {2.f, 6.f};
  std::vector<float> y(2), scores(4);
  p.mask.causal = true;
  p.scores = scores.data();
  p.scores_mode = AttentionScores::Softmax;
  REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
  CHECK(y[0] == doctest::Approx(2.f));
  CHECK(y[1] == doctest::Approx(4.f));
  CHECK(scores == std::vector<float>{1.f, 0.f, 0.5f, 0.5f});

  // An offset of -1 masks every key of query 0: its output and probabilities are zero.
  p.mask.causal_offset = -1;
  p.scores_mode = AttentionScores::Biased;
  REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
  CHECK(y[0] == 0.f);
  CHECK(y[1] == doctest::Approx(2.f));
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(scores == std::vector<float>{-inf, -inf, 0.f, -inf});
}

TEST_CASE("attention_f32 bool and additive masks, padded keys and softcap") {
  AttentionParams p = one_head(1, 3, 1, 1);
  const std::vector<float> q = {1.f}, k = {0.f, 0.f, 100.f}, v = {1.f, 3.f, 1000.f};
  std::vector<float> y(1);
  // The mask covers keys 0 and 1 only; key 2 (the large score) counts as masked.
  const bool allow[2] = {true, true};
  p.mask.allow = allow;
  p.mask.keys = 2;
  p.mask.stride[3] = 1;
  REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
  CHECK(y[0] == doctest::Approx(2.f));
  // Additive bias ln 3 on key 1: weights 1/4, 3/4.
  const float bias[2] = {0.f, std::log(3.f)};
  p.mask.allow = nullptr;
  p.mask.bias = bias;
  REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
  CHECK(y[0] == doctest::Approx(2.5f));
  // Softcap 1 maps scores 0 and 100 to 0 and tanh(100) = 1 before the mask.
  std::vector<float> scores(3);
  p.softcap = 1.f;
  p.scores = scores.data();
  p.scores_mode = AttentionScores::Softcapped;
  REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
  CHECK(scores[2] == doctest::Approx(1.f));
}

TEST_CASE("attention_f32 matches plain loops across row blocks, key chunks, GQA and layouts") {
  // 70 query rows (two row blocks), 700 keys (two key chunks), 4 query heads on 2 kv heads,
  // Q and Y packed as [B, S, H * D], K and V as [B, H, S, D]; causal with an offset.
  AttentionParams p;
  p.batch = 2;
  p.q_heads = 4;
  p.kv_heads = 2;
  p.q_len = 70;
  p.kv_len = 700;
  p.head_dim = 8;
  p.v_head_dim = 5;
  p.q = attention_layout_bshd(4, 70, 8);
  p.y = attention_layout_bshd(4, 70, 5);
  p.k = attention_layout_bhsd(2, 700, 8);
  p.v = attention_layout_bhsd(2, 700, 5);
  p.scale = 0.7f;
  p.mask.causal = true;
  p.mask.causal_offset = 600;
  std::vector<float> bias(70 * 700, 0.f);
  for (int64_t i = 0; i < 70; ++i)
    for (int64_t j = 0; j < 700; ++j)
      if (j > i + 600) bias[i * 700 + j] = -std::numeric_limits<float>::infinity();
  const std::vector<float> q = random(2 * 70 * 4 * 8, 1), k = random(2 * 2 * 700 * 8, 2),
                           v = random(2 * 2 * 700 * 5, 3);
  const std::vector<float> want = naive(p, q, k, v, bias);
  ThreadPool pool(3);
  for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
    std::vector<float> y(want.size());
    REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), tp));
    for (size_t i = 0; i < y.size(); ++i) {
      INFO("element " << i);
      CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-4));
    }
  }
}

TEST_CASE("attention_f32 with a padding mask matches plain loops, vector tails and key chunks included") {
  // BERT's additive mask, one bias per key broadcast over heads and queries, -inf on padded
  // keys; 37 keys (vector loops of 8 and a tail of 5) and 700 (two key chunks), packed layouts.
  for (int64_t keys : {37, 700}) {
    AttentionParams p;
    p.batch = 2;
    p.q_heads = p.kv_heads = 3;
    p.q_len = 9;
    p.kv_len = keys;
    p.head_dim = p.v_head_dim = 16;
    p.q = p.y = attention_layout_bshd(3, 9, 16);
    p.k = p.v = attention_layout_bshd(3, keys, 16);
    p.scale = 0.25f;
    std::vector<float> key_bias = random(static_cast<size_t>(keys), 4);
    for (int64_t j = keys - 6; j < keys; ++j) key_bias[j] = -std::numeric_limits<float>::infinity();
    p.mask.bias = key_bias.data();
    p.mask.keys = keys;
    p.mask.stride[3] = 1;
    std::vector<float> bias;
    for (int64_t i = 0; i < p.q_len; ++i) bias.insert(bias.end(), key_bias.begin(), key_bias.end());
    const std::vector<float> q = random(2 * 9 * 3 * 16, 5), k = random(2 * keys * 3 * 16, 6),
                             v = random(2 * keys * 3 * 16, 7);
    const std::vector<float> want = naive(p, q, k, v, bias);
    ThreadPool pool(2);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(want.size());
      REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), tp));
      for (size_t i = 0; i < y.size(); ++i) {
        INFO("keys " << keys << ", element " << i);
        CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-4));
      }
    }
    // Every key masked: zeros.
    std::vector<float> all_masked(static_cast<size_t>(keys), -std::numeric_limits<float>::infinity());
    p.mask.bias = all_masked.data();
    std::vector<float> y(want.size(), 1.f);
    REQUIRE(attention_f32(p, q.data(), k.data(), v.data(), y.data(), nullptr));
    CHECK(y == std::vector<float>(want.size(), 0.f));
  }
}

TEST_CASE("attention_concat_kv_f32 appends the new keys after the past") {
  // One batch, two heads, past 1, new 1, dim 2; new keys packed [B, S, H * D].
  const std::vector<float> past = {1, 2, 3, 4}, cur = {5, 6, 7, 8};
  std::vector<float> present(8);
  attention_concat_kv_f32(1, 2, 1, 1, 2, past.data(), cur.data(), attention_layout_bshd(2, 1, 2), present.data());
  CHECK(present == std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8});
}
