// Importing whole models: inputs, initializers, nodes, outputs and the model info.
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::test;
using onnx::TensorProto;

TEST_CASE("a small model imports with its types, names and info") {
  TempDir dir;
  ModelBuilder m(17);
  m.input("x", TensorProto::FLOAT, {std::string("N"), int64_t{3}, std::string("?")});
  m.initializer_f32("b", {3, 1}, {1, 2, 3}, /*raw=*/true);
  m.node("Add", {"x", "b"}, {"s"}, "add0");
  m.node("Relu", {"s"}, {"y"});  // unnamed: gets "Relu_1"
  m.output("y", TensorProto::FLOAT, {std::string("N"), int64_t{3}, std::string("?")});
  frontend::OnnxModelInfo info;
  auto g = frontend::import_onnx(m.save(dir), {}, &info);
  REQUIRE(g);

  REQUIRE(g->inputs().size() == 1);
  const ir::Value* x = g->inputs()[0];
  CHECK(x->name() == "x");
  CHECK(x->dtype() == ir::DType::F32);
  REQUIRE(x->shape().rank() == 3);
  CHECK(x->shape()[0] == ir::Dim::symbol("N"));
  CHECK(x->shape()[1] == ir::Dim(3));
  CHECK(x->shape()[2] == ir::Dim::unknown());

  const ir::Value* b = g->find_value("b");
  REQUIRE(b);
  CHECK(b->is_constant());
  CHECK(b->shape() == ir::Shape{3, 1});
  CHECK(values_of<float>(b->constant()) == std::vector<float>{1, 2, 3});

  CHECK(op_sequence(*g) == std::vector<std::string>{"Add", "Relu"});
  const ir::Node* add = find_node(*g, "add0");
  REQUIRE(add);
  CHECK(add->input(0) == x);
  CHECK(add->input(1) == b);
  const ir::Node* relu = find_node(*g, "Relu_1");
  REQUIRE(relu);
  CHECK(relu->input(0) == add->output(0));
  REQUIRE(g->outputs().size() == 1);
  CHECK(g->outputs()[0] == relu->output(0));
  CHECK(g->outputs()[0]->name() == "y");

  CHECK(info.ir_version == 8);
  CHECK(info.producer == "kiln-test 1.0");
  CHECK(info.opsets == std::map<std::string, int>{{"", 17}});
  CHECK(info.unsupported.empty());
  CHECK(info.op_histogram == std::map<std::string, int>{{"Add", 1}, {"Relu", 1}});
}

TEST_CASE("an initializer also listed as a graph input is a constant, not an input") {
  TempDir dir;
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {int64_t{2}});
  m.input("w", TensorProto::FLOAT, {int64_t{2}});
  m.initializer_f32("w", {2}, {5, 6});
  m.node("Mul", {"x", "w"}, {"y"});
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  REQUIRE(g->inputs().size() == 1);
  CHECK(g->inputs()[0]->name() == "x");
  CHECK(g->find_value("w")->is_constant());
}

TEST_CASE("an empty input name is an omitted optional input") {
  TempDir dir;
  ModelBuilder m(13);
  m.input("x", TensorProto::FLOAT, {int64_t{4}});
  m.initializer_f32("hi", {}, {6});
  m.node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Node* clip = find_node(*g, "clip");
  REQUIRE(clip);
  CHECK(clip->num_inputs() == 3);
  CHECK(clip->input(1) == nullptr);
  CHECK(clip->input(2) == g->find_value("hi"));
}

TEST_CASE("attributes keep their types") {
  TempDir dir;
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  m.initializer_f32("w", {2, 1, 3, 3}, std::vector<float>(18, 1.0f));
  auto* conv = m.node("Conv", {"x", "w"}, {"c"}, "conv");
  attr_ints(conv, "strides", {2, 2});
  attr_i(conv, "group", 2);
  auto* pad = add_attr(conv, "auto_pad");
  pad->set_type(onnx::AttributeProto::STRING);
  pad->set_s("SAME_UPPER");
  m.initializer_f32("a", {2, 3}, std::vector<float>(6, 1.0f));
  m.initializer_f32("bm", {3, 4}, std::vector<float>(12, 1.0f));
  auto* gemm = m.node("Gemm", {"a", "bm"}, {"g"}, "gemm");
  attr_f(gemm, "alpha", 0.5f);
  m.output("c");
  m.output("g");
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Node* c = find_node(*g, "conv");
  REQUIRE(c);
  CHECK(c->ints("strides") == std::vector<int64_t>{2, 2});
  CHECK(c->i("group") == 2);
  CHECK(c->s("auto_pad") == "SAME_UPPER");
  CHECK(find_node(*g, "gemm")->f("alpha") == 0.5f);
}

