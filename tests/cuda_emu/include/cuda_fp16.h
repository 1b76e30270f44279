// CPU emulation of CUDA's half-precision types (see cuda_runtime.h): storage and rounding only.
#pragma once

#include <cstdint>

#include "kiln/rt/dtype.h"

struct __half {
  uint16_t bits = 0;
  operator float() const { return kiln::rt::f16_bits_to_f32(bits); }
};
inline __half __float2half_rn(float f) { return __half{kiln::rt::f32_to_f16_bits(f)}; }
