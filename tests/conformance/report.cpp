#include "tests/conformance/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::conformance {

namespace fs = std::filesystem;

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::NotRun: return "not run";
    case Outcome::Pass: return "pass";
    case Outcome::Fail: return "fail";
    case Outcome::Unsupported: return "unsupported";
  }
  return "?";
}

namespace {

const std::vector<std::string> kSuites = {"node", "pytorch-converted", "pytorch-operator", "simple"};

struct Tally {
  int pass = 0, fail = 0, unsupported = 0, not_run = 0;
  void add(Outcome o) {
    switch (o) {
      case Outcome::Pass: ++pass; break;
      case Outcome::Fail: ++fail; break;
      case Outcome::Unsupported: ++unsupported; break;
      case Outcome::NotRun: ++not_run; break;
    }
  }
  int total() const { return pass + fail + unsupported + not_run; }
};

struct Group {
  int cases = 0;
  int out_of_scope = 0;
  Tally interp, compiled;          // in-scope cases
  Tally oos_interp, oos_compiled;  // out-of-scope cases (welcome, not required)
  void add(const CaseResult& r) {
    ++cases;
    if (r.c.out_of_scope.empty()) {
      interp.add(r.interp.outcome);
      compiled.add(r.compiled.outcome);
    } else {
      ++out_of_scope;
      oos_interp.add(r.interp.outcome);
      oos_compiled.add(r.compiled.outcome);
    }
  }
};

std::string pct(int n, int d) { return d == 0 ? "-" : fmt::format("{:.1f}%", 100.0 * n / d); }

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_tally(const Tally& t) {
  return fmt::format(R"({{"pass": {}, "fail": {}, "unsupported": {}, "not_run": {}}})", t.pass, t.fail,
                     t.unsupported, t.not_run);
}

std::string json_group(const Group& g) {
  return fmt::format(
      R"({{"cases": {}, "in_scope": {}, "out_of_scope": {}, "interp": {}, "compiled": {}, "out_of_scope_interp": {}, "out_of_scope_compiled": {}}})",
      g.cases, g.cases - g.out_of_scope, g.out_of_scope, json_tally(g.interp), json_tally(g.compiled),
      json_tally(g.oos_interp), json_tally(g.oos_compiled));
}

// Markdown table cells hold one line without pipes.
std::string cell(std::string s, size_t max = 300) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  if (out.size() > max) out = out.substr(0, max) + "...";
  return out;
}

std::string path_cell(const PathResult& p) {
  return p.outcome == Outcome::Pass ? "pass" : fmt::format("{}: {}", outcome_name(p.outcome), cell(p.detail, 200));
}

std::string compiled_cell(const CaseResult& r) {
  std::string s = path_cell(r.compiled);
  return r.constant_inputs.empty() ? s : s + " (" + cell(r.constant_inputs) + ")";
}

bool is_crash(const PathResult& p) {
  return p.outcome == Outcome::Fail &&
         (p.detail.find("crash") != std::string::npos || p.detail.find("timeout") != std::string::npos);
}

// The first line of an unsupported reason, with node names cut out, to group by.
std::string reason_key(const std::string& detail) {
  std::string s = detail.substr(0, detail.find('\n'));
  return s.size() > 160 ? s.substr(0, 160) + "..." : s;
}

std::map<std::string, Group> by_op(const std::vector<CaseResult>& results) {
  std::map<std::string, Group> ops;
  for (const CaseResult& r : results)
    if (r.c.suite == "node") ops[r.c.tested_op].add(r);
  return ops;
}

std::string op_status(const Group& g) {
  int in_scope = g.cases - g.out_of_scope;
  if (in_scope == 0) return "out of scope";
  if (g.interp.pass == in_scope && g.compiled.pass == in_scope) return "passes";
  if (g.interp.pass == in_scope) return "interpreter only";
  if (g.interp.pass + g.compiled.pass == 0) return g.interp.unsupported == in_scope ? "unsupported" : "fails";
  return "partial";
}

}  // namespace

