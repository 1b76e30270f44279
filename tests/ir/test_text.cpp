// The textual IR: print(parse(t)) == t, and parse(print(g)) has the structure of g.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/verifier.h"
#include "ir_text_util.h"

using namespace kiln::ir;
using kiln::ir::test::round_trip;

TEST_CASE("every dtype, symbolic and unknown dims, untyped values") {
  auto g = round_trip(
      "graph main(%a: f32[1,3,N,?], %b: f64[], %c: f16[2], %d: bf16[2], %e: i8[4], %f: u8[4], "
      "%g: i16[1], %h: i32[1], %i: i64[2], %j: bool[3], %k) -> (%y, %a, %z) {\n"
      "  %y: f32[1,3,N,?] = Relu(%a) @relu_1\n"
      "  %z = Neg(%k) @n\n"
      "}\n");
  REQUIRE(g->inputs().size() == 11);
  const Value* a = g->inputs()[0];
  CHECK(a->dtype() == DType::F32);
  CHECK(a->shape() == Shape({Dim(1), Dim(3), Dim::symbol("N"), Dim::unknown()}));
  CHECK(g->inputs()[1]->shape().rank() == 0);
  CHECK(g->inputs()[5]->dtype() == DType::U8);
  CHECK(g->inputs()[9]->dtype() == DType::Bool);
  CHECK_FALSE(g->inputs()[10]->has_type());
  CHECK(g->outputs()[1] == a);
  CHECK(g->nodes()[0]->name() == "relu_1");
  CHECK_FALSE(g->find_value("z")->has_type());
  CHECK_NOTHROW(verify_graph(*g));
  for (DType t : kAllDTypes) {
    std::string text = "graph m(%x: " + std::string(dtype_name(t)) + "[2]) -> (%x) {\n}\n";
    CHECK(parse_graph(text)->inputs()[0]->dtype() == t);
    round_trip(text);
  }
}

TEST_CASE("small constants of every dtype list their elements") {
  auto g = round_trip(
      "graph consts(%in = constant i32[2] [7, -7]) -> (%s) {\n"
      "  %c32 = constant f32[2,4] [1, 2.5, -3, 0.1, inf, -inf, nan, -0]\n"
      "  %c64 = constant f64[3] [0.1, -1e-300, 1.7976931348623157e+308]\n"
      "  %c16 = constant f16[3] [1, -0.5, 65504]\n"
      "  %cb16 = constant bf16[2] [1, 3.015625]\n"
      "  %ci8 = constant i8[2] [-128, 127]\n"
      "  %cu8 = constant u8[2] [0, 255]\n"
      "  %ci16 = constant i16[2] [-32768, 32767]\n"
      "  %ci32 = constant i32[2] [-2147483648, 2147483647]\n"
      "  %ci64 = constant i64[2] [-9223372036854775808, 9223372036854775807]\n"
      "  %cb = constant bool[2] [true, false]\n"
      "  %scalar = constant f32[] [3]\n"
      "  %empty = constant i64[2,0] []\n"
      "  %s: f32[2,4] = Add(%c32, %c32) @add\n"
      "}\n");
  const Tensor& c32 = g->find_value("c32")->constant();
  CHECK(c32.dims() == std::vector<int64_t>{2, 4});
  CHECK(c32.data<float>()[3] == 0.1f);
  CHECK(std::isinf(c32.data<float>()[5]));
  CHECK(std::isnan(c32.data<float>()[6]));
  CHECK(std::signbit(c32.data<float>()[7]));
  CHECK(g->find_value("c64")->constant().data<double>()[1] == -1e-300);
  CHECK(g->find_value("c16")->constant().data<f16>()[2].bits == 0x7bff);
  CHECK(g->find_value("ci64")->constant().data<int64_t>()[0] == std::numeric_limits<int64_t>::min());
  CHECK(g->find_value("cu8")->constant().data<uint8_t>()[1] == 255);
  CHECK(g->find_value("cb")->constant().data<bool>()[0]);
  CHECK(g->find_value("scalar")->constant().rank() == 0);
  CHECK(g->find_value("empty")->constant().numel() == 0);
  CHECK(g->inputs()[0]->is_constant());
  CHECK_NOTHROW(verify_graph(*g));
}

