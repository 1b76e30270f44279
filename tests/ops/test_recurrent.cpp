// RNN, GRU, LSTM.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("RNN: tanh recurrence forward, reverse and bidirectional") {
  // One unit, W = R = 1, X = [0.5, -0.25] over two steps (seq-major [2, 1, 1]).
  // Forward: h1 = tanh(0.5) = 0.4621172, h2 = tanh(-0.25 + h1) = 0.2089921.
  // Reverse: h1' = tanh(-0.25) = -0.2449187 at t = 1, h2' = tanh(0.5 + h1') = 0.2496892 at t = 0.
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    OpTest t;
    const int64_t d = std::string(dir) == "bidirectional" ? 2 : 1;
    std::vector<float> ones(static_cast<size_t>(d), 1.f);
    Node* n = t.node("RNN",
                     {t.input("x", f32({2, 1, 1}, {0.5f, -0.25f})), t.input("w", f32({d, 1, 1}, ones)),
                      t.input("r", f32({d, 1, 1}, ones))},
                     {{"hidden_size", int64_t{1}}, {"direction", std::string(dir)}}, 2);
    std::vector<Tensor> out = t.run(n);
    if (d == 1 && std::string(dir) == "forward") {
      check_close(out[0], {0.46211716, 0.20899208});
      check_close(out[1], {0.20899208});
    } else if (d == 1) {
      check_close(out[0], {0.24968922, -0.24491866});
      check_close(out[1], {0.24968922});
    } else {
      // Y [seq, dirs, batch, hidden]; Y_h [dirs, batch, hidden].
      check_close(out[0], {0.46211716, 0.24968922, 0.20899208, -0.24491866});
      check_close(out[1], {0.20899208, 0.24968922});
    }
  }
}

TEST_CASE("RNN: sequence_lens stops a batch entry early, batch-first layout") {
  OpTest t;
  // Layout 1: X [batch 2, seq 2, 1]; entry 1 has length 1, so its Y at t = 1 is 0 and its Y_h
  // is the state after step 0: tanh(0.3).
  Node* n = t.node("RNN",
                   {t.input("x", f32({2, 2, 1}, {0.5f, -0.25f, 0.3f, 9.f})), t.input("w", f32({1, 1, 1}, {1})),
                    t.input("r", f32({1, 1, 1}, {1})), nullptr,
                    t.input("lens", Tensor::from_vector<int32_t>(DType::I32, {2}, {2, 1}))},
                   {{"layout", int64_t{1}}}, 2);
  std::vector<Tensor> out = t.run(n);
  check_close(out[0], {0.46211716, 0.20899208, 0.29131261, 0});
  check_close(out[1], {0.20899208, 0.29131261});
}

TEST_CASE("GRU and LSTM: one step from the biases alone") {
  {
    // Zero weights; W bias of the h gate 1: z = r = 0.5, h~ = tanh(1), H = 0.5 tanh(1).
    OpTest t;
    std::vector<float> b(6, 0.f);
    b[2] = 1.f;
    Node* n = t.node("GRU",
                     {t.input("x", f32({1, 1, 1}, {7})), t.input("w", f32({1, 3, 1}, {0, 0, 0})),
                      t.input("r", f32({1, 3, 1}, {0, 0, 0})), t.input("b", f32({1, 6}, b))},
                     {}, 2);
    check_close(t.run(n)[1], {0.38079708});
  }
  {
    // Zero weights; W bias of the c gate 1: i = o = f = 0.5, C = 0.5 tanh(1),
    // H = 0.5 tanh(C) = 0.1816997.
    OpTest t;
    std::vector<float> b(8, 0.f);
    b[3] = 1.f;
    Node* n = t.node("LSTM",
                     {t.input("x", f32({1, 1, 1}, {7})), t.input("w", f32({1, 4, 1}, {0, 0, 0, 0})),
                      t.input("r", f32({1, 4, 1}, {0, 0, 0, 0})), t.input("b", f32({1, 8}, b))},
                     {}, 3);
    std::vector<Tensor> out = t.run(n);
    check_close(out[1], {0.18169974});
    check_close(out[2], {0.38079708});
  }
}

TEST_CASE("RNN family shape rule and errors") {
  OpTest t;
  Value* x = t.input("x", DType::F32, sym({5, Dim::symbol("N"), 3}));
  Value* w = t.input("w", DType::F32, Shape{2, 16, 3});
  Value* r = t.input("r", DType::F32, Shape{2, 16, 4});
  Node* n = t.node("LSTM", {x, w, r}, {{"direction", std::string("bidirectional")}}, 3);
  CHECK(infer(n) == sym({5, 2, Dim::symbol("N"), 4}));
  CHECK(n->output(2)->shape() == sym({2, Dim::symbol("N"), 4}));
  Value* xs = t.input("xs", DType::F32, Shape{5, 1, 3});
  CHECK(infer_error(t.node("LSTM", {xs, w, r})) ==
        "node 'n' (LSTM): W [2,16,3] must be [1 directions, 4 * hidden, input 3]");
  CHECK(infer_error(t.node("LSTM", {xs, w, r}, {{"direction", std::string("sideways")}})) ==
        "node 'n' (LSTM): direction 'sideways' is not forward, reverse or bidirectional");
  Value* w1 = t.input("w1", DType::F32, Shape{1, 4, 3});
  Value* r1 = t.input("r1", DType::F32, Shape{1, 4, 4});
  CHECK(infer_error(t.node("RNN", {xs, w1, r1}, {{"activations", std::vector<std::string>{"Gelu"}}})) ==
        "node 'n' (RNN): activation 'Gelu' is not supported");
}

}  // namespace kiln::ir::test
