// If, Loop and Scan: bodies with captured inputs, shape rules (merged branch types, carried
// values to a fixed point, branches that cannot be typed) and the reference semantics.
#include <memory>

#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

// A body graph built by hand: typed inputs, nodes, outputs.
struct Body {
  std::shared_ptr<Graph> g = std::make_shared<Graph>();
  Value* input(const std::string& name, DType dtype = DType::F32, Shape shape = Shape{}) {
    Value* v = g->add_value(name, dtype, std::move(shape));
    g->inputs().push_back(v);
    return v;
  }
  Value* node(const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    return g->add_node(op, std::move(inputs), {g->unique_value_name(op + "_out")}, std::move(attrs))->output(0);
  }
  void output(Value* v) { g->outputs().push_back(v); }
  Attribute attr() const { return Attribute(g); }
};

Tensor scalar_bool(bool b) { return Tensor::from_vector<bool>(DType::Bool, {}, {b}); }

}  // namespace

TEST_CASE("If: runs the branch its condition picks, with captured values as trailing inputs") {
  Body then_b, else_b;
  {
    Value* x = then_b.input("x", DType::F32, Shape{2});
    then_b.output(then_b.node("Add", {x, x}));
  }
  {
    Value* x = else_b.input("x", DType::F32, Shape{2});
    else_b.output(else_b.node("Neg", {x}));
  }
  for (bool cond : {true, false}) {
    OpTest t;
    Node* n = t.node("If", {t.input("c", scalar_bool(cond)), t.input("x", f32({2}, {1, -3}))},
                     {{"then_branch", then_b.attr()}, {"else_branch", else_b.attr()}, {"num_captured", int64_t{1}}});
    check_close(t.run1(n), cond ? std::vector<double>{2, -6} : std::vector<double>{-1, 3});
  }
}

TEST_CASE("If: branch shapes merge; a branch that cannot be typed is recorded, both failing is an error") {
  Body then_b, else_b;
  {
    Value* x = then_b.input("x", DType::F32, Shape{});
    then_b.output(then_b.node("Identity", {x}));
  }
  {
    Value* x = else_b.input("x", DType::F32, Shape{});
    else_b.output(else_b.node("Concat", {x, x}, {{"axis", int64_t{0}}}));
  }
  OpTest t;
  Node* n = t.node("If", {t.input("c", DType::Bool, Shape{}), t.input("x", DType::F32, Shape{3})},
                   {{"then_branch", then_b.attr()}, {"else_branch", else_b.attr()}, {"num_captured", int64_t{1}}});
  CHECK(infer(n) == sym({Dim::unknown()}));  // 3 or 6
  CHECK(n->s("untyped_branch").empty());

  // A Reshape to [4] cannot take 3 elements: the else branch is recorded, the then branch types.
  Body bad;
  {
    Value* x = bad.input("x", DType::F32, Shape{});
    bad.output(bad.node("Reshape", {x, bad.g->add_constant("s", i64s({4}))}));
  }
  n->set_attr("else_branch", bad.attr());
  CHECK(infer(n) == sym({3}));
  CHECK(n->s("untyped_branch").starts_with("else_branch: "));
  n->set_attr("then_branch", bad.attr());
  CHECK(infer_error(n).find("Reshape") != std::string::npos);
}

