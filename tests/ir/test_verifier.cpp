// The verifier: a valid graph passes, and each class of problem, built by hand through the
// API, is reported with its context.
#include <doctest/doctest.h>

#include "ir/op_registry.h"
#include "ir/verifier.h"
#include "ir_text_util.h"

using namespace kiln::ir;
using kiln::ir::test::error_of;

namespace {

std::string verify_error(const Graph& g) {
  return error_of([&] { verify_graph(g); });
}

// x: f32[2,3] -> Relu -> y (typed) -> graph output.
struct Simple {
  Graph g;
  Value* x;
  Node* relu;
  Value* y;
  Simple() {
    x = g.add_value("x", DType::F32, Shape{2, 3});
    g.inputs().push_back(x);
    relu = g.add_node("Relu", {x}, {"y"}, {}, "relu");
    y = relu->output(0);
    y->set_type(DType::F32, Shape{2, 3});
    g.outputs().push_back(y);
  }
};

}  // namespace

TEST_CASE("valid graphs pass") {
  Simple s;
  CHECK(verify_error(s.g) == "");
  auto parsed = parse_graph(
      "graph m(%x: f32[N,3], %hi: f32[]) -> (%c) {\n"
      "  %w = constant f32[3] [1, 2, 3]\n"
      "  %a: f32[N,3] = Add(%x, %w) @add\n"
      "  %u = Relu(%a) @untyped\n"  // untyped outputs are not checked
      "  %c: f32[N,3] = Clip(%a, _, %hi) @clip\n"
      "}\n");
  CHECK(verify_error(*parsed) == "");
}

TEST_CASE("input counts and required inputs") {
  Simple s;
  s.g.add_node("Relu", {s.x, s.x}, {"two"}, {}, "r2");
  CHECK(verify_error(s.g) == "node 'r2' (Relu): has 2 inputs, op takes 1 to 1");

  Simple t;
  t.g.add_node("Add", {t.x, nullptr}, {"half"}, {}, "half");
  CHECK(verify_error(t.g) == "node 'half' (Add): required input 1 ('B') is missing");

  Simple u;
  u.g.add_node("Clip", {u.x, nullptr, nullptr, u.x}, {"c"}, {}, "clip4");
  CHECK(verify_error(u.g) == "node 'clip4' (Clip): has 4 inputs, op takes 1 to 3");
}

TEST_CASE("output counts") {
  Simple s;
  s.g.add_node("Neg", {s.x}, {"a", "b"}, {}, "neg2");
  CHECK(verify_error(s.g) == "node 'neg2' (Neg): has 2 outputs, op produces 1 to 1");
}

TEST_CASE("attributes: unknown, wrong type, required") {
  Simple s;
  s.g.add_node("Relu", {s.x}, {"z"}, {{"alpha", 0.5f}}, "leaky");
  CHECK(verify_error(s.g) == "node 'leaky' (Relu): unknown attribute 'alpha'");

  // Ops with attributes come from other op families; use whichever are registered.
  const OpDef* with_attr = nullptr;
  const OpDef* with_required = nullptr;
  for (const OpDef* def : registry().all())
    for (const AttrSpec& a : def->attrs) {
      if (!with_attr) with_attr = def;
      if (!with_required && !a.default_value && !a.optional) with_required = def;
    }
  if (with_attr) {
    Graph g;
    std::vector<Value*> ins;
    for (size_t i = 0; i < with_attr->min_inputs(); ++i) ins.push_back(g.add_value("in"));
    g.inputs() = ins;
    const AttrSpec& spec = with_attr->attrs[0];
    Attribute wrong = spec.type == AttrType::String ? Attribute(int64_t{1}) : Attribute("text");
    g.add_node(with_attr->name, ins, {"out"}, {{spec.name, wrong}}, "n");
    CHECK(verify_error(g) == fmt::format("node 'n' ({}): attribute '{}' is {}, expected {}", with_attr->name,
                                         spec.name, attr_type_name(wrong.type()), attr_type_name(spec.type)));
  } else {
    MESSAGE("no registered op has attributes; attribute type check not exercised");
  }
  if (with_required) {
    Graph g;
    std::vector<Value*> ins;
    for (size_t i = 0; i < with_required->min_inputs(); ++i) ins.push_back(g.add_value("in"));
    g.inputs() = ins;
    g.add_node(with_required->name, ins, {"out"}, {}, "n");
    CHECK(verify_error(g).starts_with(fmt::format("node 'n' ({}): missing required attribute", with_required->name)));
  } else {
    MESSAGE("no registered op has a required attribute; that check not exercised");
  }
}

TEST_CASE("values used before they are defined") {
  Simple s;
  Node* a = s.g.add_node("Neg", {s.y}, {"a"}, {}, "a");
  (void)a;
  s.g.add_node("Abs", {s.x}, {"b"}, {}, "b");
  s.g.move_last_before(s.relu);  // fine: b reads x only
  CHECK(verify_error(s.g) == "");
  s.g.add_node("Abs", {s.g.find_value("a")}, {"c"}, {}, "c");
  s.g.move_last_before(s.relu);  // c now reads a, which comes later
  CHECK(verify_error(s.g) == "node 'c' (Abs): input 0 %a is used before it is defined");
}

