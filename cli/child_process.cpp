#include "cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>

#include <fmt/format.h>

#include "ir/error.h"

extern char** environ;

namespace kiln::cli {

namespace {

pid_t spawn(const std::vector<std::string>& argv, posix_spawn_file_actions_t* actions) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], actions, nullptr, args.data(), environ);
  if (rc != 0) fail("cannot run '{}': {}", argv[0], std::strerror(rc));
  return pid;
}

}  // namespace

std::string tail_of(const std::filesystem::path& file, size_t max_lines) {
  std::ifstream f(file);
  std::deque<std::string> lines;
  for (std::string line; std::getline(f, line);) {
    lines.push_back(line);
    if (lines.size() > max_lines) lines.pop_front();
  }
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log) : log_(log) {
  signal(SIGPIPE, SIG_IGN);  // a worker that dies is reported by read_line, not by a signal
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0)
    fail("cannot create a pipe: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  try {
    pid_ = spawn(argv, &actions);
  } catch (...) {
    posix_spawn_file_actions_destroy(&actions);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) close(fd);
    throw;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  to_ = fdopen(in_pipe[1], "w");
  from_ = fdopen(out_pipe[0], "r");
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (to_) std::fclose(to_);
  if (from_) std::fclose(from_);
}

void ChildProcess::died(const std::string& what) {
  std::string tail = tail_of(log_);
  wait();
  fail("{} stopped unexpectedly (exit status {}){}{}", what, status_, tail.empty() ? "" : ":\n", tail);
}

std::string ChildProcess::read_line(const std::string& what) {
  std::string line;
  int c;
  while ((c = std::fgetc(from_)) != EOF && c != '\n') line += static_cast<char>(c);
  if (c == EOF) died(what);
  if (line.rfind("error ", 0) == 0) {
    wait();
    fail("{}: {}", what, line.substr(6));
  }
  return line;
}

std::string ChildProcess::request(const std::string& line, const std::string& what) {
  if (std::fprintf(to_, "%s\n", line.c_str()) < 0 || std::fflush(to_) != 0) died(what);
  return read_line(what);
}

long long ChildProcess::peak_rss_bytes() {
  if (pid_ <= 0) return peak_rss_;
  std::ifstream status(fmt::format("/proc/{}/status", pid_));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) {
      hwm_ = std::stoll(line.substr(6)) * 1024;  // "VmHWM:   1234 kB"
      return hwm_;
    }
  return 0;
}

int ChildProcess::wait() {
  if (pid_ <= 0) return status_;
  if (to_) {
    std::fclose(to_);
    to_ = nullptr;
  }
  int status = 0;
  struct rusage usage {};
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  peak_rss_ = hwm_ > 0 ? hwm_ : static_cast<long long>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return status_;
}

int run_to_completion(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  try {
    pid = spawn(argv, &actions);
  } catch (...) {
    posix_spawn_file_actions_destroy(&actions);
    throw;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace kiln::cli