TEST_CASE("Loop: carried values, stacked scan outputs, early exit, trip count from M") {
  // body(i, cond, acc; step): acc' = acc + step; cond' = acc' < 10; scan out acc'.
  Body b;
  b.input("i", DType::I64);
  b.input("cond", DType::Bool);
  Value* acc = b.input("acc", DType::F32, Shape{1});
  Value* step = b.input("step", DType::F32, Shape{1});
  Value* next = b.node("Add", {acc, step});
  b.output(b.node("Less", {next, b.g->add_constant("ten", f32({1}, {10}))}));
  b.output(next);
  b.output(next);
  {
    OpTest t;
    Node* n = t.node("Loop",
                     {t.constant("M", Tensor::scalar_i64(3)), nullptr, t.input("acc0", f32({1}, {0})),
                      t.input("step", f32({1}, {2}))},
                     {{"body", b.attr()}, {"num_captured", int64_t{1}}}, 2);
    infer_node(*n);
    CHECK(n->output(1)->shape() == sym({Dim::unknown(), 1}));  // the body may stop early
    std::vector<Tensor> out = t.eval(n);
    check_close(out[0], {6});
    CHECK(out[1].dims() == std::vector<int64_t>{3, 1});
    check_close(out[1], {2, 4, 6});
  }
  OpTest t;  // stops once acc reaches 10, before M = 100
  Node* n = t.node("Loop",
                   {t.constant("M", Tensor::scalar_i64(100)), nullptr, t.input("acc0", f32({1}, {0})),
                    t.input("step", f32({1}, {4}))},
                   {{"body", b.attr()}, {"num_captured", int64_t{1}}}, 2);
  std::vector<Tensor> out = t.eval(n);
  check_close(out[0], {12});
  check_close(out[1], {4, 8, 12});
}

TEST_CASE("Loop: a body passing its condition through runs all M iterations: a static scan length") {
  Body b;
  b.input("i", DType::I64);
  Value* cond = b.input("cond", DType::Bool);
  Value* acc = b.input("acc", DType::F32, Shape{2});
  b.output(b.node("Identity", {cond}));
  Value* doubled = b.node("Add", {acc, acc});
  b.output(doubled);
  b.output(doubled);
  OpTest t;
  Node* n = t.node("Loop", {t.constant("M", Tensor::scalar_i64(4)), nullptr, t.input("acc0", f32({2}, {1, -1}))},
                   {{"body", b.attr()}}, 2);
  std::vector<Tensor> out = t.run(n);
  CHECK(n->output(1)->shape() == sym({4, 2}));
  check_close(out[0], {16, -16});
  check_close(out[1], {2, -2, 4, -4, 8, -8, 16, -16});
}

TEST_CASE("Loop: a carried value that grows gets an unknown dim") {
  Body b;
  b.input("i", DType::I64);
  Value* cond = b.input("cond", DType::Bool);
  Value* acc = b.input("acc", DType::F32, Shape{1});
  b.output(cond);
  b.output(b.node("Concat", {acc, acc}, {{"axis", int64_t{0}}}));
  OpTest t;
  Node* n = t.node("Loop", {t.constant("M", Tensor::scalar_i64(3)), nullptr, t.input("acc0", f32({1}, {1}))},
                   {{"body", b.attr()}});
  CHECK(infer(n) == sym({Dim::unknown()}));
  CHECK(t.eval(n)[0].dims() == std::vector<int64_t>{8});
}

TEST_CASE("Scan: states, reversed and non-leading scan axes, outputs stacked along an axis") {
  // body(s, a_t, b_t): s' = s + a_t; out = s' * b_t. a scanned along axis 1 in reverse.
  Body b;
  Value* s = b.input("s", DType::F32, Shape{2});
  Value* a = b.input("a", DType::F32, Shape{2});
  Value* x = b.input("b", DType::F32, Shape{2});
  Value* next = b.node("Add", {s, a});
  b.output(next);
  b.output(b.node("Mul", {next, x}));
  OpTest t;
  Node* n = t.node("Scan",
                   {t.input("s0", f32({2}, {0, 0})), t.input("a", f32({2, 3}, {1, 2, 3, 10, 20, 30})),
                    t.input("x", f32({3, 2}, {1, 1, 2, 2, 3, 3}))},
                   {{"body", b.attr()},
                    {"num_scan_inputs", int64_t{2}},
                    {"scan_input_axes", std::vector<int64_t>{1, 0}},
                    {"scan_input_directions", std::vector<int64_t>{1, 0}},
                    {"scan_output_axes", std::vector<int64_t>{-1}}},
                   2);
  std::vector<Tensor> out = t.run(n);
  check_close(out[0], {6, 60});
  // steps: s = [3,30], [5,50], [6,60]; times b_t = 1, 2, 3; stacked along the last axis.
  CHECK(out[1].dims() == std::vector<int64_t>{2, 3});
  check_close(out[1], {3, 10, 18, 30, 100, 180});
}

}  // namespace kiln::ir::test
