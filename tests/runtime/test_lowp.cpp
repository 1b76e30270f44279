// The storage-only types (kiln/rt/lowp.h) and quantization (kiln/rt/quantize.h): values
// checked by hand against the formats' definitions and ONNX's reference (ml_dtypes).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kiln/rt/lowp.h"
#include "kiln/rt/quantize.h"

using namespace kiln::rt;

namespace {
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const CastMode kSat{true, RoundMode::up}, kNoSat{false, RoundMode::up};
}  // namespace

TEST_CASE("float8 e4m3fn: rounding to nearest even, saturation, NaN") {
  CHECK(convert<f8e4m3fn>(1.0f).bits == 0x38);    // exponent 7 (bias 7), mantissa 0
  CHECK(convert<f8e4m3fn>(-2.0f).bits == 0xc0);
  CHECK(convert<f8e4m3fn>(0.5f).bits == 0x30);
  CHECK(convert<f8e4m3fn>(1.0625f).bits == 0x38);  // halfway 1 and 1.125: to even (1)
  CHECK(convert<f8e4m3fn>(1.1875f).bits == 0x3a);  // halfway 1.125 and 1.25: to even (1.25)
  CHECK(convert<f8e4m3fn>(448.0f).bits == 0x7e);   // the largest finite value
  CHECK(convert<f8e4m3fn>(464.0f, kNoSat).bits == 0x7e);  // halfway 448 and (NaN's) 480: to 448
  CHECK(convert<f8e4m3fn>(465.0f, kNoSat).bits == 0x7f);  // overflow is NaN (no infinity)
  CHECK(convert<f8e4m3fn>(1e6f, kSat).bits == 0x7e);
  CHECK(convert<f8e4m3fn>(-kInf, kSat).bits == 0xfe);
  CHECK(convert<f8e4m3fn>(kInf, kNoSat).bits == 0x7f);
  CHECK(convert<f8e4m3fn>(kNaN, kSat).bits == 0x7f);
  CHECK(convert<f8e4m3fn>(std::ldexp(1.0f, -9)).bits == 0x01);  // smallest subnormal
  CHECK(convert<f8e4m3fn>(std::ldexp(1.0f, -10)).bits == 0x00);  // its half: ties to even 0
  CHECK(convert<f8e4m3fn>(-1e-7f).bits == 0x80);                 // negative zero kept
  CHECK(static_cast<float>(f8e4m3fn::from_bits(0x7e)) == 448.0f);
  CHECK(static_cast<float>(f8e4m3fn::from_bits(0x01)) == std::ldexp(1.0f, -9));
  CHECK(std::isnan(static_cast<float>(f8e4m3fn::from_bits(0xff))));
}

TEST_CASE("float8 fnuz kinds: one NaN (0x80), no negative zero") {
  CHECK(convert<f8e4m3fnuz>(1.0f).bits == 0x40);  // bias 8
  CHECK(convert<f8e4m3fnuz>(240.0f).bits == 0x7f);
  CHECK(convert<f8e4m3fnuz>(248.0f, kNoSat).bits == 0x80);  // rounds past 240: NaN
  CHECK(convert<f8e4m3fnuz>(248.0f, kSat).bits == 0x7f);
  CHECK(convert<f8e4m3fnuz>(-0.0f).bits == 0x00);
  CHECK(convert<f8e4m3fnuz>(kNaN).bits == 0x80);
  CHECK(convert<f8e5m2fnuz>(57344.0f).bits == 0x7f);
  CHECK(convert<f8e5m2fnuz>(-kInf, kNoSat).bits == 0x80);
  CHECK(std::isnan(static_cast<float>(f8e5m2fnuz::from_bits(0x80))));
  CHECK(static_cast<float>(f8e5m2fnuz::from_bits(0x00)) == 0.0f);
}

TEST_CASE("float8 e5m2 has infinities") {
  CHECK(convert<f8e5m2>(1.0f).bits == 0x3c);
  CHECK(convert<f8e5m2>(57344.0f).bits == 0x7b);
  CHECK(convert<f8e5m2>(61440.0f, kNoSat).bits == 0x7c);  // halfway to the next binade, odd: up, inf
  CHECK(convert<f8e5m2>(61440.0f, kSat).bits == 0x7b);
  CHECK(convert<f8e5m2>(-kInf, kNoSat).bits == 0xfc);
  CHECK(convert<f8e5m2>(kNaN).bits == 0x7e);
  CHECK(static_cast<float>(f8e5m2::from_bits(0xfc)) == -kInf);
  CHECK(std::isnan(static_cast<float>(f8e5m2::from_bits(0x7d))));
}

TEST_CASE("float8 e8m0: a power of two, rounded as round_mode says") {
  CHECK(convert<f8e8m0>(1.0f).bits == 127);
  CHECK(convert<f8e8m0>(1.1f, CastMode{true, RoundMode::up}).bits == 128);
  CHECK(convert<f8e8m0>(1.1f, CastMode{true, RoundMode::down}).bits == 127);
  CHECK(convert<f8e8m0>(1.4f, CastMode{true, RoundMode::nearest}).bits == 127);
  CHECK(convert<f8e8m0>(1.6f, CastMode{true, RoundMode::nearest}).bits == 128);
  CHECK(convert<f8e8m0>(-4.0f).bits == 129);  // the sign is dropped
  CHECK(convert<f8e8m0>(0.0f).bits == 0);     // 2^-127, the smallest
  CHECK(convert<f8e8m0>(3e38f, CastMode{true, RoundMode::up}).bits == 0xfe);   // saturates
  CHECK(convert<f8e8m0>(3e38f, CastMode{false, RoundMode::up}).bits == 0xff);  // NaN
  CHECK(convert<f8e8m0>(kInf).bits == 0xff);
  CHECK(static_cast<float>(f8e8m0::from_bits(0)) == std::ldexp(1.0f, -127));
  CHECK(std::isnan(static_cast<float>(f8e8m0::from_bits(0xff))));
}

