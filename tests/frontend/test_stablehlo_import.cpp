// The StableHLO frontend: hand-written modules in the forms JAX prints (pretty and generic),
// checked through the interpreter; hostile text (truncated, wrong counts, unknown ops, bad
// tokens) refused with kiln::Error and a location; the fixtures of models/jax/ (made by
// make_jax_models.py) against JAX's outputs.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <limits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "frontend/stablehlo/stablehlo_importer.h"
#include "ir/error.h"
#include "ir/interpreter.h"
#include "kiln/rt/npy.h"

using namespace kiln;
using frontend::import_stablehlo_text;
using frontend::StableHloImportOptions;

namespace {

ir::Tensor f32(std::vector<int64_t> dims, std::vector<float> v) {
  return ir::Tensor::from_vector<float>(ir::DType::F32, std::move(dims), v);
}

std::vector<float> values(const ir::Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<float>(t.as_double(i)));
  return out;
}

// Imports `text` and runs it on `inputs` (by graph input order).
std::vector<ir::Tensor> run(const std::string& text, const std::vector<ir::Tensor>& inputs,
                            const StableHloImportOptions& options = {}) {
  auto g = import_stablehlo_text(text, "test.mlir", options);
  REQUIRE(g->inputs().size() == inputs.size());
  std::map<std::string, ir::Tensor> feed;
  for (size_t k = 0; k < inputs.size(); ++k) feed[g->inputs()[k]->name()] = inputs[k];
  return ir::interpret(*g, feed);
}

