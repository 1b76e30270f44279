// kiln_conformance: runs ONNX's backend test data through kiln's interpreter and through
// compiled code, and writes a report. See docs/design/conformance.md.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "tests/conformance/cases.h"
#include "tests/conformance/compiled.h"
#include "tests/conformance/prepare.h"
#include "tests/conformance/processes.h"
#include "tests/conformance/report.h"

namespace fs = std::filesystem;
using namespace kiln::conformance;

namespace {

struct Options {
  std::string data_dir;
  std::string out_dir = "conformance";
  std::string filter;
  std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string supported_ops;
  bool compiled = true;
  bool freeze = true;
  double case_timeout_s = 120;
  CompileSettings compile;
};

PathResult parse_outcome(const std::string& value) {
  size_t tab = value.find('\t');
  std::string status = value.substr(0, tab), detail = tab == std::string::npos ? "" : value.substr(tab + 1);
  if (status == "pass") return {Outcome::Pass, detail};
  if (status == "unsupported") return {Outcome::Unsupported, detail};
  return {Outcome::Fail, detail};
}

std::string log_tail(const fs::path& p) {
  std::ifstream f(p);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t at = text.rfind('\n');
  text = at == std::string::npos ? text : text.substr(at + 1);
  return text.size() > 300 ? text.substr(0, 300) + "..." : text;
}

// Phase 1: each case in a forked child: import, interpret and compare, generate sources.
void prepare_all(std::vector<CaseResult>& results, const Options& o) {
  std::deque<Job> jobs;
  // A std::function, so that a job can queue its own retry.
  std::function<Job(size_t, bool)> job_for;
  job_for = [&](size_t i, bool interpret) {
    CaseResult& r = results[i];
    Job j;
    j.function = [&r, interpret, freeze = o.freeze] {
      return prepare_case({&r.c, r.work_dir, r.model, interpret, freeze});
    };
    j.log_path = (fs::path(r.work_dir) / (interpret ? "prepare.log" : "prepare-compiled.log")).string();
    j.timeout_s = o.case_timeout_s;
    j.done = [&, i, interpret, log = j.log_path](const JobStatus& st) {
      CaseResult& r = results[i];
      std::map<std::string, std::string> got = read_result_file((fs::path(r.work_dir) / "prepare.txt").string());
      std::string why = st.describe(o.case_timeout_s);
      if (std::string tail = log_tail(log); !tail.empty()) why += ": " + tail;
      if (interpret) r.interp = got.count("interp") ? parse_outcome(got["interp"]) : PathResult{Outcome::Fail, why};
      if (!o.compiled) return;
      if (got.count("compiled")) {
        const std::string& v = got["compiled"];
        if (v.rfind("ready", 0) == 0) {
          r.sources_ready = true;
          r.constant_inputs = v.size() > 6 ? v.substr(6) : "";
        }
        else r.compiled = parse_outcome(v);
      } else if (interpret && !got.count("interp")) {
        jobs.push_back(job_for(i, false));  // it died in the interpreter: try the compiled path alone
      } else {
        r.compiled = {Outcome::Fail, why};
      }
    };
    return j;
  };
  for (size_t i = 0; i < results.size(); ++i) {
    fs::create_directories(results[i].work_dir);
    jobs.push_back(job_for(i, true));
  }
  size_t step = std::max<size_t>(results.size() / 10, 1);
  fmt::print("importing, interpreting and generating code for {} cases ({} jobs)\n", results.size(), o.compile.jobs);
  auto start = std::chrono::steady_clock::now();
  run_jobs(jobs, o.compile.jobs, [&](size_t done, size_t total) {
    if (done % step == 0 || done == total)
      fmt::print("  {}/{} ({:.0f} s)\n", done, total,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"kiln_conformance: ONNX's backend test data through kiln's interpreter and compiled code"};
  app.add_option("--data", o.data_dir, "folder with node/, pytorch-converted/, ... (scripts/fetch_onnx_testdata.sh)")
      ->required();
  app.add_option("--out", o.out_dir, "where report.md, report.json and the work folder go");
  app.add_option("--filter", o.filter, "only cases whose SUITE/NAME contains this text (or one of several, comma-separated)");
  app.add_option("--suites", o.suites, "suites to run")->delimiter(',');
  app.add_option("--supported-ops", o.supported_ops,
                 "file listing ops that must pass all their cases; a failure among them is an error");
  app.add_flag("!--no-compiled", o.compiled, "only the interpreter");
  app.add_flag("!--no-constant-inputs", o.freeze,
               "never compile a case's int64 inputs as constants (see docs/design/conformance.md)");
  app.add_option("--jobs,-j", o.compile.jobs, "processes at once");
  app.add_option("--batch-size", o.compile.batch_size, "models per compiled executable");
  app.add_option("--opt", o.compile.opt, "optimization flag for the compiled models");
  app.add_option("--cxx", o.compile.cxx, "C++ compiler (default: $CXX, else c++)");
  app.add_option("--case-timeout", o.case_timeout_s, "seconds for one case's import, interpreter and code generation");
  app.add_option("--run-timeout", o.compile.run_timeout_s, "seconds for one compiled run");
  app.add_option("--compile-timeout", o.compile.compile_timeout_s, "seconds for one batch's compilation");
  CLI11_PARSE(app, argc, argv);
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx && app.count("--cxx") == 0) o.compile.cxx = cxx;

  auto start = std::chrono::steady_clock::now();
  try {
    if (!fs::is_directory(fs::path(o.data_dir) / "node"))
      kiln::fail("{}: no node/ folder; run scripts/fetch_onnx_testdata.sh first", o.data_dir);
    fs::path out = fs::absolute(o.out_dir);
    fs::path work = out / "work";
    fs::remove_all(work / "cases");
    o.compile.work_dir = work.string();
    // The compiled runtime is shared through KILN_CACHE_DIR when set (the test suite sets it), as
    // kiln shares its own.
    const char* shared_cache = std::getenv("KILN_CACHE_DIR");
    o.compile.cache_dir = shared_cache && *shared_cache ? (fs::path(shared_cache) / "conformance").string()
                                                        : (out / "cache").string();

    std::vector<Case> cases = scan_cases(o.data_dir, o.suites, o.filter);
    if (cases.empty()) kiln::fail("no case matches '{}' in {}", o.filter, o.data_dir);
    std::vector<CaseResult> results;
    for (size_t i = 0; i < cases.size(); ++i) {
      CaseResult r;
      r.c = std::move(cases[i]);
      r.model = fmt::format("m{:04d}", i);
      r.work_dir = (work / "cases" / r.model).string();
      results.push_back(std::move(r));
    }

    prepare_all(results, o);
    if (o.compiled) build_and_run_compiled(results, o.compile, std::cout);
    for (CaseResult& r : results) {  // nothing may end unaccounted for
      if (r.interp.outcome == Outcome::NotRun) r.interp = {Outcome::Fail, "not run (a bug in the runner)"};
      if (o.compiled && r.compiled.outcome == Outcome::NotRun)
        r.compiled = {Outcome::Fail, "not run (a bug in the runner)"};
    }

    RunInfo info;
    info.data_dir = fs::absolute(o.data_dir).string();
    std::ifstream version(fs::path(o.data_dir) / "VERSION");
    std::getline(version, info.data_version);
    if (info.data_version.empty()) info.data_version = "unknown version";
    info.filter = o.filter;
    info.jobs = o.compile.jobs;
    info.opt = o.compile.opt;
    info.compiled = o.compiled;
    for (const kiln::ir::OpDef* def : kiln::ir::registry().all()) info.registry_ops.push_back(def->name);
    info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_reports(results, info, out.string());

    fmt::print("\nconformance totals (in-scope cases passing; report: {}):\n{}", (out / "report.md").string(),
               totals_text(results, info));
    int status = 0;
    if (!o.supported_ops.empty()) {
      std::vector<std::string> notes;
      std::vector<std::string> problems = check_supported(results, o.supported_ops, o.compiled, notes);
      if (!notes.empty())
        fmt::print("ops whose node cases all pass, not listed in {} (scripts/gen_ops_table.py decides): {}\n", o.supported_ops,
                   fmt::join(notes, ", "));
      for (const std::string& p : problems) fmt::print("REGRESSION: {}\n", p);
      if (!problems.empty()) status = 1;
      fmt::print("supported-ops check: {}\n",
                 problems.empty() ? std::string("every listed op passes all its cases")
                                  : fmt::format("{} cases of listed ops do not pass", problems.size()));
    }
    fmt::print("conformance run finished in {:.0f} s\n", info.seconds);
    return status;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln_conformance: error: {}\n", e.what());
    return 2;
  }
}
