#include "tests/conformance/processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::conformance {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  size_t index;
  Clock::time_point start;
};

// In the child: own process group (so a timeout kills compilers' children too), stdin from
// /dev/null, stdout and stderr to the log.
void setup_child(const std::string& log_path) {
  setpgid(0, 0);
  int in = open("/dev/null", O_RDONLY);
  if (in >= 0) dup2(in, 0);
  int out = open(log_path.empty() ? "/dev/null" : log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
}

pid_t start(Job& job) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) fail("cannot fork: {}", std::strerror(errno));
  if (pid > 0) {
    setpgid(pid, pid);  // also in the parent, so a kill never races the child's own call
    return pid;
  }
  setup_child(job.log_path);
  int code = 70;
  if (job.function) {
    try {
      code = job.function();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "uncaught exception\n");
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  std::vector<char*> argv;
  for (std::string& a : job.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

std::string JobStatus::describe(double timeout_s) const {
  if (timed_out) return fmt::format("timeout after {:.0f} s", timeout_s);
  if (signal) {
    const char* name = sigabbrev_np(signal);
    return fmt::format("crash (signal {}{}{})", signal, name ? ", SIG" : "", name ? name : "");
  }
  return fmt::format("exit code {}", exit_code);
}

void run_jobs(std::deque<Job>& jobs, int parallel, const std::function<void(size_t, size_t)>& progress) {
  if (parallel < 1) parallel = 1;
  std::map<pid_t, Running> running;
  size_t next = 0, finished = 0;
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      pid_t pid = start(jobs[next]);
      running[pid] = {next++, Clock::now()};
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR) fail("waiting for a child process: {}", std::strerror(errno));
    if (pid <= 0) {
      // Nothing ended: enforce the time limits, then sleep a little.
      Clock::time_point now = Clock::now();
      for (auto& [p, r] : running) {
        double elapsed = std::chrono::duration<double>(now - r.start).count();
        if (elapsed > jobs[r.index].timeout_s) kill(-p, SIGKILL);
      }
      timespec ts{0, 2'000'000};
      nanosleep(&ts, nullptr);
      continue;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    Running r = it->second;
    running.erase(it);
    kill(-pid, SIGKILL);  // anything the job left running in its group
    Job& job = jobs[r.index];
    JobStatus s;
    s.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
    if (WIFEXITED(status)) {
      s.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      s.signal = WTERMSIG(status);
      s.timed_out = s.signal == SIGKILL && s.seconds >= job.timeout_s;
    }
    if (job.done) job.done(s);
    ++finished;
    if (progress) progress(finished, jobs.size());
  }
}

}  // namespace kiln::conformance