std::string error_of(const std::string& text, const StableHloImportOptions& options = {}) {
  try {
    import_stablehlo_text(text, "bad.mlir", options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string module(const std::string& args, const std::string& results, const std::string& body) {
  return "module @jit_f {\n  func.func public @main(" + args + ") -> (" + results + ") {\n" + body + "  }\n}\n";
}

ir::Tensor load_npy(const std::string& path) {
  rt::HostTensor h;
  std::string error;
  if (!rt::read_npy(path, h, error)) FAIL(error);
  ir::Tensor t(*ir::dtype_from_code(static_cast<int>(h.dtype)), h.shape);
  std::memcpy(t.mutable_raw(), h.data.data(), h.data.size());
  return t;
}

}  // namespace

TEST_CASE("stablehlo: elementwise ops, inlined calls and the generic form") {
  std::string text = module("%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>", "tensor<2x2xf32> {jax.result_info = \"result\"}",
                            "    %0 = stablehlo.add %arg0, %arg1 : tensor<2x2xf32>\n"
                            "    %1 = \"stablehlo.multiply\"(%0, %arg1) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n"
                            "    %2 = call @relu(%1) : (tensor<2x2xf32>) -> tensor<2x2xf32>\n"
                            "    return %2 : tensor<2x2xf32>\n");
  text.insert(text.rfind('}'),
              "  func.func private @relu(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
              "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
              "    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2xf32>\n"
              "    %1 = stablehlo.maximum %arg0, %0 : tensor<2x2xf32>\n"
              "    return %1 : tensor<2x2xf32>\n  }\n");
  auto out = run(text, {f32({2, 2}, {1, -2, 3, 4}), f32({2, 2}, {1, 1, -1, 2})});
  CHECK(values(out[0]) == std::vector<float>{2, 0, 0, 12});
}

TEST_CASE("stablehlo: dense literals (splat, nested list, hex blob, hex element)") {
  std::string text = module("%arg0: tensor<2x2xf32>", "tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>",
                            "    %c0 = stablehlo.constant dense<[[1.0, 2.0], [3.0, -4.5e+00]]> : tensor<2x2xf32>\n"
                            "    %c1 = stablehlo.constant dense<\"0x0000803F000000400000404000008040\"> : tensor<2x2xf32>\n"
                            "    %c2 = stablehlo.constant dense<0xFF800000> : tensor<2xf32>\n"
                            "    %0 = stablehlo.add %arg0, %c0 : tensor<2x2xf32>\n"
                            "    %1 = stablehlo.add %arg0, %c1 : tensor<2x2xf32>\n"
                            "    return %0, %1, %c2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>\n");
  auto out = run(text, {f32({2, 2}, {0, 0, 0, 0})});
  CHECK(values(out[0]) == std::vector<float>{1, 2, 3, -4.5f});
  CHECK(values(out[1]) == std::vector<float>{1, 2, 3, 4});
  CHECK(std::isinf(values(out[2])[1]));
  CHECK(values(out[2])[1] < 0);
}

TEST_CASE("stablehlo: broadcast_in_dim, transpose, reshape, slice, concatenate, iota, compare, select") {
  std::string text = module(
      "%arg0: tensor<3xf32>, %arg1: tensor<2x3xf32>", "tensor<3x2xf32>, tensor<2x2xf32>, tensor<2x6xf32>, tensor<2x3xf32>",
      "    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<3xf32>) -> tensor<3x2xf32>\n"
      "    %1 = stablehlo.slice %arg1 [0:2, 1:3] : (tensor<2x3xf32>) -> tensor<2x2xf32>\n"
      "    %2 = stablehlo.concatenate %arg1, %arg1, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>\n"
      "    %3 = stablehlo.iota dim = 1 : tensor<2x3xf32>\n"
      "    %4 = stablehlo.compare GT, %arg1, %3, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>\n"
      "    %5 = stablehlo.select %4, %arg1, %3 : tensor<2x3xi1>, tensor<2x3xf32>\n"
      "    %6 = stablehlo.transpose %0, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>\n"
      "    %7 = stablehlo.reshape %6 : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "    return %7, %1, %2, %5 : tensor<3x2xf32>, tensor<2x2xf32>, tensor<2x6xf32>, tensor<2x3xf32>\n");
  auto out = run(text, {f32({3}, {1, 2, 3}), f32({2, 3}, {5, 0, 0, -1, 7, 8})});
  CHECK(values(out[0]) == std::vector<float>{1, 2, 3, 1, 2, 3});
  CHECK(values(out[1]) == std::vector<float>{0, 0, 7, 8});
  CHECK(values(out[2]) == std::vector<float>{5, 0, 0, 5, 0, 0, -1, 7, 8, -1, 7, 8});
  CHECK(values(out[3]) == std::vector<float>{5, 1, 2, 0, 7, 8});
}

TEST_CASE("stablehlo: dot_general with batching dims, and reduce in both forms") {
  // out[b, m, n] = sum_k a[b, k, m] * c[n, b, k]
  std::string text = module(
      "%arg0: tensor<2x3x2xf32>, %arg1: tensor<2x2x3xf32>", "tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>",
      "    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [1], contracting_dims = [1] x [2], "
      "precision = [DEFAULT, DEFAULT] : (tensor<2x3x2xf32>, tensor<2x2x3xf32>) -> tensor<2x2x2xf32>\n"
      "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "    %1 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1, 2] : "
      "(tensor<2x3x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n"
      "    %2 = stablehlo.reduce(%arg0 init: %cst_0) across dimensions = [1, 2] : (tensor<2x3x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "     reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n"
      "      %9 = stablehlo.maximum %a, %b : tensor<f32>\n"
      "      stablehlo.return %9 : tensor<f32>\n"
      "    }\n"
      "    return %0, %1, %2 : tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>\n");
  std::vector<float> a(12), c(12);
  for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i) - 5, c[i] = static_cast<float>(i % 5) * 0.5f;
  auto out = run(text, {f32({2, 3, 2}, a), f32({2, 2, 3}, c)});
  for (int b = 0; b < 2; ++b)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 2; ++n) {
        float s = 0;
        for (int k = 0; k < 3; ++k) s += a[(b * 3 + k) * 2 + m] * c[(n * 2 + b) * 3 + k];
        CHECK(values(out[0])[(b * 2 + m) * 2 + n] == doctest::Approx(s));
      }
  CHECK(values(out[1]) == std::vector<float>{-15, 21});
  CHECK(values(out[2]) == std::vector<float>{1, 6});  // max(-5..0, 1) and max(1..6, 1)
}