std::string totals_text(const std::vector<CaseResult>& results, const RunInfo& info) {
  std::map<std::string, Group> suites;
  for (const CaseResult& r : results) suites[r.c.suite].add(r);
  std::string s;
  for (const std::string& name : kSuites) {
    auto it = suites.find(name);
    if (it == suites.end()) continue;
    const Group& g = it->second;
    int d = g.cases - g.out_of_scope;
    s += fmt::format("  {:<18} {:>5} cases ({} out of scope)   interpreter {:>5} pass {:>6}", name, g.cases,
                     g.out_of_scope, g.interp.pass, pct(g.interp.pass, d));
    if (info.compiled) s += fmt::format("   compiled {:>5} pass {:>6}", g.compiled.pass, pct(g.compiled.pass, d));
    s += "\n";
  }
  return s;
}

void write_reports(const std::vector<CaseResult>& results, const RunInfo& info, const std::string& out_dir) {
  fs::create_directories(out_dir);
  std::map<std::string, Group> suites;
  for (const CaseResult& r : results) suites[r.c.suite].add(r);
  std::map<std::string, Group> ops = by_op(results);

  // ---------------------------------------------------------------- report.json
  std::string j = "{\n";
  j += fmt::format("  \"data\": {},\n  \"data_dir\": {},\n  \"filter\": {},\n", json_string(info.data_version),
                   json_string(info.data_dir), json_string(info.filter));
  j += fmt::format("  \"seconds\": {:.1f},\n  \"jobs\": {},\n  \"opt\": {},\n  \"compiled_path\": {},\n", info.seconds,
                   info.jobs, json_string(info.opt), info.compiled ? "true" : "false");
  std::vector<std::string> quoted;
  for (const std::string& op : info.registry_ops) quoted.push_back(json_string(op));
  j += fmt::format("  \"registry_ops\": [{}],\n", fmt::join(quoted, ", "));
  j += "  \"suites\": {\n";
  std::vector<std::string> rows;
  for (const auto& [name, g] : suites) rows.push_back(fmt::format("    {}: {}", json_string(name), json_group(g)));
  j += fmt::format("{}\n  }},\n", fmt::join(rows, ",\n"));
  rows.clear();
  for (const auto& [op, g] : ops)
    rows.push_back(fmt::format("    {}: {}", json_string(op), json_group(g)));
  j += fmt::format("  \"ops\": {{\n{}\n  }},\n", fmt::join(rows, ",\n"));
  rows.clear();
  for (const CaseResult& r : results) {
    quoted.clear();
    for (const std::string& op : r.c.ops) quoted.push_back(json_string(op));
    rows.push_back(fmt::format(
        R"(    {{"suite": {}, "name": {}, "tested_op": {}, "ops": [{}], "out_of_scope": {}, "interp": {{"outcome": {}, "detail": {}}}, "compiled": {{"outcome": {}, "detail": {}}}, "constant_inputs": {}}})",
        json_string(r.c.suite), json_string(r.c.name), json_string(r.c.tested_op), fmt::join(quoted, ", "),
        json_string(r.c.out_of_scope), json_string(outcome_name(r.interp.outcome)), json_string(r.interp.detail),
        json_string(outcome_name(r.compiled.outcome)), json_string(r.compiled.detail), json_string(r.constant_inputs)));
  }
  j += fmt::format("  \"cases\": [\n{}\n  ]\n}}\n", fmt::join(rows, ",\n"));
  std::ofstream(fs::path(out_dir) / "report.json") << j;

  // ---------------------------------------------------------------- report.md
  std::string m = "# kiln conformance report\n\n";
  m += fmt::format("ONNX backend test data: {} (`{}`){}. {} jobs; compiled models built with {}; {:.0f} s.\n\n",
                   info.data_version, info.data_dir, info.filter.empty() ? "" : fmt::format(", filter `{}`", info.filter),
                   info.jobs, info.opt, info.seconds);
  m += "Percentages are of the cases in scope: every case except those the issue leaves out "
       "(ai.onnx.ml and ai.onnx.preview.training domains, string tensors, sequence, optional or map "
       "types, random-number ops, ImageDecoder), which are counted apart. Tolerances: "
       "|got - expected| <= atol + rtol * |expected| with rtol 1e-3 and atol 1e-7 (a case's data.json "
       "may loosen them; bfloat16 rtol at least 2^-6), NaN equal to NaN, integers and bools exact. "
       "See docs/design/conformance.md.\n\n";
  m += "## Totals\n\n| suite | cases | in scope | interpreter pass | fail | unsupported | compiled pass | fail | unsupported | "
       "out of scope (interpreter / compiled pass) |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const std::string& name : kSuites) {
    auto it = suites.find(name);
    if (it == suites.end()) continue;
    const Group& g = it->second;
    int d = g.cases - g.out_of_scope;
    m += fmt::format("| {} | {} | {} | {} ({}) | {} | {} | {} ({}) | {} | {} | {} ({} / {}) |\n", name, g.cases, d,
                     g.interp.pass, pct(g.interp.pass, d), g.interp.fail, g.interp.unsupported, g.compiled.pass,
                     pct(g.compiled.pass, d), g.compiled.fail, g.compiled.unsupported, g.out_of_scope,
                     g.oos_interp.pass, g.oos_compiled.pass);
  }

  int constant = 0, constant_pass = 0;
  for (const CaseResult& r : results)
    if (!r.constant_inputs.empty()) {
      ++constant;
      constant_pass += r.compiled.outcome == Outcome::Pass;
    }
  m += fmt::format("\n{} cases were compiled with their int64 inputs as constants (their shapes depend on "
                   "those values: a Reshape's shape, a Reduce's axes); {} of them pass. They are listed under "
                   "\"Compiled with constant inputs\" below.\n",
                   constant, constant_pass);
  m += "\n## Ops (node suite)\n\nEach node case counts for the op it tests: the model's op, or for an "
       "`_expanded` case (the op's function body written out in primitive ops) the op of the case of the "
       "same name without the suffix. Status `passes`: every in-scope case passes on both paths.\n\n"
       "| op | cases | interpreter pass / fail / unsupported | compiled pass / fail / unsupported | out of scope | status |\n"
       "|---|--:|---|---|--:|---|\n";
  for (const auto& [op, g] : ops)
    m += fmt::format("| {} | {} | {} / {} / {} | {} / {} / {} | {} | {} |\n", cell(op), g.cases - g.out_of_scope,
                     g.interp.pass, g.interp.fail, g.interp.unsupported, g.compiled.pass, g.compiled.fail,
                     g.compiled.unsupported, g.out_of_scope, op_status(g));

  m += "\n## Other suites, case by case\n\n| suite | case | ops | interpreter | compiled |\n|---|---|---|---|---|\n";
  for (const CaseResult& r : results) {
    if (r.c.suite == "node") continue;
    if (!r.c.out_of_scope.empty()) {
      m += fmt::format("| {} | {} | {} | out of scope: {} | |\n", r.c.suite, r.c.name, cell(fmt::format("{}", fmt::join(r.c.ops, " "))),
                       cell(r.c.out_of_scope));
      continue;
    }
    m += fmt::format("| {} | {} | {} | {} | {} |\n", r.c.suite, r.c.name, cell(fmt::format("{}", fmt::join(r.c.ops, " "))),
                     path_cell(r.interp), compiled_cell(r));
  }

  // Top unsupported ops: node cases by tested op, unsupported on either path.
  std::map<std::string, int> unsupported_ops;
  for (const CaseResult& r : results)
    if (r.c.suite == "node" && r.c.out_of_scope.empty() &&
        (r.interp.outcome == Outcome::Unsupported || r.compiled.outcome == Outcome::Unsupported))
      ++unsupported_ops[r.c.tested_op];
  std::vector<std::pair<int, std::string>> top;
  for (const auto& [op, n] : unsupported_ops) top.emplace_back(-n, op);
  std::sort(top.begin(), top.end());
  m += "\n## Unsupported ops by node cases (unsupported on either path)\n\n| op | cases |\n|---|--:|\n";
  for (const auto& [n, op] : top) m += fmt::format("| {} | {} |\n", cell(op), -n);

  std::map<std::string, int> reasons;
  for (const CaseResult& r : results)
    if (r.c.out_of_scope.empty()) {
      if (r.interp.outcome == Outcome::Unsupported) ++reasons["interpreter: " + reason_key(r.interp.detail)];
      if (r.compiled.outcome == Outcome::Unsupported && r.compiled.detail != r.interp.detail)
        ++reasons["compiled: " + reason_key(r.compiled.detail)];
    }
  std::vector<std::pair<int, std::string>> top_reasons;
  for (const auto& [why, n] : reasons) top_reasons.emplace_back(-n, why);
  std::sort(top_reasons.begin(), top_reasons.end());
  m += "\n## Unsupported: reasons by count (in-scope cases)\n\n| cases | reason |\n|--:|---|\n";
  for (const auto& [n, why] : top_reasons) m += fmt::format("| {} | {} |\n", -n, cell(why));

  m += "\n## Crashes and timeouts\n\n";
  int crashes = 0;
  for (const CaseResult& r : results)
    for (const auto& [path, p] : {std::pair<const char*, const PathResult*>{"interpreter", &r.interp}, {"compiled", &r.compiled}})
      if (is_crash(*p)) {
        m += fmt::format("- {}/{} ({}): {}\n", r.c.suite, r.c.name, path, cell(p->detail));
        ++crashes;
      }
  if (crashes == 0) m += "None.\n";

  m += "\n## Failures (in-scope cases failing on either path)\n\n| case | op | interpreter | compiled |\n|---|---|---|---|\n";
  for (const CaseResult& r : results)
    if (r.c.out_of_scope.empty() && (r.interp.outcome == Outcome::Fail || r.compiled.outcome == Outcome::Fail ||
                                     r.interp.outcome == Outcome::NotRun || (info.compiled && r.compiled.outcome == Outcome::NotRun)))
      m += fmt::format("| {}/{} | {} | {} | {} |\n", r.c.suite, r.c.name, cell(r.c.tested_op), path_cell(r.interp),
                       compiled_cell(r));

  m += "\n## Unsupported cases (in scope)\n\n| case | interpreter | compiled |\n|---|---|---|\n";
  for (const CaseResult& r : results)
    if (r.c.out_of_scope.empty() &&
        (r.interp.outcome == Outcome::Unsupported || r.compiled.outcome == Outcome::Unsupported))
      m += fmt::format("| {}/{} | {} | {} |\n", r.c.suite, r.c.name, path_cell(r.interp), path_cell(r.compiled));

  m += "\n## Compiled with constant inputs\n\n| case | inputs | compiled |\n|---|---|---|\n";
  for (const CaseResult& r : results)
    if (!r.constant_inputs.empty())
      m += fmt::format("| {}/{} | {} | {} |\n", r.c.suite, r.c.name, cell(r.constant_inputs.substr(r.constant_inputs.find(':') + 2)),
                       path_cell(r.compiled));

  m += "\n## Out of scope\n\n| case | why | interpreter | compiled |\n|---|---|---|---|\n";
  for (const CaseResult& r : results)
    if (!r.c.out_of_scope.empty())
      m += fmt::format("| {}/{} | {} | {} | {} |\n", r.c.suite, r.c.name, cell(r.c.out_of_scope),
                       outcome_name(r.interp.outcome), outcome_name(r.compiled.outcome));
  std::ofstream(fs::path(out_dir) / "report.md") << m;
}

