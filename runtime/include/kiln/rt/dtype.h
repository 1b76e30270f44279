// Element types of kiln tensors, numbered as ONNX numbers them, and the 16-bit
// float storage types f16 and bf16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// C-compatible so that the generated C API can expose it unchanged.
typedef enum kiln_dtype {
  KILN_F32 = 1,
  KILN_U8 = 2,
  KILN_I8 = 3,
  KILN_U16 = 4,
  KILN_I16 = 5,
  KILN_I32 = 6,
  KILN_I64 = 7,
  KILN_BOOL = 9,
  KILN_F16 = 10,
  KILN_F64 = 11,
  KILN_U32 = 12,
  KILN_U64 = 13,
  KILN_BF16 = 16,
  // Storage-only types (kiln/rt/lowp.h), one byte per element.
  KILN_F8E4M3FN = 17,
  KILN_F8E4M3FNUZ = 18,
  KILN_F8E5M2 = 19,
  KILN_F8E5M2FNUZ = 20,
  KILN_U4 = 21,
  KILN_I4 = 22,
  KILN_F4E2M1 = 23,
  KILN_F8E8M0 = 24,
  KILN_U2 = 25,
  KILN_I2 = 26
} kiln_dtype;

namespace kiln::rt {

// Bytes per element; 0 for a value that is not a kiln_dtype.
size_t dtype_size(kiln_dtype t) noexcept;
// "f32", "f64", "f16", "bf16", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
// "bool", and the storage-only "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0",
// "f4e2m1", "i4", "u4", "i2", "u2";
// "invalid" for a value that is not a kiln_dtype.
const char* dtype_name(kiln_dtype t) noexcept;

// --- bit-exact conversions (round to nearest, ties to even) ---------------

inline uint32_t float_bits(float f) noexcept {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) noexcept {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t f32_to_f16_bits(float f) noexcept {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // inf or nan; a nan stays a (quiet) nan
    return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? (0x200u | ((a >> 13) & 0x3ffu)) : 0u));
  }
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (a >= 0x38800000u) {  // normal f16 (>= 2^-14)
    const uint32_t odd = (a >> 13) & 1u;
    const uint32_t r = a + 0xc8000fffu + odd;  // rebias exponent by -112, round
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25 rounds to zero (2^-25 is a tie)
  // subnormal f16: value / 2^-24 = m * 2^(e - 126)
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14..24
  uint32_t r = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float f16_bits_to_f32(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_float(sign);
    e = 1;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    m &= 0x3ffu;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

inline uint16_t f32_to_bf16_bits(float f) noexcept {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_f32(uint16_t b) noexcept { return bits_float(static_cast<uint32_t>(b) << 16); }

// 16-bit float storage. Construction from float is explicit (it rounds);
// reading as float is implicit, so generated code computes in float:
//   y[i] = f16(float(a[i]) * float(b[i]));
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) noexcept : bits(f32_to_f16_bits(f)) {}
  static f16 from_bits(uint16_t b) noexcept {
    f16 h;
    h.bits = b;
    return h;
  }
  operator float() const noexcept { return f16_bits_to_f32(bits); }
};

struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) noexcept : bits(f32_to_bf16_bits(f)) {}
  static bf16 from_bits(uint16_t b) noexcept {
    bf16 h;
    h.bits = b;
    return h;
  }
  operator float() const noexcept { return bf16_bits_to_f32(bits); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2, "16-bit storage types must be 2 bytes");

}  // namespace kiln::rt