TEST_CASE("stablehlo: convolution in NHWC/HWIO and reduce_window pools") {
  // A 1x3x3x1 input, a 2x2 kernel of ones (1 in, 2 out: the second output channel doubled).
  std::string text = module(
      "%arg0: tensor<1x3x3x1xf32>", "tensor<1x3x3x2xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>",
      "    %w = stablehlo.constant dense<[[[[1.0, 2.0]], [[1.0, 2.0]]], [[[1.0, 2.0]], [[1.0, 2.0]]]]> : tensor<2x2x1x2xf32>\n"
      "    %0 = stablehlo.convolution(%arg0, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = "
      "{stride = [1, 1], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, "
      "#stablehlo<precision DEFAULT>]} : (tensor<1x3x3x1xf32>, tensor<2x2x1x2xf32>) -> tensor<1x3x3x2xf32>\n"
      "    %m = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "    %1 = \"stablehlo.reduce_window\"(%arg0, %m) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, "
      "window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %9 = stablehlo.maximum %a, %b : tensor<f32>\n"
      "      stablehlo.return %9 : tensor<f32>\n"
      "    }) : (tensor<1x3x3x1xf32>, tensor<f32>) -> tensor<1x2x2x1xf32>\n"
      "    %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "    %2 = \"stablehlo.reduce_window\"(%arg0, %z) <{window_dimensions = array<i64: 1, 2, 2, 1>}> ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %9 = stablehlo.add %a, %b : tensor<f32>\n"
      "      stablehlo.return %9 : tensor<f32>\n"
      "    }) : (tensor<1x3x3x1xf32>, tensor<f32>) -> tensor<1x2x2x1xf32>\n"
      "    return %0, %1, %2 : tensor<1x3x3x2xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>\n");
  auto out = run(text, {f32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  CHECK(values(out[0]) == std::vector<float>{12, 24, 16, 32, 9, 18, 24, 48, 28, 56, 15, 30, 15, 30, 17, 34, 9, 18});
  CHECK(values(out[1]) == std::vector<float>{5, 6, 8, 9});
  CHECK(values(out[2]) == std::vector<float>{12, 16, 24, 28});
}

TEST_CASE("stablehlo: chlo.erfc, rsqrt, logistic and --params by index and by name") {
  std::string text =
      "#loc1 = loc(\"params['w']\")\n" +
      module("%arg0: tensor<2xf32> loc(#loc1), %arg1: tensor<2xf32> loc(\"x\")", "tensor<2xf32>",
             "    %0 = chlo.erfc %arg1 : tensor<2xf32> -> tensor<2xf32> loc(#loc9)\n"
             "    %1 = stablehlo.rsqrt %arg0 : tensor<2xf32>\n"
             "    %2 = stablehlo.logistic %1 : tensor<2xf32>\n"
             "    %3 = stablehlo.add %0, %2 : tensor<2xf32>\n"
             "    return %3 : tensor<2xf32>\n");
  auto expect = [](const std::vector<ir::Tensor>& out) {
    CHECK(values(out[0])[0] == doctest::Approx(std::erfc(0.5f) + 1 / (1 + std::exp(-0.5f))));
    CHECK(values(out[0])[1] == doctest::Approx(std::erfc(-1.0f) + 1 / (1 + std::exp(-1.0f))));
  };
  StableHloImportOptions by_name;
  by_name.params["params['w']"] = f32({2}, {4, 1});
  auto g = import_stablehlo_text(text, "t.mlir", by_name);
  REQUIRE(g->inputs().size() == 1);
  CHECK(g->inputs()[0]->name() == "x");
  expect(run(text, {f32({2}, {0.5f, -1})}, by_name));
  StableHloImportOptions by_index;
  by_index.params["arg0"] = f32({2}, {4, 1});
  expect(run(text, {f32({2}, {0.5f, -1})}, by_index));

  StableHloImportOptions wrong;
  wrong.params["arg0"] = f32({3}, {4, 1, 1});
  CHECK(contains(error_of(text, wrong), "parameter 'arg0' is f32 of shape [3], argument 0 of @main is tensor<2xf32>"));
  StableHloImportOptions stray;
  stray.params["params['b']"] = f32({2}, {4, 1});
  CHECK(contains(error_of(text, stray), "parameter 'params['b']' matches no argument of @main"));
}

TEST_CASE("stablehlo: is_finite, reverse, and boolean reductions") {
  std::string text = module(
      "%arg0: tensor<2x3xf32>", "tensor<2x3xi1>, tensor<2x3xf32>, tensor<2xi1>, tensor<3xi1>",
      "    %0 = stablehlo.is_finite %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi1>\n"
      "    %1 = stablehlo.reverse %arg0, dims = [0, 1] : tensor<2x3xf32>\n"
      "    %c = stablehlo.constant dense<true> : tensor<i1>\n"
      "    %2 = stablehlo.reduce(%0 init: %c) applies stablehlo.and across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>\n"
      "    %f = stablehlo.constant dense<false> : tensor<i1>\n"
      "    %3 = stablehlo.reduce(%0 init: %f) applies stablehlo.or across dimensions = [0] : (tensor<2x3xi1>, tensor<i1>) -> tensor<3xi1>\n"
      "    return %0, %1, %2, %3 : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2xi1>, tensor<3xi1>\n");
  const float inf = std::numeric_limits<float>::infinity();
  auto out = run(text, {f32({2, 3}, {1, inf, 3, 4, 5, 6})});
  CHECK(values(out[0]) == std::vector<float>{1, 0, 1, 1, 1, 1});
  CHECK(values(out[1]) == std::vector<float>{6, 5, 4, 3, inf, 1});
  CHECK(values(out[2]) == std::vector<float>{0, 1});
  CHECK(values(out[3]) == std::vector<float>{1, 1, 1});
}

TEST_CASE("stablehlo: hostile text is refused with a location, never a crash") {
  std::string good = module("%arg0: tensor<2x2xf32>", "tensor<2x2xf32>",
                            "    %c = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
                            "    %0 = stablehlo.add %arg0, %c : tensor<2x2xf32>\n"
                            "    return %0 : tensor<2x2xf32>\n");
  CHECK(error_of(good).empty());

  SUBCASE("every truncation fails cleanly") {
    for (size_t n = 0; n + 1 < good.size(); ++n) {
      std::string e = error_of(good.substr(0, n));
      INFO("cut at " << n);
      CHECK_FALSE(e.empty());
      CHECK(contains(e, "bad.mlir"));
    }
  }
  SUBCASE("unknown op: its name and line:column") {
    std::string text = module("%arg0: tensor<2xf32>", "tensor<2xf32>",
                              "    %0 = stablehlo.cbrt %arg0 : tensor<2xf32>\n    return %0 : tensor<2xf32>\n");
    CHECK(error_of(text) == "bad.mlir:3:10: unsupported op 'stablehlo.cbrt'");
  }
  SUBCASE("dense literals with the wrong element count") {
    auto with = [&](const std::string& literal, const std::string& type) {
      return error_of(module("", type, "    %c = stablehlo.constant dense<" + literal + "> : " + type +
                                           "\n    return %c : " + type + "\n"));
    };
    CHECK(contains(with("[1.0, 2.0, 3.0]", "tensor<2xf32>"), "more than 2 elements"));
    CHECK(contains(with("[1.0]", "tensor<2xf32>"), "has 1 elements, the type's dims [2] need 2"));
    CHECK(contains(with("[[1.0, 2.0], [3.0]]", "tensor<2x2xf32>"), "has 1 elements"));
    CHECK(contains(with("[1.0, 2.0]", "tensor<2x2xf32>"), "expected a list of 2 at depth 1"));
    CHECK(contains(with("\"0x0000803F0000\"", "tensor<2xf32>"), "hex blob has 6 bytes"));
    CHECK(contains(with("\"0x0G\"", "tensor<1xf32>"), "non-hex"));
    CHECK(contains(with("[1, 300]", "tensor<2xi8>"), "'300' does not fit i8"));
    CHECK(contains(with("[1.5, 2]", "tensor<2xi32>"), "holds integers"));
    CHECK(contains(with("abc", "tensor<2xf32>"), "'abc' is not a number"));
    CHECK(contains(with("1.0", "tensor<99999999999x99999999999xf32>"), "element limit"));
  }
  SUBCASE("bad tokens and structure") {
    CHECK(contains(error_of("module {\n  func.func public @main(%arg0: tensor<?xf32>) -> tensor<2xf32> {\n"), "bad.mlir:2:"));
    CHECK(contains(error_of("module {\n  func.func public @main(%arg0: tensor<?xf32>) -> tensor<2xf32> {\n"), "dynamic dims"));
    CHECK(contains(error_of(module("%arg0: tensor<2xcomplex<f32>>", "tensor<2xf32>", "    return %arg0 : tensor<2xf32>\n")),
                   "unsupported element type 'complex<f32>'"));
    CHECK(contains(error_of("module { \x01 }"), "byte 0x01"));
    CHECK(contains(error_of(std::string("module {\0}", 10)), "NUL byte"));
    CHECK(contains(error_of(module("%arg0: tensor<2xf32>", "tensor<2xf32>", "    return %9 : tensor<2xf32>\n")),
                   "use of undefined value %9"));
    CHECK(contains(error_of(module("%arg0: tensor<2xf32>", "tensor<2xf32>",
                                   "    %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>\n    return %0 : tensor<3xf32>\n")),
                   "the text says tensor<3xf32>"));
    CHECK(contains(error_of(module("%arg0: tensor<2xf32>", "tensor<2xf32>",
                                   "    %0 = stablehlo.reshape %arg0 : (tensor<2xf32>) -> tensor<3xf32>\n    return %0 : tensor<3xf32>\n")),
                   "cannot reshape [2] to [3]"));
    CHECK(contains(error_of(module("%arg0: tensor<2xf32>", "tensor<2xf32>",
                                   "    %0 = stablehlo.transpose %arg0, dims = [1] : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n")),
                   "not a permutation"));
    CHECK(contains(error_of(std::string(300, '[')), "bad.mlir:1:1"));
    std::string deep = module("%arg0: tensor<2xf32>", "tensor<2xf32>",
                              "    %0 = stablehlo.add %arg0, %arg0 {a = " + std::string(1000, '[') + "} : tensor<2xf32>\n");
    CHECK(contains(error_of(deep), "nested too deeply"));
  }
  SUBCASE("an op outside the table whose form cannot be read is named as unsupported") {
    std::string text = module("%arg0: tensor<i32>", "tensor<i32>",
                              "    %0 = stablehlo.while(%iterArg = %arg0) : tensor<i32>\n     cond {\n    }\n"
                              "    return %0 : tensor<i32>\n");
    CHECK(error_of(text) == "bad.mlir:3:10: unsupported op 'stablehlo.while'");
  }
  SUBCASE("generic-form functions") {
    const std::string body = "({\n  ^bb0(%a: tensor<2xf32>):\n    \"func.return\"(%a) : (tensor<2xf32>) -> ()\n  }) : () -> ()\n";
    std::string good_generic = "\"func.func\"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = \"main\"}> " + body;
    CHECK(error_of(good_generic).empty());
    CHECK(contains(error_of("\"func.func\"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>}> " + body),
                   "bad.mlir:1:1: func.func without a sym_name"));
    CHECK(contains(error_of("\"func.func\"() <{function_type = (tensor<2xf32>), sym_name = \"main\"}> " + body),
                   "function_type without '->'"));
    CHECK(contains(error_of("\"func.func\"() <{function_type = (tensor<2xf32>) -> tensor<2xf32> x, sym_name = \"main\"}> " + body),
                   "bad.mlir:1:"));
    CHECK(contains(error_of("\"stablehlo.add\"() : () -> ()\n"), "expected a module or a function, found 'stablehlo.add'"));
  }
  SUBCASE("a reduce of two operands that is not argmax or argmin") {
    std::string text = module(
        "%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xi32>", "tensor<2xf32>",
        "    %c = stablehlo.constant dense<0.0> : tensor<f32>\n    %i = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %0:2 = stablehlo.reduce(%arg0 init: %c), (%arg1 init: %i) across dimensions = [1] : "
        "(tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)\n"
        "     reducer(%a: tensor<f32>, %b: tensor<f32>) (%x: tensor<i32>, %y: tensor<i32>)  {\n"
        "      %s = stablehlo.add %a, %b : tensor<f32>\n      %t = stablehlo.add %x, %y : tensor<i32>\n"
        "      stablehlo.return %s, %t : tensor<f32>, tensor<i32>\n    }\n"
        "    return %0#0 : tensor<2xf32>\n");
    CHECK(contains(error_of(text), "bad.mlir:5:12: stablehlo.reduce: reductions of several operands are supported only as argmax and argmin"));
  }
  SUBCASE("a gather that is not one index along one dim") {
    std::string text = module(
        "%arg0: tensor<10x4xf32>, %arg1: tensor<2x1xi32>", "tensor<2x2xf32>",
        "    %0 = \"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], "
        "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : "
        "(tensor<10x4xf32>, tensor<2x1xi32>) -> tensor<2x2xf32>\n    return %0 : tensor<2x2xf32>\n");
    CHECK(contains(error_of(text), "stablehlo.gather: only gathers of one index along one dim"));
  }
  SUBCASE("recursive calls") {
    std::string text = module("%arg0: tensor<2xf32>", "tensor<2xf32>",
                              "    %0 = call @main(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n");
    CHECK(contains(error_of(text), "calls @main recursively"));
  }
}

TEST_CASE("stablehlo: the JAX fixtures match JAX's outputs through the interpreter") {
  const std::filesystem::path dir = KILN_JAX_MODELS;
  const std::pair<const char*, const char*> fixtures[] = {
      {"cnn", "model.mlir"},          {"cnn_generic", "model.mlir"},        {"cnn_params", "model.mlir"},
      {"transformer", "model.mlir"},  {"transformer_params", "model.mlir"}, {"ops_mix", "model.mlir"},
      {"mlp_export", "model.jax_exported"}, {"mlp_export", "model.mlirbc"}, {"mlp_export_params", "model.jax_exported"},
      {"cnn_export", "model.jax_exported"}, {"cnn_export", "model.mlirbc"}, {"transformer_export", "model.jax_exported"},
      {"ops_mix_export", "model.jax_exported"}};
  for (const auto& [folder, model] : fixtures) {
    const std::string name = folder, file = model;
    INFO(name << "/" << file);
    const std::filesystem::path m = dir / name;
    StableHloImportOptions options;
    if (std::filesystem::exists(m / "params.npz")) options.params_path = (m / "params.npz").string();
    CHECK(frontend::is_stablehlo_file((m / file).string()));
    auto g = frontend::import_stablehlo((m / file).string(), options);
    std::map<std::string, ir::Tensor> feed;
    for (size_t k = 0; k < g->inputs().size(); ++k)
      feed[g->inputs()[k]->name()] = load_npy((m / ("input_" + std::to_string(k) + ".npy")).string());
    auto out = ir::interpret(*g, feed);
    double worst = 0;
    for (size_t k = 0; k < out.size(); ++k) {
      INFO("output " << k);
      ir::Tensor expected = load_npy((m / ("expected_" + std::to_string(k) + ".npy")).string());
      REQUIRE(out[k].dims() == expected.dims());
      REQUIRE(out[k].dtype() == expected.dtype());
      double scale = 1, err = 0;
      for (int64_t i = 0; i < expected.numel(); ++i) scale = std::max(scale, std::abs(expected.as_double(i)));
      for (int64_t i = 0; i < expected.numel(); ++i)
        err = std::max(err, std::abs(out[k].as_double(i) - expected.as_double(i)));
      CHECK(err <= 1e-4 * scale);
      worst = std::max(worst, err / scale);
    }
    CHECK_FALSE(std::filesystem::exists(m / ("expected_" + std::to_string(out.size()) + ".npy")));
    MESSAGE(name << "/" << file << ": " << out.size() << " outputs, max |kiln - jax| / scale = " << worst);
  }
}

TEST_CASE("stablehlo: files are recognised by extension or content") {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln_shlo_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  CHECK(frontend::is_stablehlo_file(write("a.mlir", "")));
  CHECK(frontend::is_stablehlo_file(write("a.txt", "\n  module @jit_f {")));
  CHECK(frontend::is_stablehlo_file(write("b.txt", "#loc1 = loc(\"x\")\nmodule {")));
  CHECK_FALSE(frontend::is_stablehlo_file(write("c.onnx", "\x08\x07\x12")));
  std::string bad_npz = write("p.npz", "PK not a zip");
  StableHloImportOptions options;
  options.params_path = bad_npz;
  CHECK(contains(error_of(module("%arg0: tensor<2xf32>", "tensor<2xf32>", "    return %arg0 : tensor<2xf32>\n"), options),
                 "p.npz"));
  std::filesystem::remove_all(dir);
}
