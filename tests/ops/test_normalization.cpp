// BatchNormalization, Softmax, LogSoftmax.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("BatchNormalization: (x - mean) / sqrt(var + eps) * scale + B per channel") {
  OpTest t;
  // Channel 0: [1, 3], mean 2, var 1, scale 1, B 0 -> [-1, 1].
  // Channel 1: [2, 4], mean 3, var 4, scale 2, B 1 -> (x - 3) / 2 * 2 + 1 = [0, 2].
  Node* n = t.node("BatchNormalization",
                   {t.input("x", f32({1, 2, 1, 2}, {1, 3, 2, 4})),
                    t.constant("s", f32({2}, {1, 2})), t.constant("b", f32({2}, {0, 1})),
                    t.constant("m", f32({2}, {2, 3})), t.constant("v", f32({2}, {1, 4}))},
                   {{"epsilon", 0.0f}});
  check_close(t.run1(n), {-1, 1, 0, 2});
}

TEST_CASE("BatchNormalization training mode: batch statistics and running ones") {
  OpTest t;
  // Channel 0: [1, 3], batch mean 2, var 1 -> [-1, 1]; channel 1: [2, 6], mean 4, var 4 ->
  // [-1, 1] * 2 + 1 = [-1, 3]. Running stats with momentum 0.5 from mean [0, 0], var [1, 1]:
  // mean [1, 2], var [1, 2.5].
  Node* n = t.node("BatchNormalization",
                   {t.input("x", f32({2, 2, 1}, {1, 2, 3, 6})), t.constant("s", f32({2}, {1, 2})),
                    t.constant("b", f32({2}, {0, 1})), t.constant("m", f32({2}, {0, 0})),
                    t.constant("v", f32({2}, {1, 1}))},
                   {{"epsilon", 0.0f}, {"momentum", 0.5f}, {"training_mode", int64_t{1}}}, 3);
  std::vector<Tensor> out = t.run(n);
  check_close(out[0], {-1, -1, 1, 3});
  check_close(out[1], {1, 2});
  check_close(out[2], {1, 2.5});
}

TEST_CASE("BatchNormalization shape rule: symbolic dims and errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("N"), 3, Dim::symbol("H")}));
  std::vector<Value*> params;
  for (const char* name : {"s", "b", "m", "v"})
    params.push_back(t.input(name, DType::F32, Shape{3}));
  std::vector<Value*> ins = {x, params[0], params[1], params[2], params[3]};
  CHECK(infer(t.node("BatchNormalization", ins)) == sym({Dim::symbol("N"), 3, Dim::symbol("H")}));
  CHECK(infer_error(t.node("BatchNormalization", ins, {{"training_mode", int64_t{2}}})) ==
        "node 'n' (BatchNormalization): training_mode must be 0 or 1, got 2");
  CHECK(infer_error(t.node("BatchNormalization", ins, {}, 3)) ==
        "node 'n' (BatchNormalization): only output Y is supported at inference (running mean and var "
        "are training outputs)");
  Value* wrong = t.input("w", DType::F32, Shape{4});
  CHECK(infer_error(t.node("BatchNormalization", {x, params[0], params[1], wrong, params[3]})) ==
        "node 'n' (BatchNormalization): input_mean [4] does not match the 3 channels of X [N,3,H]");
}

TEST_CASE("Softmax and LogSoftmax along the last axis") {
  {
    OpTest t;
    Node* n = t.node("Softmax", {t.input("x", f32({1, 3}, {1, 2, 3}))});
    check_close(t.run1(n), {0.09003057, 0.24472847, 0.66524096}, 1e-6);
  }
  {
    OpTest t;
    Node* n = t.node("LogSoftmax", {t.input("x", f32({1, 3}, {1, 2, 3}))});
    check_close(t.run1(n), {-2.40760596, -1.40760596, -0.40760596}, 1e-6);
  }
  {
    // Large inputs do not overflow: the max is subtracted first.
    OpTest t;
    Node* n = t.node("Softmax", {t.input("x", f32({2}, {1000, 1000}))});
    check_close(t.run1(n), {0.5, 0.5});
  }
}

TEST_CASE("Softmax along axis 0, in f16 and f64") {
  // [[0, 1], [2, 3]] along axis 0: each column is softmax(v, v + 2).
  for (DType dt : {DType::F32, DType::F16, DType::F64}) {
    OpTest t;
    Node* n = t.node("Softmax", {t.input("x", iota(dt, {2, 2}))}, {{"axis", int64_t{0}}});
    Tensor y = t.run1(n);
    CHECK(y.dtype() == dt);
    check_close(y, {0.11920292, 0.11920292, 0.88079708, 0.88079708},
                dt == DType::F16 ? 1e-3 : 1e-6);
  }
}

TEST_CASE("Softmax shape rule: symbolic dims and errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({Dim::symbol("B"), 10}));
  CHECK(infer(t.node("Softmax", {x})) == sym({Dim::symbol("B"), 10}));
  CHECK(infer_error(t.node("LogSoftmax", {x}, {{"axis", int64_t{2}}})) ==
        "node 'n' (LogSoftmax): axis 2 is out of range for rank 2");
  Value* ints = t.input("i", DType::I32, Shape{3});
  CHECK(infer_error(t.node("Softmax", {ints})) ==
        "node 'n' (Softmax): input 'i' is i32, op supports f32, f64, f16, bf16");
}

TEST_CASE("normalization costs") {
  OpTest t;
  Node* n = t.node("Softmax", {t.input("x", DType::F32, Shape{2, 5})});
  infer_node(*n);
  CHECK(node_cost(*n).flops == 5.0 * 10);
  CHECK(node_cost(*n).bytes == 2 * 10 * 4);
}

}  // namespace kiln::ir::test
