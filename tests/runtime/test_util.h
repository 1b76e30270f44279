// Helpers shared by the runtime tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace kiln_test {

// True when the tests run under an emulator (cross_test.sh sets KILN_TEST_EMULATED=1 for
// qemu-user, which runs them 30-100x slower): the sweeps then skip their cases of more than
// 10 million multiply-adds. Those are there for chunking and threading, the same C++ on every
// target, at sizes that took most of the emulated run's time; the smaller cases still reach
// every tile and tail of the target's own kernels.
inline bool skip_when_emulated(double multiply_adds) {
  static const bool emulated = [] {
    const char* e = std::getenv("KILN_TEST_EMULATED");
    return e && e[0] == '1';
  }();
  return emulated && multiply_adds > 1e7;
}

template <class T>
std::vector<T> random_uniform(size_t n, uint32_t seed, T lo = T(-1), T hi = T(1)) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = dist(gen);
  return v;
}

// n integers uniform in [lo, hi], as T.
template <class T>
std::vector<T> random_ints(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  return random_uniform<float>(n, seed, lo, hi);
}

// Largest |a - b| relative to max(1, |b|).
inline double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i])) / std::fmax(1.0, std::fabs(double(b[i])));
    if (!(d <= m)) m = d;  // NaN counts as a difference
  }
  return m;
}

}  // namespace kiln_test
