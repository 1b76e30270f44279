// The Markdown report of `kiln bench` (for CI summaries and pull-request comments) and the
// table it prints on the terminal.
#include <fmt/format.h>

#include "cli/bench_result.h"

namespace kiln::cli {

namespace {

std::string error_text(double v) { return fmt::format("{:.3g}", v); }

std::string top1_text(const Agreement& a) {
  return a.top1_agreement ? fmt::format("{:.1f}%", *a.top1_agreement * 100) : "-";
}

std::string tensor_list(const std::vector<TensorSpec>& specs) {
  std::vector<std::string> parts;
  for (const TensorSpec& t : specs)
    parts.push_back(fmt::format("`{}` {}[{}]", t.name, ir::dtype_name(t.dtype), fmt::join(t.dims, ", ")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string settings_line(const BenchReport& r) {
  const BenchSettings& s = r.settings;
  return fmt::format("{} thread{}, batch {}, {}, {} rounds x {} runs (after {} warm-up run{}), inputs {}",
                     s.threads, s.threads == 1 ? "" : "s", s.batch, s.precision, s.rounds, s.runs_per_round,
                     s.warmup, s.warmup == 1 ? "" : "s", s.inputs == "generated" ? fmt::format("generated (seed {})", s.seed) : s.inputs);
}

}  // namespace

std::string bench_markdown(const BenchReport& r) {
  std::string md = fmt::format("## kiln bench: {}\n\n", r.model_name);
  md += fmt::format("Model `{}`: inputs {}; outputs {}.  \n", r.model_path, tensor_list(r.inputs), tensor_list(r.outputs));
  md += fmt::format("{}; {} ({} cores); kiln {}, {}.\n\n", settings_line(r), r.cpu, r.cores, r.kiln_version, r.created);
  md += "| engine | version | cold | p50 | p90 | p99 | throughput | peak RSS | compile | executable |\n";
  md += "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const EngineResult& e : r.engines) {
    if (!e.ok()) continue;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f}/s | {} | {} | {} |\n", e.name, e.version,
                      format_ms(e.cold_ms), format_ms(e.latency.p50), format_ms(e.latency.p90),
                      format_ms(e.latency.p99), e.throughput_per_s, format_bytes(e.peak_rss_bytes),
                      e.compile_s >= 0 ? fmt::format("{:.1f} s", e.compile_s) : "-", format_bytes(e.executable_bytes));
  }
  for (const Comparison& c : r.comparisons) {
    md += fmt::format("\n### kiln vs {}\n\n", c.baseline);
    md += fmt::format("kiln is **{}** at p50 ({} the time), ", c.p50_ratio <= 1 ? fmt::format("{:.2f}x faster", 1 / c.p50_ratio)
                                                                                 : fmt::format("{:.2f}x slower", c.p50_ratio),
                      format_ratio(c.p50_ratio));
    md += fmt::format("with {} the throughput and {} the peak memory.\n\n", format_ratio(c.throughput_ratio),
                      format_ratio(c.peak_rss_ratio));
    md += "| kiln / baseline | p50 | p90 | p99 | cold | throughput | peak RSS |\n|---|--:|--:|--:|--:|--:|--:|\n";
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n\n", c.baseline, format_ratio(c.p50_ratio),
                      format_ratio(c.p90_ratio), format_ratio(c.p99_ratio), format_ratio(c.cold_ratio),
                      format_ratio(c.throughput_ratio), format_ratio(c.peak_rss_ratio));
    md += "| output | elements | max abs error | max rel error | top-1 agreement |\n|---|--:|--:|--:|--:|\n";
    for (const Agreement& a : c.agreement)
      md += a.problem.empty() ? fmt::format("| `{}` | {} | {} | {} | {} |\n", a.output, a.elements, error_text(a.max_abs_error),
                                            error_text(a.max_rel_error), top1_text(a))
                              : fmt::format("| `{}` | {} | {} | | |\n", a.output, a.elements, a.problem);
  }
  std::string skipped;
  for (const EngineResult& e : r.engines)
    if (!e.ok()) skipped += fmt::format("- {} {}: {}\n", e.name, e.status, e.reason);
  if (!skipped.empty()) md += "\n### Engines not measured\n\n" + skipped;
  if (!r.checks.empty()) {
    md += "\n### Checks\n\n";
    for (const Check& c : r.checks)
      md += fmt::format("- {} `--{} {}`: {}\n", c.passed ? "PASS" : "**FAIL**", c.name, c.threshold, c.reason);
  }
  return md;
}

std::string bench_terminal_table(const BenchReport& r) {
  std::string t = fmt::format("{}: {}\n\n", r.model_name, settings_line(r));
  t += fmt::format("{:<12} {:>11} {:>11} {:>11} {:>11} {:>12} {:>10} {:>10}\n", "engine", "cold", "p50", "p90", "p99",
                   "throughput", "peak RSS", "kiln/this");
  double kiln_p50 = 0;
  for (const EngineResult& e : r.engines)
    if (e.is_kiln && e.ok()) kiln_p50 = e.latency.p50;
  for (const EngineResult& e : r.engines) {
    if (!e.ok()) {
      t += fmt::format("{:<12} {}: {}\n", e.name, e.status, e.reason);
      continue;
    }
    t += fmt::format("{:<12} {:>11} {:>11} {:>11} {:>11} {:>10.1f}/s {:>10} {:>10}\n", e.name, format_ms(e.cold_ms),
                     format_ms(e.latency.p50), format_ms(e.latency.p90), format_ms(e.latency.p99), e.throughput_per_s,
                     format_bytes(e.peak_rss_bytes), e.is_kiln ? "" : format_ratio(kiln_p50 / e.latency.p50));
  }
  for (const EngineResult& e : r.engines)
    if (e.is_kiln && e.ok())
      t += fmt::format("\nkiln: compiled in {}, executable {}, static library {}\n",
                       e.compile_s >= 0 ? fmt::format("{:.1f} s", e.compile_s) : "(earlier)",
                       format_bytes(e.executable_bytes), format_bytes(e.static_library_bytes));
  for (const Comparison& c : r.comparisons)
    for (const Agreement& a : c.agreement)
      t += a.problem.empty()
               ? fmt::format("vs {}: {}: max abs error {}, max rel error {}{}\n", c.baseline, a.output,
                             error_text(a.max_abs_error), error_text(a.max_rel_error),
                             a.top1_agreement ? ", top-1 agreement " + top1_text(a) : "")
               : fmt::format("vs {}: {}: {}\n", c.baseline, a.output, a.problem);
  for (const Check& c : r.checks)
    t += fmt::format("{} --{} {}: {}\n", c.passed ? "pass" : "FAIL", c.name, c.threshold, c.reason);
  return t;
}

}  // namespace kiln::cli
