#include "kiln/rt/thread_buffer.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace kiln::rt {
namespace {

struct Buffer {
  void* p = nullptr;
  size_t n = 0;
  ~Buffer() { std::free(p); }
};

std::atomic<size_t> limit{SIZE_MAX};

}  // namespace

void set_thread_buffer_limit(size_t bytes) noexcept { limit.store(bytes, std::memory_order_relaxed); }

void* thread_buffer(ThreadBuffer which, size_t bytes) noexcept {
  thread_local Buffer buffers[static_cast<size_t>(ThreadBuffer::count)];
  Buffer& b = buffers[static_cast<size_t>(which)];
  if (bytes > limit.load(std::memory_order_relaxed)) return nullptr;
  if (b.n < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* q = std::aligned_alloc(64, rounded);
    if (q == nullptr) return nullptr;
    std::free(b.p);
    b.p = q;
    b.n = rounded;
  }
  return b.p;
}

}  // namespace kiln::rt