TEST_CASE("an attribute the IR op does not know is reported, a known no-op one is dropped") {
  TempDir dir;
  ModelBuilder m(6);
  m.input("x", TensorProto::FLOAT, {int64_t{4}});
  auto* relu = m.node("Relu", {"x"}, {"y"}, "r");
  attr_ints(relu, "consumed_inputs", {0});  // opset-1 memory hint
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(find_node(*g, "r")->attrs().empty());

  attr_i(relu, "foo", 1);
  std::string path = m.save(dir);
  CHECK(import_error(path) == path + ": 1 unsupported node: Relu (r: attribute 'foo' is not supported)");
}

TEST_CASE("with allow_unsupported, unsupported nodes are reported and no graph is made") {
  TempDir dir;
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {int64_t{4}});
  m.node("Relu", {"x"}, {"a"});
  m.node("NoSuchOp", {"a"}, {"b"}, "nso");
  auto* f = m.node("Foo", {"b"}, {"y"}, "f1");
  f->set_domain("com.x");
  m.output("y");
  frontend::OnnxModelInfo info;
  frontend::OnnxImportOptions options;
  options.allow_unsupported = true;
  auto g = frontend::import_onnx(m.save(dir), options, &info);
  CHECK(g == nullptr);
  REQUIRE(info.unsupported.size() == 2);
  CHECK(info.unsupported[0].name == "nso");
  CHECK(info.unsupported[0].op_type == "NoSuchOp");
  CHECK(info.unsupported[0].domain == "");
  CHECK(info.unsupported[0].opset == 17);
  CHECK(info.unsupported[0].reason == "not implemented");
  CHECK(info.unsupported[1].name == "f1");
  CHECK(info.unsupported[1].domain == "com.x");
  CHECK(info.unsupported[1].opset == 0);
  CHECK(info.op_histogram == std::map<std::string, int>{{"Foo", 1}, {"NoSuchOp", 1}, {"Relu", 1}});
}

TEST_CASE("the ai.onnx domain is the default domain") {
  TempDir dir;
  ModelBuilder m;
  m.model.mutable_opset_import(0)->set_domain("ai.onnx");
  m.input("x", TensorProto::FLOAT, {int64_t{4}});
  m.node("Relu", {"x"}, {"y"})->set_domain("ai.onnx");
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(op_sequence(*g) == std::vector<std::string>{"Relu"});
}

TEST_CASE("a model whose output is an input or an initializer") {
  TempDir dir;
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {int64_t{4}});
  m.initializer_f32("c", {1}, {1});
  m.output("x");
  m.output("c");
  auto g = frontend::import_onnx(m.save(dir));
  REQUIRE(g->outputs().size() == 2);
  CHECK(g->outputs()[0] == g->inputs()[0]);
  CHECK(g->outputs()[1]->is_constant());
}

TEST_CASE("a graph input needs a type and a shape") {
  TempDir dir;
  ModelBuilder m;
  auto* vi = m.graph->add_input();
  vi->set_name("x");
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::string path = m.save(dir);
  CHECK(import_error(path) == path + ": input 'x' has no type");

  m.graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  path = m.save(dir);
  CHECK(import_error(path) == path + ": input 'x' has no shape (rank unknown)");

  m.graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::STRING);
  path = m.save(dir);
  CHECK(import_error(path) == path + ": input 'x' has unsupported data type string");
}

TEST_CASE("load_tensor_proto_file reads backend test data") {
  TempDir dir;
  TensorProto t;
  t.set_name("input_0");
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(2);
  t.add_dims(3);
  t.set_raw_data(bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6}));
  std::string path = dir.file("input_0.pb");
  write_file(path, t.SerializeAsString());
  ir::Tensor loaded = frontend::load_tensor_proto_file(path);
  CHECK(loaded.dtype() == ir::DType::F32);
  CHECK(loaded.dims() == std::vector<int64_t>{2, 3});
  CHECK(values_of<float>(loaded) == std::vector<float>{1, 2, 3, 4, 5, 6});

  t.set_raw_data(bytes_of(std::vector<float>{1, 2, 3}));
  write_file(path, t.SerializeAsString());
  CHECK(error_of([&] { frontend::load_tensor_proto_file(path); }) ==
        path + ": tensor 'input_0': raw_data has 12 bytes, expected 24 (6 elements of f32)");

  write_file(path, "");
  CHECK(error_of([&] { frontend::load_tensor_proto_file(path); }) ==
        path + ": not an ONNX tensor (empty file)");
}
