// Per-node timing hooks of generated code, behind `--profile` of a compiled executable and
// NAME_set_profiling() of its library. With profiling off each hook is one pointer test.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace kiln::rt {

// When a node of the last profiled run started (after the run began) and how long it took.
struct NodeTime {
  uint64_t start_ns;
  uint64_t duration_ns;
};

inline uint64_t now_ns() noexcept {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Generated code brackets each node's kernel call with these; `times` is null when
// profiling is off.
inline uint64_t node_begin(const NodeTime* times) noexcept { return times ? now_ns() : 0; }

inline void node_end(NodeTime* times, size_t node, uint64_t run_start, uint64_t begin) noexcept {
  if (times) times[node] = NodeTime{begin - run_start, now_ns() - begin};
}

}  // namespace kiln::rt
