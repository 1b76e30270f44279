// An epilogue: work a kernel applies to each block of its output right after computing it
// (residual add, activation), so that fused code needs no second pass of its own.
#pragma once

#include <cstdint>

#include "kiln/rt/x86_dispatch.h"

// A generated epilogue function is written once (kiln_epN_generic) and, where the build's
// baseline lacks AVX2 (kiln compile --cpu generic, the default, on x86-64), compiled a second
// time for AVX2+FMA (kiln_epN_avx2, everything it calls inlined into it);
// KILN_EPILOGUE_PICK(kiln_epN) is the one this CPU runs. For SSE2 alone, BERT-base's GELU
// epilogues (the erf polynomial, 4 lanes) took 8% of its time at one thread, 1.3% for AVX2.
#if KILN_X86_KERNELS && !defined(__AVX2__)
#define KILN_EPILOGUE_DISPATCH 1
#define KILN_EPILOGUE_AVX2 KILN_AVX2_FMA __attribute__((flatten))
#define KILN_EPILOGUE_PICK(name) (::kiln::rt::cpu_has_avx2_fma() ? name##_avx2 : name##_generic)
#else
#define KILN_EPILOGUE_DISPATCH 0
#define KILN_EPILOGUE_PICK(name) name##_generic
#endif

namespace kiln::rt {

struct Epilogue {
  // Called with `n` contiguous output elements `y` that start at element `offset` of the
  // output; may run on any pool thread, once per block, blocks disjoint. nullptr: nothing.
  void (*fn)(const void* ctx, float* y, int64_t offset, int64_t n) = nullptr;
  const void* ctx = nullptr;
  // A promise about fn, for kernels that apply it themselves while the output is in
  // registers (a kernel that does not know these fields calls fn): fn does exactly
  //   x = y[i] (+ residual[offset + i] when residual is set), then
  //   y[i] = fn_is_clamp ? (x < clamp_lo ? clamp_lo : (x > clamp_hi ? clamp_hi : x))
  //        : fn_is_relu ? (x > 0 ? x : 0) : x.
  // fn_is_clamp, fn_is_relu or residual is set only when that is so, with clamp_lo <= clamp_hi
  // (Clip, ReLU6, Relu; a residual add with or without them), never both flags.
  bool fn_is_clamp = false;
  float clamp_lo = 0.f, clamp_hi = 0.f;
  const float* residual = nullptr;
  bool fn_is_relu = false;
};

// v clamped to [lo, hi] (lo <= hi), as a kernel applies Clip, ReLU6 or Relu in its store.
inline float clamp_to(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
// Relu as the op defines it (ir/ops/elementwise_ops.def): NaN becomes 0.
inline float relu_of(float v) { return v > 0.f ? v : 0.f; }

// fn is a bare clamp (no residual): the kernel may apply clamp_lo / clamp_hi itself.
inline bool epilogue_is_clamp(const Epilogue& e) { return e.fn != nullptr && e.fn_is_clamp && e.residual == nullptr; }

}  // namespace kiln::rt
