// A fixed set of persistent worker threads that split loops with the caller.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt {

class ThreadPool {
 public:
  // threads < 1 is taken as 1. threads == 1 creates no thread: every
  // parallel_for runs inline. The caller of parallel_for is one of the
  // `threads`, so threads - 1 workers are started here. If the system
  // refuses to start a thread, the pool keeps the ones it got (see size()).
  explicit ThreadPool(int threads) noexcept;
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that take part in a parallel_for, the caller included.
  int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint ranges covering [0, n), at most size() of them,
  // contiguous and of near-equal length; returns when all are done. Range t is thread t's
  // share (the caller's is the first, worker k's the (k + 1)-th), the same from call to call, so
  // that a loop over data the previous loop wrote finds it in the cache of the thread that
  // wrote it. A thread done with its own share runs any share whose thread has not started it
  // (a worker still asleep, or descheduled by a busy machine), so fn must not depend on which
  // thread runs a range.
  // fn must not throw (an exception thrown by fn is caught and dropped).
  // A call made while the pool is busy (from inside fn, or from another
  // thread) runs serially on the calling thread instead of deadlocking.
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) noexcept;

 private:
  // One thread's share of the current job, on its own cache line (the threads claim shares
  // without disturbing each other's).
  struct alignas(64) Share {
    int64_t begin = 0, end = 0;
    std::atomic<bool> taken{false};
  };
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn;
  };
  void run_shares(const Job& job, int self) noexcept;
  bool wait_for_job(uint64_t seen) noexcept;
  void worker_loop(int self) noexcept;

  // Workers poll generation_ for a while after each job, then sleep on wake_ (counted in
  // sleepers_ so that parallel_for only takes mu_ to wake someone when somebody sleeps).
  std::vector<std::thread> workers_;
  std::vector<Share> shares_;  // one per thread, the caller's first; set by parallel_for
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<Job*> job_{nullptr};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> busy_{0};      // workers between announcing themselves and leaving a job
  std::atomic<int> sleepers_{0};  // workers waiting on wake_
  std::atomic<bool> stop_{false};
  std::atomic<bool> in_use_{false};
};

// Physical cores this process may run on (its CPU affinity, SMT siblings counted once): the
// default thread count of a compiled model. Falls back to the logical CPU count where the
// topology cannot be read; at least 1.
int physical_core_count() noexcept;

// Serial when pool is nullptr or has one thread.
inline void parallel_for(ThreadPool* pool, int64_t n,
                         const std::function<void(int64_t begin, int64_t end)>& fn) noexcept {
  if (n <= 0) return;
  if (pool == nullptr || pool->size() == 1 || n == 1) {
    try {
      fn(0, n);
    } catch (...) {
    }
    return;
  }
  pool->parallel_for(n, fn);
}

// parallel_for's shares, each taken by its thread in pieces of about a third from its front;
// a thread done with its own share then takes pieces from the back of the others'. Each thread
// still runs (nearly all of) its share, the same from call to call, but a thread slowed down
// (its data in the other core's cache, or its core slower for a while) no longer
// holds up the loop: MobileNetV2's int8 convolutions at two threads had the worker's share of a
// layer take up to 1.5x (cores close) or 3x (far apart) the caller's equal one
// (docs/design/threading.md). fn gets disjoint ranges covering [0, n). Plain parallel_for
// for fewer than 2 items a thread or more than 16 threads.
void parallel_for_balanced(ThreadPool* pool, int64_t n,
                           const std::function<void(int64_t begin, int64_t end)>& fn) noexcept;

// parallel_for_balanced, and fn also gets a slot in [0, size()): the share whose thread claims
// the range (its own or, after it, others'). No two calls with the same slot run at once, so a
// slot can own a part of a scratch buffer, as a share's index does under parallel_for(pool,
// threads, ...); most ranges of slot t are share t's own. `piece` > 0 sets how many items a
// claim takes at most (a kernel's natural chunk) instead of a third of a share, where the
// shares are balanced (2+ threads, 2+ items a thread; else each thread runs its share whole).
void parallel_for_balanced_slots(ThreadPool* pool, int64_t n,
                                 const std::function<void(int64_t begin, int64_t end, int slot)>& fn,
                                 int64_t piece = 0) noexcept;

}  // namespace kiln::rt
