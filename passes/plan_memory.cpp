#include "passes/plan_memory.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>

namespace kiln::passes {

namespace {

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

bool overlaps(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

// Places requests in `order`, each at the best-fitting gap (the smallest that holds it)
// among the already placed requests alive at the same time. Returns the arena size.
size_t place(const std::vector<BufferRequest>& requests, const std::vector<size_t>& order, size_t alignment,
             std::vector<size_t>& offsets) {
  offsets.assign(requests.size(), 0);
  size_t arena = 0;
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;
  for (size_t r : order) {
    size_t size = round_up(std::max<size_t>(requests[r].size, 1), alignment);
    busy.clear();  // [begin, end) of live conflicting buffers
    for (size_t p : placed)
      if (overlaps(requests[r], requests[p]))
        busy.emplace_back(offsets[p], offsets[p] + round_up(std::max<size_t>(requests[p].size, 1), alignment));
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
    offsets[r] = best;
    arena = std::max(arena, best + size);
    placed.push_back(r);
  }
  return arena;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment) {
  MemoryPlan plan;
  // Several greedy orders; the smallest arena wins (the first on ties). Ties within an order
  // are broken by index, so the plan never depends on sort stability.
  auto by = [&](auto key) {
    std::vector<size_t> order(requests.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      auto ka = key(requests[a]), kb = key(requests[b]);
      return ka != kb ? ka > kb : a < b;
    });
    return order;
  };
  const std::vector<std::vector<size_t>> orders = {
      by([](const BufferRequest& r) { return r.size; }),
      by([](const BufferRequest& r) { return r.size * static_cast<size_t>(r.last - r.first + 1); }),
      by([](const BufferRequest& r) { return static_cast<size_t>(r.last - r.first + 1); }),
      by([](const BufferRequest& r) { return std::pair<int, size_t>(-r.first, r.size); }),
  };
  std::vector<size_t> offsets, best_order;
  plan.arena_size = SIZE_MAX;
  for (const std::vector<size_t>& order : orders) {
    size_t arena = place(requests, order, alignment, offsets);
    if (arena < plan.arena_size) {
      plan.arena_size = arena;
      plan.offsets = offsets;
      best_order = order;
    }
  }

  // Then a seeded local search: swap a few nearby entries of the best order and keep the
  // result when the arena shrinks, until it reaches the bound (the most aligned bytes alive
  // at one step) or the work budget is spent. Deterministic for the same requests.
  int steps = 0;
  for (const BufferRequest& b : requests) steps = std::max(steps, b.last + 1);
  std::vector<size_t> aligned_alive(static_cast<size_t>(steps), 0);
  for (const BufferRequest& b : requests)
    for (int s = b.first; s <= b.last; ++s) aligned_alive[static_cast<size_t>(s)] += round_up(std::max<size_t>(b.size, 1), alignment);
  const size_t bound = aligned_alive.empty() ? 0 : *std::max_element(aligned_alive.begin(), aligned_alive.end());
  const size_t n = requests.size();
  const size_t budget = n < 2 ? 0 : std::min<size_t>(600, 200'000'000 / (n * n));
  std::mt19937 rng(12345);
  for (size_t it = 0; it < budget && plan.arena_size > bound; ++it) {
    std::vector<size_t> order = best_order;
    const int swaps = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < swaps; ++k) {
      size_t i = rng() % (n - 1), j = std::min(n - 1, i + 1 + rng() % 8);
      std::swap(order[i], order[j]);
    }
    size_t arena = place(requests, order, alignment, offsets);
    if (arena < plan.arena_size) {
      plan.arena_size = arena;
      plan.offsets = offsets;
      best_order = std::move(order);
    }
  }
  if (requests.empty()) plan.arena_size = 0;

  std::vector<size_t> alive(static_cast<size_t>(steps), 0);
  for (const BufferRequest& b : requests) {
    plan.naive_size += round_up(std::max<size_t>(b.size, 1), alignment);
    for (int s = b.first; s <= b.last; ++s) alive[static_cast<size_t>(s)] += b.size;
  }
  for (size_t a : alive) plan.lower_bound = std::max(plan.lower_bound, a);
  return plan;
}

}  // namespace kiln::passes
