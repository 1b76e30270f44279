// Times the phases of a command and prints them with -v.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <fmt/format.h>

namespace kiln::cli {

class PhaseTimer {
 public:
  explicit PhaseTimer(bool verbose) : verbose_(verbose) {}
  bool verbose() const { return verbose_; }
  // Called as each phase starts (the progress line of cli/progress.h).
  void on_phase(std::function<void(const std::string& name)> fn) { on_phase_ = std::move(fn); }

  // Runs fn as phase `name`, printing its time to stderr when verbose.
  template <class Fn>
  decltype(auto) phase(const std::string& name, Fn&& fn) {
    auto start = std::chrono::steady_clock::now();
    struct Report {
      const PhaseTimer* timer;
      std::string name;
      std::chrono::steady_clock::time_point start;
      ~Report() {
        if (!timer->verbose_) return;
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        fmt::print(stderr, "kiln: {:<10} {:9.1f} ms\n", name, ms);
      }
    } report{this, name, start};
    if (on_phase_) on_phase_(name);
    return fn();
  }

 private:
  bool verbose_;
  std::function<void(const std::string&)> on_phase_;
};

}  // namespace kiln::cli
