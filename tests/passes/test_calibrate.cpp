// Calibration (passes/calibrate.h): the ranges each method chooses, checked on data whose
// answer is known.
#include <doctest/doctest.h>

#include <cmath>

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/calibrate.h"
#include "passes/pass_manager.h"

namespace {

using kiln::passes::ActivationRange;
using kiln::passes::CalibrationMethod;

kiln::passes::CalibrationSample sample(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return {{"x", kiln::ir::Tensor::from_vector<float>(kiln::ir::DType::F32, {n}, values)}};
}

}  // namespace

TEST_CASE("calibrate: min-max of every float activation over all samples") {
  auto g = kiln::ir::parse_graph(R"(graph g(%x: f32[4]) -> (%y) {
  %r = Relu(%x) @relu
  %y = Neg(%r) @neg
})", "test");
  kiln::passes::infer_shapes(*g);
  kiln::passes::ActivationRanges r =
      kiln::passes::calibrate(*g, {sample({-1, 2, 0.5f, 3}), sample({-4, 1, 1, 1})}, {});
  CHECK(r.at("x").min == -4);
  CHECK(r.at("x").max == 3);
  CHECK(r.at("r").min == 0);
  CHECK(r.at("r").max == 3);
  CHECK(r.at("y").min == -3);
  CHECK(r.at("y").max == 0);

  kiln::passes::annotate_ranges(*g, r);
  const std::string text = kiln::ir::print_graph(*g);
  CAPTURE(text);
  CHECK(text.find("%x.range: f32[4] = kiln.Range(%x) {max=3.0, min=-4.0}") != std::string::npos);
  CHECK(text.find("Relu(%x.range)") != std::string::npos);
  CHECK(text.find("Neg(%r.range)") != std::string::npos);
  CHECK(text.find("kiln.Range(%y)") == std::string::npos);  // a graph output nobody reads
}

TEST_CASE("calibrate: percentile and entropy clip a long tail that min-max keeps") {
  // 10000 values exponentially distributed (the quantiles of Exp(1): largest 9.9) and one
  // outlier at 100.
  std::vector<float> v;
  for (int i = 0; i < 10000; ++i) v.push_back(static_cast<float>(-std::log(1.0 - (i + 0.5) / 10000.0)));
  v.push_back(100.0f);
  auto g = kiln::ir::parse_graph(R"(graph g(%x: f32[10001]) -> (%y) {
  %y = Relu(%x) @relu
})", "test");
  kiln::passes::infer_shapes(*g);
  kiln::passes::CalibrationOptions minmax, percentile, entropy;
  percentile.method = CalibrationMethod::Percentile;
  percentile.percentile = 99;
  entropy.method = CalibrationMethod::Entropy;
  CHECK(kiln::passes::calibrate(*g, {sample(v)}, minmax).at("x").max == 100);
  const float smallest = kiln::passes::calibrate(*g, {sample(v)}, minmax).at("x").min;
  const ActivationRange p = kiln::passes::calibrate(*g, {sample(v)}, percentile).at("x");
  CHECK(p.min == smallest);  // a range of positive values is cut at its top only
  CHECK(p.max >= 4.6f);  // Exp(1)'s 99th percentile is ln 100 = 4.61; one bin is 100 / 2048
  CHECK(p.max <= 4.7f);
  const ActivationRange e = kiln::passes::calibrate(*g, {sample(v)}, entropy).at("x");
  MESSAGE("entropy threshold " << e.max);
  CHECK(e.min == smallest);
  CHECK(e.max >= 2.0f);
  CHECK(e.max <= 20.0f);  // the outlier is clipped
}

TEST_CASE("calibrate: percentile of a range across 0 cuts both ends") {
  std::vector<double> counts(100, 1.0);  // even over [-50, 50)
  const ActivationRange r = kiln::passes::percentile_range(counts, {-50, 50}, 90);
  CHECK(r.min == doctest::Approx(-45));
  CHECK(r.max == doctest::Approx(45));
  CHECK(kiln::passes::percentile_range(counts, {-50, 50}, 100).max == 50);
}

TEST_CASE("calibrate: entropy keeps the whole range of evenly spread values") {
  std::vector<double> counts(2048, 1.0);
  const ActivationRange r = kiln::passes::entropy_range(counts, {0, 8});
  CHECK(r.max >= 7.9f);
  CHECK(r.max <= 8.0f);
}

TEST_CASE("calibrate: bad options fail") {
  auto g = kiln::ir::parse_graph("graph g(%x: f32[2]) -> (%y) {\n  %y = Relu(%x) @relu\n}", "test");
  kiln::passes::infer_shapes(*g);
  CHECK_THROWS(kiln::passes::calibrate(*g, {}, {}));
  kiln::passes::CalibrationOptions bad;
  bad.percentile = 0;
  CHECK_THROWS(kiln::passes::calibrate(*g, {sample({1, 2})}, bad));
}
