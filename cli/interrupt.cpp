#include "cli/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "ir/error.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

int signal_pipe[2] = {-1, -1};
std::atomic<bool> interrupted{false};

struct Registry {
  std::mutex mutex;
  std::multiset<std::string> paths;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the watcher may use it during exit
  return *r;
}

void on_signal(int sig) {
  const unsigned char s = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(signal_pipe[1], &s, 1);
}

// This process's children, from /proc/PID/stat (the field after the command's closing
// parenthesis and the state is the parent's PID).
std::vector<pid_t> children() {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  const pid_t self = getpid();
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == self)
      found.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
  }
  closedir(proc);
  return found;
}

// Asks the children to stop and waits up to 3 s for them: a nested kiln removes its own
// temporary files, and a compiler must not write into a folder being removed.
void stop_children() {
  std::vector<pid_t> pids = children();
  for (pid_t pid : pids) kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!pids.empty() && std::chrono::steady_clock::now() < deadline) {
    std::vector<pid_t> running;
    for (pid_t pid : pids) {
      int status = 0;
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == 0) running.push_back(pid);  // ECHILD: reaped by the main thread meanwhile
    }
    pids = std::move(running);
    if (!pids.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void remove_registered() {
  std::vector<std::string> paths;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    paths.assign(registry().paths.begin(), registry().paths.end());
  }
  // The main thread goes on while this runs and may create a file in a folder being
  // removed: try again until the path stays gone.
  for (const std::string& p : paths) {
    std::error_code ec;
    for (int attempt = 0; attempt < 50 && fs::symlink_status(p, ec).type() != fs::file_type::not_found; ++attempt) {
      fs::remove_all(p, ec);
      if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void watch() {
  unsigned char s = 0;
  while (read(signal_pipe[0], &s, 1) != 1)
    if (errno != EINTR) return;
  const int sig = s;
  interrupted = true;
  stop_children();
  remove_registered();
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);
}

}  // namespace

void install_interrupt_cleanup() {
  if (pipe2(signal_pipe, O_CLOEXEC) != 0) return;  // no cleanup then, as before
  std::thread(watch).detach();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

void wait_if_interrupted() {
  if (!interrupted) return;
  for (;;) pause();  // the watcher ends the process
}

RemovedIfInterrupted::RemovedIfInterrupted(fs::path path) : path_(std::move(path)) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().paths.insert(path_.string());
}

RemovedIfInterrupted::~RemovedIfInterrupted() {
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto it = registry().paths.find(path_.string());
  if (it != registry().paths.end()) registry().paths.erase(it);
}

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string tmpl = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) fail("cannot create a temporary directory in {}: {}", base.string(), std::strerror(errno));
  path_ = tmpl;
  guard_ = std::make_unique<RemovedIfInterrupted>(path_);
}

TemporaryDirectory::~TemporaryDirectory() {
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace kiln::cli
