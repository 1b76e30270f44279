// quantize_static_except's options beyond the .ir cases (which run the registered pass, full
// range): reduced-range weights for the convolutions the int8 NHWC kernel runs, whose pairs fit
// the AVX2 vpmaddubsw tile.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "ir/parser.h"
#include "passes/integer_matmul.h"
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
  options.reduced_range_dense_convs = true;
  CHECK(kiln::passes::quantize_static_except(*reduced, {}, options).size() == 3);
  // Channel 0's pairs (1, -2) and (0.5, 0) sum to at most 2 of one sign, its max |w|: full
  // range. Channel 1's (4, 1) sum to 5: scale 5 / 127, so 4 -> 101.6 -> 102 and 102 + 25 = 127.
  CHECK(ints(*reduced, "w.s8") == std::vector<int>{64, -127, 32, 0, 102, 25, 25, 25});
  CHECK(floats(*reduced, "w.scale") == std::vector<float>{2.0f / 127, 5.0f / 127});
  // Depthwise and 3 input channels run other kernels: full range, as without the option.
  CHECK(ints(*reduced, "wd.s8") == ints(*full, "wd.s8"));
  CHECK(absmax(ints(*reduced, "wd.s8")) == 127);
  CHECK(ints(*reduced, "w3.s8") == ints(*full, "w3.s8"));
  CHECK(absmax(ints(*reduced, "w3.s8")) == 127);
}

TEST_CASE("quantize_static_except: reduced range on a Conv of 0 input channels does not divide by them") {
  auto g = kiln::ir::parse_graph(R"(
graph g(%x: f32[1,0,3,3]) -> (%y) {
  %w = constant f32[4,0,1,1] []
  %xr = kiln.Range(%x) {min=-1.0, max=1.0} @x.range
  %y = Conv(%xr, %w) @empty
}
)");
  kiln::passes::infer_shapes(*g);
  kiln::passes::StaticQuantizeOptions options;
  options.reduced_range_dense_convs = true;
  CHECK(kiln::passes::quantize_static_except(*g, {}, options) == std::vector<std::string>{"empty"});
  CHECK(floats(*g, "w.scale") == std::vector<float>{1, 1, 1, 1});
}

TEST_CASE("quantize_conv_s8_pairs_fit_int16: every pair within 128 of one sign, each weight within half a step") {
  constexpr int64_t M = 16, C = 8, taps = 9;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(M * C * taps);
  for (float& v : w) v = normal(rng);
  w[5] = std::nanf("");  // quantized to 0, ignored by the scale
  std::vector<int8_t> q(w.size());
  std::vector<float> scale(M);
  kiln::passes::quantize_conv_s8_pairs_fit_int16(w.data(), M, C, taps, q.data(), scale.data());
  int wider_than_7_bits = 0;
  for (int64_t m = 0; m < M; ++m) {
    int largest = 0;
    for (int64_t c = 0; c < C; c += 2)
      for (int64_t t = 0; t < taps; ++t) {
        const int q0 = q[(m * C + c) * taps + t], q1 = q[(m * C + c + 1) * taps + t];
        CHECK(std::max(q0, 0) + std::max(q1, 0) <= 128);
        CHECK(std::min(q0, 0) + std::min(q1, 0) >= -128);
        largest = std::max({largest, std::abs(q0), std::abs(q1)});
      }
    for (int64_t k = 0; k < C * taps; ++k) {
      const int64_t at = m * C * taps + k;
      if (std::isnan(w[at])) {
        CHECK(q[at] == 0);
        continue;
      }
      CHECK(std::fabs(q[at] * scale[m] - w[at]) <= scale[m] * 0.5001f);
    }
    CHECK(largest >= 64);
    wider_than_7_bits += largest > 64;
  }
  // Normal weights rarely pair two of the largest of one sign: most channels keep more than 7 bits.
  CHECK(wider_than_7_bits >= M / 2);
  CHECK_THROWS_WITH(kiln::passes::quantize_conv_s8_pairs_fit_int16(w.data(), 1, 3, 1, q.data(), scale.data()),
                    doctest::Contains("3 input channels, not an even number"));
}
