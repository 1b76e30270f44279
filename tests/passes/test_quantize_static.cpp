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
#include "kiln/rt/qconv_nhwc.h"
#include "passes/integer_matmul.h"
#include "passes/pass_manager.h"
#include "passes/quantize_static.h"

namespace {

// Four calibrated Convs: dense with 4 input channels (the NHWC dense kernel's), depthwise,
// dense with 3 input channels (the stem's shape: the dense kernel's row patches), and the same
// dilated across (NCHW).
constexpr const char* kConvs = R"(
graph g(%x: f32[1,4,3,3], %x3: f32[1,3,3,3]) -> (%a, %d, %c3, %c3d) {
  %w = constant f32[2,4,1,1] [1, -2, 0.5, 0, 4, 1, 1, 1]
  %wd = constant f32[4,1,1,1] [1, 2, 3, 4]
  %w3 = constant f32[2,3,1,1] [1, 2, -3, 1, 1, 1]
  %w3d = constant f32[2,3,1,2] [1, 2, -3, 1, 1, 1, 1, 1, 1, 1, 1, 1]
  %xr = kiln.Range(%x) {min=-1.0, max=1.0} @x.range
  %x3r = kiln.Range(%x3) {min=-1.0, max=1.0} @x3.range
  %a = Conv(%xr, %w) @dense
  %d = Conv(%xr, %wd) {group=4} @depthwise
  %c3 = Conv(%x3r, %w3) @three
  %c3d = Conv(%x3r, %w3d) {dilations=[1, 2]} @three_dilated
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
  CHECK(kiln::passes::quantize_static_except(*full, {}).size() == 4);
  // Round half to even: 1 / (2 / 127) = 63.5 -> 64, 0.5 / (2 / 127) = 31.75 -> 32.
  CHECK(ints(*full, "w.s8") == std::vector<int>{64, -127, 32, 0, 127, 32, 32, 32});
  CHECK(floats(*full, "w.scale") == std::vector<float>{2.0f / 127, 4.0f / 127});

  auto reduced = kiln::ir::parse_graph(kConvs);
  kiln::passes::infer_shapes(*reduced);
  kiln::passes::StaticQuantizeOptions options;
  options.reduced_range_dense_convs = true;
  CHECK(kiln::passes::quantize_static_except(*reduced, {}, options).size() == 4);
  // Channel 0's pairs (1, -2) and (0.5, 0) sum to at most 2 of one sign, its max |w|: full
  // range. Channel 1's (4, 1) sum to 5: scale 5 / 127, so 4 -> 101.6 -> 102 and 102 + 25 = 127.
  CHECK(ints(*reduced, "w.s8") == std::vector<int>{64, -127, 32, 0, 102, 25, 25, 25});
  CHECK(floats(*reduced, "w.scale") == std::vector<float>{2.0f / 127, 5.0f / 127});
  // 3 input channels, 1x1: row patches of 3 bytes, paired (c0, c1) and (c2, 0). Channel 0's
  // widest sum is its max |w| (3), channel 1's (1, 1) sum to 2: scale 2 / 127, 1 -> 63.5 -> 64.
  CHECK(ints(*full, "w3.s8") == std::vector<int>{42, 85, -127, 127, 127, 127});
  CHECK(ints(*reduced, "w3.s8") == std::vector<int>{42, 85, -127, 64, 64, 64});
  // Depthwise, and 3 channels dilated across, run other kernels: full range, as without the option.
  CHECK(ints(*reduced, "wd.s8") == ints(*full, "wd.s8"));
  CHECK(absmax(ints(*reduced, "wd.s8")) == 127);
  CHECK(ints(*reduced, "w3d.s8") == ints(*full, "w3d.s8"));
  CHECK(absmax(ints(*reduced, "w3d.s8")) == 127);
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
  // Channel pairs at each tap (C = 8, 3x3) and flat patches (C = 3, 7x7 and 3x3; C = 1 and 6):
  // the pairs are the ones the runtime's packing checks, so it must find that they fit.
  struct Case { int64_t C, K; };
  for (const Case& k : {Case{8, 3}, Case{3, 7}, Case{3, 3}, Case{1, 5}, Case{6, 3}}) {
    CAPTURE(k.C);
    CAPTURE(k.K);
    constexpr int64_t M = 16;
    const int64_t C = k.C, taps = k.K * k.K;
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<float> w(M * C * taps);
    for (float& v : w) v = normal(rng);
    w[5] = std::nanf("");  // quantized to 0, ignored by the scale
    std::vector<int8_t> q(w.size());
    std::vector<float> scale(M);
    kiln::passes::quantize_conv_s8_pairs_fit_int16(w.data(), M, C, k.K, k.K, q.data(), scale.data());
    const auto pairs = kiln::passes::conv_weight_pairs(C, k.K, k.K);
    CHECK(pairs.size() == static_cast<size_t>(C % 4 == 0 ? C / 2 * taps : (taps * C + 1) / 2));
    int wider_than_7_bits = 0;
    for (int64_t m = 0; m < M; ++m) {
      int largest = 0;
      for (const auto& [a, b] : pairs) {
        const int q0 = q[m * C * taps + a], q1 = b >= 0 ? q[m * C * taps + b] : 0;
        CHECK(std::max(q0, 0) + std::max(q1, 0) <= 128);
        CHECK(std::min(q0, 0) + std::min(q1, 0) >= -128);
        largest = std::max({largest, std::abs(q0), std::abs(q1)});
      }
      for (int64_t i = 0; i < C * taps; ++i) {
        const int64_t at = m * C * taps + i;
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
    const kiln::rt::Conv2dParams p{1, C, 9, 9, M, k.K, k.K, 9, 9, 1, 1, k.K / 2, k.K / 2, 1, 1, 1};
    REQUIRE(kiln::rt::qconv2d_nhwc_supported(p));
    std::vector<unsigned char> packed(kiln::rt::qconv2d_nhwc_packed_weight_bytes(p));
    kiln::rt::qconv2d_nhwc_pack_weights(p, q.data(), packed.data());
    CHECK(kiln::rt::qconv2d_nhwc_pairs_fit_int16(p, packed.data()));
  }
}
