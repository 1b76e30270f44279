// Differential test of the optimizer: every model in models/ and a set of seeded random
// graphs run through the reference interpreter before the pipeline and after each of its
// passes; outputs must agree (floats within 1e-4 of the output's scale: folding and fusion
// round differently). The backend's memory plan of each optimized graph is then checked:
// no two buffers alive at the same step overlap.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include "codegen/cpp/cpp_backend.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/interpreter.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "tests/passes/compare.h"

namespace {

using kiln::ir::Graph;
using kiln::ir::Tensor;
using kiln::ir::Value;

void check_plan(const Graph& g) {
  kiln::codegen::cpp::PlanReport r = kiln::codegen::cpp::plan_report(g);
  const auto& req = r.requests;
  REQUIRE(r.memory.offsets.size() == req.size());
  CHECK(r.memory.arena_size >= r.memory.lower_bound);
  for (size_t i = 0; i < req.size(); ++i) {
    CHECK(r.memory.offsets[i] + req[i].size <= r.memory.arena_size);
    for (size_t j = i + 1; j < req.size(); ++j) {
      if (req[i].last < req[j].first || req[j].last < req[i].first) continue;
      bool apart = r.memory.offsets[i] + req[i].size <= r.memory.offsets[j] ||
                   r.memory.offsets[j] + req[j].size <= r.memory.offsets[i];
      CHECK_MESSAGE(apart, "buffers " << i << " and " << j << " are alive together and overlap");
    }
  }
}

// Runs the -O2 pipeline pass by pass, comparing outputs with the unoptimized graph's.
// Returns how many nodes of each op the optimized graph has.
std::map<std::string, int> check_pipeline(Graph& g, const std::string& what) {
  CAPTURE(what);
  kiln::passes::infer_shapes(g);
  auto inputs = kiln::test::random_inputs(g, 7);
  std::vector<Tensor> before = kiln::ir::interpret(g, inputs);
  for (const std::string& pass : kiln::passes::pipeline_for_level(2)) {
    CAPTURE(pass);
    kiln::passes::PipelineOptions options;
    options.verify_each = true;
    kiln::passes::run_pipeline(g, {pass}, options);
    std::vector<Tensor> after = kiln::ir::interpret(g, inputs);
    REQUIRE(after.size() == before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      CAPTURE(i);
      CHECK(kiln::test::compare_results(before[i], after[i], 1e-4) == "");
    }
  }
  check_plan(g);
  std::map<std::string, int> ops;
  for (const auto& n : g.nodes()) ++ops[n->op()];
  return ops;
}

// A random graph over [1,C,H,W] activations: convolutions (with BatchNorm, depthwise, 1x1
// or 3x3), activations, residual adds, SiLU, identities, transpose pairs, duplicated
// constants, and a classifier head (Flatten, MatMul, Add) half the time.
std::unique_ptr<Graph> random_graph(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto tensor = [&](std::vector<int64_t> dims, float lo = -1, float hi = 1) {
    Tensor t(kiln::ir::DType::F32, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = lo + (hi - lo) * (dist(rng) + 1) / 2;
    return t;
  };
  auto g = std::make_unique<Graph>();
  const int64_t C = 2 + pick(3), H = 4 + pick(2), W = 4 + pick(2);
  Value* x = g->add_value("x", kiln::ir::DType::F32, kiln::ir::Shape::of({1, C, H, W}));
  g->inputs().push_back(x);
  std::vector<Value*> pool = {x};
  auto any = [&] { return pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))]; };
  auto add = [&](const std::string& op, std::vector<Value*> in, kiln::ir::AttributeMap attrs = {}) {
    kiln::ir::Node* n = g->add_node(op, std::move(in), {fmt::format("v{}", g->nodes().size())}, std::move(attrs));
    kiln::ir::infer_node(*n);
    pool.push_back(n->output(0));
    return n->output(0);
  };
  Value* last = x;
  const int steps = 6 + pick(10);
  for (int s = 0; s < steps; ++s) {
    Value* in = pick(3) ? last : any();
    switch (pick(10)) {
      case 0:
      case 1: {  // Conv, maybe depthwise, maybe 3x3, maybe with bias, maybe followed by BatchNorm
        bool depthwise = pick(3) == 0, k3 = pick(2) == 0;
        int64_t k = k3 ? 3 : 1;
        kiln::ir::AttributeMap attrs;
        if (k3) attrs["pads"] = kiln::ir::Attribute(std::vector<int64_t>{1, 1, 1, 1});
        if (depthwise) attrs["group"] = kiln::ir::Attribute(C);
        Value* w = g->add_constant("w", tensor({C, depthwise ? 1 : C, k, k}));
        std::vector<Value*> ins = {in, w};
        if (pick(2)) ins.push_back(g->add_constant("b", tensor({C})));
        last = add("Conv", ins, attrs);
        if (pick(2))
          last = add("BatchNormalization", {last, g->add_constant("scale", tensor({C}, 0.5f, 2.f)),
                                            g->add_constant("beta", tensor({C})), g->add_constant("mean", tensor({C})),
                                            g->add_constant("var", tensor({C}, 0.1f, 2.f))});
        break;
      }
      case 2: last = add(std::vector<const char*>{"Relu", "Sigmoid", "Tanh"}[static_cast<size_t>(pick(3))], {in}); break;
      case 3:
        last = add("Clip", {in, g->add_constant("lo", Tensor::from_vector<float>(kiln::ir::DType::F32, {}, {0.0f})), g->add_constant("hi", Tensor::from_vector<float>(kiln::ir::DType::F32, {}, {0.5f}))});
        break;
      case 4: last = add("Add", {in, any()}); break;  // residual
      case 5: {  // SiLU
        Value* sig = add("Sigmoid", {in});
        last = add("Mul", {in, sig});
        break;
      }
      case 6: last = add("Identity", {in}); break;
      case 7: {  // a Transpose pair that cancels
        Value* t = add("Transpose", {in}, {{"perm", kiln::ir::Attribute(std::vector<int64_t>{0, 2, 3, 1})}});
        pool.pop_back();  // [1,H,W,C]: not a candidate for the ops above
        last = add("Transpose", {t}, {{"perm", kiln::ir::Attribute(std::vector<int64_t>{0, 3, 1, 2})}});
        break;
      }
      case 8: {  // the same constant twice
        Tensor c = tensor({C, 1, 1});
        Value* a = add("Mul", {in, g->add_constant("k", c)});
        Value* b = add("Mul", {in, g->add_constant("k", c)});
        last = add("Add", {a, b});
        break;
      }
      default: last = add("Neg", {in}); break;
    }
  }
  if (pick(2)) {
    Value* f = add("Flatten", {last});
    Value* m = add("MatMul", {f, g->add_constant("fc", tensor({C * H * W, 3}))});
    last = add("Add", {m, g->add_constant("fc_bias", tensor({3}))});
  }
  g->outputs().push_back(last);
  // Sometimes an intermediate is an output too: its name and value must survive.
  if (pool.size() > 3 && pick(2)) {
    Value* extra = pool[static_cast<size_t>(1 + pick(static_cast<int>(pool.size()) - 2))];
    if (extra != last && extra != x) g->outputs().push_back(extra);
  }
  kiln::ir::verify_graph(*g);
  return g;
}

}  // namespace

