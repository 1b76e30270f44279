// Old opset forms become the IR's canonical (newest-opset) forms.
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::test;
using onnx::TensorProto;

namespace {

std::vector<int64_t> constant_ints(const ir::Value* v) {
  REQUIRE(v);
  REQUIRE(v->is_constant());
  return v->constant().to_int64_vector();
}

}  // namespace

TEST_CASE("Reshape-1: the shape attribute becomes a constant input") {
  TempDir dir;
  ModelBuilder m(4);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{6}});
  auto* n = m.node("Reshape", {"x"}, {"y"}, "r");
  attr_ints(n, "shape", {3, 4});
  attr_ints(n, "consumed_inputs", {0});
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Node* r = find_node(*g, "r");
  REQUIRE(r);
  CHECK(r->op() == "Reshape");
  CHECK(r->attrs().empty());
  CHECK(constant_ints(r->input(1)) == std::vector<int64_t>{3, 4});
  CHECK(r->input(1)->dtype() == ir::DType::I64);
}

TEST_CASE("Squeeze-11 and Unsqueeze-11: axes become a constant input") {
  TempDir dir;
  ModelBuilder m(11);
  m.input("x", TensorProto::FLOAT, {int64_t{1}, int64_t{3}});
  attr_ints(m.node("Unsqueeze", {"x"}, {"u"}, "u"), "axes", {0, -1});
  attr_ints(m.node("Squeeze", {"u"}, {"s"}, "s"), "axes", {0});
  m.node("Squeeze", {"s"}, {"y"}, "s_all");
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(constant_ints(find_node(*g, "u")->input(1)) == std::vector<int64_t>{0, -1});
  CHECK(constant_ints(find_node(*g, "s")->input(1)) == std::vector<int64_t>{0});
  CHECK(find_node(*g, "s_all")->num_inputs() == 1);
  CHECK(find_node(*g, "u")->attrs().empty());

  ModelBuilder bad(11);
  bad.input("x", TensorProto::FLOAT, {int64_t{3}});
  bad.node("Unsqueeze", {"x"}, {"y"}, "u");
  bad.output("y");
  std::string path = bad.save(dir);
  CHECK(import_error(path) ==
        path + ": 1 unsupported node: Unsqueeze (u: Unsqueeze without an 'axes' attribute)");
}

TEST_CASE("Clip-6: min and max attributes become scalar inputs of the input's dtype") {
  TempDir dir;
  ModelBuilder m(6);
  m.input("x", TensorProto::FLOAT16, {int64_t{4}});
  auto* both = m.node("Clip", {"x"}, {"a"}, "both");
  attr_f(both, "min", 0.0f);
  attr_f(both, "max", 6.0f);
  attr_f(m.node("Clip", {"a"}, {"b"}, "max_only"), "max", 1.0f);
  m.node("Clip", {"b"}, {"y"}, "neither");
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Node* c = find_node(*g, "both");
  REQUIRE(c->num_inputs() == 3);
  CHECK(c->input(1)->dtype() == ir::DType::F16);
  CHECK(c->input(1)->shape().rank() == 0);
  CHECK(c->input(1)->constant().as_double(0) == 0.0);
  CHECK(c->input(2)->constant().as_double(0) == 6.0);
  CHECK(c->attrs().empty());
  const ir::Node* mo = find_node(*g, "max_only");
  REQUIRE(mo->num_inputs() == 3);
  CHECK(mo->input(1) == nullptr);
  // The intermediate 'a' has no type yet; its declared value_info is not there, so f32.
  CHECK(mo->input(2)->constant().as_double(0) == 1.0);
  CHECK(find_node(*g, "neither")->num_inputs() == 1);
}

TEST_CASE("Clip-6 takes an intermediate's dtype from its value_info") {
  TempDir dir;
  ModelBuilder m(6);
  m.input("x", TensorProto::DOUBLE, {int64_t{4}});
  m.node("Relu", {"x"}, {"a"});
  m.value_info("a", TensorProto::DOUBLE, {int64_t{4}});
  attr_f(m.node("Clip", {"a"}, {"y"}, "c"), "max", 1.0f);
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(find_node(*g, "c")->input(2)->dtype() == ir::DType::F64);
}

TEST_CASE("Softmax-11 over the last axis is Softmax with axis -1") {
  TempDir dir;
  ModelBuilder m(11);
  m.input("x", TensorProto::FLOAT, {std::string("N"), int64_t{10}});
  m.node("Softmax", {"x"}, {"y"}, "sm");  // axis defaults to 1
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(op_sequence(*g) == std::vector<std::string>{"Softmax"});
  CHECK(find_node(*g, "sm")->i("axis") == -1);
}