TEST_CASE("values of other graphs") {
  Graph other;
  Value* foreign = other.add_value("f", DType::F32, Shape{2, 3});
  {
    Simple s;
    s.g.add_node("Add", {s.x, foreign}, {"z"}, {}, "mix");
    CHECK(verify_error(s.g) == "node 'mix' (Add): input 1 is not a value of this graph or an enclosing one");
  }
  {
    Simple s;
    s.g.outputs().push_back(foreign);
    CHECK(verify_error(s.g) == "graph output 1 is not a value of this graph or an enclosing one");
  }
  {
    Simple s;
    s.g.inputs().push_back(foreign);
    CHECK(verify_error(s.g) == "graph input 1 is not a value of this graph");
  }
  {
    // A node of another graph reading our value leaves a foreign user in its users list.
    Simple s;
    Graph thief;
    thief.add_node("Neg", {s.x}, {"n"}, {}, "thief");
    CHECK(verify_error(s.g) == "value %x lists a user that is not a node of the graph");
  }
}

TEST_CASE("graph inputs and outputs") {
  {
    Simple s;
    s.g.outputs().push_back(s.g.add_value("orphan"));
    CHECK(verify_error(s.g) == "graph output %orphan is not defined");
  }
  {
    Simple s;
    s.g.inputs().push_back(s.y);
    CHECK(verify_error(s.g) == "graph input %y is produced by node 'relu' (Relu)");
  }
  {
    Simple s;
    s.g.inputs().push_back(s.x);
    CHECK(verify_error(s.g) == "graph input %x is listed twice");
  }
  {
    Simple s;
    s.g.outputs().push_back(nullptr);
    CHECK(verify_error(s.g) == "graph output 1 is null");
  }
}

TEST_CASE("constants: type must match data, no producer") {
  {
    Simple s;
    Value* c = s.g.add_constant("c", Tensor::from_vector<float>(DType::F32, {2}, {1, 2}));
    c->set_type(DType::F32, Shape{3});
    CHECK(verify_error(s.g) == "constant %c has type f32[3] but its data is f32[2]");
  }
  {
    Simple s;
    s.y->set_constant(Tensor::from_vector<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    CHECK(verify_error(s.g) == "value %y is produced by node 'relu' (Relu) and also holds constant data");
  }
}

TEST_CASE("recorded types must agree with the op's shape rule") {
  {
    Simple s;
    s.y->set_type(DType::F32, Shape{2, 4});
    CHECK(verify_error(s.g) ==
          "node 'relu' (Relu): output %y is recorded as f32[2,4] but its shape rule gives f32[2,3]");
  }
  {
    Simple s;
    s.y->set_type(DType::F16, Shape{2, 3});
    CHECK(verify_error(s.g) ==
          "node 'relu' (Relu): output %y is recorded as f16[2,3] but its shape rule gives f32[2,3]");
  }
  {
    Simple s;
    s.y->set_type(DType::F32, Shape({Dim::symbol("N"), Dim(3)}));
    CHECK(verify_error(s.g) ==
          "node 'relu' (Relu): output %y is recorded as f32[N,3] but its shape rule gives f32[2,3]");
  }
  {
    // Unknown dims match anything; two symbols match each other.
    Simple s;
    s.y->set_type(DType::F32, Shape({Dim::unknown(), Dim(3)}));
    CHECK(verify_error(s.g) == "");
    auto g = parse_graph(
        "graph m(%x: f32[N,?]) -> (%y) {\n"
        "  %y: f32[M,7] = Relu(%x) @r\n"
        "}\n");
    CHECK(verify_error(*g) == "");
  }
  {
    Simple s;
    Value* b = s.g.add_value("b", DType::F32, Shape{4});
    s.g.inputs().push_back(b);
    Node* n = s.g.add_node("Add", {s.x, b}, {"sum"}, {}, "bad_add");
    n->output(0)->set_type(DType::F32, Shape{2, 3});
    CHECK(verify_error(s.g) ==
          "node 'bad_add' (Add): shapes [2,3] and [4] cannot be broadcast (re-running its shape rule on "
          "the recorded types)");
  }
}

TEST_CASE("subgraphs: checked only where an op declares a graph attribute") {
  // No registered op takes a graph attribute yet (If and Loop are not written), so a subgraph
  // can only be put on a node whose op does not declare it; the verifier reports that first.
  auto g = parse_graph(
      "graph m(%x: f32[1]) -> (%y) {\n"
      "  %y = Relu(%x) {body=graph b() -> (%z) {\n"
      "    %z = Neg(%x) @inner\n"
      "  }} @outer\n"
      "}\n");
  bool has_graph_op = false;
  for (const OpDef* def : registry().all())
    for (const AttrSpec& a : def->attrs) has_graph_op = has_graph_op || a.type == AttrType::Graph;
  if (!has_graph_op) CHECK(verify_error(*g) == "node 'outer' (Relu): unknown attribute 'body'");
  // The users of an outer value include the subgraph's nodes, so the users check passes.
  CHECK(g->inputs()[0]->users().size() == 2);
}
