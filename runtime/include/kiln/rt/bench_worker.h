// The line protocol of `kiln bench` workers: a compiled executable run with --bench-worker
// speaks it on stdin/stdout, and so do the Python adapters that run the baselines
// (bench/adapters/). One request per line; one reply line each:
//
//   (on start, after loading and one first run)  ready COLD_MS
//   run N                                          times MS MS ... (N latencies)
//   outputs DIR                                    ok  (DIR/output_K.npy, K in graph order)
//   quit                                           (exits 0)
//
// A failure answers "error MESSAGE" and ends the worker with status 1.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace kiln::rt {

struct BenchHooks {
  std::function<double()> run_ms;  // one run; its latency in milliseconds (throws on failure)
  std::function<void(const std::string& dir)> write_outputs;  // throws on failure
};

// Answers requests from `in` on `out` until "quit" or end of input. Returns the exit code.
int serve_bench(double cold_ms, const BenchHooks& hooks, std::FILE* in, std::FILE* out) noexcept;

}  // namespace kiln::rt
