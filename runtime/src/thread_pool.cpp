#include "kiln/rt/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <utility>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kiln::rt {
namespace {

// How long a worker keeps polling for the next job before it sleeps. A model runs one parallel
// loop after another with short serial stretches between them; waking a sleeping thread costs
// tens of microseconds each time (a futex wake and a reschedule), which on MobileNetV2 at batch 1
// (about 60 loops in ~8 ms) was a large part of why a second thread barely helped. ONNX Runtime's
// pool spins the same way by default.
constexpr auto kSpin = std::chrono::microseconds(1000);

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Under a real-time policy (SCHED_FIFO or SCHED_RR: `chrt -f`, as the benchmarks' --realtime
// runs kiln), a worker woken from its sleep may be put on the caller's CPU, where the caller,
// of the same priority and never blocking, keeps running: it then runs every share itself
// and the pool has one thread's speed (ResNet-50 int8 at two threads under `chrt -f 50`: 46 ms
// in 2 runs of 6, against 24). There each worker is kept off the caller's CPU: worker k on the
// k-th other CPU the process may run on. Outside real time the scheduler moves a waiting
// thread to an idle CPU, and nothing is pinned.
void keep_workers_off_caller(std::vector<std::thread>& workers) noexcept {
#if defined(__linux__)
  const int policy = sched_getscheduler(0);
  if (workers.empty() || (policy != SCHED_FIFO && policy != SCHED_RR)) return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int caller = sched_getcpu();
  int others[CPU_SETSIZE];
  int n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed) && cpu != caller) others[n++] = cpu;
  if (n == 0) return;
  for (size_t k = 0; k < workers.size(); ++k) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(others[k % static_cast<size_t>(n)], &one);
    pthread_setaffinity_np(workers[k].native_handle(), sizeof one, &one);
  }