TEST_CASE("constants over 16 elements, and NaN payloads, are little-endian hex") {
  Graph g;
  std::vector<float> ones(20, 1.f);
  g.add_constant("big", Tensor::from_vector(DType::F32, {4, 5}, ones));
  Tensor payload(DType::F32, {1});
  uint32_t bits = 0x7fc00001;
  std::memcpy(payload.mutable_raw(), &bits, 4);
  g.add_constant("payload", payload);
  Tensor odd_bool(DType::Bool, {2});
  static_cast<uint8_t*>(odd_bool.mutable_raw())[1] = 2;
  g.add_constant("odd_bool", odd_bool);
  std::string hex;
  for (int i = 0; i < 20; ++i) hex += "0000803f";
  std::string expected = "graph main() -> () {\n  %big = constant f32[4,5] hex\"" + hex +
                         "\"\n  %payload = constant f32[1] hex\"0100c07f\"\n"
                         "  %odd_bool = constant bool[2] hex\"0002\"\n}\n";
  CHECK(print_graph(g) == expected);
  auto parsed = round_trip(expected);
  CHECK(parsed->find_value("big")->constant().same_as(g.find_value("big")->constant()));
  CHECK(parsed->find_value("payload")->constant().same_as(payload));
  CHECK(parsed->find_value("odd_bool")->constant().same_as(odd_bool));
}

TEST_CASE("attributes of every type, including tensors and subgraphs") {
  std::string big_hex;
  for (int i = 0; i < 17; ++i) big_hex += "0100";
  auto g = round_trip(
      "graph attrs(%x: f32[2]) -> (%y) {\n"
      "  %y: f32[2] = Relu(%x) {f=1.0, fs=[0.5, -2.0, 1e+20, inf, -inf, nan, -0.0, 0.1], "
      "fs0=floats[], g=graph body(%p: f32[2]) -> (%q) {\n"
      "    %q: f32[2] = Neg(%p) @inner\n"
      "  }, i=-7, is=[1, 2, -3], is0=ints[], \"odd key\"=0, s=\"a \\\"b\\\"\\n\\tc\\\\ \\x01\\x7f é\", "
      "ss=[\"x\", \"\", \"#not a comment\"], ss0=strings[], t=i64[2] [4, 5], tbig=i16[17] hex\"" +
      big_hex + "\"} @r\n"
      "}\n");
  const Node& n = *g->nodes()[0];
  CHECK(n.attrs().size() == 13);
  CHECK(n.attr("odd key").i() == 0);
  CHECK(n.attr("f").type() == AttrType::Float);
  CHECK(n.attr("f").f() == 1.f);
  REQUIRE(n.attr("fs").floats().size() == 8);
  CHECK(n.attr("fs").floats()[2] == 1e20f);
  CHECK(std::isnan(n.attr("fs").floats()[5]));
  CHECK(std::signbit(n.attr("fs").floats()[6]));
  CHECK(n.attr("fs0").type() == AttrType::Floats);
  CHECK(n.attr("is0").type() == AttrType::Ints);
  CHECK(n.attr("ss0").type() == AttrType::Strings);
  CHECK(n.attr("i").i() == -7);
  CHECK(n.attr("is").ints() == std::vector<int64_t>{1, 2, -3});
  CHECK(n.attr("s").s() == "a \"b\"\n\tc\\ \x01\x7f \xc3\xa9");
  CHECK(n.attr("ss").strings() == std::vector<std::string>{"x", "", "#not a comment"});
  CHECK(n.attr("t").t().to_int64_vector() == std::vector<int64_t>{4, 5});
  CHECK(n.attr("tbig").t().numel() == 17);
  CHECK(n.attr("tbig").t().as_int64(16) == 1);
  const Graph& body = *n.attr("g").g();
  CHECK(body.name() == "body");
  CHECK(body.inputs()[0]->graph() == &body);
  CHECK(body.nodes()[0]->name() == "inner");
}

