// Latency statistics and the number formats the bench reports share.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/bench_result.h"

namespace kiln::cli {

namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

LatencyStats latency_stats(std::vector<double> samples) {
  LatencyStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.p50 = percentile(samples, 50);
  s.p90 = percentile(samples, 90);
  s.p99 = percentile(samples, 99);
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  double var = 0;
  for (double v : samples) var += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(var / static_cast<double>(samples.size()));
  return s;
}

std::string format_ms(double ms) {
  if (ms >= 100) return fmt::format("{:.1f} ms", ms);
  if (ms >= 1) return fmt::format("{:.3f} ms", ms);
  const double us = ms * 1000;
  if (us >= 100) return fmt::format("{:.1f} µs", us);
  if (us >= 1) return fmt::format("{:.3f} µs", us);  // the workers time to the nanosecond
  return fmt::format("{:.0f} ns", us * 1000);
}

std::string format_bytes(long long bytes) {
  if (bytes < 0) return "-";
  if (bytes >= (1LL << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1LL << 30));
  if (bytes >= (1LL << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1LL << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

std::string format_ratio(double ratio) { return ratio > 0 && std::isfinite(ratio) ? fmt::format("{:.2f}x", ratio) : "-"; }

}  // namespace kiln::cli
