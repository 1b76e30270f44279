#include "passes/plan_memory.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace kiln::passes {

namespace {

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

bool overlaps(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  // Ties broken by index so the plan never depends on sort stability.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    return a < b;
  });

  std::vector<size_t> placed;
  for (size_t r : order) {
    size_t size = round_up(std::max<size_t>(requests[r].size, 1), alignment);
    std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of live conflicting buffers
    for (size_t p : placed)
      if (overlaps(requests[r], requests[p]))
        busy.emplace_back(plan.offsets[p],
                          plan.offsets[p] + round_up(std::max<size_t>(requests[p].size, 1), alignment));
    std::sort(busy.begin(), busy.end());
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const auto& [begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size && begin - cursor < best_gap) {
        best = cursor;
        best_gap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == SIZE_MAX) best = cursor;
    plan.offsets[r] = best;
    plan.arena_size = std::max(plan.arena_size, best + size);
    placed.push_back(r);
  }

  int steps = 0;
  for (const BufferRequest& b : requests) steps = std::max(steps, b.last + 1);
  std::vector<size_t> alive(static_cast<size_t>(steps), 0);
  for (const BufferRequest& b : requests) {
    plan.naive_size += round_up(std::max<size_t>(b.size, 1), alignment);
    for (int s = b.first; s <= b.last; ++s) alive[static_cast<size_t>(s)] += b.size;
  }
  for (size_t a : alive) plan.lower_bound = std::max(plan.lower_bound, a);
  return plan;
}

}  // namespace kiln::passes
