// Pass tests with IR text in and IR text out. Each tests/passes/<pass>.ir file holds cases:
//
//   # case: what the case tests
//   <input graph>
//   # expect:
//   <the graph printed after running <pass>>
//
// Besides the text, every case checks that the pass preserved the model's outputs: the
// reference interpreter runs the graph before and after on the same seeded random inputs
// (floats within 1e-5 of the output's scale, since folding and fusion round differently).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "ir/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "tests/passes/compare.h"

namespace {

struct Case {
  std::string title, input, expected;
  int line = 0;
};

std::vector<Case> read_cases(const std::string& path) {
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::vector<Case> cases;
  std::string line;
  int number = 0;
  bool in_expect = false;
  while (std::getline(f, line)) {
    ++number;
    if (line.rfind("# case:", 0) == 0) {
      cases.push_back({line.substr(7), "", "", number});
      in_expect = false;
    } else if (line.rfind("# expect:", 0) == 0) {
      in_expect = true;
    } else if (!cases.empty()) {
      (in_expect ? cases.back().expected : cases.back().input) += line + "\n";
    }
  }
  return cases;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  size_t start = s.find_first_not_of('\n');
  return start == std::string::npos ? "" : s.substr(start);
}

// With KILN_UPDATE_PASS_TESTS=1 in the environment, each file's expectations are rewritten
// with what the pass printed (review the diff before committing it).
void update_file(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& actual) {
  std::ostringstream text;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i) text << "\n";
    text << "# case:" << cases[i].title << "\n" << trim(cases[i].input) << "\n# expect:\n" << actual[i];
  }
  std::ofstream(path) << text.str();
}

void run_file(const std::string& pass) {
  std::string path = std::string(KILN_PASS_TESTS_DIR) + "/" + pass + ".ir";
  std::vector<Case> cases = read_cases(path);
  REQUIRE(!cases.empty());
  std::vector<std::string> actual;
  const char* update = std::getenv("KILN_UPDATE_PASS_TESTS");
  for (const Case& c : cases) {
    CAPTURE(path);
    CAPTURE(c.line);
    CAPTURE(c.title);
    auto g = kiln::ir::parse_graph(c.input, path);
    kiln::passes::infer_shapes(*g);
    auto inputs = kiln::test::random_inputs(*g);
    std::vector<kiln::ir::Tensor> before = kiln::ir::interpret(*g, inputs);
    kiln::passes::run_pipeline(*g, {pass}, {});
    kiln::ir::verify_graph(*g);
    actual.push_back(kiln::ir::print_graph(*g));
    if (!update) CHECK(trim(actual.back()) == trim(c.expected));
    std::vector<kiln::ir::Tensor> after = kiln::ir::interpret(*g, inputs);
    REQUIRE(after.size() == before.size());
    for (size_t i = 0; i < after.size(); ++i) CHECK(kiln::test::compare_results(before[i], after[i]) == "");
  }
  if (update && std::string(update) == "1") update_file(path, cases, actual);
}

}  // namespace

TEST_CASE("infer_shapes") { run_file("infer_shapes"); }
TEST_CASE("fold_constants") { run_file("fold_constants"); }
TEST_CASE("bound_data_dependent_dims") { run_file("bound_data_dependent_dims"); }
TEST_CASE("eliminate_dead_code") { run_file("eliminate_dead_code"); }
TEST_CASE("eliminate_identities") { run_file("eliminate_identities"); }
TEST_CASE("eliminate_common_subexpressions") { run_file("eliminate_common_subexpressions"); }
TEST_CASE("sink_transposes") { run_file("sink_transposes"); }
TEST_CASE("fold_transposes") { run_file("fold_transposes"); }
TEST_CASE("fold_batch_norm") { run_file("fold_batch_norm"); }
TEST_CASE("recognize_layer_norm") { run_file("recognize_layer_norm"); }
TEST_CASE("recognize_gelu") { run_file("recognize_gelu"); }
TEST_CASE("recognize_swish") { run_file("recognize_swish"); }
TEST_CASE("recognize_attention") { run_file("recognize_attention"); }
TEST_CASE("fuse_matmul_add") { run_file("fuse_matmul_add"); }
TEST_CASE("fuse_epilogue") { run_file("fuse_epilogue"); }
TEST_CASE("fuse_expand_depthwise") { run_file("fuse_expand_depthwise"); }
TEST_CASE("layout_nchwc") { run_file("layout_nchwc"); }
TEST_CASE("layout_nhwc") { run_file("layout_nhwc"); }
TEST_CASE("fuse_nhwc_global_pool") { run_file("fuse_nhwc_global_pool"); }
TEST_CASE("fuse_elementwise") { run_file("fuse_elementwise"); }
TEST_CASE("fuse_qdq") { run_file("fuse_qdq"); }
TEST_CASE("quantize_dynamic") { run_file("quantize_dynamic"); }
TEST_CASE("quantize_static") { run_file("quantize_static"); }

TEST_CASE("every pass in passes.def has a tests/passes/<pass>.ir file") {
  for (const kiln::passes::PassInfo& p : kiln::passes::all_passes()) {
    CAPTURE(p.name);
    CHECK(std::ifstream(std::string(KILN_PASS_TESTS_DIR) + "/" + p.name + ".ir").good());
  }
}

TEST_CASE("set_dim_ranges: a stepped dim becomes step times a fresh symbol") {
  using namespace kiln::ir;
  Graph g;
  Value* x = g.add_value("x", DType::F32, Shape(std::vector<Dim>{Dim(1), Dim(3), Dim::symbol("H"), Dim::symbol("W")}));
  g.inputs().push_back(x);
  Value* w = g.add_constant("w", Tensor(DType::F32, {4, 3, 3, 3}));
  Node* conv = g.add_node("Conv", {x, w}, {"y"},
                          {{"strides", Attribute(std::vector<int64_t>{2, 2})},
                           {"pads", Attribute(std::vector<int64_t>{1, 1, 1, 1})}});
  g.outputs().push_back(conv->output(0));
  kiln::passes::set_dim_ranges(g, {{"H", DimRange{.min = 32, .max = 960, .opt = 640, .step = 32}},
                                   {"W", DimRange{.min = 1, .max = 64, .opt = 64}}});
  CHECK(x->shape().str() == "[1,3,32*H/32,W]");
  REQUIRE(g.dim_ranges().count("H/32"));
  CHECK_FALSE(g.dim_ranges().count("H"));
  CHECK(g.dim_ranges().at("H/32") == DimRange{.min = 1, .max = 30, .opt = 20});
  kiln::passes::infer_shapes(g);
  // Stride 2 halves 32 * H/32 exactly; over W, unstepped, the output dim is no polynomial.
  CHECK(conv->output(0)->shape()[2] == Dim(16) * Dim::symbol("H/32"));
  CHECK(conv->output(0)->shape()[3].is_unknown());
  Graph bad;
  bad.inputs().push_back(bad.add_value("x", DType::F32, Shape(std::vector<Dim>{Dim::symbol("H")})));
  CHECK_THROWS_WITH(kiln::passes::set_dim_ranges(bad, {{"H", DimRange{.min = 30, .max = 960, .opt = 960, .step = 32}}}),
                    doctest::Contains("the step must divide the bounds"));
}
