#include "cli/static_quantization.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/precision_report.h"
#include "ir/error.h"
#include "ir/interpreter.h"
#include "kiln/rt/sanitize.h"

namespace kiln::cli {

namespace {

std::vector<passes::CalibrationSample> read_samples(const std::string& dir, const ir::Graph& graph,
                                                    const frontend::ImportLimits& limits) {
  std::vector<passes::CalibrationSample> samples;
  for (const std::filesystem::path& s : calibration_samples(dir, graph)) {  // checked there
    passes::CalibrationSample sample;
    for (const ir::Value* in : graph.inputs())
      sample[in->name()] = load_tensor_file((s / (rt::sanitize_file_name(in->name()) + ".npy")).string(), limits);
    samples.push_back(std::move(sample));
  }
  return samples;
}

// The largest |output - fp32| of `graph` over the samples, every output and element (NaN
// against a number counts as infinite).
class OutputDistance {
 public:
  OutputDistance(const ir::Graph& fp32, const std::vector<passes::CalibrationSample>& samples) : samples_(samples) {
    for (const passes::CalibrationSample& s : samples) reference_.push_back(ir::interpret(fp32, s));
  }

  double operator()(const ir::Graph& graph) const {
    double worst = 0;
    for (size_t k = 0; k < samples_.size(); ++k) {
      std::vector<ir::Tensor> got = ir::interpret(graph, samples_[k]);
      for (size_t o = 0; o < got.size() && o < reference_[k].size(); ++o) {
        const ir::Tensor& a = got[o];
        const ir::Tensor& b = reference_[k][o];
        if (a.numel() != b.numel()) return INFINITY;
        for (int64_t i = 0; i < a.numel(); ++i) {
          const double x = a.as_double(i), y = b.as_double(i);
          if (std::isnan(x) && std::isnan(y)) continue;
          worst = std::max(worst, std::isnan(x) || std::isnan(y) ? INFINITY : std::fabs(x - y));
        }
      }
    }
    return worst;
  }

 private:
  const std::vector<passes::CalibrationSample>& samples_;
  std::vector<std::vector<ir::Tensor>> reference_;
};

// --max-error: the layers to keep in fp32, worst first, until the error is at most `limit`.
std::unique_ptr<ir::Graph> keep_worst_in_fp32(const std::string& model, const LoadOptions& load, const ir::Graph& fp32,
                                              std::unique_ptr<ir::Graph> graph, double limit, PhaseTimer& timer,
                                              std::vector<std::string>& notes) {
  StaticQuantization& q = *load.int8;
  const OutputDistance error(fp32, q.samples);
  double current = timer.phase("max-error", [&] { return error(*graph); });
  const double all_int8 = current;
  const std::vector<std::string> layers = q.quantized;
  std::vector<std::string> kept;
  if (current > limit) {
    // Each layer's own cost: the output error with only that layer quantized.
    std::map<std::string, double> own;
    PhaseTimer quiet(false);
    timer.phase("max-error", [&] {
      for (const std::string& layer : layers) {
        q.keep_fp32 = {layers.begin(), layers.end()};
        q.keep_fp32.erase(layer);
        own[layer] = error(*load_model(model, load, quiet));
      }
    });
    std::vector<std::string> worst_first = layers;
    std::stable_sort(worst_first.begin(), worst_first.end(),
                     [&](const std::string& a, const std::string& b) { return own[a] > own[b]; });
    q.keep_fp32.clear();
    for (const std::string& layer : worst_first) {
      if (current <= limit) break;
      q.keep_fp32.insert(layer);
      kept.push_back(fmt::format("{} (alone: {:.3g})", layer, own[layer]));
      graph = load_model(model, load, quiet);
      current = error(*graph);
    }
  }
  std::string line = fmt::format("--max-error {}: output error against fp32 {:.4g} with every layer in int8, {:.4g} now; ",
                                 limit, all_int8, current);
  line += kept.empty() ? std::string("no layer kept in fp32")
                       : fmt::format("kept in fp32: {}", fmt::join(kept, ", "));
  if (current > limit) line += " (still over: every layer is in fp32)";
  fmt::print(stderr, "kiln: {}\n", line);
  notes.push_back(line);
  return graph;
}

}  // namespace

std::unique_ptr<ir::Graph> load_int8_model(const std::string& model, const LoadOptions& load,
                                           const PrecisionOptions& precision, PhaseTimer& timer,
                                           std::vector<std::string>& notes) {
  StaticQuantization& q = *load.int8;
  LoadOptions fp32_load = load;
  fp32_load.precision = passes::Precision::FP32;
  fp32_load.int8 = nullptr;
  PhaseTimer quiet(false);
  std::unique_ptr<ir::Graph> fp32 = load_model(model, fp32_load, quiet);
  q.samples = read_samples(precision.calibration_dir, *fp32, load.limits);
  q.calibration = precision.calibration;
  q.activations = precision.activations.value_or(ir::DType::U8);
  std::unique_ptr<ir::Graph> graph = load_model(model, load, timer);
  if (precision.max_error) graph = keep_worst_in_fp32(model, load, *fp32, std::move(graph), *precision.max_error, timer, notes);

  std::map<std::string, int> int8_ops;
  for (const auto& n : graph->nodes())
    if (n->op() == "QLinearConv" || n->op() == "QLinearMatMul" || n->op() == "ConvInteger" || n->op() == "MatMulInteger")
      ++int8_ops[n->op()];
  std::vector<std::string> ops;
  for (const auto& [op, count] : int8_ops) ops.push_back(fmt::format("{} {}", op, count));
  notes.insert(notes.begin(), fmt::format("{} layers quantized ({} activations, {} weights, {} calibration on {} sample{}): {}",
                                          q.quantized.size(), q.activations == ir::DType::I8 ? "s8" : "u8",
                                          q.reduced_range_dense_convs ? "reduced-range" : "full-range",
                                          passes::calibration_method_name(q.calibration.method), q.samples.size(),
                                          q.samples.size() == 1 ? "" : "s",
                                          ops.empty() ? std::string("no int8 ops") : fmt::format("{}", fmt::join(ops, ", "))));
  return graph;
}

}  // namespace kiln::cli
