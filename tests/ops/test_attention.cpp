// Attention.
#include <cmath>

#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("Attention: one query, two keys, hand-checked") {
  OpTest t;
  // 4-D [B=1, H=1, S, D=1]; scale 1: scores 0 and ln 3 -> weights 1/4, 3/4 -> y = 1 + 6 = 7.
  Node* n = t.node("Attention",
                   {t.input("q", f32({1, 1, 1, 1}, {1})), t.input("k", f32({1, 1, 2, 1}, {0, std::log(3.f)})),
                    t.input("v", f32({1, 1, 2, 1}, {4, 8}))},
                   {{"scale", 1.0f}});
  check_close(t.run1(n), {7});
}

TEST_CASE("Attention: past key/value, causal offset and the present outputs") {
  OpTest t;
  // Packed 3-D inputs, one head of size 1. Past holds key 0 (value 2); the new step adds key 1
  // (value 6). All scores are 0, so the one query averages both: y = 4.
  Node* n = t.node("Attention",
                   {t.input("q", f32({1, 1, 1}, {0})), t.input("k", f32({1, 1, 1}, {5})),
                    t.input("v", f32({1, 1, 1}, {6})), nullptr, t.input("pk", f32({1, 1, 1, 1}, {3})),
                    t.input("pv", f32({1, 1, 1, 1}, {2}))},
                   {{"q_num_heads", int64_t{1}}, {"kv_num_heads", int64_t{1}}, {"is_causal", int64_t{1}}}, 3);
  std::vector<Tensor> out = t.run(n);
  check_close(out[0], {4});
  check_close(out[1], {3, 5});
  check_close(out[2], {2, 6});
}

TEST_CASE("Attention: grouped heads share key/value heads") {
  OpTest t;
  // Two query heads on one kv head: both read the same values; one key, so y = v.
  Node* n = t.node("Attention",
                   {t.input("q", f32({1, 2, 1, 1}, {1, -1})), t.input("k", f32({1, 1, 1, 1}, {1})),
                    t.input("v", f32({1, 1, 1, 2}, {3, 4}))});
  check_close(t.run1(n), {3, 4, 3, 4});
}

TEST_CASE("ai.onnx.preview:FlexAttention: plain attention, scale attribute") {
  OpTest t;
  // Scale 1: scores 0 and ln 3 -> weights 1/4, 3/4 -> y = 1 + 6 = 7; two query heads share one
  // kv head (the second query is 0: equal weights, y = 6).
  Node* n = t.node("ai.onnx.preview:FlexAttention",
                   {t.input("q", f32({1, 2, 1, 1}, {1, 0})), t.input("k", f32({1, 1, 2, 1}, {0, std::log(3.f)})),
                    t.input("v", f32({1, 1, 2, 1}, {4, 8}))},
                   {{"scale", 1.0f}});
  check_close(t.run1(n), {7, 6});
}

TEST_CASE("Attention shape rule: packed GQA, the qk output and errors") {
  OpTest t;
  Value* q = t.input("q", DType::F32, sym({Dim::symbol("B"), 4, 72}));
  Value* k = t.input("k", DType::F32, sym({Dim::symbol("B"), 6, 24}));
  Value* v = t.input("v", DType::F32, sym({Dim::symbol("B"), 6, 30}));
  AttributeMap heads = {{"q_num_heads", int64_t{9}}, {"kv_num_heads", int64_t{3}}};
  Node* n = t.node("Attention", {q, k, v}, heads, 4);
  CHECK(infer(n) == sym({Dim::symbol("B"), 4, 90}));
  CHECK(n->output(1)->shape() == sym({Dim::symbol("B"), 3, 6, 8}));
  CHECK(n->output(2)->shape() == sym({Dim::symbol("B"), 3, 6, 10}));
  CHECK(n->output(3)->shape() == sym({Dim::symbol("B"), 9, 4, 6}));
  CHECK(infer_error(t.node("Attention", {q, k, v})) ==
        "node 'n' (Attention): 3-D inputs need the q_num_heads and kv_num_heads attributes");
  CHECK(infer_error(t.node("Attention", {q, k, v}, {{"q_num_heads", int64_t{9}}, {"kv_num_heads", int64_t{5}}})) ==
        "node 'n' (Attention): K width 24 is not a multiple of its 5 heads");
  Value* q4 = t.input("q4", DType::F32, Shape{1, 3, 4, 8});
  Value* k4 = t.input("k4", DType::F32, Shape{1, 2, 6, 8});
  CHECK(infer_error(t.node("Attention", {q4, k4, k4})) ==
        "node 'n' (Attention): 3 query heads are not a multiple of 2 key/value heads");
  Value* mask = t.input("m", DType::F32, Shape{4, 7});
  Value* k6 = t.input("k6", DType::F32, Shape{1, 3, 6, 8});
  CHECK(infer_error(t.node("Attention", {q4, k6, k6, mask})) ==
        "node 'n' (Attention): attn_mask [4,7] has more keys than the 6 of K (past included)");
}

}  // namespace kiln::ir::test
