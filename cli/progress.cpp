#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace kiln::cli {

Progress::Mode Progress::terminal_or(Mode otherwise) { return isatty(2) ? Mode::Terminal : otherwise; }

Progress::Progress(Mode mode) : mode_(mode) {
  if (mode_ == Mode::Terminal) ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  clear();
}

void Progress::step(const std::string& text) {
  if (mode_ == Mode::Off) return;
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = text;
  start_ = std::chrono::steady_clock::now();
  if (mode_ == Mode::Lines) {
    fmt::print(stderr, "{}\n", text_);
    std::fflush(stderr);
    return;
  }
  draw();
}

void Progress::update(const std::string& text) {
  if (mode_ != Mode::Terminal) return;  // a log gets the steps only
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = text;
  draw();
}

void Progress::clear() {
  if (mode_ != Mode::Terminal) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (shown_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  shown_ = false;
  text_.clear();
}

void Progress::draw() {
  if (text_.empty()) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string elapsed = seconds >= 1 ? fmt::format(" ({:.0f} s)", seconds) : "";
  // One line, or the carriage return would rewrite only its last part.
  std::string line = text_ + elapsed;
  winsize w = {};
  if (ioctl(2, TIOCGWINSZ, &w) == 0 && w.ws_col > elapsed.size() + 1 && line.size() >= w.ws_col) line = text_.substr(0, w.ws_col - 1 - elapsed.size()) + elapsed;
  fmt::print(stderr, "\r\033[K{}", line);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(500));
    if (!stop_ && shown_) draw();
  }
}

}  // namespace kiln::cli
