// Memory planning: buffers alive at once never overlap, dead buffers are reused, and the
// arena size is reported beside its lower bound.
#include <doctest/doctest.h>

#include <random>

#include "passes/plan_memory.h"

using kiln::passes::BufferRequest;
using kiln::passes::plan_memory;

namespace {

bool overlap_in_time(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

TEST_CASE("a chain of buffers reuses memory") {
  // a -> b -> c: a and c never live together, so they can share.
  std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  auto plan = plan_memory(r, 64);
  CHECK(plan.offsets[0] == plan.offsets[2]);
  CHECK(plan.offsets[0] != plan.offsets[1]);
  CHECK(plan.arena_size == 2 * 1024);
  CHECK(plan.lower_bound == 2000);
  CHECK(plan.naive_size == 3 * 1024);
}

TEST_CASE("random lifetimes never overlap in time and space") {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferRequest> r;
    for (int i = 0; i < 40; ++i) {
      int first = static_cast<int>(rng() % 30);
      r.push_back({1 + rng() % 5000, first, first + static_cast<int>(rng() % 6)});
    }
    auto plan = plan_memory(r, 64);
    CHECK(plan.arena_size >= plan.lower_bound);
    CHECK(plan.arena_size <= plan.naive_size);
    for (size_t i = 0; i < r.size(); ++i) {
      CHECK(plan.offsets[i] % 64 == 0);
      CHECK(plan.offsets[i] + r[i].size <= plan.arena_size);
      for (size_t j = i + 1; j < r.size(); ++j) {
        if (!overlap_in_time(r[i], r[j])) continue;
        bool apart = plan.offsets[i] + r[i].size <= plan.offsets[j] || plan.offsets[j] + r[j].size <= plan.offsets[i];
        CHECK(apart);
      }
    }
  }
}
