// RotaryEmbedding.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("RotaryEmbedding: a quarter turn, halves and interleaved pairs") {
  // One head of size 4, position 1 of a cache whose row 1 is cos = [0, 1], sin = [1, 0]:
  // pair 0 turns by 90 degrees, pair 1 stays.
  const Tensor cos = f32({2, 2}, {1, 1, 0, 1}), sin = f32({2, 2}, {0, 0, 1, 0});
  {
    // Halves: pairs (x0, x2) and (x1, x3). (1, 3) -> (-3, 1); (2, 4) stays.
    OpTest t;
    Node* n = t.node("RotaryEmbedding", {t.input("x", f32({1, 1, 1, 4}, {1, 2, 3, 4})), t.input("c", cos),
                                         t.input("s", sin), t.input("p", i64({1, 1}, {1}))});
    check_close(t.run1(n), {-3, 2, 1, 4});
  }
  {
    // Interleaved: pairs (x0, x1) and (x2, x3). (1, 2) -> (-2, 1); (3, 4) stays.
    OpTest t;
    Node* n = t.node("RotaryEmbedding",
                     {t.input("x", f32({1, 1, 1, 4}, {1, 2, 3, 4})), t.input("c", cos), t.input("s", sin),
                      t.input("p", i64({1, 1}, {1}))},
                     {{"interleaved", int64_t{1}}});
    check_close(t.run1(n), {-2, 1, 3, 4});
  }
}

TEST_CASE("RotaryEmbedding: rotary_embedding_dim leaves the tail, packed input, errors") {
  OpTest t;
  // 3-D [B=1, S=1, 2 heads * 4]; only the first 2 dims of each head rotate (cache [B, S, 1]).
  Node* n = t.node("RotaryEmbedding",
                   {t.input("x", f32({1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8})), t.input("c", f32({1, 1, 1}, {0})),
                    t.input("s", f32({1, 1, 1}, {1}))},
                   {{"num_heads", int64_t{2}}, {"rotary_embedding_dim", int64_t{2}}});
  check_close(t.run1(n), {-2, 1, 3, 4, -6, 5, 7, 8});
  Node* bad = t.node("RotaryEmbedding",
                     {t.input("x2", f32({1, 1, 1, 4}, {1, 2, 3, 4})), t.input("c2", f32({2, 2}, {1, 1, 0, 1})),
                      t.input("s2", f32({2, 2}, {0, 0, 1, 0})), t.input("p2", i64({1, 1}, {5}))});
  CHECK(t.eval_error(bad) == "node 'n' (RotaryEmbedding): a position id is outside the 2 rows of the caches");
  Node* odd = t.node("RotaryEmbedding",
                     {t.input("x3", DType::F32, Shape{1, 1, 1, 4}), t.input("c3", DType::F32, Shape{1, 1, 1}),
                      t.input("s3", DType::F32, Shape{1, 1, 1})},
                     {{"rotary_embedding_dim", int64_t{3}}});
  CHECK(infer_error(odd) ==
        "node 'n' (RotaryEmbedding): rotary_embedding_dim 3 must be even and at most the head size 4");
}

}  // namespace kiln::ir::test