TEST_CASE("differential: every model in models/ through the pipeline, pass by pass") {
  int models = 0;
  for (const auto& dir : std::filesystem::directory_iterator(KILN_MODELS_DIR)) {
    std::filesystem::path model = dir.path() / "model.onnx";
    if (!std::filesystem::exists(model)) continue;
    auto g = kiln::frontend::import_onnx(model.string());
    std::map<std::string, int64_t> dims;
    for (const Value* in : g->inputs())
      for (const kiln::ir::Dim& d : in->shape().dims())
        if (!d.is_static() && !d.name().empty()) dims[d.name()] = 2;
    if (!dims.empty()) kiln::passes::bind_dims(*g, dims);
    check_pipeline(*g, model.string());
    ++models;
  }
  CHECK(models >= 3);
}

TEST_CASE("differential: seeded random graphs through the pipeline, pass by pass") {
  std::map<std::string, int> ops;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    auto g = random_graph(seed);
    for (const auto& [op, n] : check_pipeline(*g, fmt::format("random graph, seed {}:\n{}", seed, kiln::ir::print_graph(*g))))
      ops[op] += n;
  }
  // The graphs exercise the fusions (what stays unfused is shared or a graph output).
  CHECK(ops["kiln.FusedConv"] > 0);
  CHECK(ops["kiln.FusedGemm"] + ops["Gemm"] > 0);
}
