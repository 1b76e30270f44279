// What kiln leaves behind when it is interrupted: nothing. On SIGINT, SIGTERM or SIGHUP a
// watcher thread stops kiln's child processes (compilers, bench workers, a nested kiln),
// removes every path registered here, then lets the signal end the process as it would have
// (so a shell still sees "killed by SIGINT").
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace kiln::cli {

// Installs the handlers and starts the watcher; call once, first thing in main. A signal
// that was ignored when kiln started (nohup, a background job) stays ignored.
void install_interrupt_cleanup();

// Once a signal has come, never returns: the watcher is cleaning up and will end the process
// by the signal. Called before an error is printed or main returns, so that an interrupted
// command neither reports the failures the interruption caused nor exits normally.
void wait_if_interrupted();

// Registers `path` for removal if kiln is interrupted while this object lives. Removing it
// in the normal course is the owner's business.
class RemovedIfInterrupted {
 public:
  explicit RemovedIfInterrupted(std::filesystem::path path);
  ~RemovedIfInterrupted();
  RemovedIfInterrupted(const RemovedIfInterrupted&) = delete;
  RemovedIfInterrupted& operator=(const RemovedIfInterrupted&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A fresh directory $TMPDIR/PREFIX-XXXXXX, removed when this object goes (unless keep()) or
// when kiln is interrupted.
class TemporaryDirectory {
 public:
  explicit TemporaryDirectory(const std::string& prefix);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Leaves it in place, interrupted or not.
  void keep() { keep_ = true; guard_.reset(); }

 private:
  std::filesystem::path path_;
  std::unique_ptr<RemovedIfInterrupted> guard_;
  bool keep_ = false;
};

}  // namespace kiln::cli
