// Symbolic dims: polynomial arithmetic, bounds, binding, and the shape values that let a
// Reshape fed by Shape/Gather/Concat know its target with a symbol left open.
#include <doctest/doctest.h>

#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/shape_values.h"
#include "ir/symbolic_params.h"

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
  using kiln::ir::lift_params;
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

TEST_CASE("dims: substitution and stepped symbols") {
  const Dim h = Dim::symbol("H"), h32 = Dim::symbol("H/32");
  const Dim d = h * h + h * Dim(3) - Dim(2);
  CHECK(d.substitute("H", Dim(32) * h32) == Dim(1024) * h32 * h32 + Dim(96) * h32 - Dim(2));
  CHECK(d.substitute("other", Dim(5)) == d);
  CHECK((Dim(32) * h32).scaled_symbol() == std::make_pair(std::string("H/32"), int64_t{32}));
  CHECK(h.scaled_symbol() == std::make_pair(std::string("H"), int64_t{1}));
  CHECK_FALSE((h + Dim(1)).scaled_symbol());
  CHECK_FALSE((h * h).scaled_symbol());
}

namespace {

// x: f32[1, 8, 32*"H/32", 32*"W/32"] with H/32 and W/32 in 1..30, in a graph.
Value* stepped_input(Graph& g) {
  g.dim_ranges()["H/32"] = DimRange{.min = 1, .max = 30, .opt = 30};
  g.dim_ranges()["W/32"] = DimRange{.min = 1, .max = 30, .opt = 30};
  Value* x = g.add_value("x", DType::F32,
                         Shape(std::vector<Dim>{Dim(1), Dim(8), Dim(32) * Dim::symbol("H/32"), Dim(32) * Dim::symbol("W/32")}));
  g.inputs().push_back(x);
  return x;
}

}  // namespace

TEST_CASE("stepped dims: strided windows, transposed convolutions and Resize keep polynomial shapes") {
  Graph g;
  Value* x = stepped_input(g);
  Value* w = g.add_constant("w", Tensor(DType::F32, {8, 8, 3, 3}));
  // 3x3 stride 2, pads 1: floor((32h + 2 - 3) / 2) + 1 = 16h.
  Node* conv = g.add_node("Conv", {x, w}, {"c"},
                          {{"strides", Attribute(std::vector<int64_t>{2, 2})},
                           {"pads", Attribute(std::vector<int64_t>{1, 1, 1, 1})}});
  infer_node(*conv);
  CHECK(conv->output(0)->shape().str() == "[1,8,16*H/32,16*W/32]");
  // 2x2 stride 2 max pool: 8h; SAME_UPPER 3x3 stride 1: unchanged.
  Node* pool = g.add_node("MaxPool", {conv->output(0)}, {"p"},
                          {{"kernel_shape", Attribute(std::vector<int64_t>{2, 2})},
                           {"strides", Attribute(std::vector<int64_t>{2, 2})}});
  infer_node(*pool);
  CHECK(pool->output(0)->shape().str() == "[1,8,8*H/32,8*W/32]");
  Node* same = g.add_node("AveragePool", {pool->output(0)}, {"s"},
                          {{"kernel_shape", Attribute(std::vector<int64_t>{3, 3})},
                           {"auto_pad", Attribute(std::string("SAME_UPPER"))}});
  infer_node(*same);
  CHECK(same->output(0)->shape() == pool->output(0)->shape());
  // ConvTranspose 2x2 stride 2: back to 16h.
  Value* wt = g.add_constant("wt", Tensor(DType::F32, {8, 4, 2, 2}));
  Node* up = g.add_node("ConvTranspose", {same->output(0), wt}, {"u"},
                        {{"strides", Attribute(std::vector<int64_t>{2, 2})}});
  infer_node(*up);
  CHECK(up->output(0)->shape().str() == "[1,4,16*H/32,16*W/32]");
  // Resize by constant scales 2: 32h.
  Value* scales = g.add_constant("scales", Tensor::from_vector<float>(DType::F32, {4}, {1, 1, 2, 2}));
  Node* resize = g.add_node("Resize", {up->output(0), nullptr, scales}, {"r"},
                            {{"mode", Attribute(std::string("nearest"))}});
  infer_node(*resize);
  CHECK(resize->output(0)->shape().str() == "[1,4,32*H/32,32*W/32]");
  // Stride 3 does not divide 32h: the dim stays unknown (the backend then names the node).
  Node* odd = g.add_node("Conv", {x, w}, {"o"}, {{"strides", Attribute(std::vector<int64_t>{3, 3})}});
  infer_node(*odd);
  CHECK(odd->output(0)->shape()[2].is_unknown());
  // Flatten multiplies symbolic dims.
  Node* flat = g.add_node("Flatten", {conv->output(0)}, {"f"}, {{"axis", Attribute(int64_t{3})}});
  infer_node(*flat);
  CHECK(flat->output(0)->shape().str() == "[128*H/32,16*W/32]");
}
