#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/rt/thread_pool.h"

using kiln::rt::ThreadPool;

// Every plain operator new of this test program is counted (the replaceable global allocation
// functions), so that a test can check that the pool's loops allocate nothing.
namespace {
std::atomic<long> g_allocations{0};
}  // namespace
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

int64_t pool_sum(ThreadPool& pool, int64_t n) {
  std::vector<int64_t> partial(static_cast<size_t>(n), 0);
  pool.parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) partial[static_cast<size_t>(i)] = i * i;
  });
  int64_t s = 0;
  for (int64_t v : partial) s += v;
  return s;
}

}  // namespace

TEST_CASE("thread pool sums over 0..n equally with 1 2 and 4 threads") {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t n : {0, 1, 2, 3, 7, 100, 1000, 100003}) {
      int64_t expected = 0;
      for (int64_t i = 0; i < n; ++i) expected += i * i;
      CHECK(pool_sum(pool, n) == expected);
    }
  }
}

TEST_CASE("thread pool ranges are disjoint and cover 0..n and number at most size") {
  ThreadPool pool(4);
  for (int rep = 0; rep < 200; ++rep) {
    const int64_t n = 1 + rep % 37;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<int> calls{0};
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      ++calls;
      for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
    CHECK(calls.load() <= pool.size());
  }
}

TEST_CASE("thread pool runs each thread's share as one range, the caller's first, for many thread counts") {
  // Shares are [t*n/T, (t+1)*n/T) in near-equal parts (the first n % T one longer), each run
  // once, whichever thread runs it: the calls are exactly the non-empty shares.
  for (int threads : {2, 3, 4, 7, 16}) {
    ThreadPool pool(threads);
    REQUIRE(pool.size() == threads);
    for (int64_t n : {2, 3, 5, 16, 17, 100, 1001}) {
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> calls;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
        std::lock_guard<std::mutex> lock(mu);
        calls.emplace_back(b, e);
      });
      for (auto& h : hits) REQUIRE(h.load() == 1);
      std::sort(calls.begin(), calls.end());
      std::vector<std::pair<int64_t, int64_t>> shares;
      for (int64_t t = 0, begin = 0; t < threads; ++t) {
        const int64_t len = n / threads + (t < n % threads ? 1 : 0);
        if (len > 0) shares.emplace_back(begin, begin + len);
        begin += len;
      }
      CHECK(calls == shares);
    }
  }
}

TEST_CASE("thread pool finishes every share when threads run late or unevenly") {
  // Some ranges sleep, so that the other threads finish theirs and take the shares of threads
  // that have not started; others run while workers fall asleep between loops. Every index
  // must still run exactly once, and a second thread using the pool at the same time must
  // get its loops run serially and correctly.
  ThreadPool pool(4);
  std::atomic<int64_t> other{0};
  std::thread rival([&] {
    for (int r = 0; r < 100; ++r) pool.parallel_for(9, [&](int64_t b, int64_t e) { other += e - b; });
  });
  for (int rep = 0; rep < 60; ++rep) {
    if (rep % 20 == 19) std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const int64_t n = 1 + rep % 13;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      if ((b + rep) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
  rival.join();
  CHECK(other.load() == 100 * 9);
}

TEST_CASE("parallel_for_balanced runs every index once, mostly on its share's thread, and lets a slow thread's share be taken") {
  using kiln::rt::parallel_for_balanced;
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 5, 7, 8, 13, 49, 196, 1000}) {
      CAPTURE(threads);
      CAPTURE(n);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for_balanced(&pool, n, [&](int64_t b, int64_t e) {
        REQUIRE(0 <= b);
        REQUIRE(b < e);
        REQUIRE(e <= n);
        for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
      });
      for (auto& h : hits) REQUIRE(h.load() == 1);
    }
  }
  // Two threads, the worker's pieces slow: the caller takes the back of the worker's share,
  // and every index still runs once; without the pool, one range.
  ThreadPool pool(2);
  const auto caller = std::this_thread::get_id();
  const int64_t n = 64;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<int64_t> by_caller_in_second_half{0};
  parallel_for_balanced(&pool, n, [&](int64_t b, int64_t e) {
    const bool on_caller = std::this_thread::get_id() == caller;
    if (!on_caller) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (int64_t i = b; i < e; ++i) {
      ++hits[static_cast<size_t>(i)];
      if (on_caller && i >= n / 2) ++by_caller_in_second_half;
    }
  });
  for (auto& h : hits) REQUIRE(h.load() == 1);
  CHECK(by_caller_in_second_half.load() > 0);
  int calls = 0;
  parallel_for_balanced(nullptr, 10, [&](int64_t b, int64_t e) { calls += b == 0 && e == 10; });
  CHECK(calls == 1);
}

