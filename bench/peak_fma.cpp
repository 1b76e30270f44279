// Measures one core's peak fp32 FMA throughput (GFLOP/s): independent chains of 256-bit FMAs,
// enough of them to cover the FMA latency on every port. Built and run by bench/bench.py, which
// quotes GEMM figures as a fraction of this number measured in the same run.
#include <immintrin.h>

#include <time.h>

#include <cstdio>

// CPU time of this thread: on a shared machine, time spent descheduled is not counted, so the
// figure is the core's throughput rather than this process's share of it.
double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int main() {
  constexpr int kChains = 12;  // latency 4-5 cycles x 2 ports: 10+ independent chains
  constexpr long kIters = 200'000'000 / kChains;
  // Twelve named accumulators, so that they live in registers (an array may be kept in memory).
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  __m256 c0 = _mm256_set1_ps(0.0f), c1 = _mm256_set1_ps(0.1f), c2 = _mm256_set1_ps(0.2f),
         c3 = _mm256_set1_ps(0.3f), c4 = _mm256_set1_ps(0.4f), c5 = _mm256_set1_ps(0.5f),
         c6 = _mm256_set1_ps(0.6f), c7 = _mm256_set1_ps(0.7f), c8 = _mm256_set1_ps(0.8f),
         c9 = _mm256_set1_ps(0.9f), c10 = _mm256_set1_ps(1.0f), c11 = _mm256_set1_ps(1.1f);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = thread_seconds();
    for (long it = 0; it < kIters; ++it)
    {
      c0 = _mm256_fmadd_ps(c0, a, b), c1 = _mm256_fmadd_ps(c1, a, b);
      c2 = _mm256_fmadd_ps(c2, a, b), c3 = _mm256_fmadd_ps(c3, a, b);
      c4 = _mm256_fmadd_ps(c4, a, b), c5 = _mm256_fmadd_ps(c5, a, b);
      c6 = _mm256_fmadd_ps(c6, a, b), c7 = _mm256_fmadd_ps(c7, a, b);
      c8 = _mm256_fmadd_ps(c8, a, b), c9 = _mm256_fmadd_ps(c9, a, b);
      c10 = _mm256_fmadd_ps(c10, a, b), c11 = _mm256_fmadd_ps(c11, a, b);
    }
    const double s = thread_seconds() - t0;
    const double gflops = 2.0 * 8.0 * kChains * static_cast<double>(kIters) / s * 1e-9;
    if (gflops > best) best = gflops;
  }
  __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
  sum = _mm256_add_ps(sum, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  const float sink = lanes[0];
  std::printf("%.2f %g\n", best, static_cast<double>(sink));  // the sink keeps the loop alive
  return 0;
}
