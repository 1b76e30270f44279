#include "passes/calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "ir/error.h"
#include "ir/interpreter.h"
#include "ir/op_registry.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool observed(const ir::Value& v) { return v.has_type() && v.dtype() == ir::DType::F32 && !v.is_constant(); }

// Sweep 1: the min and max of each float activation's finite values.
std::map<const ir::Value*, ActivationRange> min_max(const ir::Graph& graph, const std::vector<CalibrationSample>& samples) {
  std::map<const ir::Value*, ActivationRange> seen;
  for (const CalibrationSample& sample : samples)
    ir::interpret(graph, sample, [&](const ir::Value& v, const ir::Tensor& t) {
      if (!observed(v) || t.dtype() != ir::DType::F32) return;
      float lo = std::numeric_limits<float>::infinity(), hi = -lo;
      const float* p = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i)
        if (std::isfinite(p[i])) {
          lo = std::min(lo, p[i]);
          hi = std::max(hi, p[i]);
        }
      if (lo > hi) return;  // no finite value
      auto [it, fresh] = seen.try_emplace(&v, ActivationRange{lo, hi});
      if (!fresh) it->second = {std::min(it->second.min, lo), std::max(it->second.max, hi)};
    });
  return seen;
}

// Sweep 2: each activation's histogram, of x over [min, max] (Percentile) or of |x| over
// [0, max |x|] (Entropy).
std::map<const ir::Value*, std::vector<double>> histograms(const ir::Graph& graph,
                                                           const std::vector<CalibrationSample>& samples,
                                                           const std::map<const ir::Value*, ActivationRange>& ranges,
                                                           const CalibrationOptions& options) {
  const bool absolute = options.method == CalibrationMethod::Entropy;
  std::map<const ir::Value*, std::vector<double>> counts;
  for (const CalibrationSample& sample : samples)
    ir::interpret(graph, sample, [&](const ir::Value& v, const ir::Tensor& t) {
      auto r = ranges.find(&v);
      if (r == ranges.end() || t.dtype() != ir::DType::F32) return;
      const double lo = absolute ? 0.0 : r->second.min;
      const double hi = absolute ? std::max(std::fabs(r->second.min), std::fabs(r->second.max)) : r->second.max;
      std::vector<double>& c = counts[&v];
      c.resize(static_cast<size_t>(options.bins));
      const double per_unit = hi > lo ? options.bins / (hi - lo) : 0.0;
      const float* p = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (!std::isfinite(p[i])) continue;
        const double x = absolute ? std::fabs(p[i]) : p[i];
        const double bin = std::floor((x - lo) * per_unit);
        c[static_cast<size_t>(std::clamp(bin, 0.0, options.bins - 1.0))] += 1;
      }
    });
  return counts;
}

// KL(P || Q) of two unnormalized distributions; bins where Q is empty and P is not count as
// holding a tiny share of Q (smoothing, as ONNX Runtime does).
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q, size_t n) {
  double sp = 0, sq = 0;
  for (size_t k = 0; k < n; ++k) {
    sp += p[k];
    sq += q[k];
  }
  if (sp <= 0 || sq <= 0) return std::numeric_limits<double>::infinity();
  constexpr double eps = 1e-4;
  double kl = 0;
  for (size_t k = 0; k < n; ++k) {
    if (p[k] <= 0) continue;
    const double pk = p[k] / sp, qk = std::max(q[k] / sq, eps / static_cast<double>(n));
    kl += pk * std::log(pk / qk);
  }
  return kl;
}

}  // namespace

std::string_view calibration_method_name(CalibrationMethod m) {
  switch (m) {
    case CalibrationMethod::MinMax: return "minmax";
    case CalibrationMethod::Percentile: return "percentile";
    case CalibrationMethod::Entropy: return "entropy";
  }
  return "?";
}

std::optional<CalibrationMethod> parse_calibration_method(std::string_view text) {
  for (CalibrationMethod m : {CalibrationMethod::MinMax, CalibrationMethod::Percentile, CalibrationMethod::Entropy})
    if (calibration_method_name(m) == text) return m;
  return std::nullopt;
}

