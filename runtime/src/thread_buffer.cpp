#include "kiln/rt/thread_buffer.h"

#include <cstdlib>

namespace kiln::rt {
namespace {

struct Buffer {
  void* p = nullptr;
  size_t n = 0;
  ~Buffer() { std::free(p); }
};

}  // namespace

void* thread_buffer(ThreadBuffer which, size_t bytes) noexcept {
  thread_local Buffer buffers[static_cast<size_t>(ThreadBuffer::count)];
  Buffer& b = buffers[static_cast<size_t>(which)];
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
