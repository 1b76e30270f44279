// Scalar functions that elementwise ops' expressions call (ir/ops/*_ops.def). The same
// expression text is compiled into kiln's reference implementation and into generated code,
// so these are the one definition of the semantics that a plain C++ operator does not give:
// NaN-propagating min and max, floor and truncated modulo, integer powers, shifts by any
// count, and dtype conversions. Those that elementwise expressions call are KILN_HD: the CUDA
// backend's kernels compile the same expressions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "kiln/rt/dtype.h"
#include "kiln/rt/host_device.h"

namespace kiln::rt {

template <class T>
KILN_HD constexpr bool is_nan(T x) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    (void)x;
    return false;
  }
}

// Modulo. fmod: the sign of the dividend (C's % and std::fmod); else the sign of the divisor
// (Python's %, numpy.mod). Integer division by zero gives 0, as numpy does.
template <class T>
KILN_HD T mod(T a, T b, bool fmod) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (!fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
    return r;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);  // INT_MIN % -1 overflows
    }
    T r = static_cast<T>(a % b);
    if constexpr (std::is_signed_v<T>) {
      if (!fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    }
    return r;
  }
}

// a to the power b. Two integers: exact, by repeated squaring, wrapping like numpy; a negative
// exponent gives 1 / a^-b truncated (0 unless |a| is 1). Otherwise in double, like numpy's
// mixed-type promotion.
template <class A, class B>
KILN_HD auto power(A a, B b) noexcept {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    using U = std::make_unsigned_t<A>;
    if constexpr (std::is_signed_v<B>) {
      if (b < 0) return static_cast<A>(a == A(1) ? 1 : a == A(-1) ? (b % 2 != 0 ? -1 : 1) : 0);
    }
    U result = 1, base = static_cast<U>(a);
    for (auto e = static_cast<std::make_unsigned_t<B>>(b); e; e >>= 1) {
      if (e & 1) result = static_cast<U>(result * base);
      base = static_cast<U>(base * base);
    }
    return static_cast<A>(result);
  } else {
    return std::pow(static_cast<double>(a), static_cast<double>(b));
  }
}

// Shifts where a count of the type's width or more gives 0.
template <class T>
KILN_HD T shift_left(T a, T b) noexcept {
  return b >= T(std::numeric_limits<T>::digits) ? T(0) : static_cast<T>(a << b);
}
template <class T>
KILN_HD T shift_right(T a, T b) noexcept {
  return b >= T(std::numeric_limits<T>::digits) ? T(0) : static_cast<T>(a >> b);
}

// double to f16 rounded once (to nearest even), not twice through float: double to float
// rounding to odd keeps the bits that decide f16's rounding.
inline uint16_t f64_to_f16_bits(double d) noexcept {
  float f = static_cast<float>(d);
  if (d == d && static_cast<double>(f) != d) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    if (static_cast<double>(f) != d) f = bits_float(float_bits(f) | 1u);
  }
  return f32_to_f16_bits(f);
}

// Clip as numpy.clip does it: raised to lo, then lowered to hi, so hi wins when lo > hi;
// NaN stays NaN.
template <class T>
constexpr T clip(T x, T lo, T hi) noexcept {
  const T up = x < lo ? lo : x;
  return up > hi ? hi : up;
}

// Conversion of a value to storage type O, as ONNX's Cast does it: float to integer
// truncates toward zero, anything to bool is "not zero", 16-bit floats round to nearest
// even. A float outside the integer type's range is undefined in ONNX; here it saturates
// and NaN gives 0, so the result never depends on the compiler.
template <class O, class I>
O cast(I v) noexcept {
  using C = std::conditional_t<std::is_same_v<I, f16> || std::is_same_v<I, bf16>, float, I>;
  const C x = static_cast<C>(v);
  if constexpr (std::is_same_v<O, bool>) {
    return x != C(0);
  } else if constexpr (std::is_same_v<O, f16> || std::is_same_v<O, bf16>) {
    if constexpr (std::is_same_v<C, double> && std::is_same_v<O, f16>) {
      return O::from_bits(f64_to_f16_bits(x));
    } else {
      return O(static_cast<float>(x));
    }
  } else if constexpr (std::is_integral_v<O> && std::is_floating_point_v<C>) {
    if (x != x) return O(0);
    if (x <= static_cast<C>(std::numeric_limits<O>::lowest())) return std::numeric_limits<O>::lowest();
    if (x >= static_cast<C>(std::numeric_limits<O>::max())) return std::numeric_limits<O>::max();
    return static_cast<O>(x);
  } else {
    return static_cast<O>(x);
  }
}

}  // namespace kiln::rt
