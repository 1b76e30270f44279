// Calibration for static int8 quantization (`kiln compile --precision int8 --calibration DIR`,
// docs/guide/quantization.md): the reference interpreter runs the fp32 graph on every calibration
// sample, and each float activation gets the range its quantization should cover, chosen by
// min-max, a percentile of its histogram, or the threshold minimizing the KL divergence between
// the histogram and its 8-bit quantization (entropy, as TensorRT and ONNX Runtime do it).
// annotate_ranges then writes the ranges into the graph as kiln.Range nodes, which the pass
// quantize_static consumes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

enum class CalibrationMethod { MinMax, Percentile, Entropy };

std::string_view calibration_method_name(CalibrationMethod m);
std::optional<CalibrationMethod> parse_calibration_method(std::string_view text);

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::MinMax;
  double percentile = 99.99;  // Percentile: the share of values (in %) the range keeps
  int bins = 2048;            // Percentile and Entropy: histogram bins
};

struct ActivationRange {
  float min = 0, max = 0;
};

// By value name: every float activation (graph input or node result) the samples reached.
using ActivationRanges = std::map<std::string, ActivationRange>;
// One calibration sample: a tensor per graph input, by input name.
using CalibrationSample = std::map<std::string, ir::Tensor>;

// Runs `graph` on every sample (twice for the histogram methods: min-max first, then the
// histograms over that range) and returns the range of every float activation.
ActivationRanges calibrate(const ir::Graph& graph, const std::vector<CalibrationSample>& samples,
                           const CalibrationOptions& options);

// The range a histogram method keeps, from `counts` (bins of equal width over [min, max] for
// Percentile, over [0, max(|min|, |max|)] of |x| for Entropy). Exposed for tests.
ActivationRange percentile_range(const std::vector<double>& counts, ActivationRange observed, double percentile);
ActivationRange entropy_range(const std::vector<double>& counts, ActivationRange observed);

// Puts a kiln.Range {min, max} after every value of `ranges` (by name) that some node reads;
// those nodes read the kiln.Range instead. Graph outputs keep their values.
void annotate_ranges(ir::Graph& graph, const ActivationRanges& ranges);

}  // namespace kiln::passes
