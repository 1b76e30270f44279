// The HTML report of `kiln bench`: one self-contained page (inline CSS and SVG charts drawn
// here, no scripts, nothing fetched) with the latency distribution of every engine.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/bench_result.h"

namespace kiln::cli {

namespace {

const char* const kColors[] = {"#d9480f", "#1971c2", "#2f9e44", "#ae3ec9", "#e67700"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Maps milliseconds to x pixels, log-scaled when the engines differ by more than 20x.
struct Axis {
  double lo, hi;
  bool log;
  double left, width;
  double x(double v) const {
    double t = log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return left + std::clamp(t, 0.0, 1.0) * width;
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10)
        for (double m : {1.0, 2.0, 5.0})
          if (d * m >= lo * 0.9999 && d * m <= hi * 1.0001) t.push_back(d * m);
      return t;
    }
    const double raw = (hi - lo) / 5, mag = std::pow(10, std::floor(std::log10(raw)));
    const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    for (double v = std::ceil(lo / step) * step; v <= hi * 1.0001; v += step) t.push_back(v);
    return t;
  }
};

Axis axis_for(const std::vector<const EngineResult*>& engines, double left, double width) {
  double lo = INFINITY, hi = 0;
  for (const EngineResult* e : engines) {
    lo = std::min(lo, e->latency.min);
    hi = std::max(hi, e->latency.max);
  }
  if (!(lo > 0) || !(hi > lo)) {
    lo = 0.001;
    hi = 1;
  }
  const bool log = hi / lo > 20;
  return log ? Axis{lo / 1.2, hi * 1.2, true, left, width} : Axis{0, hi * 1.1, false, left, width};
}

std::string tick_label(double ms) {
  return ms >= 1 ? fmt::format("{:g} ms", ms) : fmt::format("{:g} µs", std::round(ms * 1e6) / 1e3);
}

std::string x_axis(const Axis& a, double y, double top) {
  std::string s;
  for (double t : a.ticks())
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" class=\"tick\">{4}</text>\n",
                     a.x(t), top, y, y + 14, tick_label(t));
  return s;
}

// Every warm run of every engine as a dot on its row, with p50, p90 and p99 marked.
std::string distribution_chart(const std::vector<const EngineResult*>& engines) {
  const double left = 110, width = 560, row = 56, top = 20;
  const double height = top + row * static_cast<double>(engines.size()) + 40;
  Axis a = axis_for(engines, left, width);
  std::string s = fmt::format(
      "<svg class=\"kiln-chart\" data-chart=\"latency-distribution\" role=\"img\" width=\"700\" height=\"{0}\" "
      "viewBox=\"0 0 700 {0}\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>Latency of every warm run, per engine "
      "({1} scale)</title>\n",
      height, a.log ? "log" : "linear");
  const double axis_y = top + row * static_cast<double>(engines.size());
  s += x_axis(a, axis_y, top);
  for (size_t i = 0; i < engines.size(); ++i) {
    const EngineResult& e = *engines[i];
    const char* color = kColors[i % 5];
    const double cy = top + row * (static_cast<double>(i) + 0.5);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"label\">{}</text>\n", left - 10, cy + 4,
                     escape(e.name));
    for (size_t k = 0; k < e.samples_ms.size(); ++k) {
      const double jitter = (static_cast<double>((k * 7919) % 23) / 22.0 - 0.5) * row * 0.55;
      s += fmt::format("<circle class=\"sample\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.2\" fill=\"{}\" fill-opacity=\"0.45\"/>",
                       a.x(e.samples_ms[k]), cy + jitter, color);
    }
    s += "\n";
    for (auto [name, v] : {std::pair{"p50", e.latency.p50}, {"p90", e.latency.p90}, {"p99", e.latency.p99}})
      s += fmt::format("<line class=\"marker\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#222\" "
                       "stroke-width=\"{3}\"><title>{4} {5}</title></line>\n",
                       a.x(v), cy - row * 0.4, cy + row * 0.4, name == std::string("p50") ? 3 : 1, name, format_ms(v));
  }
  return s + fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"tick\">latency per run (thick: p50, "
                         "thin: p90 and p99)</text>\n</svg>\n",
                         left + width / 2, axis_y + 32);
}

