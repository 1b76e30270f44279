// Symbolic dims: polynomial arithmetic, bounds, binding, and the shape values that let a
// Reshape fed by Shape/Gather/Concat know its target with a symbol left open.
#include <doctest/doctest.h>

#include "codegen/cpp/symbolic_params.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/shape_values.h"

using namespace kiln::ir;

TEST_CASE("dims: arithmetic keeps a canonical form") {
  const Dim seq = Dim::symbol("seq"), batch = Dim::symbol("batch");
  CHECK((seq * Dim(4)).name() == "4*seq");
  CHECK(Dim(4) * seq == seq * Dim(4));
  CHECK((seq * batch).name() == "batch*seq");
  CHECK((seq * Dim(32)).exact_div(Dim(8)) == seq * Dim(4));
  CHECK_FALSE((seq * Dim(6)).exact_div(Dim(4)));
  CHECK((batch * seq * Dim(32)).exact_div(seq * Dim(32)) == batch);
  CHECK((seq + Dim(1) - Dim(1)) == seq);
  CHECK((seq - seq).is_static());
  CHECK((seq - seq).value() == 0);
  CHECK((seq * Dim(0)) == Dim(0));
  CHECK((seq + Dim::unknown()).is_unknown());
  CHECK((seq * seq).name() == "seq*seq");
  CHECK(seq.is_symbol());
  CHECK_FALSE((seq * Dim(2)).is_symbol());
}

TEST_CASE("dims: bounds, evaluation and binding") {
  const Dim seq = Dim::symbol("seq");
  const Dim d = seq * seq + seq * Dim(3) - Dim(2);
  DimRanges ranges{{"seq", {2, 10, 10}}};
  CHECK(d.max_value(ranges) == 128);
  CHECK_FALSE(Dim::symbol("other").max_value(ranges));
  CHECK(d.eval([](const std::string&) { return std::optional<int64_t>(4); }) == 26);
  CHECK(d.bind({{"seq", 4}}) == Dim(26));
  CHECK(Shape(std::vector<Dim>{Dim(1), seq, Dim(32)}).max_numel(ranges) == 320);
  CHECK(d.cpp([](const std::string&) { return std::string("D[0]"); }) ==
        "(int64_t{-2} + int64_t{3} * D[0] + D[0] * D[0])");
}

TEST_CASE("shape values: Shape, Gather, Concat into Reshape") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape(std::vector<Dim>{Dim(1), Dim::symbol("seq"), Dim(32)}));
  g.inputs().push_back(x);
  Node* shape = g.add_node("Shape", {x}, {"s"});
  Value* idx = g.add_constant("i1", Tensor::from_vector<int64_t>(DType::I64, {1}, {1}));
  Node* seq = g.add_node("Gather", {shape->output(0), idx}, {"seq"}, {{"axis", Attribute(int64_t{0})}});
  Value* one = g.add_constant("one", Tensor::from_vector<int64_t>(DType::I64, {1}, {1}));
  Value* heads = g.add_constant("heads", Tensor::from_vector<int64_t>(DType::I64, {2}, {4, 8}));
  Node* cat = g.add_node("Concat", {one, seq->output(0), heads}, {"target"}, {{"axis", Attribute(int64_t{0})}});
  Node* reshape = g.add_node("Reshape", {x, cat->output(0)}, {"y"});
  for (const auto& n : g.nodes()) infer_node(*n);
  REQUIRE(cat->output(0)->shape_value());
  CHECK(reshape->output(0)->shape() == Shape(std::vector<Dim>{Dim(1), Dim::symbol("seq"), Dim(4), Dim(8)}));

  // A -1 among the elements is inferred from the element count.
  Value* minus = g.add_constant("minus", Tensor::from_vector<int64_t>(DType::I64, {1}, {-1}));
  Node* cat2 = g.add_node("Concat", {minus, heads}, {"target2"}, {{"axis", Attribute(int64_t{0})}});
  Node* flat = g.add_node("Reshape", {x, cat2->output(0)}, {"z"});
  infer_node(*cat2);
  infer_node(*flat);
  CHECK(flat->output(0)->shape().str() == "[seq,4,8]");
}

TEST_CASE("lifted parameters: fitted polynomials, refused floor divisions") {
  using kiln::codegen::cpp::lift_params;
  DimRanges ranges{{"seq", {1, 256, 256}}, {"b", {1, 8, 8}}};
  auto fields = lift_params({"seq", "b"}, ranges, [](const std::map<std::string, int64_t>& at) {
    const int64_t s = at.at("seq"), b = at.at("b");
    return std::vector<int64_t>{s * 64, b * s * s, 7, s * 3 + b};
  });
  REQUIRE(fields);
  CHECK((*fields)[0] == Dim::symbol("seq") * Dim(64));
  CHECK((*fields)[1] == Dim::symbol("b") * Dim::symbol("seq") * Dim::symbol("seq"));
  CHECK((*fields)[2] == Dim(7));
  CHECK((*fields)[3].name() == "b+3*seq");
  // (seq + 1) / 2 is not a polynomial: refused rather than fitted wrongly.
  CHECK_FALSE(lift_params({"seq"}, ranges, [](const std::map<std::string, int64_t>& at) {
    return std::vector<int64_t>{(at.at("seq") + 1) / 2};
  }));
}
