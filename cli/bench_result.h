// What `kiln bench` measured, as every report (terminal, JSON, Markdown, HTML) reads it.
// The JSON form and its schema are in docs/reference/reports.md and docs/bench.schema.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/bench_tensors.h"

namespace kiln::cli {

inline constexpr int kBenchSchemaVersion = 1;

struct LatencyStats {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0, stddev = 0;
};

// Percentiles interpolate linearly between the nearest samples (as numpy does).
LatencyStats latency_stats(std::vector<double> samples_ms);

struct EngineResult {
  std::string name;       // "kiln", "onnxruntime", "torch", "tensorflow"
  bool is_kiln = false;
  std::string version;
  std::string status = "ok";  // ok, skipped (framework missing), failed
  std::string reason;         // why skipped or failed
  double load_ms = 0;         // process start until ready (model loaded, first run done)
  double cold_ms = 0;         // the first run
  std::vector<double> samples_ms;  // warm runs, in the order they ran
  std::vector<std::vector<double>> rounds_ms;  // the same, by round
  LatencyStats latency;
  double throughput_per_s = 0;  // batch items per second at the mean latency, one stream
  long long peak_rss_bytes = 0;
  // kiln only
  double compile_s = -1;               // -1: compiled earlier (--compiled)
  long long executable_bytes = -1;
  long long static_library_bytes = -1;
  std::string precision;               // what it was compiled in (its --version)
  bool ok() const { return status == "ok"; }
};

// kiln relative to one baseline: each ratio is kiln's figure over the baseline's.
struct Comparison {
  std::string baseline;
  double p50_ratio = 0, p90_ratio = 0, p99_ratio = 0, cold_ratio = 0;
  double throughput_ratio = 0, peak_rss_ratio = 0;
  std::vector<Agreement> agreement;  // one per output
};

struct Check {
  std::string name;  // "fail-if-slower-than" or "fail-if-error-above"
  double threshold = 0;
  bool passed = true;
  std::string reason;
};

struct BenchSettings {
  std::vector<std::string> against;
  int threads = 1;
  int batch = 1;
  std::string precision = "fp32";
  int rounds = 0, runs_per_round = 0, warmup = 0;
  uint64_t seed = 0;
  std::string inputs;  // "generated" or the --inputs folder
  std::string python;
};

struct BenchReport {
  std::string kiln_version;
  std::string created;  // UTC, ISO 8601
  std::string model_path, model_name;
  std::vector<TensorSpec> inputs, outputs;
  BenchSettings settings;
  std::string cpu;
  int cores = 0;
  std::vector<EngineResult> engines;  // kiln first
  std::vector<Comparison> comparisons;
  std::vector<Check> checks;
  bool passed() const {
    for (const Check& c : checks)
      if (!c.passed) return false;
    return true;
  }
};

// Reports (cli/bench_json.cpp, cli/bench_markdown.cpp, cli/bench_html.cpp).
std::string bench_json(const BenchReport& r);
std::string bench_markdown(const BenchReport& r);
std::string bench_terminal_table(const BenchReport& r);
std::string bench_html(const BenchReport& r);

// Shared by the reports: "1.23 ms", "12.3 MiB", "2.50x".
std::string format_ms(double ms);
std::string format_bytes(long long bytes);
std::string format_ratio(double ratio);

}  // namespace kiln::cli