// p50, p90 and p99 of each engine as grouped bars.
std::string percentile_chart(const std::vector<const EngineResult*>& engines) {
  const double left = 110, width = 560, group = 60, top = 20;
  const double height = top + group * static_cast<double>(engines.size()) + 40;
  double hi = 0;
  for (const EngineResult* e : engines) hi = std::max(hi, e->latency.p99);
  Axis a{0, hi > 0 ? hi * 1.15 : 1, false, left, width};
  std::string s = fmt::format(
      "<svg class=\"kiln-chart\" data-chart=\"latency-percentiles\" role=\"img\" width=\"700\" height=\"{0}\" "
      "viewBox=\"0 0 700 {0}\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>p50, p90 and p99 latency per engine</title>\n",
      height);
  const double axis_y = top + group * static_cast<double>(engines.size());
  s += x_axis(a, axis_y, top);
  for (size_t i = 0; i < engines.size(); ++i) {
    const EngineResult& e = *engines[i];
    const double y0 = top + group * static_cast<double>(i) + 6;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"label\">{}</text>\n", left - 10,
                     y0 + group / 2 - 2, escape(e.name));
    int k = 0;
    for (auto [name, v] : {std::pair{"p50", e.latency.p50}, {"p90", e.latency.p90}, {"p99", e.latency.p99}}) {
      const double y = y0 + 16 * k++;
      s += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"13\" fill=\"{}\" "
                       "fill-opacity=\"{}\"><title>{} {} {}</title></rect>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tick\">{} {}</text>\n",
                       left, y, std::max(1.0, a.x(v) - left), kColors[i % 5], 1.0 - 0.3 * (k - 1), e.name, name,
                       format_ms(v), a.x(v) + 4, y + 10, name, format_ms(v));
    }
  }
  return s + "</svg>\n";
}

// The median of each round per engine: machine drift shows as lines moving together.
std::string rounds_chart(const std::vector<const EngineResult*>& engines) {
  const double left = 110, width = 560, top = 20, plot = 180;
  size_t rounds = 0;
  double hi = 0;
  for (const EngineResult* e : engines) {
    rounds = std::max(rounds, e->rounds_ms.size());
    for (const std::vector<double>& round : e->rounds_ms) hi = std::max(hi, latency_stats(round).p50);
  }
  std::string s = fmt::format(
      "<svg class=\"kiln-chart\" data-chart=\"latency-by-round\" role=\"img\" width=\"700\" height=\"{0}\" "
      "viewBox=\"0 0 700 {0}\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>Median latency of each round, per engine"
      "</title>\n",
      top + plot + 60);
  if (rounds == 0) return s + "</svg>\n";
  Axis y_axis{0, hi > 0 ? hi * 1.25 : 1, false, 0, plot};
  for (double t : y_axis.ticks()) {
    const double y = top + plot - y_axis.x(t);
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text x=\"{}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\" class=\"tick\">{}</text>\n",
                     left, left + width, y, y, left - 6, y + 4, tick_label(t));
  }
  auto x_of = [&](size_t r) { return left + (rounds == 1 ? width / 2 : width * static_cast<double>(r) / static_cast<double>(rounds - 1)); };
  for (size_t i = 0; i < engines.size(); ++i) {
    std::string points;
    for (size_t r = 0; r < engines[i]->rounds_ms.size(); ++r) {
      const double median = latency_stats(engines[i]->rounds_ms[r]).p50;
      points += fmt::format("{:.1f},{:.1f} ", x_of(r), top + plot - y_axis.x(median));
    }
    s += fmt::format("<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title>"
                     "</polyline>\n<text x=\"{}\" y=\"{}\" class=\"label\" fill=\"{}\">{}</text>\n",
                     points, kColors[i % 5], escape(engines[i]->name), left + 10 + 110 * static_cast<double>(i),
                     top + plot + 44, kColors[i % 5], escape(engines[i]->name));
  }
  return s + fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"tick\">round 1 to {} (engines "
                         "alternate within each round)</text>\n</svg>\n",
                         left + width / 2, top + plot + 22, rounds);
}

std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::string s = "<table><tr>";
  for (const std::string& h : head) s += "<th>" + escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const std::string& c : row) s += "<td>" + escape(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

}  // namespace