TEST_CASE("Softmax-11 over several axes flattens to 2-D and reshapes back") {
  TempDir dir;
  ModelBuilder m(11);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{3}, int64_t{4}});
  m.node("LogSoftmax", {"x"}, {"y"}, "lsm");  // axis 1: softmax over 3*4 values
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(op_sequence(*g) == std::vector<std::string>{"Flatten", "Shape", "LogSoftmax", "Reshape"});
  const ir::Node* flat = g->nodes()[0].get();
  CHECK(flat->i("axis") == 1);
  CHECK(flat->input(0) == g->inputs()[0]);
  const ir::Node* sm = find_node(*g, "lsm");
  REQUIRE(sm);
  CHECK(sm->op() == "LogSoftmax");
  CHECK(sm->i("axis") == 1);
  CHECK(sm->input(0) == flat->output(0));
  const ir::Node* back = g->nodes()[3].get();
  CHECK(back->input(0) == sm->output(0));
  CHECK(back->input(1) == g->nodes()[1]->output(0));
  CHECK(g->outputs()[0] == back->output(0));
  CHECK(back->output(0)->name() == "y");
}

TEST_CASE("Softmax-11 of unknown rank uses the flattening form") {
  TempDir dir;
  ModelBuilder m(11);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  m.node("Relu", {"x"}, {"a"});
  m.node("Softmax", {"a"}, {"y"}, "sm");
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(op_sequence(*g) == std::vector<std::string>{"Relu", "Flatten", "Shape", "Softmax", "Reshape"});
}

TEST_CASE("Dropout becomes Identity; with a mask or training_mode it stays Dropout") {
  TempDir dir;
  for (int opset : {7, 12, 13}) {
    CAPTURE(opset);
    ModelBuilder m(opset);
    m.input("x", TensorProto::FLOAT, {int64_t{4}});
    auto* d = m.node("Dropout", {"x"}, {"y"}, "drop");
    attr_f(d, "ratio", 0.3f);
    m.output("y");
    auto g = frontend::import_onnx(m.save(dir));
    const ir::Node* n = find_node(*g, "drop");
    REQUIRE(n);
    CHECK(n->op() == "Identity");
    CHECK(n->num_inputs() == 1);
    CHECK(n->num_outputs() == 1);
    CHECK(n->attrs().empty());
  }

  ModelBuilder used(7);
  used.input("x", TensorProto::FLOAT, {int64_t{4}});
  attr_f(used.node("Dropout", {"x"}, {"y", "mask"}, "drop"), "ratio", 0.3f);
  used.output("y");
  used.output("mask", TensorProto::BOOL);
  auto g = frontend::import_onnx(used.save(dir));
  const ir::Node* n = find_node(*g, "drop");
  REQUIRE(n);
  CHECK(n->op() == "Dropout");
  CHECK(n->num_inputs() == 1);
  CHECK(n->num_outputs() == 2);
  CHECK(n->attrs().empty());

  ModelBuilder training(13);
  training.input("x", TensorProto::FLOAT, {int64_t{4}});
  training.input("train", TensorProto::BOOL, {});
  training.node("Dropout", {"x", "", "train"}, {"y"}, "drop");
  training.output("y");
  g = frontend::import_onnx(training.save(dir));
  n = find_node(*g, "drop");
  REQUIRE(n);
  CHECK(n->op() == "Dropout");
  CHECK(n->num_inputs() == 3);
}

TEST_CASE("BatchNormalization: legacy attributes go, training mode keeps its outputs") {
  TempDir dir;
  auto model = [](int opset) {
    ModelBuilder m(opset);
    m.input("x", TensorProto::FLOAT, {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{3}});
    for (const char* p : {"scale", "bias", "mean", "var"}) m.initializer_f32(p, {2}, {1, 1});
    return m;
  };
  ModelBuilder m = model(7);
  auto* bn = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
                    {"y", "rm", "rv", "sm", "sv"}, "bn");
  attr_i(bn, "spatial", 1);
  attr_f(bn, "epsilon", 1e-3f);
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Node* n = find_node(*g, "bn");
  REQUIRE(n);
  CHECK(n->num_outputs() == 1);
  CHECK(!n->has_attr("spatial"));
  CHECK(n->f("epsilon") == 1e-3f);

  // training_mode=1 keeps its running-statistics outputs; the IR op computes them.
  ModelBuilder t = model(15);
  attr_i(t.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "rm", "rv"}, "bn"),
         "training_mode", 1);
  t.output("y");
  t.output("rm");
  g = frontend::import_onnx(t.save(dir));
  n = find_node(*g, "bn");
  REQUIRE(n);
  CHECK(n->num_outputs() == 3);
  CHECK(n->i("training_mode") == 1);

  // At inference the training outputs must be unused.
  ModelBuilder used = model(15);
  used.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "rm", "rv"}, "bn");
  used.output("y");
  used.output("rm");
  std::string path = used.save(dir);
  CHECK(import_error(path) == path + ": 1 unsupported node: BatchNormalization (bn: its training outputs (running "
                                     "or saved statistics) are used)");
}

