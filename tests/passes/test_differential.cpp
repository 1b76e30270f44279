// Differential test of the optimizer: every model in models/ and a set of seeded random
// graphs run through the reference interpreter before the pipeline and after each of its
// passes; outputs must agree (floats within 1e-4 of the output's scale: folding and fusion
// round differently). The backend's memory plan of each optimized graph is then checked:
// no two buffers alive at the same step overlap.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "codegen/cpp/cpp_backend.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/stablehlo/stablehlo_importer.h"
#include "frontend/tensorflow/tf_importer.h"
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
  kiln::codegen::cpp::PlanReport r = kiln::codegen::cpp::plan_report(g, kiln::codegen::cpp::EmitOptions{});
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


// A random graph over [1,S,E] sequences as transformer exporters write them: LayerNorm
// decomposed (ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add), Linear layers (MatMul of a weight, bias
// Add), GELU in its erf and tanh forms, SiLU, residual adds, and self-attention blocks
// (projections, heads split by Reshape/Transpose, scaled scores, an optional mask, Softmax,
// heads merged back).
std::unique_ptr<Graph> random_sequence_graph(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto tensor = [&](std::vector<int64_t> dims, float lo = -1, float hi = 1) {
    Tensor t(kiln::ir::DType::F32, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = lo + (hi - lo) * (dist(rng) + 1) / 2;
    return t;
  };
  auto scalar = [](float v) { return Tensor::from_vector<float>(kiln::ir::DType::F32, {}, {v}); };
  auto ints = [](std::vector<int64_t> v) {
    return Tensor::from_vector<int64_t>(kiln::ir::DType::I64, {static_cast<int64_t>(v.size())}, v);
  };
  auto g = std::make_unique<Graph>();
  const int64_t S = 2 + pick(3), H = 2, D = 2 + pick(2), E = H * D;
  Value* x = g->add_value("x", kiln::ir::DType::F32, kiln::ir::Shape::of({1, S, E}));
  g->inputs().push_back(x);
  auto add = [&](const std::string& op, std::vector<Value*> in, kiln::ir::AttributeMap attrs = {}) {
    kiln::ir::Node* n = g->add_node(op, std::move(in), {fmt::format("v{}", g->nodes().size())}, std::move(attrs));
    kiln::ir::infer_node(*n);
    return n->output(0);
  };
  auto c = [&](const char* name, Tensor t) { return g->add_constant(name, std::move(t)); };
  auto linear = [&](Value* in) {
    Value* m = add("MatMul", {in, c("w", tensor({E, E}, -0.7f, 0.7f))});
    return pick(4) ? add("Add", {m, c("b", tensor({E}))}) : m;
  };
  auto layer_norm = [&](Value* in) {
    Value* axes = c("axes", ints({-1}));
    Value* m = add("ReduceMean", {in, axes});
    Value* d = add("Sub", {in, m});
    Value* sq = pick(2) ? add("Pow", {d, c("two", scalar(2))}) : add("Mul", {d, d});
    Value* v = add("ReduceMean", {sq, axes});
    Value* n = add("Div", {d, add("Sqrt", {add("Add", {v, c("eps", scalar(1e-5f))})})});
    Value* y = add("Mul", {n, c("gamma", tensor({E}, 0.5f, 1.5f))});
    return add("Add", {y, c("beta", tensor({E}))});
  };
  auto gelu = [&](Value* in) {
    Value* a;
    if (pick(2)) {
      a = add("Add", {add("Erf", {add("Div", {in, c("sqrt2", scalar(1.4142135f))})}), c("one", scalar(1))});
    } else {
      Value* cube = add("Pow", {in, c("three", scalar(3))});
      Value* inner = add("Add", {in, add("Mul", {c("k", scalar(0.044715f)), cube})});
      a = add("Add", {add("Tanh", {add("Mul", {c("s", scalar(0.7978846f)), inner})}), c("one", scalar(1))});
    }
    return add("Mul", {add("Mul", {in, a}), c("half", scalar(0.5f))});
  };
  auto attention = [&](Value* in) {
    Value* split = c("split", ints({1, S, H, D}));
    auto heads = [&](Value* p, std::vector<int64_t> perm) {
      return add("Transpose", {add("Reshape", {p, split})}, {{"perm", kiln::ir::Attribute(perm)}});
    };
    Value* q = heads(linear(in), {0, 2, 1, 3});
    Value* k = heads(linear(in), {0, 2, 3, 1});
    Value* v = heads(linear(in), {0, 2, 1, 3});
    Value* s = add("MatMul", {q, k});
    s = pick(2) ? add("Div", {s, c("sqrt_d", scalar(std::sqrt(static_cast<float>(D))))})
                : add("Mul", {s, c("rsqrt_d", scalar(1.0f / std::sqrt(static_cast<float>(D))))});
    if (pick(2)) s = add("Add", {s, c("mask", tensor({1, 1, 1, S}, -3.0f, 0.0f))});
    Value* ctx = add("MatMul", {add("Softmax", {s}, {{"axis", kiln::ir::Attribute(int64_t{-1})}}), v});
    ctx = add("Transpose", {ctx}, {{"perm", kiln::ir::Attribute(std::vector<int64_t>{0, 2, 1, 3})}});
    return add("Reshape", {ctx, c("merge", ints({1, S, E}))});
  };
  Value* last = x;
  const int steps = 3 + pick(6);
  for (int s = 0; s < steps; ++s) {
    switch (pick(6)) {
      case 0: last = layer_norm(last); break;
      case 1: last = add("Add", {last, attention(last)}); break;  // residual attention block
      case 2: last = gelu(linear(last)); break;
      case 3: last = add("Mul", {last, add("Sigmoid", {last})}); break;  // SiLU
      case 4: last = add("Add", {linear(last), last}); break;
      default: last = add("Relu", {linear(last)}); break;
    }
  }
  g->outputs().push_back(last);
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

// The StableHLO frontend wraps each NHWC convolution and pool in Transposes to NCHW and back;
// sink_transposes moves the ones after each layer past its bias Add and Relu (Max with 0) to the
// next layer's, where they cancel. What stays: the NHWC image to NCHW before the first
// convolution, and NCHW back to NHWC before the classifier's flatten (a Reshape).
TEST_CASE("differential: the JAX CNN (NHWC) keeps only the Transposes at its input and before the flatten") {
  const std::string path = std::string(KILN_MODELS_DIR) + "/jax/cnn/model.mlir";
  auto g = kiln::frontend::import_stablehlo(path);
  auto count = [&] {
    int n = 0;
    for (const auto& node : g->nodes()) n += node->op() == "Transpose";
    return n;
  };
  CHECK(count() == 13);  // as imported: 3 convolutions and 2 pools each between two, 3 of weights
  std::map<std::string, int> ops = check_pipeline(*g, path);
  CHECK(ops["Transpose"] == 2);
  CHECK(ops["kiln.FusedConv"] + ops["kiln.ConvNchwc"] == 3);
}

// The TensorFlow frontend does the same for Conv2D, DepthwiseConv2dNative, MaxPool and AvgPool;
// the BiasAdds, Relu, Relu6, the BatchNorm's Mul and Add, ZeroPadding2D's Pad between them and
// the global average pool's Mean come to read NCHW values. Only the image's Transpose stays.
TEST_CASE("differential: the TensorFlow CNN (NHWC) keeps only the Transpose at its input") {
  const std::string path = std::string(KILN_MODELS_DIR) + "/tensorflow/cnn/saved_model";
  auto g = kiln::frontend::import_tensorflow(path);
  kiln::passes::bind_dims(*g, {{"batch", 2}});
  int imported = 0;
  for (const auto& node : g->nodes()) imported += node->op() == "Transpose";
  CHECK(imported == 13);  // 3 convolutions and 2 pools between two each, 3 of weights
  std::map<std::string, int> ops = check_pipeline(*g, path);
  CHECK(ops["Transpose"] == 1);
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

TEST_CASE("differential: seeded random transformer graphs through the pipeline, pass by pass") {
  std::map<std::string, int> ops;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    auto g = random_sequence_graph(seed);
    for (const auto& [op, n] :
         check_pipeline(*g, fmt::format("random sequence graph, seed {}:\n{}", seed, kiln::ir::print_graph(*g))))
      ops[op] += n;
  }
  // Every recognition fired somewhere; nothing of the decompositions is left.
  CHECK(ops["LayerNormalization"] > 0);
  CHECK(ops["Attention"] > 0);
  CHECK(ops["kiln.FusedMatMul"] > 0);
  for (const char* op : {"ReduceMean", "Erf", "Tanh", "Softmax", "Sigmoid", "Transpose"}) {
    CAPTURE(op);
    CHECK(ops[op] == 0);
  }
}
