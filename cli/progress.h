// Progress of a long command on stderr: on a terminal, one line rewritten in place with the
// step's elapsed time, cleared when done; elsewhere (a log, a pipe) nothing, or one line per
// step with `lines`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::cli {

class Progress {
 public:
  enum class Mode { Off, Terminal, Lines };
  // Terminal where stderr is one, else `otherwise`.
  static Mode terminal_or(Mode otherwise);

  explicit Progress(Mode mode);
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A new step: TEXT ("kiln: importing ..."), with its elapsed time once it passes a second.
  void step(const std::string& text);
  // The same step, new details (a count of units): the elapsed time keeps running.
  void update(const std::string& text);
  // Clears the line, so that other output can follow.
  void clear();
  bool enabled() const { return mode_ != Mode::Off; }

 private:
  void draw();  // with mutex_ held
  void tick();

  Mode mode_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string text_;
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false, stop_ = false;
  std::thread ticker_;
};

}  // namespace kiln::cli
