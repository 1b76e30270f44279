// Scratch memory kept per thread: a kernel that needs a buffer of its own on every call (a
// packing buffer, a block of partial sums) takes this thread's, which grows when a call needs
// more and is kept for the next, so that the hot path does not allocate after each thread's
// first run. Being the same memory on every call, it also stays in that core's cache: a shared
// scratch buffer, written by whichever thread handles a part of it, moves between the cores'
// caches from one layer to the next.
#pragma once

#include <cstddef>

namespace kiln::rt {

// Independent buffers of one thread, for kernels whose calls nest or overlap.
enum class ThreadBuffer {
  gemm_a,
  gemm_b,
  conv_padded,
  conv_subsampled,
  qconv_panels,
  qgemm_panels,
  qdepthwise_sums,
  qconv_patch_rows,
  attention,
  count
};

// This thread's buffer `which`, at least `bytes` long and 64-byte aligned, or nullptr if it
// cannot grow (the caller falls back to something slower). Its contents are whatever the last
// call left.
void* thread_buffer(ThreadBuffer which, size_t bytes) noexcept;

// For tests of the kernels' fallbacks: from now on, on every thread, a request for more than
// `bytes` is refused as if memory had run out (SIZE_MAX, the default: no limit).
void set_thread_buffer_limit(size_t bytes) noexcept;

}  // namespace kiln::rt
