// quantize_static_except's options beyond the .ir cases (which run the registered pass, full
// range): reduced-range weights for the convolutions the int8 NHWC kernel runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/quantize_static.h"

namespace {

// Three calibrated Convs: dense with 4 input channels (the NHWC dense kernel's), depthwise,
// and dense with 3 input channels (the stem's shape, NCHW).
constexpr const char* kConvs = R"(
graph g(%x: f32[1,4,3,3], %x3: f32[1,3,3,3]) -> (%a, %d, %c3) {
  %w = constant f32[2,4,1,1] [1, -2, 0.5, 0, 4, 1, 1, 1]
  %wd = constant f32[4,1,1,1] [1, 2, 3, 4]
  %w3 = constant f32[2,3,1,1] [1, 2, -3, 1, 1, 1]
  %xr = kiln.Range(%x) {min=-1.0, max=1.0} @x.range
  %x3r = kiln.Range(%x3) {min=-1.0, max=1.0} @x3.range
  %a = Conv(%xr, %w) @dense
  %d = Conv(%xr, %wd) {group=4} @depthwise
  %c3 = Conv(%x3r, %w3) @three
}
)";

std::vector<int> ints(const kiln::ir::Graph& g, const char* name) {
  const kiln::ir::Value* v = g.find_value(name);
  REQUIRE_MESSAGE(v != nullptr, name);
  const kiln::ir::Tensor& t = v->constant();
  return std::vector<int>(t.data<int8_t>(), t.data<int8_t>() + t.numel());
}

std::vector<float> floats(const kiln::ir::Graph& g, const char* name) {
  const kiln::ir::Value* v = g.find_value(name);
  REQUIRE_MESSAGE(v != nullptr, name);
  const kiln::ir::Tensor& t = v->constant();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

int absmax(const std::vector<int>& q) {
  int m = 0;
  for (int v : q) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace

TEST_CASE("quantize_static_except: reduced-range weights only for the dense NHWC convolutions") {
  auto full = kiln::ir::parse_graph(kConvs);
  kiln::passes::infer_shapes(*full);
  CHECK(kiln::passes::quantize_static_except(*full, {}).size() == 3);
  // Round half to even: 1 / (2 / 127) = 63.5 -> 64, 0.5 / (2 / 127) = 31.75 -> 32.
  CHECK(ints(*full, "w.s8") == std::vector<int>{64, -127, 32, 0, 127, 32, 32, 32});
  CHECK(floats(*full, "w.scale") == std::vector<float>{2.0f / 127, 4.0f / 127});

  auto reduced = kiln::ir::parse_graph(kConvs);
  kiln::passes::infer_shapes(*reduced);
  kiln::passes::StaticQuantizeOptions options;
  options.dense_conv_weight_limit = 64;
  CHECK(kiln::passes::quantize_static_except(*reduced, {}, options).size() == 3);
  CHECK(ints(*reduced, "w.s8") == std::vector<int>{32, -64, 16, 0, 64, 16, 16, 16});
  CHECK(floats(*reduced, "w.scale") == std::vector<float>{2.0f / 64, 4.0f / 64});
  // Depthwise and 3 input channels run other kernels: full range, as without the option.
  CHECK(ints(*reduced, "wd.s8") == ints(*full, "wd.s8"));
  CHECK(absmax(ints(*reduced, "wd.s8")) == 127);
  CHECK(ints(*reduced, "w3.s8") == ints(*full, "w3.s8"));
  CHECK(absmax(ints(*reduced, "w3.s8")) == 127);
}

TEST_CASE("quantize_static_except: a weight limit outside [1, 127] fails") {
  auto g = kiln::ir::parse_graph(kConvs);
  kiln::passes::infer_shapes(*g);
  kiln::passes::StaticQuantizeOptions options;
  options.dense_conv_weight_limit = 128;
  CHECK_THROWS_WITH(kiln::passes::quantize_static_except(*g, {}, options),
                    doctest::Contains("limit 128 is not in [1, 127]"));
}
