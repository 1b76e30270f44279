// CPU emulation of CUDA's bfloat16 type (see cuda_runtime.h): storage and rounding only.
#pragma once

#include <cstdint>

#include "kiln/rt/dtype.h"

struct __nv_bfloat16 {
  uint16_t bits = 0;
  operator float() const { return kiln::rt::bf16_bits_to_f32(bits); }
};
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16{kiln::rt::f32_to_bf16_bits(f)}; }
