// The JSON report of `kiln bench` (schema: docs/bench.schema.json; prose: docs/reference/reports.md).
#include <cmath>

#include <fmt/format.h>

#include "cli/bench_result.h"
#include "kiln/rt/trace.h"

namespace kiln::cli {

namespace {

using rt::json_string;

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

std::string numbers(const std::vector<double>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + fmt::format("{:.6g}", values[i]);
  return s + "]";
}

std::string tensors(const std::vector<TensorSpec>& specs) {
  std::string s = "[";
  for (size_t i = 0; i < specs.size(); ++i)
    s += fmt::format("{}{{\"name\": {}, \"dtype\": {}, \"shape\": [{}]}}", i ? ", " : "", json_string(specs[i].name),
                     json_string(std::string(ir::dtype_name(specs[i].dtype))), fmt::join(specs[i].dims, ", "));
  return s + "]";
}

std::string engine(const EngineResult& e) {
  std::string s = fmt::format("    {{\"name\": {}, \"kind\": \"{}\", \"version\": {}, \"status\": \"{}\"", json_string(e.name),
                              e.is_kiln ? "kiln" : "baseline", json_string(e.version), e.status);
  if (!e.reason.empty()) s += fmt::format(", \"reason\": {}", json_string(e.reason));
  if (e.ok()) {
    const LatencyStats& l = e.latency;
    s += fmt::format(
        ",\n     \"load_ms\": {}, \"cold_ms\": {},\n"
        "     \"latency_ms\": {{\"p50\": {}, \"p90\": {}, \"p99\": {}, \"mean\": {}, \"min\": {}, \"max\": {}, "
        "\"stddev\": {}}},\n"
        "     \"throughput_per_s\": {}, \"peak_rss_bytes\": {},\n     \"samples_ms\": {}",
        number(e.load_ms), number(e.cold_ms), number(l.p50), number(l.p90), number(l.p99), number(l.mean),
        number(l.min), number(l.max), number(l.stddev), number(e.throughput_per_s), e.peak_rss_bytes,
        numbers(e.samples_ms));
  }
  if (e.is_kiln)
    s += fmt::format(",\n     \"compile_s\": {}, \"executable_bytes\": {}, \"static_library_bytes\": {}",
                     e.compile_s < 0 ? "null" : number(e.compile_s),
                     e.executable_bytes < 0 ? "null" : std::to_string(e.executable_bytes),
                     e.static_library_bytes < 0 ? "null" : std::to_string(e.static_library_bytes));
  return s + "}";
}

std::string agreement(const Agreement& a) {
  std::string s = fmt::format("{{\"output\": {}, \"elements\": {}, \"max_abs_error\": {}, \"max_rel_error\": {}, "
                              "\"top1_agreement\": {}",
                              json_string(a.output), a.elements, number(a.max_abs_error), number(a.max_rel_error),
                              a.top1_agreement ? number(*a.top1_agreement) : "null");
  if (!a.problem.empty()) s += fmt::format(", \"problem\": {}", json_string(a.problem));
  return s + "}";
}

std::string comparison(const Comparison& c) {
  std::string rows;
  for (size_t i = 0; i < c.agreement.size(); ++i) rows += (i ? ",\n       " : "") + agreement(c.agreement[i]);
  return fmt::format(
      "    {{\"baseline\": {},\n     \"ratios\": {{\"p50\": {}, \"p90\": {}, \"p99\": {}, \"cold\": {}, "
      "\"throughput\": {}, \"peak_rss\": {}}},\n     \"speedup_p50\": {},\n     \"agreement\": [\n       {}]}}",
      json_string(c.baseline), number(c.p50_ratio), number(c.p90_ratio), number(c.p99_ratio), number(c.cold_ratio),
      number(c.throughput_ratio), number(c.peak_rss_ratio), number(c.p50_ratio > 0 ? 1.0 / c.p50_ratio : NAN), rows);
}

}  // namespace

std::string bench_json(const BenchReport& r) {
  const BenchSettings& st = r.settings;
  std::vector<std::string> against;
  for (const std::string& a : st.against) against.push_back(json_string(a));
  std::vector<std::string> engines, comparisons, checks;
  for (const EngineResult& e : r.engines) engines.push_back(engine(e));
  for (const Comparison& c : r.comparisons) comparisons.push_back(comparison(c));
  for (const Check& c : r.checks)
    checks.push_back(fmt::format("    {{\"name\": {}, \"threshold\": {}, \"passed\": {}, \"reason\": {}}}",
                                 json_string(c.name), number(c.threshold), c.passed ? "true" : "false",
                                 json_string(c.reason)));
  return fmt::format(
      "{{\n  \"schema\": \"kiln-bench\",\n  \"schema_version\": {},\n  \"kiln_version\": {},\n  \"created\": {},\n"
      "  \"model\": {{\"path\": {}, \"name\": {}, \"inputs\": {}, \"outputs\": {}}},\n"
      "  \"settings\": {{\"against\": [{}], \"threads\": {}, \"batch\": {}, \"precision\": {}, \"rounds\": {}, "
      "\"runs_per_round\": {}, \"warmup\": {}, \"seed\": {}, \"inputs\": {}, \"python\": {}}},\n"
      "  \"machine\": {{\"cpu\": {}, \"cores\": {}}},\n"
      "  \"engines\": [\n{}\n  ],\n  \"comparisons\": [\n{}\n  ],\n  \"checks\": [\n{}\n  ],\n  \"passed\": {}\n}}\n",
      kBenchSchemaVersion, json_string(r.kiln_version), json_string(r.created), json_string(r.model_path),
      json_string(r.model_name), tensors(r.inputs), tensors(r.outputs), fmt::join(against, ", "), st.threads, st.batch,
      json_string(st.precision), st.rounds, st.runs_per_round, st.warmup, st.seed, json_string(st.inputs),
      json_string(st.python), json_string(r.cpu), r.cores, fmt::join(engines, ",\n"), fmt::join(comparisons, ",\n"),
      fmt::join(checks, ",\n"), r.passed() ? "true" : "false");
}

}  // namespace kiln::cli