TEST_CASE("float attributes print the shortest text that reads back exactly") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{1});
  float tricky[] = {0.1f, 1.f / 3.f, 16777216.f, 3.4028235e38f, 1e-45f, 1.17549435e-38f, 100.f};
  g.add_node("Relu", {x}, {"y"}, {{"v", std::vector<float>(std::begin(tricky), std::end(tricky))}}, "r");
  std::string text = print_graph(g);
  CHECK(text ==
        "graph main() -> () {\n"
        "  %y = Relu(%x) {v=[0.1, 0.33333334, 16777216.0, 3.4028235e+38, 1e-45, 1.1754944e-38, 100.0]} @r\n"
        "}\n");
  // %x is neither an input nor a constant here, so this text does not parse; check the values
  // through a graph where it is an input.
  g.inputs().push_back(x);
  auto parsed = round_trip(print_graph(g));
  const std::vector<float>& back = parsed->nodes()[0]->attr("v").floats();
  for (size_t i = 0; i < back.size(); ++i) CHECK(std::memcmp(&back[i], &tricky[i], 4) == 0);
}

TEST_CASE("subgraphs nest, indent, and refer to outer values by name") {
  auto g = round_trip(
      "graph main(%x: f32[2]) -> (%y) {\n"
      "  %t: f32[2] = Neg(%x) @neg\n"
      "  %y = Relu(%t) {body=graph inner(%p: f32[2]) -> (%q, %x) {\n"
      "    %q: f32[2] = Add(%p, %t) @add_inner\n"
      "    %r = Relu(%q) {nested=graph deeper() -> (%s) {\n"
      "      %s = Abs(%x) @abs\n"
      "    }} @relu_inner\n"
      "  }, k=1} @outer\n"
      "  %after = Relu(%y) @after\n"
      "}\n");
  const Value* x = g->inputs()[0];
  const Value* t = g->find_value("t");
  const Graph& inner = *g->nodes()[1]->attr("body").g();
  CHECK(inner.nodes()[0]->input(1) == t);  // the outer value itself
  CHECK(inner.outputs()[1] == x);
  CHECK(inner.find_value("t") == nullptr);
  const Graph& deeper = *inner.nodes()[1]->attr("nested").g();
  CHECK(deeper.nodes()[0]->input(0) == x);
  // Outer values list subgraph nodes among their users.
  CHECK(std::find(t->users().begin(), t->users().end(), inner.nodes()[0].get()) != t->users().end());
  CHECK(x->users().size() == 2);
}

TEST_CASE("names that are not plain identifiers are quoted") {
  auto g = round_trip(
      "graph \"my model\"(%\"onnx::Conv_12\": f32[1,\"batch size\",\"?\",\"3x\",b.2], %0: f32[1]) -> "
      "(%\"out/0\") {\n"
      "  %\"c-1\" = constant f32[1] [1]\n"
      "  %\"out/0\": f32[1] = Relu(%0) @\"/layer1/Relu\"\n"
      "  %\"x\\\"y\" = Neg(%0) @\"\"\n"
      "  %\"tab\\tname\", %conv1.weight = Abs(%\"c-1\") @\"with space\"\n"
      "  Relu(%0) @no_outputs\n"
      "}\n");
  CHECK(g->name() == "my model");
  const Value* in = g->inputs()[0];
  CHECK(in->name() == "onnx::Conv_12");
  CHECK(in->shape()[1] == Dim::symbol("batch size"));
  CHECK(in->shape()[2] == Dim::symbol("?"));
  CHECK(in->shape()[2] != Dim::unknown());
  CHECK(in->shape()[4] == Dim::symbol("b.2"));
  CHECK(g->find_value("x\"y") != nullptr);
  CHECK(g->find_value("tab\tname") != nullptr);
  CHECK(g->nodes()[1]->name().empty());
  CHECK(g->nodes()[2]->num_outputs() == 2);
  CHECK(g->nodes()[3]->num_outputs() == 0);
}

