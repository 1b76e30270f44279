// Child processes with time limits, a few at a time: each case's risky work runs in a
// forked child (a crash or a hang in one case is recorded, never the end of the suite),
// and the compiler and the compiled models are programs run the same way.
#pragma once

#include <functional>
#include <string>
#include <deque>
#include <vector>

namespace kiln::conformance {

struct JobStatus {
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, else 0
  double seconds = 0;
  bool ok() const { return !timed_out && exit_code == 0; }
  // "exit code 3", "crash (signal 11, SIGSEGV)", "timeout after 60 s".
  std::string describe(double timeout_s) const;
};

struct Job {
  // Either a function run in a forked child (its return value is the exit code; an escaping
  // exception exits with 70) or a program to execute (argv[0] looked up in PATH).
  std::function<int()> function;
  std::vector<std::string> argv;
  std::string log_path;    // stdout and stderr of the child ("" : /dev/null)
  double timeout_s = 60;   // then the child's whole process group is killed
  std::function<void(const JobStatus&)> done;  // called in the parent when it ends
};

// Runs `jobs`, at most `parallel` at once, in order; returns when all ended. A job's `done` may append jobs.
// `progress`, if set, is called in the parent after each job with (finished, total).
void run_jobs(std::deque<Job>& jobs, int parallel,
              const std::function<void(size_t, size_t)>& progress = {});

}  // namespace kiln::conformance
