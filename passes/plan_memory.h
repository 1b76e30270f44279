// Memory planning: offsets in one arena for buffers with known lifetimes, so that buffers
// alive at the same time never overlap. An analysis used by backends, not a graph rewrite.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::passes {

struct BufferRequest {
  size_t size = 0;
  int first = 0;  // index of the step that writes it first
  int last = 0;   // index of the step that reads it last (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, multiples of the alignment
  size_t arena_size = 0;
  size_t lower_bound = 0;  // most bytes alive at any one step
  size_t naive_size = 0;   // every buffer on its own
};

// Greedy best fit: each buffer at the smallest gap that fits among the buffers already placed
// whose lifetimes overlap it, trying several orders (by size, by size x lifetime, by
// lifetime, by first step), then a seeded local search over the best order, keeping the
// smallest arena. Deterministic.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment = 64);

}  // namespace kiln::passes