TEST_CASE("omitted optional inputs are '_'") {
  auto g = round_trip(
      "graph clip(%x: f32[4], %hi: f32[]) -> (%a, %b) {\n"
      "  %a: f32[4] = Clip(%x, _, %hi) @c1\n"
      "  %b: f32[4] = Clip(%x, _, _) @c2\n"
      "}\n");
  CHECK(g->nodes()[0]->num_inputs() == 3);
  CHECK_FALSE(g->nodes()[0]->has_input(1));
  CHECK(g->nodes()[1]->num_inputs() == 3);
  CHECK_NOTHROW(verify_graph(*g));
}

TEST_CASE("hand-written text: comments, free layout, default node names") {
  auto g = parse_graph(R"(# a comment
graph   m ( %x : f32[ 2 , N ] )->(%y){   # trailing comment
  %t = Relu(%x)
  %y: f32[2,N] = Add(%t,
                     %x) {alpha = 1, beta = [1, 2.5]}
  %w = constant f16[2] [ 1 , 2 ]
}
)");
  CHECK(print_graph(*g) ==
        "graph m(%x: f32[2,N]) -> (%y) {\n"
        "  %w = constant f16[2] [1, 2]\n"
        "  %t = Relu(%x) @Relu_0\n"
        "  %y: f32[2,N] = Add(%t, %x) {alpha=1, beta=[1.0, 2.5]} @Add_1\n"
        "}\n");
}

TEST_CASE("a graph built through the API prints, parses back and prints the same") {
  Graph g;
  g.set_name("api");
  Value* x = g.add_value("x", DType::F32, Shape({Dim::symbol("N"), Dim(4)}));
  g.inputs().push_back(x);
  Node* r = g.add_node("Relu", {x}, {"r"});
  r->output(0)->set_type(DType::F32, x->shape());
  Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::F32, {4}, {1, 2, 3, 4}));
  Node* m = g.add_node("Mul", {r->output(0), w}, {"m"}, {}, "scale");
  m->output(0)->set_type(DType::F32, x->shape());
  g.outputs().push_back(m->output(0));
  CHECK_NOTHROW(verify_graph(g));
  std::string text = print_graph(g);
  CHECK(text ==
        "graph api(%x: f32[N,4]) -> (%m) {\n"
        "  %w = constant f32[4] [1, 2, 3, 4]\n"
        "  %r: f32[N,4] = Relu(%x) @Relu_0\n"
        "  %m: f32[N,4] = Mul(%r, %w) @scale\n"
        "}\n");
  auto back = round_trip(text);
  CHECK_NOTHROW(verify_graph(*back));
  CHECK(back->values().size() == g.values().size());
}

TEST_CASE("print_node, print_type and quote_string") {
  Graph g;
  Value* x = g.add_value("a b", DType::I64, Shape({Dim::symbol("N"), Dim::unknown()}));
  Node* n = g.add_node("Neg", {x}, {"y"}, {}, "neg");
  CHECK(print_node(*n) == "%y = Neg(%\"a b\") @neg");
  CHECK(print_type(DType::BF16, Shape({Dim(2), Dim::symbol("S"), Dim::unknown()})) == "bf16[2,S,?]");
  CHECK(print_value_ref(nullptr) == "_");
  CHECK(quote_string("q\"\\\n\r\t\x02") == "\"q\\\"\\\\\\n\\r\\t\\x02\"");
}
