#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kiln/rt/dtype.h"

using namespace kiln::rt;

TEST_CASE("dtype sizes and names follow ONNX numbering") {
  CHECK(KILN_F32 == 1);
  CHECK(KILN_BF16 == 16);
  CHECK(dtype_size(KILN_F32) == 4);
  CHECK(dtype_size(KILN_F64) == 8);
  CHECK(dtype_size(KILN_F16) == 2);
  CHECK(dtype_size(KILN_BF16) == 2);
  CHECK(dtype_size(KILN_I8) == 1);
  CHECK(dtype_size(KILN_U8) == 1);
  CHECK(dtype_size(KILN_I16) == 2);
  CHECK(dtype_size(KILN_I32) == 4);
  CHECK(dtype_size(KILN_I64) == 8);
  CHECK(dtype_size(KILN_BOOL) == 1);
  CHECK(dtype_size(KILN_U16) == 2);
  CHECK(dtype_size(KILN_U32) == 4);
  CHECK(dtype_size(KILN_U64) == 8);
  CHECK(dtype_size(static_cast<kiln_dtype>(8)) == 0);  // ONNX string: not a kiln dtype
  CHECK(std::strcmp(dtype_name(KILN_F32), "f32") == 0);
  CHECK(std::strcmp(dtype_name(KILN_BF16), "bf16") == 0);
  CHECK(std::strcmp(dtype_name(KILN_BOOL), "bool") == 0);
  CHECK(std::strcmp(dtype_name(KILN_U8), "u8") == 0);
  CHECK(std::strcmp(dtype_name(KILN_U64), "u64") == 0);
  CHECK(std::strcmp(dtype_name(static_cast<kiln_dtype>(31)), "invalid") == 0);
}

TEST_CASE("f32 to f16 known bit patterns") {
  CHECK(f32_to_f16_bits(1.0f) == 0x3C00);
  CHECK(f32_to_f16_bits(-2.0f) == 0xC000);
  CHECK(f32_to_f16_bits(0.0f) == 0x0000);
  CHECK(f32_to_f16_bits(-0.0f) == 0x8000);
  CHECK(f32_to_f16_bits(65504.f) == 0x7BFF);
  CHECK(f32_to_f16_bits(65519.f) == 0x7BFF);  // below the midpoint to 65536
  CHECK(f32_to_f16_bits(65520.f) == 0x7C00);  // tie rounds to even: inf
  CHECK(f32_to_f16_bits(1e10f) == 0x7C00);
  CHECK(f32_to_f16_bits(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(f32_to_f16_bits(-std::numeric_limits<float>::infinity()) == 0xFC00);
  const uint16_t nan = f32_to_f16_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x3FF) != 0);
  CHECK(f32_to_f16_bits(6.103515625e-05f) == 0x0400);  // smallest normal 2^-14
  CHECK(f32_to_f16_bits(5.9604644775390625e-08f) == 0x0001);  // smallest subnormal 2^-24
  CHECK(f32_to_f16_bits(1e-7f) == 0x0002);  // 1e-7 / 2^-24 = 1.68 -> 2
  CHECK(f32_to_f16_bits(2.9802322387695312e-08f) == 0x0000);  // 2^-25: tie -> even (0)
  CHECK(f32_to_f16_bits(2.99e-08f) == 0x0001);  // just above the tie
  CHECK(f32_to_f16_bits(8.940696716308594e-08f) == 0x0002);  // 1.5 * 2^-24: tie -> even (2)
  CHECK(f32_to_f16_bits(1e-9f) == 0x0000);
  // Ties between normals: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  CHECK(f32_to_f16_bits(1.00048828125f) == 0x3C00);  // to even (down)
  CHECK(f32_to_f16_bits(1.00146484375f) == 0x3C02);  // 1 + 3*2^-11: to even (up)
  CHECK(f32_to_f16_bits(1.0005f) == 0x3C01);  // above the tie
  // Carry from the mantissa into the exponent: 2 - 2^-12 rounds to 2.
  CHECK(f32_to_f16_bits(1.999755859375f) == 0x4000);
}

TEST_CASE("f16 to f32 and round trip of every f16 value") {
  CHECK(f16_bits_to_f32(0x3C00) == 1.0f);
  CHECK(f16_bits_to_f32(0x7BFF) == 65504.f);
  CHECK(f16_bits_to_f32(0x0001) == std::ldexp(1.0f, -24));
  CHECK(f16_bits_to_f32(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(std::isinf(f16_bits_to_f32(0x7C00)));
  CHECK(std::isnan(f16_bits_to_f32(0x7E00)));
  CHECK(std::signbit(f16_bits_to_f32(0x8000)));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = f16_bits_to_f32(h);
    if (std::isnan(f)) continue;
    if (f32_to_f16_bits(f) != h) {
      FAIL("f16 round trip failed for bits " << b);
    }
  }
}

TEST_CASE("bf16 conversions") {
  CHECK(f32_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(f32_to_bf16_bits(-1.0f) == 0xBF80);
  CHECK(bf16_bits_to_f32(0x3F80) == 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (down).
  CHECK(f32_to_bf16_bits(1.00390625f) == 0x3F80);
  // 1 + 3 * 2^-8: halfway, rounds up to the even 0x3F82.
  CHECK(f32_to_bf16_bits(1.01171875f) == 0x3F82);
  CHECK(f32_to_bf16_bits(1.0040f) == 0x3F81);
  CHECK(f32_to_bf16_bits(std::numeric_limits<float>::infinity()) == 0x7F80);
  CHECK(f32_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);  // rounds to inf
  const uint16_t nan = f32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK(std::isnan(bf16_bits_to_f32(nan)));
  // A NaN whose payload is only in the low bits must stay NaN.
  CHECK(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(bits_float(0x7F800001u)))));
}

TEST_CASE("f16 and bf16 structs convert explicitly from float and implicitly to float") {
  const f16 h(0.5f);
  CHECK(h.bits == 0x3800);
  const float back = h;
  CHECK(back == 0.5f);
  const bf16 b(3.0f);
  CHECK(b.bits == 0x4040);
  CHECK(float(b) + 1.0f == 4.0f);
  CHECK(f16::from_bits(0x3C00) * 2.0f == 2.0f);
}