TEST_CASE("parallel_for_balanced_slots gives each slot to one thread at a time and claims at most `piece` items") {
  using kiln::rt::parallel_for_balanced_slots;
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t piece : {0, 1, 3, 100}) {
      for (int64_t n : {0, 1, 5, 8, 13, 196}) {
        CAPTURE(threads);
        CAPTURE(piece);
        CAPTURE(n);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n)), in_slot(static_cast<size_t>(threads));
        std::atomic<bool> shared_slot{false}, too_long{false}, bad_slot{false};
        parallel_for_balanced_slots(
            &pool, n,
            [&](int64_t b, int64_t e, int slot) {
              if (slot < 0 || slot >= threads) {
                bad_slot = true;
                return;
              }
              if (in_slot[static_cast<size_t>(slot)].fetch_add(1) != 0) shared_slot = true;
              // Long enough for another thread to claim from the same slot if it could.
              std::this_thread::sleep_for(std::chrono::microseconds(50));
              if (piece > 0 && threads > 1 && n >= 2 * threads && e - b > piece) too_long = true;
              for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
              in_slot[static_cast<size_t>(slot)].fetch_sub(1);
            },
            piece);
        CHECK_FALSE(bad_slot.load());
        CHECK_FALSE(shared_slot.load());
        CHECK_FALSE(too_long.load());
        for (auto& h : hits) REQUIRE(h.load() == 1);
      }
    }
  }
}

TEST_CASE("parallel loops allocate nothing once the pool runs (plain, balanced and with slots)") {
  // A model's run is a sequence of parallel loops; each loop body the runtime passes captures
  // one pointer, which std::function holds in place. The pool's own wrapping must not allocate.
  ThreadPool pool(2);
  std::vector<std::atomic<int64_t>> sums(2);
  auto* out = &sums;
  for (int64_t n : {1, 3, 64, 1000}) {  // 3: the plain-shares path of the balanced loops
    CAPTURE(n);
    const long before = g_allocations.load();
    for (int i = 0; i < 20; ++i) {
      pool.parallel_for(n, [out](int64_t b, int64_t e) { (*out)[0] += e - b; });
      kiln::rt::parallel_for_balanced(&pool, n, [out](int64_t b, int64_t e) { (*out)[0] += e - b; });
      kiln::rt::parallel_for_balanced_slots(&pool, n, [out](int64_t b, int64_t e, int slot) { (*out)[slot] += e - b; }, 0);
    }
    CHECK(g_allocations.load() == before);
  }
  CHECK(sums[0].load() + sums[1].load() == 3 * 20 * (1 + 3 + 64 + 1000));
}

TEST_CASE("thread pool with one thread runs inline") {
  ThreadPool pool(1);
  CHECK(pool.size() == 1);
  const auto caller = std::this_thread::get_id();
  bool same = false;
  pool.parallel_for(10, [&](int64_t b, int64_t e) {
    same = std::this_thread::get_id() == caller && b == 0 && e == 10;
  });
  CHECK(same);
  ThreadPool zero(0);
  CHECK(zero.size() == 1);
}

TEST_CASE("nested parallel_for runs serially instead of deadlocking") {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.parallel_for(6, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.parallel_for(10, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
    }
  });
  CHECK(total.load() == 60);
}

TEST_CASE("thread pool used from two threads at once stays correct") {
  ThreadPool pool(2);
  std::atomic<int64_t> a{0}, b{0};
  auto work = [&](std::atomic<int64_t>& acc) {
    for (int r = 0; r < 200; ++r)
      pool.parallel_for(50, [&](int64_t s, int64_t e) { acc += e - s; });
  };
  std::thread t1(work, std::ref(a)), t2(work, std::ref(b));
  t1.join();
  t2.join();
  CHECK(a.load() == 200 * 50);
  CHECK(b.load() == 200 * 50);
}

TEST_CASE("thread pool workers take jobs both while polling and after falling asleep") {
  // Back-to-back loops reach polling workers; the pauses (longer than the poll budget) make
  // the workers sleep, so the next loop has to wake them. Every loop must still see each
  // index once, whichever way its workers arrived.
  ThreadPool pool(3);
  for (int rep = 0; rep < 40; ++rep) {
    if (rep % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::atomic<int>> hits(64);
    pool.parallel_for(64, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
}

TEST_CASE("thread pool destroyed while its workers sleep or poll") {
  for (int wait_ms : {0, 5}) {
    ThreadPool pool(4);
    std::atomic<int64_t> total{0};
    pool.parallel_for(8, [&](int64_t b, int64_t e) { total += e - b; });
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    CHECK(total.load() == 8);
  }
}

TEST_CASE("physical_core_count is between 1 and the logical CPU count") {
  const int cores = kiln::rt::physical_core_count();
  CHECK(cores >= 1);
  const unsigned logical = std::thread::hardware_concurrency();
  if (logical > 0) CHECK(cores <= static_cast<int>(logical));
}
