// Times the phases of a command and prints them with -v.
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

namespace kiln::cli {

class PhaseTimer {
 public:
  explicit PhaseTimer(bool verbose) : verbose_(verbose) {}
  bool verbose() const { return verbose_; }

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
    return fn();
  }

 private:
  bool verbose_;
};

}  // namespace kiln::cli