#else
  (void)workers;
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) noexcept {
  if (threads < 1) threads = 1;
  try {
    shares_ = std::vector<Share>(static_cast<size_t>(threads));
    workers_.reserve(static_cast<size_t>(threads - 1));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
  } catch (...) {
    // Keep the workers that did start; size() reports how many (shares_ has room for them: an
    // empty shares_ started none).
  }
  keep_workers_off_caller(workers_);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

// Runs thread `self`'s share, then any other share nobody has taken yet (the next thread's
// first). Claims are relaxed: the shares were published with job_ (seq_cst), and what fn
// wrote reaches the caller through busy_.
void ThreadPool::run_shares(const Job& job, int self) noexcept {
  const int threads = size();
  for (int k = 0; k < threads; ++k) {
    Share& s = shares_[static_cast<size_t>((self + k) % threads)];
    if (s.begin == s.end || s.taken.load(std::memory_order_relaxed) ||
        s.taken.exchange(true, std::memory_order_relaxed))
      continue;
    try {
      (*job.fn)(s.begin, s.end);
    } catch (...) {
    }
  }
}

// Returns false when the pool stops. Polls for kSpin, then sleeps on wake_.
bool ThreadPool::wait_for_job(uint64_t seen) noexcept {
  const auto give_up = std::chrono::steady_clock::now() + kSpin;
  for (int polls = 0;; ++polls) {
    if (stop_.load()) return false;
    if (generation_.load() != seen) return true;
    cpu_relax();
    // Every 64 polls: look at the clock (it costs more than a poll) and offer the core to
    // other runnable threads (a no-op on an idle machine; on a busy one, polling must not
    // take the time of the thread that will post the next job).
    if ((polls & 63) == 63) {
      if (std::chrono::steady_clock::now() > give_up) break;
      std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  sleepers_.fetch_add(1);
  // generation_ and stop_ are read after sleepers_ is raised (all seq_cst), so a job posted
  // after this check sees sleepers_ > 0 and notifies under mu_ (see parallel_for).
  wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
  sleepers_.fetch_sub(1);
  return !stop_.load();
}

void ThreadPool::worker_loop(int self) noexcept {
  uint64_t seen = 0;
  while (wait_for_job(seen)) {
    seen = generation_.load();
    // Announce before looking at job_: parallel_for clears job_ and then waits for busy_ == 0,
    // so (all seq_cst) either this thread sees nullptr or the caller waits for it to finish.
    busy_.fetch_add(1);
    if (Job* job = job_.load()) run_shares(*job, self);
    busy_.fetch_sub(1);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) noexcept {
  if (n <= 0) return;
  if (workers_.empty() || n == 1 || in_use_.exchange(true, std::memory_order_acquire)) {
    try {
      fn(0, n);
    } catch (...) {
    }
    return;
  }
  // Thread t's share: [t*q + min(t, r), ...) with q = n / threads, r = n % threads (empty for
  // t >= n). No worker reads the shares now: the last call waited for busy_ == 0, and job_ is
  // null until the store below.
  const int threads = size();
  const int64_t q = n / threads, r = n % threads;
  for (int t = 0; t < threads; ++t) {
    Share& s = shares_[static_cast<size_t>(t)];
    s.begin = t * q + (t < r ? t : r);
    s.end = s.begin + q + (t < r ? 1 : 0);
    s.taken.store(false, std::memory_order_relaxed);
  }
  Job job{&fn};
  job_.store(&job);
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    wake_.notify_all();
  }
  run_shares(job, 0);
  // Every share is taken; wait for the workers that hold one. A worker that looks at job_
  // after this sees nullptr and does not touch `job` (it lives on this stack frame).
  job_.store(nullptr);
  for (int polls = 1; busy_.load() != 0; ++polls) {
    cpu_relax();
    if ((polls & 63) == 0) std::this_thread::yield();  // a worker holding a share may be descheduled
  }
  in_use_.store(false, std::memory_order_release);
}

namespace {

constexpr int kMaxBalancedThreads = 16;

// parallel_for_balanced_slots' state for one call. The loop bodies capture one pointer to it,
// so that std::function holds them without allocating (on every parallel loop of a run).
struct Balanced {
  // Share t's unclaimed items [front, back), packed as front << 32 | back: its thread claims
  // from the front, the others from the back.
  struct alignas(64) Range {
    std::atomic<uint64_t> v;
  };
  Range ranges[kMaxBalancedThreads];
  int threads;
  int64_t piece;
  const std::function<void(int64_t, int64_t, int)>* fn;

  // Claims up to `piece` items of range t (from its front, or its back); false when it is empty.
  bool claim(int t, bool front, int64_t& b, int64_t& e) {
    uint64_t v = ranges[t].v.load(std::memory_order_relaxed);
    for (;;) {
      const auto f = static_cast<int64_t>(v >> 32), k = static_cast<int64_t>(v & 0xFFFFFFFFu);
      if (f >= k) return false;
      const int64_t take = std::min(piece, k - f);
      b = front ? f : k - take;
      e = b + take;
      const uint64_t next = front ? static_cast<uint64_t>(f + take) << 32 | static_cast<uint64_t>(k)
                                  : static_cast<uint64_t>(f) << 32 | static_cast<uint64_t>(k - take);
      if (ranges[t].v.compare_exchange_weak(v, next, std::memory_order_relaxed)) return true;
    }
  }

  // Share t's pieces from the front, then the others' from the back, all as slot t.
  void run(int t) {
    int64_t b = 0, e = 0;
    while (claim(t, true, b, e)) (*fn)(b, e, t);
    for (int k = 1; k < threads; ++k)
      while (claim((t + k) % threads, false, b, e)) (*fn)(b, e, t);
  }
};

// Plain shares, at most one a thread: share t is slot t (each runs on one thread).
struct PlainShares {
  int64_t q, r;
  const std::function<void(int64_t, int64_t, int)>* fn;
};

}  // namespace

void parallel_for_balanced(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) noexcept {
  parallel_for_balanced_slots(pool, n, [f = &fn](int64_t b, int64_t e, int) { (*f)(b, e); });
}

void parallel_for_balanced_slots(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                                 int64_t piece) noexcept {
  const int threads = pool ? pool->size() : 1;
  if (n <= 0) return;
  if (threads == 1 || threads > kMaxBalancedThreads || n < 2 * threads || n >= (int64_t{1} << 31)) {
    const int64_t parts = std::min<int64_t>(n, threads);
    const PlainShares plain{n / parts, n % parts, &fn};
    return parallel_for(pool, parts, [s = &plain](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t * s->q + (t < s->r ? t : s->r);
        (*s->fn)(b, b + s->q + (t < s->r ? 1 : 0), static_cast<int>(t));
      }
    });
  }
  Balanced state;
  state.threads = threads;
  state.fn = &fn;
  const int64_t q = n / threads, r = n % threads;
  for (int t = 0; t < threads; ++t) {
    const int64_t b = t * q + (t < r ? t : r), e = b + q + (t < r ? 1 : 0);
    state.ranges[t].v.store(static_cast<uint64_t>(b) << 32 | static_cast<uint64_t>(e), std::memory_order_relaxed);
  }
  // Thirds: eighths cost MobileNetV2 1-2% with the cores close (a claim on a line the other
  // thread may have read is a round trip between the cores), halves gained less with them far.
  state.piece = piece > 0 ? piece : std::max<int64_t>(1, q / 3);
  // parallel_for over one item a thread: item t is thread t's share (or, when that thread has
  // not started, whoever runs it first).
  parallel_for(pool, threads, [s = &state](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) s->run(static_cast<int>(t));
  });
}

int physical_core_count() noexcept {
  const int logical = static_cast<int>(std::thread::hardware_concurrency());
  int cores = 0;
#if defined(__linux__)
  try {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
      // One (package, core) pair per physical core; SMT siblings share it.
      std::set<std::pair<long, long>> seen;
      bool complete = true;
      for (int cpu = 0; cpu < CPU_SETSIZE && complete; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream package(dir + "physical_package_id"), core(dir + "core_id");
        long p = -1, k = -1;
        if (!(package >> p) || !(core >> k)) complete = false;
        seen.insert({p, k});
      }
      if (complete) cores = static_cast<int>(seen.size());
      else cores = CPU_COUNT(&allowed);
    }
  } catch (...) {
    cores = 0;
  }
#endif
  if (cores < 1) cores = logical;
  return cores < 1 ? 1 : cores;
}

}  // namespace kiln::rt
