// An epilogue: work a kernel applies to each block of its output right after computing it
// (residual add, activation), so that fused code needs no second pass of its own.
#pragma once

#include <cstdint>

namespace kiln::rt {

struct Epilogue {
  // Called with `n` contiguous output elements `y` that start at element `offset` of the
  // output; may run on any pool thread, once per block, blocks disjoint. nullptr: nothing.
  void (*fn)(const void* ctx, float* y, int64_t offset, int64_t n) = nullptr;
  const void* ctx = nullptr;
};

}  // namespace kiln::rt
