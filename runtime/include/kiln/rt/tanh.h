// tanh and the logistic sigmoid for loops that must vectorize (the recurrent cells' gates):
// std::tanh and std::exp are calls per element, and an LSTM's gate update spent a third of the
// run in them.
#pragma once

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

// 1 / (1 + e^-x) as 0.5 tanh(x / 2) + 0.5 (an identity): within 3e-7 absolute.
inline float sigmoid_f32(float x) noexcept { return 0.5f * tanh_f32(0.5f * x) + 0.5f; }

}  // namespace kiln::rt
