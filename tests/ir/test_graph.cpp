// The graph-building API: values, nodes, uses, removal, unique names.
#include <doctest/doctest.h>

#include "ir/graph.h"
#include "ir/op_registry.h"

using namespace kiln::ir;

TEST_CASE("add_node links producers, users and outputs") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{2, 3});
  g.inputs().push_back(x);
  Node* relu = g.add_node("Relu", {x}, {"y"}, {}, "relu_1");
  Node* add = g.add_node("Add", {relu->output(0), x}, {"z"});
  g.outputs().push_back(add->output(0));

  CHECK(relu->op() == "Relu");
  CHECK(relu->name() == "relu_1");
  CHECK(&relu->def() == registry().find("Relu"));
  CHECK(relu->graph() == &g);
  CHECK(add->name() == "Add_1");  // default: op and position
  CHECK(relu->output(0)->producer() == relu);
  CHECK(relu->output(0)->name() == "y");
  CHECK(x->users() == std::vector<Node*>{relu, add});
  CHECK(relu->output(0)->users() == std::vector<Node*>{add});
  CHECK(g.find_value("z") == add->output(0));
  CHECK(g.find_value("nope") == nullptr);
  CHECK(g.is_graph_output(add->output(0)));
  CHECK_FALSE(g.is_graph_output(x));
  CHECK(g.nodes().size() == 2);
}

TEST_CASE("add_node rejects an unknown op") {
  Graph g;
  Value* x = g.add_value("x");
  CHECK_THROWS_WITH_AS(g.add_node("NoSuchOp", {x}, {"y"}), "unknown op 'NoSuchOp'", kiln::Error);
}

TEST_CASE("value names are made unique") {
  Graph g;
  CHECK(g.add_value("x")->name() == "x");
  CHECK(g.add_value("x")->name() == "x_1");
  CHECK(g.add_value("x")->name() == "x_2");
  CHECK(g.add_value("")->name() == "v");
  CHECK(g.unique_value_name("x") == "x_3");
  CHECK(g.unique_value_name("fresh") == "fresh");
  Node* n = g.add_node("Relu", {g.find_value("x")}, {"x"});
  CHECK(n->output(0)->name() == "x_3");
}

TEST_CASE("set_input keeps users lists, once per slot") {
  Graph g;
  Value* a = g.add_value("a", DType::F32, Shape{1});
  Value* b = g.add_value("b", DType::F32, Shape{1});
  Node* n = g.add_node("Add", {a, a}, {"c"});
  CHECK(a->users().size() == 2);
  n->set_input(1, b);
  CHECK(a->users() == std::vector<Node*>{n});
  CHECK(b->users() == std::vector<Node*>{n});
  n->set_input(3, b);  // grows, with an omitted slot between
  CHECK(n->num_inputs() == 4);
  CHECK_FALSE(n->has_input(2));
  CHECK(n->input(7) == nullptr);
}

TEST_CASE("replace_all_uses rewires node inputs and graph outputs") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{4});
  Node* r = g.add_node("Relu", {x}, {"r"});
  Node* n1 = g.add_node("Neg", {r->output(0)}, {"n1"});
  Node* n2 = g.add_node("Add", {r->output(0), r->output(0)}, {"n2"});
  g.outputs() = {r->output(0), n2->output(0)};
  g.replace_all_uses(r->output(0), x);
  CHECK(r->output(0)->users().empty());
  CHECK(n1->input(0) == x);
  CHECK(n2->input(0) == x);
  CHECK(n2->input(1) == x);
  CHECK(x->users().size() == 4);  // r, n1, n2 twice
  CHECK(g.outputs()[0] == x);
}

TEST_CASE("remove_nodes drops nodes and values nobody refers to") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{4});
  g.inputs().push_back(x);
  Node* a = g.add_node("Relu", {x}, {"a"});
  Node* b = g.add_node("Neg", {a->output(0)}, {"b"});
  Node* c = g.add_node("Abs", {x}, {"c"});
  g.outputs().push_back(c->output(0));

  CHECK_THROWS_WITH_AS(g.remove_nodes({a}), "cannot remove node 'Relu_0' (Relu): output 'a' is still used",
                       kiln::Error);
  // Dead chain removed together, in any order.
  Graph h;
  Value* hx = h.add_value("x", DType::F32, Shape{4});
  h.inputs().push_back(hx);
  Node* ha = h.add_node("Relu", {hx}, {"a"});
  Node* hb = h.add_node("Neg", {ha->output(0)}, {"b"});
  Node* hc = h.add_node("Abs", {hx}, {"c"});
  h.outputs().push_back(hc->output(0));
  h.remove_nodes({ha, hb});
  CHECK(h.nodes().size() == 1);
  CHECK(h.find_value("a") == nullptr);
  CHECK(h.find_value("b") == nullptr);
  CHECK(h.find_value("x") == hx);
  CHECK(hx->users() == std::vector<Node*>{hc});
  CHECK(h.values().size() == 2);
  (void)b;
}

TEST_CASE("remove_unused_values keeps inputs, outputs and constants in use") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{1});
  g.inputs().push_back(x);
  Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::F32, {1}, {2.f}));
  g.add_value("orphan");
  g.add_constant("unused_const", Tensor::scalar_i64(3));
  Node* n = g.add_node("Mul", {x, w}, {"y"});
  g.outputs().push_back(n->output(0));
  g.remove_unused_values();
  CHECK(g.find_value("orphan") == nullptr);
  CHECK(g.find_value("unused_const") == nullptr);
  CHECK(g.find_value("w") == w);
  CHECK(g.values().size() == 3);
}

TEST_CASE("move_last_before inserts mid-graph") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{1});
  Node* a = g.add_node("Relu", {x}, {"a"});
  Node* b = g.add_node("Neg", {x}, {"b"});
  Node* c = g.add_node("Abs", {x}, {"c"});
  g.move_last_before(a);
  REQUIRE(g.nodes().size() == 3);
  CHECK(g.nodes()[0].get() == c);
  CHECK(g.nodes()[1].get() == a);
  CHECK(g.nodes()[2].get() == b);
}

TEST_CASE("node attributes fall back to schema defaults") {
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape{1});
  Node* n = g.add_node("Relu", {x}, {"y"}, {{"k", Attribute(int64_t{4})}});
  CHECK(n->has_attr("k"));
  CHECK(n->i("k") == 4);
  CHECK_THROWS_WITH_AS(n->attr("missing"), "node 'Relu_0' (Relu): missing attribute 'missing'", kiln::Error);
  CHECK_THROWS_AS(n->f("k"), kiln::Error);  // wrong type
}
