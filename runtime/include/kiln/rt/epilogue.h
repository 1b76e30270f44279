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
  // A promise that fn does exactly y = (y < clamp_lo ? clamp_lo : (y > clamp_hi ? clamp_hi : y))
  // (Clip, ReLU6): a kernel that knows this field may apply the clamp itself while the
  // output is in registers instead of calling fn; one that does not still calls fn.
  // Set only with clamp_lo <= clamp_hi.
  bool fn_is_clamp = false;
  float clamp_lo = 0.f, clamp_hi = 0.f;
};

}  // namespace kiln::rt
