// Old opset forms of Slice, TopK, Pad, Split, Reduce* and Scatter become the IR's canonical
// (newest-opset) forms: attributes turn into constant inputs.
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::test;
using onnx::TensorProto;

namespace {

std::vector<int64_t> input_ints(const ir::Node* n, size_t i) {
  REQUIRE(n);
  REQUIRE(n->has_input(i));
  REQUIRE(n->input(i)->is_constant());
  return n->input(i)->constant().to_int64_vector();
}

}  // namespace

TEST_CASE("Slice-1: starts, ends and axes become inputs") {
  TempDir dir;
  ModelBuilder m(9);
  m.input("x", TensorProto::FLOAT, {int64_t{4}, int64_t{6}});
  auto* n = m.node("Slice", {"x"}, {"y"}, "sl");
  attr_ints(n, "starts", {1});
  attr_ints(n, "ends", {3});
  attr_ints(n, "axes", {1});
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Node* s = find_node(*g, "sl");
  CHECK(input_ints(s, 1) == std::vector<int64_t>{1});
  CHECK(input_ints(s, 2) == std::vector<int64_t>{3});
  CHECK(input_ints(s, 3) == std::vector<int64_t>{1});
}

TEST_CASE("TopK-1, Split-11, ReduceSum-11, ReduceMean-13 and Pad-2 move attributes to inputs") {
  TempDir dir;
  ModelBuilder m(1);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{4}});
  attr_i(m.node("TopK", {"x"}, {"v", "i"}, "topk"), "k", 3);
  m.output("v");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(input_ints(find_node(*g, "topk"), 1) == std::vector<int64_t>{3});

  ModelBuilder m2(11);
  m2.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{4}});
  auto* split = m2.node("Split", {"x"}, {"a", "b"}, "split");
  attr_i(split, "axis", 1);
  attr_ints(split, "split", {1, 3});
  attr_ints(m2.node("ReduceSum", {"a"}, {"s"}, "sum"), "axes", {0});
  m2.output("b");
  m2.output("s");
  g = frontend::import_onnx(m2.save(dir, "m2.onnx"));
  CHECK(input_ints(find_node(*g, "split"), 1) == std::vector<int64_t>{1, 3});
  CHECK(input_ints(find_node(*g, "sum"), 1) == std::vector<int64_t>{0});

  ModelBuilder m3(2);
  m3.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{4}});
  auto* pad = m3.node("Pad", {"x"}, {"p"}, "pad");
  attr_ints(pad, "pads", {0, 1, 0, 2});
  attr_f(pad, "value", 1.5f);
  m3.output("p");
  g = frontend::import_onnx(m3.save(dir, "m3.onnx"));
  const ir::Node* p = find_node(*g, "pad");
  CHECK(input_ints(p, 1) == std::vector<int64_t>{0, 1, 0, 2});
  CHECK(p->input(2)->constant().as_double(0) == 1.5);
}

TEST_CASE("Scatter-9 is ScatterElements") {
  TempDir dir;
  ModelBuilder m(9);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{2}});
  m.input("i", TensorProto::INT64, {int64_t{1}, int64_t{2}});
  m.input("u", TensorProto::FLOAT, {int64_t{1}, int64_t{2}});
  attr_i(m.node("Scatter", {"x", "i", "u"}, {"y"}, "sc"), "axis", 1);
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(find_node(*g, "sc")->op() == "ScatterElements");
}
