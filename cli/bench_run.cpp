#include "cli/bench_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "cli/child_process.h"
#include "cli/progress.h"
#include "ir/error.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> parse_times(const std::string& line, int expected, const std::string& what) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  std::vector<double> times;
  for (double t; in >> t;) times.push_back(t);
  if (word != "times" || static_cast<int>(times.size()) != expected)
    fail("{}: unexpected answer '{}' (expected {} times)", what, line.substr(0, 80), expected);
  return times;
}

struct Worker {
  EngineResult* result;
  std::unique_ptr<ChildProcess> process;
  std::string what;
};

// Marks a baseline failed (and stops it); rethrows for kiln.
void mark_failed(Worker& w, const Error& e) {
  if (w.result->is_kiln) throw;
  w.result->status = "failed";
  w.result->reason = e.what();
  w.process.reset();
}

}  // namespace

void run_engines(const std::vector<EngineLaunch>& launches, std::vector<EngineResult>& results, const RoundPlan& plan,
                 const fs::path& outputs_dir) {
  Progress progress(Progress::terminal_or(Progress::Mode::Lines));
  std::vector<Worker> workers;
  for (size_t i = 0; i < launches.size(); ++i) {
    Worker w{&results[i], nullptr, results[i].name};
    progress.step(fmt::format("kiln bench: starting {}", w.what));
    try {
      const auto t0 = Clock::now();
      w.process = std::make_unique<ChildProcess>(launches[i].argv, launches[i].log);
      std::string ready = w.process->read_line(w.what);
      if (ready.rfind("ready ", 0) != 0) fail("{}: unexpected first line '{}'", w.what, ready.substr(0, 80));
      w.result->load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      w.result->cold_ms = std::strtod(ready.c_str() + 6, nullptr);
      if (plan.warmup > 0) w.process->request(fmt::format("run {}", plan.warmup), w.what);
    } catch (const Error& e) {
      mark_failed(w, e);
    }
    workers.push_back(std::move(w));
  }

  for (int r = 0; r < plan.rounds; ++r) {
    std::string status = fmt::format("kiln bench: round {}/{}:", r + 1, plan.rounds);
    for (size_t k = 0; k < workers.size(); ++k) {
      Worker& w = workers[(k + static_cast<size_t>(r)) % workers.size()];  // each round starts elsewhere
      if (!w.process) continue;
      try {
        std::vector<double> times =
            parse_times(w.process->request(fmt::format("run {}", plan.runs_per_round), w.what), plan.runs_per_round, w.what);
        w.result->samples_ms.insert(w.result->samples_ms.end(), times.begin(), times.end());
        w.result->rounds_ms.push_back(times);
      } catch (const Error& e) {
        mark_failed(w, e);
      }
    }
    for (const Worker& w : workers)
      if (w.process)
        status += fmt::format(" {} p50 {}", w.what, format_ms(latency_stats(w.result->samples_ms).p50));
    progress.step(status);
  }

  for (Worker& w : workers) {
    if (!w.process) continue;
    try {
      fs::path dir = outputs_dir / w.result->name;
      fs::create_directories(dir);
      if (w.process->request("outputs " + dir.string(), w.what) != "ok") fail("{}: could not write its outputs", w.what);
    } catch (const Error& e) {
      mark_failed(w, e);
      continue;
    }
    w.process->peak_rss_bytes();  // read while it runs, before it exits
    w.process->wait();              // closing its stdin ends it
    w.result->peak_rss_bytes = w.process->peak_rss_bytes();
    w.result->latency = latency_stats(w.result->samples_ms);
    w.result->throughput_per_s = w.result->latency.mean > 0 ? plan.batch * 1000.0 / w.result->latency.mean : 0;
  }
}

}  // namespace kiln::cli
