// LinearAttention, CausalConvWithState.
#include <cmath>

#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

AttributeMap one_head(const char* rule) {
  return {{"q_num_heads", int64_t{1}}, {"kv_num_heads", int64_t{1}}, {"scale", 1.0f},
          {"update_rule", std::string(rule)}};
}

}  // namespace

TEST_CASE("LinearAttention: linear, gated and delta rules, hand-checked") {
  // One head, key and value size 1, two steps: q = [1, 1], k = [1, 2], v = [3, 4].
  auto qkv = [](OpTest& t) {
    return std::vector<Value*>{t.input("q", f32({1, 2, 1}, {1, 1})), t.input("k", f32({1, 2, 1}, {1, 2})),
                               t.input("v", f32({1, 2, 1}, {3, 4}))};
  };
  {
    // S = 3, then 3 + 2 * 4 = 11.
    OpTest t;
    std::vector<Tensor> out = t.run(t.node("LinearAttention", qkv(t), one_head("linear"), 2));
    check_close(out[0], {3, 11});
    check_close(out[1], {11});
  }
  {
    // Decay e^g = 0.5 per step: S = 3, then 3 * 0.5 + 8 = 9.5.
    OpTest t;
    std::vector<Value*> in = qkv(t);
    in.push_back(nullptr);
    in.push_back(t.input("g", f32({1, 2, 1}, {std::log(0.5f), std::log(0.5f)})));
    check_close(t.run1(t.node("LinearAttention", in, one_head("gated"))), {3, 9.5});
  }
  {
    // Delta with beta [1, 0.5]: S = 3; then S k = 6, v' = 0.5 (4 - 6) = -1, S = 3 + 2 * -1 = 1.
    OpTest t;
    std::vector<Value*> in = qkv(t);
    in.push_back(nullptr);
    in.push_back(nullptr);
    in.push_back(t.input("b", f32({1, 2, 1}, {1, 0.5f})));
    check_close(t.run1(t.node("LinearAttention", in, one_head("delta"))), {3, 1});
  }
}

TEST_CASE("LinearAttention: the rule decides which inputs it takes") {
  OpTest t;
  Node* n = t.node("LinearAttention",
                   {t.input("q", DType::F32, Shape{1, 2, 4}), t.input("k", DType::F32, Shape{1, 2, 4}),
                    t.input("v", DType::F32, Shape{1, 2, 4})},
                   {{"q_num_heads", int64_t{2}}, {"kv_num_heads", int64_t{2}}});
  CHECK(infer_error(n) == "node 'n' (LinearAttention): update_rule 'gated_delta' needs the decay input");
}

TEST_CASE("CausalConvWithState: continues from the past state") {
  // Kernel [1, 10] over [5 | 1, 2, 3] (past 5), bias 1: [16, 22, 33]; the new state is [3].
  OpTest t;
  Node* n = t.node("CausalConvWithState",
                   {t.input("x", f32({1, 1, 3}, {1, 2, 3})), t.input("w", f32({1, 1, 2}, {1, 10})),
                    t.input("b", f32({1}, {1})), t.input("p", f32({1, 1, 1}, {5}))},
                   {}, 2);
  std::vector<Tensor> out = t.run(n);
  check_close(out[0], {16, 22, 33});
  check_close(out[1], {3});
  OpTest s;
  Node* m = s.node("CausalConvWithState",
                   {s.input("x", f32({1, 1, 2}, {0, 1})), s.input("w", f32({1, 1, 2}, {1, 1}))},
                   {{"activation", std::string("silu")}});
  // Padded [0 | 0, 1]: y = [0, 1], silu -> [0, 1 / (1 + e^-1)].
  check_close(s.run1(m), {0, 0.7310586});
  Node* bad = s.node("CausalConvWithState", {s.input("x2", DType::F32, Shape{1, 2, 3}),
                                             s.input("w2", DType::F32, Shape{3, 1, 2})});
  CHECK(infer_error(bad) == "node 'n' (CausalConvWithState): weight [3,1,2] must be [channels 2, 1, kernel >= 1]");
}

}  // namespace kiln::ir::test