TEST_CASE("float4 e2m1 always clamps and has no NaN") {
  const float grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (unsigned b = 0; b < 16; ++b)
    CHECK(static_cast<float>(f4e2m1::from_bits(static_cast<uint8_t>(b))) == (b & 8 ? -grid[b & 7] : grid[b & 7]));
  CHECK(convert<f4e2m1>(0.25f).bits == 0x0);  // halfway 0 and 0.5: to even
  CHECK(convert<f4e2m1>(0.75f).bits == 0x2);  // halfway 0.5 and 1: to even (1)
  CHECK(convert<f4e2m1>(5.0f).bits == 0x6);   // halfway 4 and 6: to even (4)
  CHECK(convert<f4e2m1>(1e6f, kNoSat).bits == 0x7);
  CHECK(convert<f4e2m1>(-kInf).bits == 0xf);
  CHECK(convert<f4e2m1>(kNaN).bits == 0x8);  // ml_dtypes: NaN becomes -0
}

TEST_CASE("4- and 2-bit integers truncate toward zero and wrap") {
  CHECK(static_cast<int>(convert<i4>(-9.0f)) == 7);
  CHECK(static_cast<int>(convert<i4>(8.0f)) == -8);
  CHECK(static_cast<int>(convert<i4>(-2.7f)) == -2);
  CHECK(static_cast<int>(convert<u4>(17)) == 1);
  CHECK(static_cast<int>(convert<u2>(-3.0f)) == 1);
  CHECK(static_cast<int>(convert<i2>(2)) == -2);
  CHECK(static_cast<int>(convert<i4>(kNaN)) == 0);
  CHECK(convert<int8_t>(i4::wrap(-8)) == -8);
  CHECK(convert<float>(u4::wrap(15)) == 15.0f);
}

TEST_CASE("float8 to float8 and to integers goes through float") {
  CHECK(convert<f8e5m2>(f8e4m3fn::from_bits(0x38)).bits == 0x3c);  // 1.0
  CHECK(convert<int32_t>(f8e4m3fn::from_bits(0x7e)) == 448);
  CHECK(static_cast<float>(convert<f16>(f8e5m2::from_bits(0x7b))) == 57344.0f);
}

TEST_CASE("quantize_linear: per tensor, rounding half to even, zero point, clamping") {
  const float x[6] = {0, 2, 3, 1000, -254, -1};
  const float scale = 2;
  const uint8_t zp = 128;
  uint8_t y[6];
  quantize_linear<float, float, uint8_t>(x, &scale, &zp, y, QuantLayout{1, 1, 6}, KILN_F32, true);
  CHECK(y[0] == 128);
  CHECK(y[1] == 129);
  CHECK(y[2] == 130);  // 1.5 rounds to 2
  CHECK(y[3] == 255);
  CHECK(y[4] == 1);
  CHECK(y[5] == 128);  // -0.5 rounds to -0
}

TEST_CASE("quantize_linear and dequantize_linear per axis and blocked") {
  // x [2, 4], axis 1 per channel: scales 1, 2, 4, 8
  const float x[8] = {1, 2, 4, 8, -1, -2, -4, -8};
  const float s[4] = {1, 2, 4, 8};
  int8_t q[8];
  quantize_linear<float, float, int8_t>(x, s, nullptr, q, QuantLayout{2, 4, 1, 1, 0, 1, 0}, KILN_F32, true);
  for (int i = 0; i < 8; ++i) CHECK(q[i] == (i < 4 ? 1 : -1));
  // blocked, axis 1, blocks of 3 on 4 columns: scale [2, 2], each row's last column is a block
  const float sb[4] = {1, 10, 2, 20};
  const int8_t zb[4] = {0, 1, 0, -1};
  const int8_t qb[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float y[8];
  dequantize_linear<int8_t, float, float>(qb, sb, zb, y, QuantLayout{2, 4, 1, 3, 2, 1, 0});
  const float want[8] = {1, 2, 3, 30, 10, 12, 14, 180};
  for (int i = 0; i < 8; ++i) CHECK(y[i] == want[i]);
}

TEST_CASE("quantize to int4 clamps to [-8, 7]; to float8 ignores the zero point") {
  const float x[3] = {100, -100, 3};
  const float scale = 1;
  i4 q[3];
  quantize_linear<float, float, i4>(x, &scale, nullptr, q, QuantLayout{1, 1, 3}, KILN_F32, true);
  CHECK(q[0].value == 7);
  CHECK(q[1].value == -8);
  CHECK(q[2].value == 3);
  f8e4m3fn f[3];
  quantize_linear<float, float, f8e4m3fn>(x, &scale, nullptr, f, QuantLayout{1, 1, 3}, KILN_F32, false);
  CHECK(static_cast<float>(f[0]) == 96.0f);
  CHECK(static_cast<float>(f[2]) == 3.0f);
}

TEST_CASE("dynamic_quantize_linear_u8 maps the range with 0 included") {
  const float x[4] = {0, 2, -1, 0.5f};
  uint8_t y[4], zp = 0;
  float scale = 0;
  dynamic_quantize_linear_u8(x, 4, y, &scale, &zp);
  CHECK(scale == doctest::Approx(3.0f / 255));
  CHECK(zp == 85);  // 1 / (3 / 255) = 85
  CHECK(y[0] == 85);
  CHECK(y[1] == 255);
  CHECK(y[2] == 0);
}
