// exp, tanh and the logistic sigmoid for loops that must vectorize (the recurrent cells' gates):
// std::tanh and std::exp are calls per element, and an LSTM's gate update spent a third of the
// run in them. Plain arithmetic and selects only: no calls, no float-to-int conversions.
#pragma once

#include <cstdint>
#include <cstring>

namespace kiln::rt {

// x * P(x^2) / Q(x^2) on x clamped to [-7.9053, 7.9053], within 4e-7 relative of the exact
// value (Eigen's fast tanh coefficients); exactly +-1 beyond +-9, where float tanh rounds to
// +-1 (at the clamp the quotient is 1 - 2.4e-7, and how it rounds there depends on the
// compiler's contraction of the polynomial). Branch-free selects, so loops of it vectorize.
// NaN stays NaN (every comparison is false).
inline float tanh_f32(float a) noexcept {
  constexpr float kClamp = 7.90531110763549805f, kOne = 9.f;
  const float x = a < -kClamp ? -kClamp : (a > kClamp ? kClamp : a);
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float t = x * p / q;
  return a > kOne ? 1.f : (a < -kOne ? -1.f : t);
}

// e^x within 2 float ulps: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so n ln2 is
// exact), e^r by Cephes' degree-6 minimax polynomial, 2^n by writing n into a float's exponent.
// n is rounded by adding 1.5 * 2^23 (the sum's low mantissa bits are n) rather than by a
// conversion, which would be undefined for NaN. +inf above 88.72, 0 below -87.33 (where the
// result would be subnormal), NaN stays NaN.
inline float exp_f32(float a) noexcept {
  constexpr float kHi = 88.7228391f, kLo = -87.3365447f;
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23
  const float x = a < kLo ? kLo : (a > kHi ? kHi : a);
  const float shifted = x * kLog2e + kRound;
  const float n = shifted - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.f;
  uint32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  // shifted's mantissa holds 2^22 + n (n in [-126, 128]); (n + 127) << 23 is 2^n's bit pattern.
  // At n = 128 (x near kHi) build 2^127 and double the result instead.
  const uint32_t n_biased = (bits - 0x4B400000u + 127u) & 0xFFu;
  const uint32_t scale_bits = (n_biased == 255u ? 254u : n_biased) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  const float y = er * scale * (n_biased == 255u ? 2.f : 1.f);
  return a > kHi ? __builtin_inff() : (a < kLo ? 0.f : y);
}

// 1 / (1 + e^-x): within 2 ulps relative, also where it nears 1 (1 - sigmoid is e^-x there:
// a GRU's (1 - z) h~ keeps its digits), exactly 0 at -inf and 1 at +inf.
inline float sigmoid_f32(float x) noexcept { return 1.f / (1.f + exp_f32(-x)); }

}  // namespace kiln::rt