std::vector<std::string> check_supported(const std::vector<CaseResult>& results, const std::string& path,
                                         bool compiled, std::vector<std::string>& notes) {
  std::ifstream f(path);
  if (!f) fail("{}: cannot read the list of supported ops", path);
  std::set<std::string> supported;
  for (std::string line; std::getline(f, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) supported.insert(line);
  }
  auto passes = [&](const CaseResult& r) {
    return r.interp.outcome == Outcome::Pass && (!compiled || r.compiled.outcome == Outcome::Pass);
  };
  auto describe = [&](const CaseResult& r) {
    std::string s;
    if (r.interp.outcome != Outcome::Pass) s += "interpreter " + path_cell(r.interp);
    if (compiled && r.compiled.outcome != Outcome::Pass) s += (s.empty() ? "" : "; ") + ("compiled " + path_cell(r.compiled));
    return s;
  };
  std::vector<std::string> problems;
  for (const CaseResult& r : results) {
    if (!r.c.out_of_scope.empty() || passes(r)) continue;
    bool all_supported = !r.c.ops.empty();
    for (const std::string& op : r.c.ops) all_supported = all_supported && supported.count(op);
    if (supported.count(r.c.tested_op))
      problems.push_back(fmt::format("{}/{} tests supported op {}: {}", r.c.suite, r.c.name, r.c.tested_op, describe(r)));
    else if (all_supported)
      problems.push_back(fmt::format("{}/{} uses only supported ops: {}", r.c.suite, r.c.name, describe(r)));
  }
  for (const auto& [op, g] : by_op(results)) {
    int in_scope = g.cases - g.out_of_scope;
    bool all = in_scope > 0 && g.interp.pass == in_scope && (!compiled || g.compiled.pass == in_scope);
    if (all && !supported.count(op)) notes.push_back(op);
  }
  return problems;
}

}  // namespace kiln::conformance