TEST_CASE("Constant: every form becomes the value tensor") {
  TempDir dir;
  ModelBuilder m(13);
  auto* a = add_attr(m.node("Constant", {}, {"f"}, "cf"), "value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(2.5f);
  attr_ints(m.node("Constant", {}, {"is"}, "cis"), "value_ints", {1, 2, 3});
  attr_i(m.node("Constant", {}, {"i"}, "ci"), "value_int", 7);
  auto* v = add_attr(m.node("Constant", {}, {"t"}, "ct"), "value");
  v->set_type(onnx::AttributeProto::TENSOR);
  v->mutable_t()->set_data_type(TensorProto::FLOAT);
  v->mutable_t()->add_dims(2);
  v->mutable_t()->set_raw_data(bytes_of(std::vector<float>{4, 5}));
  for (const char* out : {"f", "is", "i", "t"}) m.output(out, 0);
  auto g = frontend::import_onnx(m.save(dir));
  const ir::Tensor& f = find_node(*g, "cf")->attr("value").t();
  CHECK(f.dtype() == ir::DType::F32);
  CHECK(f.rank() == 0);
  CHECK(f.as_double(0) == 2.5);
  const ir::Tensor& is = find_node(*g, "cis")->attr("value").t();
  CHECK(is.dtype() == ir::DType::I64);
  CHECK(is.to_int64_vector() == std::vector<int64_t>{1, 2, 3});
  CHECK(find_node(*g, "ci")->attr("value").t().to_int64_vector() == std::vector<int64_t>{7});
  CHECK(values_of<float>(find_node(*g, "ct")->attr("value").t()) == std::vector<float>{4, 5});
  CHECK(find_node(*g, "ct")->attrs().size() == 1);
}

TEST_CASE("opset 6 binary ops: legacy broadcast becomes numpy broadcast") {
  TempDir dir;
  ModelBuilder m(6);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  m.initializer_f32("b", {3}, {1, 2, 3});
  m.initializer_f32("c", {2}, {1, 2});
  attr_i(m.node("Add", {"x", "b"}, {"s"}, "add"), "broadcast", 1);  // trailing dims
  auto* mul = m.node("Mul", {"s", "c"}, {"y"}, "mul");  // c along axis 0: c becomes [2,1]
  attr_i(mul, "broadcast", 1);
  attr_i(mul, "axis", 0);
  m.value_info("s", TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(find_node(*g, "add")->attrs().empty());
  CHECK(op_sequence(*g) == std::vector<std::string>{"Add", "Unsqueeze", "Mul"});
  const ir::Node* unsq = g->nodes()[1].get();
  CHECK(unsq->input(0) == g->find_value("c"));
  CHECK(constant_ints(unsq->input(1)) == std::vector<int64_t>{1});
  CHECK(find_node(*g, "mul")->input(1) == unsq->output(0));
  CHECK(find_node(*g, "mul")->attrs().empty());

  m.graph->clear_value_info();  // the rank of 's' is now unknown
  std::string path = m.save(dir);
  CHECK(import_error(path) == path + ": 1 unsupported node: Mul (mul: legacy broadcasting with an "
                                     "axis needs the ranks of both inputs declared)");
}

TEST_CASE("PRelu before opset 7: a slope of C values applies along the channel axis") {
  TempDir dir;
  ModelBuilder m(6);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}});
  m.input("v", TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  m.initializer_f32("s", {3}, {0.1f, 0.2f, 0.3f});
  m.initializer_f32("one", {1}, {0.5f});
  m.node("PRelu", {"x", "s"}, {"y"}, "per_channel");  // s becomes [3, 1, 1]
  m.node("PRelu", {"x", "one"}, {"z"}, "shared");     // one value: numpy broadcasting as is
  m.node("PRelu", {"v", "s"}, {"w"}, "rank2");        // [2, 3] and [3]: trailing dims already
  m.output("y");
  m.output("z");
  m.output("w");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(op_sequence(*g) == std::vector<std::string>{"Unsqueeze", "PRelu", "PRelu", "PRelu"});
  const ir::Node* unsq = g->nodes()[0].get();
  CHECK(unsq->input(0) == g->find_value("s"));
  CHECK(constant_ints(unsq->input(1)) == std::vector<int64_t>{1, 2});
  CHECK(find_node(*g, "per_channel")->input(1) == unsq->output(0));
  CHECK(find_node(*g, "shared")->input(1) == g->find_value("one"));
  CHECK(find_node(*g, "rank2")->input(1) == g->find_value("s"));
}

TEST_CASE("Concat before opset 4 defaults axis to 1") {
  TempDir dir;
  ModelBuilder m(3);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  m.node("Concat", {"x", "x"}, {"y"}, "cat");
  m.output("y");
  auto g = frontend::import_onnx(m.save(dir));
  CHECK(find_node(*g, "cat")->i("axis") == 1);
}

TEST_CASE("old forms nobody rewrites are reported") {
  TempDir dir;
  ModelBuilder m(9);
  m.input("x", TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  attr_ints(m.node("Slice", {"x"}, {"y"}, "sl"), "starts", {0});
  m.output("y");
  std::string path = m.save(dir);
  std::string error = import_error(path);
  // Slice may not be implemented at all; either way the node is named.
  CHECK(error.starts_with(path + ": 1 unsupported node: Slice (sl"));
}