std::string bench_html(const BenchReport& r) {
  std::vector<const EngineResult*> measured;
  std::vector<std::vector<std::string>> rows;
  for (const EngineResult& e : r.engines) {
    if (!e.ok()) {
      rows.push_back({e.name, e.status, e.reason, "", "", "", "", "", ""});
      continue;
    }
    measured.push_back(&e);
    rows.push_back({e.name, e.version, format_ms(e.cold_ms), format_ms(e.latency.p50), format_ms(e.latency.p90),
                    format_ms(e.latency.p99), fmt::format("{:.1f}/s", e.throughput_per_s), format_bytes(e.peak_rss_bytes),
                    e.is_kiln ? fmt::format("{} (compiled in {})", format_bytes(e.executable_bytes),
                                            e.compile_s >= 0 ? fmt::format("{:.1f} s", e.compile_s) : "earlier")
                              : ""});
  }
  std::string body = table({"engine", "version", "cold", "p50", "p90", "p99", "throughput", "peak RSS", "kiln executable"}, rows);
  for (const Comparison& c : r.comparisons) {
    body += fmt::format("<h2>kiln vs {}</h2>\n", escape(c.baseline));
    body += table({"kiln / " + c.baseline, "p50", "p90", "p99", "cold", "throughput", "peak RSS"},
                  {{"ratio", format_ratio(c.p50_ratio), format_ratio(c.p90_ratio), format_ratio(c.p99_ratio),
                    format_ratio(c.cold_ratio), format_ratio(c.throughput_ratio), format_ratio(c.peak_rss_ratio)}});
    std::vector<std::vector<std::string>> agree;
    for (const Agreement& a : c.agreement)
      agree.push_back({a.output, std::to_string(a.elements), a.problem.empty() ? fmt::format("{:.3g}", a.max_abs_error) : a.problem,
                       fmt::format("{:.3g}", a.max_rel_error),
                       a.top1_agreement ? fmt::format("{:.1f}%", *a.top1_agreement * 100) : "-"});
    body += table({"output", "elements", "max abs error", "max rel error", "top-1 agreement"}, agree);
  }
  if (!r.checks.empty()) {
    std::vector<std::vector<std::string>> checks;
    for (const Check& c : r.checks)
      checks.push_back({c.passed ? "pass" : "FAIL", fmt::format("--{} {}", c.name, c.threshold), c.reason});
    body += "<h2>Checks</h2>\n" + table({"", "check", "result"}, checks);
  }
  std::string charts;
  if (!measured.empty())
    charts = "<h2>Latency distribution</h2>\n" + distribution_chart(measured) + "<h2>Percentiles</h2>\n" +
             percentile_chart(measured) + "<h2>Latency by round</h2>\n" + rounds_chart(measured);
  const BenchSettings& s = r.settings;
  return fmt::format(R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kiln bench: {name}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 60em; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
.grid {{ stroke: #e5e5e5; }}
.tick {{ font-size: 11px; fill: #555; }}
.label {{ font-size: 13px; }}
</style>
</head>
<body>
<h1>kiln bench: {name}</h1>
<p>Model <code>{path}</code>; {threads} thread(s), batch {batch}, {precision}; {rounds} rounds x {runs} runs after {warmup}
warm-up runs; inputs {inputs}. {cpu} ({cores} cores). kiln {version}, {created}.</p>
{body}{charts}<p>Generated by <code>kiln bench</code>; JSON schema version {schema}.</p>
</body>
</html>
)html",
                     fmt::arg("name", escape(r.model_name)), fmt::arg("path", escape(r.model_path)),
                     fmt::arg("threads", s.threads), fmt::arg("batch", s.batch), fmt::arg("precision", s.precision),
                     fmt::arg("rounds", s.rounds), fmt::arg("runs", s.runs_per_round), fmt::arg("warmup", s.warmup),
                     fmt::arg("inputs", escape(s.inputs == "generated" ? fmt::format("generated (seed {})", s.seed) : s.inputs)),
                     fmt::arg("cpu", escape(r.cpu)), fmt::arg("cores", r.cores), fmt::arg("version", r.kiln_version),
                     fmt::arg("created", r.created), fmt::arg("body", body), fmt::arg("charts", charts),
                     fmt::arg("schema", kBenchSchemaVersion));
}

}  // namespace kiln::cli
