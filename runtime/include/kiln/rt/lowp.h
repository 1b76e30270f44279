// Storage-only low-precision types: the float8 kinds (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz,
// e8m0), float4 e2m1 and the 4- and 2-bit integers. Each element takes one byte in kiln's
// memory (ONNX packs the 4- and 2-bit ones in its files; the importer unpacks them): a
// float's bit pattern in the low bits, an integer's value (sign-extended for int4 and int2).
// Nothing computes in these types; Cast, CastLike, QuantizeLinear and DequantizeLinear
// convert to and from them with convert<>() below, which follows ONNX's reference (ml_dtypes
// and onnx.numpy_helper) bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kiln/rt/dtype.h"
#include "kiln/rt/scalar_ops.h"

namespace kiln::rt {

// --- minifloats: 1 sign bit, E exponent bits, M mantissa bits -------------------------

// What the all-ones patterns mean.
enum class Specials {
  ieee,  // exponent all ones: infinity (mantissa 0) or NaN (e5m2)
  fn,    // no infinity; only S.1111.111 is NaN (e4m3fn)
  fnuz,  // no infinity, no negative zero; 0x80 is the only NaN (e4m3fnuz, e5m2fnuz)
  none,  // no infinity, no NaN (float4 e2m1)
};

struct E4M3FN { static constexpr int exp_bits = 4, man_bits = 3, bias = 7; static constexpr Specials specials = Specials::fn; };
struct E4M3FNUZ { static constexpr int exp_bits = 4, man_bits = 3, bias = 8; static constexpr Specials specials = Specials::fnuz; };
struct E5M2 { static constexpr int exp_bits = 5, man_bits = 2, bias = 15; static constexpr Specials specials = Specials::ieee; };
struct E5M2FNUZ { static constexpr int exp_bits = 5, man_bits = 2, bias = 16; static constexpr Specials specials = Specials::fnuz; };
struct E2M1 { static constexpr int exp_bits = 2, man_bits = 1, bias = 1; static constexpr Specials specials = Specials::none; };

template <class F>
struct minifloat_traits {
  static constexpr int E = F::exp_bits, M = F::man_bits;
  static constexpr unsigned sign_bit = 1u << (E + M);
  static constexpr unsigned exp_ones = (1u << E) - 1u, man_ones = (1u << M) - 1u;
  // Largest finite value: the top exponent is reserved only in the ieee form, and in the fn
  // form its all-ones mantissa is NaN.
  static constexpr int top_exp = F::specials == Specials::ieee ? static_cast<int>(exp_ones) - 1 : static_cast<int>(exp_ones);
  static constexpr unsigned top_man = F::specials == Specials::fn ? man_ones - 1u : man_ones;
  static double max() { return std::ldexp(static_cast<double>((1u << M) + top_man), top_exp - F::bias - M); }
};

template <class F>
float minifloat_to_float(unsigned bits) noexcept {
  using T = minifloat_traits<F>;
  const unsigned sign = bits & T::sign_bit, e = (bits >> T::M) & T::exp_ones, m = bits & T::man_ones;
  if constexpr (F::specials == Specials::fnuz) {
    if (bits == T::sign_bit) return std::numeric_limits<float>::quiet_NaN();
  } else if constexpr (F::specials == Specials::fn) {
    if (e == T::exp_ones && m == T::man_ones) return std::numeric_limits<float>::quiet_NaN();
  } else if constexpr (F::specials == Specials::ieee) {
    if (e == T::exp_ones) return m ? std::numeric_limits<float>::quiet_NaN()
                                   : (sign ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
  }
  const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - F::bias - T::M)
                          : std::ldexp(static_cast<double>((1u << T::M) + m), static_cast<int>(e) - F::bias - T::M);
  return static_cast<float>(sign ? -v : v);
}

// Rounds to nearest, ties to even. Without `saturate` a value that rounds beyond the largest
// finite one becomes infinity (ieee) or NaN (fn, fnuz), as a plain numpy astype does; with it,
// it is clamped first, infinities included (onnx.numpy_helper.saturate_cast). float4 e2m1 has
// neither and always clamps; it turns NaN into zero of the opposite sign, as ml_dtypes does.
template <class F>
uint8_t float_to_minifloat(double v, bool saturate) noexcept {
  using T = minifloat_traits<F>;
  const unsigned sign = std::signbit(v) ? T::sign_bit : 0u;
  constexpr bool clamps = F::specials == Specials::none;
  auto nan = [&]() -> unsigned {
    switch (F::specials) {
      case Specials::fnuz: return T::sign_bit;
      case Specials::fn: return sign | (T::exp_ones << T::M) | T::man_ones;
      case Specials::ieee: return sign | (T::exp_ones << T::M) | (1u << (T::M - 1));
      case Specials::none: return sign ^ T::sign_bit;
    }
    return 0;
  };
  auto overflow = [&]() -> unsigned {
    if (F::specials == Specials::ieee) return sign | (T::exp_ones << T::M);
    return nan();
  };
  auto finite = [&](int e, unsigned m) -> unsigned { return sign | (static_cast<unsigned>(e) << T::M) | m; };
  if (std::isnan(v)) return static_cast<uint8_t>(nan());
  double a = std::fabs(v);
  const double max = T::max();
  if (a > max) {
    if (!saturate && !clamps && std::isinf(a)) return static_cast<uint8_t>(overflow());
    if (saturate || clamps) a = max;  // else it may still round down to max
  }
  if (a == 0) return static_cast<uint8_t>(F::specials == Specials::fnuz ? 0u : sign);
  // a = n * 2^(e - M) with the exponent e of a's binade, or the smallest normal one.
  int e = std::ilogb(a);
  const int emin = 1 - F::bias;
  if (e < emin) e = emin;
  const double n = std::ldexp(a, T::M - e);
  double r = std::floor(n);
  const double frac = n - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  unsigned q = static_cast<unsigned>(r);
  if (q == 0) return static_cast<uint8_t>(F::specials == Specials::fnuz ? 0u : sign);
  if (q == (2u << T::M)) {  // rounded up into the next binade
    q = 1u << T::M;
    ++e;
  }
  if (std::ldexp(static_cast<double>(q), e - T::M) > max)
    return static_cast<uint8_t>(saturate || clamps ? finite(T::top_exp + F::bias, T::top_man) : overflow());
  if (q < (1u << T::M)) return static_cast<uint8_t>(finite(0, q));  // subnormal
  return static_cast<uint8_t>(finite(e + F::bias, q - (1u << T::M)));
}

// One byte holding a minifloat's bit pattern; read as float explicitly.
template <class F>
struct minifloat {
  using format = F;
  uint8_t bits = 0;
  static minifloat from_bits(uint8_t b) noexcept {
    minifloat x;
    x.bits = b;
    return x;
  }
  explicit operator float() const noexcept { return minifloat_to_float<F>(bits); }
};

using f8e4m3fn = minifloat<E4M3FN>;
using f8e4m3fnuz = minifloat<E4M3FNUZ>;
using f8e5m2 = minifloat<E5M2>;
using f8e5m2fnuz = minifloat<E5M2FNUZ>;
using f4e2m1 = minifloat<E2M1>;

// --- float8 e8m0: a power of two 2^(bits - 127); 0xff is NaN ------------------------------

// How Cast rounds to e8m0 (attribute round_mode).
enum class RoundMode { up, down, nearest };

inline float e8m0_to_float(uint8_t bits) noexcept {
  if (bits == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

// onnx.numpy_helper.to_float8e8m0: the float's biased exponent, rounded by the bits below it
// (the sign is dropped); NaN and infinity give 0xff. With `saturate`, rounding never goes
// past 2^127 (0xfe).
inline uint8_t float_to_e8m0(float f, bool saturate, RoundMode mode) noexcept {
  const uint32_t x = float_bits(f);
  unsigned e = (x >> 23) & 0xffu;
  if (e == 0xffu) return 0xff;
  bool round_up = false;
  switch (mode) {
    case RoundMode::up: round_up = (x & 0x7fffffu) != 0; break;
    case RoundMode::down: break;
    case RoundMode::nearest: {
      const bool g = x & 0x400000u, r = x & 0x200000u, s = x & 0x1fffffu, lsb = e > 0;
      round_up = g && (r || s || lsb);
      break;
    }
  }
  if (round_up && !(saturate && e == 0xfeu)) ++e;
  return static_cast<uint8_t>(e);
}

struct f8e8m0 {
  uint8_t bits = 0;
  static f8e8m0 from_bits(uint8_t b) noexcept {
    f8e8m0 x;
    x.bits = b;
    return x;
  }
  explicit operator float() const noexcept { return e8m0_to_float(bits); }
};

// --- 4- and 2-bit integers ----------------------------------------------------------------

template <class Rep, int Bits>
struct small_int {
  static constexpr int64_t lowest = std::is_signed_v<Rep> ? -(int64_t{1} << (Bits - 1)) : 0;
  static constexpr int64_t highest = std::is_signed_v<Rep> ? (int64_t{1} << (Bits - 1)) - 1 : (int64_t{1} << Bits) - 1;
  Rep value = 0;  // within [lowest, highest]
  // The low `Bits` bits of v (sign-extended for a signed type): integer conversions wrap.
  static small_int wrap(int64_t v) noexcept {
    const unsigned low = static_cast<unsigned>(static_cast<uint64_t>(v) & ((1u << Bits) - 1u));
    small_int x;
    if constexpr (std::is_signed_v<Rep>)
      x.value = static_cast<Rep>(low >= (1u << (Bits - 1)) ? static_cast<int>(low) - (1 << Bits) : static_cast<int>(low));
    else
      x.value = static_cast<Rep>(low);
    return x;
  }
  explicit operator int() const noexcept { return value; }
};

using i4 = small_int<int8_t, 4>;
using u4 = small_int<uint8_t, 4>;
using i2 = small_int<int8_t, 2>;
using u2 = small_int<uint8_t, 2>;

static_assert(sizeof(f8e4m3fn) == 1 && sizeof(f8e8m0) == 1 && sizeof(i4) == 1, "storage types take one byte");

// --- conversions --------------------------------------------------------------------------

template <class T> struct is_minifloat : std::false_type {};
template <class F> struct is_minifloat<minifloat<F>> : std::true_type {};
template <class T> struct is_small_int : std::false_type {};
template <class R, int B> struct is_small_int<small_int<R, B>> : std::true_type {};
template <class T>
inline constexpr bool is_lowp_v = is_minifloat<T>::value || is_small_int<T>::value || std::is_same_v<T, f8e8m0>;

// Cast's attributes that matter for float8 results.
struct CastMode {
  bool saturate = true;
  RoundMode round = RoundMode::up;
};

// The value of a storage element in a type that computes: float for the floats (f16 and bf16
// too), int for the small integers, the value itself otherwise.
template <class T>
auto widen_storage(T v) noexcept {
  if constexpr (is_minifloat<T>::value || std::is_same_v<T, f8e8m0> || std::is_same_v<T, f16> ||
                std::is_same_v<T, bf16>)
    return static_cast<float>(v);
  else if constexpr (is_small_int<T>::value)
    return static_cast<int>(v);
  else
    return v;
}

// ONNX's Cast from I to O where either may be a storage type (otherwise it is cast<O>()).
// Storage types are read through widen_storage(); to a minifloat rounds from the exact value (f16 and
// float are exact in double); to e8m0 goes through float, as ONNX's reference does; to a small
// integer truncates toward zero and wraps (NaN and infinities give 0), as ml_dtypes does.
template <class O, class I>
O convert(I v, CastMode mode = {}) noexcept {
  if constexpr (is_lowp_v<I>) {
    return convert<O>(widen_storage(v), mode);
  } else if constexpr (is_minifloat<O>::value) {
    const double x = static_cast<double>(widen_storage(v));
    return O::from_bits(float_to_minifloat<typename O::format>(x, mode.saturate));
  } else if constexpr (std::is_same_v<O, f8e8m0>) {
    return O::from_bits(float_to_e8m0(static_cast<float>(widen_storage(v)), mode.saturate, mode.round));
  } else if constexpr (is_small_int<O>::value) {
    const auto x = widen_storage(v);
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      if (!(std::fabs(x) < 9.2e18)) return O::wrap(0);  // NaN, infinities, beyond int64
      return O::wrap(static_cast<int64_t>(x));
    } else {
      return O::wrap(static_cast<int64_t>(x));
    }
  } else {
    return cast<O>(v);
  }
}

// The storage-only floats by dtype code, for code that holds bytes and a kiln_dtype.
inline bool is_storage_float(kiln_dtype t) noexcept {
  return t == KILN_F8E4M3FN || t == KILN_F8E4M3FNUZ || t == KILN_F8E5M2 || t == KILN_F8E5M2FNUZ ||
         t == KILN_F8E8M0 || t == KILN_F4E2M1;
}

// A storage-only float's bits as float (0 when t is not one).
inline float storage_float_to_f32(kiln_dtype t, uint8_t bits) noexcept {
  switch (t) {
    case KILN_F8E4M3FN: return minifloat_to_float<E4M3FN>(bits);
    case KILN_F8E4M3FNUZ: return minifloat_to_float<E4M3FNUZ>(bits);
    case KILN_F8E5M2: return minifloat_to_float<E5M2>(bits);
    case KILN_F8E5M2FNUZ: return minifloat_to_float<E5M2FNUZ>(bits);
    case KILN_F8E8M0: return e8m0_to_float(bits);
    case KILN_F4E2M1: return minifloat_to_float<E2M1>(bits);
    default: return 0.0f;
  }
}

}  // namespace kiln::rt