ActivationRange percentile_range(const std::vector<double>& counts, ActivationRange observed, double percentile) {
  double total = 0;
  for (double c : counts) total += c;
  if (total <= 0 || counts.empty() || !(observed.max > observed.min)) return observed;
  // A range that does not cross 0 cuts only its far end (the other is 0 once quantized).
  const double cut = (100.0 - percentile) / 100.0;
  const double cut_low = observed.min >= 0 ? 0.0 : observed.max <= 0 ? cut : cut / 2;
  const double cut_high = observed.max <= 0 ? 0.0 : cut - cut_low;
  const double width = (static_cast<double>(observed.max) - observed.min) / static_cast<double>(counts.size());
  size_t first = 0, last = counts.size() - 1;
  double below = 0;
  while (first < counts.size() && below + counts[first] <= cut_low * total) below += counts[first++];
  double above = 0;
  while (last > first && above + counts[last] <= cut_high * total) above += counts[last--];
  ActivationRange r;
  r.min = cut_low > 0 ? static_cast<float>(observed.min + width * static_cast<double>(first)) : observed.min;
  r.max = cut_high > 0 ? static_cast<float>(observed.min + width * static_cast<double>(last + 1)) : observed.max;
  r.min = std::max(r.min, observed.min);
  r.max = std::min(r.max, observed.max);
  return r;
}

ActivationRange entropy_range(const std::vector<double>& counts, ActivationRange observed) {
  const double absmax = std::max(std::fabs(observed.min), std::fabs(observed.max));
  // Levels available to |x|: all 255 steps of u8 for a range that does not cross 0, about
  // half of them (as for s8's positive half) for one that does.
  const size_t levels = observed.min >= 0 || observed.max <= 0 ? 255 : 128;
  const size_t n = counts.size();
  if (!(absmax > 0) || n <= levels) return observed;
  std::vector<double> p(n), q(n);
  double best = std::numeric_limits<double>::infinity();
  size_t best_i = n;
  double outliers = 0;
  for (size_t k = levels; k < n; ++k) outliers += counts[k];
  for (size_t i = levels; i <= n; ++i) {
    // P: the first i bins, everything beyond clipped into the last of them.
    std::copy(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(i), p.begin());
    p[i - 1] += outliers;
    // Q: the first i bins merged into `levels` bins, each spread back evenly over the bins it
    // merged that were not empty.
    for (size_t j = 0; j < levels; ++j) {
      const size_t start = j * i / levels, stop = j + 1 == levels ? i : (j + 1) * i / levels;
      double sum = 0;
      size_t nonzero = 0;
      for (size_t k = start; k < stop; ++k) {
        sum += counts[k];
        nonzero += counts[k] != 0;
      }
      for (size_t k = start; k < stop; ++k) q[k] = counts[k] != 0 ? sum / static_cast<double>(nonzero) : 0.0;
    }
    const double kl = kl_divergence(p, q, i);
    if (kl < best) {
      best = kl;
      best_i = i;
    }
    if (i < n) outliers -= counts[i];
  }
  const float threshold = static_cast<float>(absmax * static_cast<double>(best_i) / static_cast<double>(n));
  return {std::max(observed.min, -threshold), std::min(observed.max, threshold)};
}

ActivationRanges calibrate(const ir::Graph& graph, const std::vector<CalibrationSample>& samples,
                           const CalibrationOptions& options) {
  if (samples.empty()) fail("calibration needs at least one sample");
  if (options.bins < 256) fail("calibration: {} histogram bins are too few (at least 256)", options.bins);
  if (!(options.percentile > 0 && options.percentile <= 100))
    fail("calibration: percentile {} is not in (0, 100]", options.percentile);
  std::map<const ir::Value*, ActivationRange> seen = min_max(graph, samples);
  std::map<const ir::Value*, std::vector<double>> counts;
  if (options.method != CalibrationMethod::MinMax) counts = histograms(graph, samples, seen, options);
  ActivationRanges ranges;
  for (const auto& [value, range] : seen) {
    ActivationRange r = range;
    auto c = counts.find(value);
    if (c != counts.end())
      r = options.method == CalibrationMethod::Percentile ? percentile_range(c->second, range, options.percentile)
                                                           : entropy_range(c->second, range);
    ranges[value->name()] = r;
  }
  return ranges;
}

void annotate_ranges(ir::Graph& graph, const ActivationRanges& ranges) {
  std::vector<ir::Value*> values;
  for (const auto& v : graph.values())
    if (!v->users().empty() && !v->is_constant() && ranges.count(v->name())) values.push_back(v.get());
  for (ir::Value* v : values) {
    const ActivationRange& r = ranges.at(v->name());
    const std::set<ir::Node*> users(v->users().begin(), v->users().end());
    ir::Node* range = add_node_after(graph, v, "kiln.Range", {v}, v->name() + ".range", {{"min", r.min}, {"max", r.max}});
    for (ir::Node* user : users)
      for (size_t i = 0; i < user->num_inputs(); ++i)
        if (user->input(i) == v) user->set_input(i, range->output(0));
  }
}

}  // namespace kiln::passes
