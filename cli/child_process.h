// A child process kiln talks to line by line: a `kiln bench` worker (the compiled
// executable under --bench-worker, or a baseline adapter script), or a one-shot command.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::cli {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with stdin and stdout as pipes to this process and
  // stderr to the file `log`. Fails when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~ChildProcess();  // kills the child if it still runs
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Sends one line; returns the next line it prints, or fails (naming `what`, with the
  // tail of its stderr) if it exits first.
  std::string request(const std::string& line, const std::string& what);
  std::string read_line(const std::string& what);
  // Closes its stdin and waits for it. Returns its exit status (-1 if killed by a signal).
  int wait();
  // While it runs: its peak resident memory so far, in bytes (VmHWM of /proc/PID/status,
  // which starts afresh at exec; 0 if unknown). After wait(): the same as last read, else
  // getrusage's ru_maxrss, which on Linux also counts what the parent had resident when
  // the child was spawned.
  long long peak_rss_bytes();
  const std::filesystem::path& log() const { return log_; }

 private:
  [[noreturn]] void died(const std::string& what);

  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
  std::filesystem::path log_;
  long long peak_rss_ = 0;
  long long hwm_ = 0;  // the last VmHWM read
  int status_ = 0;
};

// The last `max_lines` lines of a text file (for error messages).
std::string tail_of(const std::filesystem::path& file, size_t max_lines = 8);

// Runs argv to completion with stdout and stderr in `log`; returns its exit status.
int run_to_completion(const std::vector<std::string>& argv, const std::filesystem::path& log);

}  // namespace kiln::cli
