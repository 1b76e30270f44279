#include "kiln/rt/thread_pool.h"

namespace kiln::rt {

ThreadPool::ThreadPool(int threads) noexcept {
  if (threads < 1) threads = 1;
  try {
    workers_.reserve(static_cast<size_t>(threads - 1));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (...) {
    // Keep the workers that did start; size() reports how many.
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(Job& job) noexcept {
  for (;;) {
    const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) return;
    // Chunk c covers [c*n/chunks, (c+1)*n/chunks); no overflow for n < 2^62/size.
    const int64_t q = job.n / job.chunks, r = job.n % job.chunks;
    const int64_t begin = c * q + (c < r ? c : r);
    const int64_t end = begin + q + (c < r ? 1 : 0);
    try {
      (*job.fn)(begin, end);
    } catch (...) {
    }
  }
}

void ThreadPool::worker_loop() noexcept {
  uint64_t seen = 0;
  for (;;) {
    Job* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || (job_ != nullptr && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      job = job_;
      ++busy_;
    }
    run_chunks(*job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_ == 0) idle_.notify_all();
    }
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
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunks = n < size() ? n : size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &job;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks(job);
  {
    // Every chunk is claimed; wait for the workers that hold one. A worker
    // that wakes after job_ is cleared does not see this job at all.
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return busy_ == 0; });
    job_ = nullptr;
  }
  in_use_.store(false, std::memory_order_release);
}

}  // namespace kiln::rt
