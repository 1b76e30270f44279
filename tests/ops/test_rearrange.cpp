// ReverseSequence, Compress, TensorScatter: hand-computed cases.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("ReverseSequence: batch-major and time-major") {
  {
    // x [batch 2, time 3]; lengths [3, 2]: [1, 2, 3] -> [3, 2, 1]; [4, 5, 6] -> [5, 4, 6].
    OpTest t;
    Node* n = t.node("ReverseSequence", {t.input("x", f32({2, 3}, {1, 2, 3, 4, 5, 6})), t.input("l", i64s({3, 2}))},
                     {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}});
    CHECK(values(t.run1(n)) == std::vector<double>{3, 2, 1, 5, 4, 6});
  }
  {
    // x [time 3, batch 2] holds the same sequences as columns.
    OpTest t;
    Node* n = t.node("ReverseSequence", {t.input("x", f32({3, 2}, {1, 4, 2, 5, 3, 6})), t.input("l", i64s({3, 2}))});
    CHECK(values(t.run1(n)) == std::vector<double>{3, 5, 2, 4, 1, 6});
  }
  OpTest t;
  Node* n = t.node("ReverseSequence", {t.input("x", f32({1, 2}, {1, 2})), t.input("l", i64s({3}))},
                   {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}});
  infer_node(*n);
  CHECK(t.eval_error(n) == "node 'n' (ReverseSequence): sequence length 3 of batch item 0 is outside [0, 2]");
}

TEST_CASE("Compress along an axis and flattened") {
  const Tensor cond = Tensor::from_vector<bool>(DType::Bool, {2}, {false, true});
  {
    // [[1, 2], [3, 4]] along axis 1 keeps column 1.
    OpTest t;
    Node* n = t.node("Compress", {t.input("x", f32({2, 2}, {1, 2, 3, 4})), t.constant("c", cond)},
                     {{"axis", int64_t{1}}});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{2, 1});
    CHECK(values(y) == std::vector<double>{2, 4});
  }
  {
    // No axis: the flattened input's element 1 (the condition is shorter than the input).
    OpTest t;
    Node* n = t.node("Compress", {t.input("x", f32({2, 2}, {1, 2, 3, 4})), t.input("c", cond)});
    Tensor y = t.run1(n);
    CHECK(y.dims() == std::vector<int64_t>{1});
    CHECK(values(y) == std::vector<double>{2});
  }
  OpTest t;
  Node* n = t.node("Compress", {t.input("x", f32({1, 1}, {1})), t.input("c", cond)}, {{"axis", int64_t{0}}});
  infer_node(*n);
  CHECK(t.eval_error(n) == "node 'n' (Compress): condition selects index 1 of an axis of length 1");
}

TEST_CASE("TensorScatter: linear and circular writes along the sequence axis") {
  // past [batch 2, seq 3, 1] all zero; update [2, 2, 1] = [[1, 2], [3, 4]]; write indices [0, 2].
  auto run = [](const char* mode) {
    OpTest t;
    Node* n = t.node("TensorScatter",
                     {t.input("p", f32({2, 3, 1}, {0, 0, 0, 0, 0, 0})), t.input("u", f32({2, 2, 1}, {1, 2, 3, 4})),
                      t.input("w", i64s({0, 1}))},
                     {{"mode", Attribute(mode)}});
    return values(t.run1(n));
  };
  CHECK(run("linear") == std::vector<double>{1, 2, 0, 0, 3, 4});
  CHECK(run("circular") == std::vector<double>{1, 2, 0, 0, 3, 4});
  OpTest t;
  Node* n = t.node("TensorScatter",
                   {t.input("p", f32({1, 3, 1}, {0, 0, 0})), t.input("u", f32({1, 2, 1}, {1, 2})), t.input("w", i64s({2}))},
                   {{"mode", Attribute("circular")}});
  CHECK(values(t.run1(n)) == std::vector<double>{2, 0, 1});
  Node* bad = t.node("TensorScatter",
                     {t.input("p2", f32({1, 3, 1}, {0, 0, 0})), t.input("u2", f32({1, 2, 1}, {1, 2})),
                      t.input("w2", i64s({2}))});
  infer_node(*bad);
  CHECK(t.eval_error(bad) ==
        "node 'n' (TensorScatter): write index 2 of batch item 0 puts 2 entries outside the 3 of axis -2");
}

}  // namespace kiln::ir::test
