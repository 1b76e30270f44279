// Discrete Fourier transforms along one axis (ONNX DFT-20), and the short-time transform built
// on it (STFT-17). Plain O(n^2) sums in double precision: these ops are rare in inference
// models and small in ONNX's tests.
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::rt {

// x is outer x n_in x inner x (1 real or 2 complex), y is outer x n_out x inner x (2, or 1 for
// the inverse of a one-sided spectrum). `length` is the transform's length: the input is cut
// or zero-padded to it (an inverse one-sided input to length / 2 + 1 bins, with Hermitian
// symmetry giving the rest, as numpy's irfft). n_out is length, or length / 2 + 1 for a
// forward one-sided transform. The inverse divides by length.
struct DftParams {
  int64_t outer, n_in, inner, length, n_out;
  bool complex_input, inverse, onesided;
};

template <class T>
void dft(const DftParams& p, const T* x, T* y) {
  const int64_t cin = p.complex_input ? 2 : 1;
  const bool real_out = p.inverse && p.onesided;
  const int64_t cout = real_out ? 1 : 2;
  const double two_pi = 6.283185307179586476925286766559;
  const double sign = p.inverse ? 1.0 : -1.0;
  const int64_t L = p.length;
  auto re = [&](int64_t o, int64_t k, int64_t i) { return static_cast<double>(x[((o * p.n_in + k) * p.inner + i) * cin]); };
  auto im = [&](int64_t o, int64_t k, int64_t i) {
    return cin == 2 ? static_cast<double>(x[((o * p.n_in + k) * p.inner + i) * cin + 1]) : 0.0;
  };
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i)
      for (int64_t k = 0; k < p.n_out; ++k) {
        double sr = 0, si = 0;
        if (real_out) {
          // Hermitian input: bins 0 .. L/2 given, the rest conjugate; the imaginary parts of the
          // DC and (even L) Nyquist bins are ignored.
          const int64_t half = L / 2, bins = p.n_in < half + 1 ? p.n_in : half + 1;
          for (int64_t f = 0; f < bins; ++f) {
            const double a = two_pi * static_cast<double>((f * k) % L) / static_cast<double>(L);
            const double xr = re(o, f, i), xi = im(o, f, i);
            if (f == 0 || (L % 2 == 0 && f == half)) sr += xr * std::cos(a);
            else sr += 2 * (xr * std::cos(a) - xi * std::sin(a));
          }
        } else {
          const int64_t n = p.n_in < L ? p.n_in : L;
          for (int64_t t = 0; t < n; ++t) {
            const double a = sign * two_pi * static_cast<double>((t * k) % L) / static_cast<double>(L);
            const double c = std::cos(a), s = std::sin(a), xr = re(o, t, i), xi = im(o, t, i);
            sr += xr * c - xi * s;
            si += xr * s + xi * c;
          }
        }
        if (p.inverse) {
          sr /= static_cast<double>(L);
          si /= static_cast<double>(L);
        }
        T* yk = y + ((o * p.n_out + k) * p.inner + i) * cout;
        yk[0] = T(sr);
        if (cout == 2) yk[1] = T(si);
      }
}

// STFT: signal is batch x length x (1 or 2); frame f covers samples [f * step, f * step +
// frame_length) times window (nullptr: ones); y is batch x frames x bins x 2 with bins
// frame_length / 2 + 1 when onesided, else frame_length.
struct StftParams {
  int64_t batch, length, frames, step, frame_length, bins;
  bool complex_input;
};

template <class T>
void stft(const StftParams& p, const T* signal, const T* window, T* y) {
  const int64_t cin = p.complex_input ? 2 : 1;
  const double two_pi = 6.283185307179586476925286766559;
  const int64_t L = p.frame_length;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t f = 0; f < p.frames; ++f)
      for (int64_t k = 0; k < p.bins; ++k) {
        double sr = 0, si = 0;
        for (int64_t t = 0; t < L; ++t) {
          const int64_t at = f * p.step + t;
          if (at >= p.length) break;
          const double w = window ? static_cast<double>(window[t]) : 1.0;
          const T* s = signal + (b * p.length + at) * cin;
          const double xr = static_cast<double>(s[0]) * w, xi = cin == 2 ? static_cast<double>(s[1]) * w : 0.0;
          const double a = -two_pi * static_cast<double>((t * k) % L) / static_cast<double>(L);
          const double c = std::cos(a), sn = std::sin(a);
          sr += xr * c - xi * sn;
          si += xr * sn + xi * c;
        }
        T* yk = y + ((b * p.frames + f) * p.bins + k) * 2;
        yk[0] = T(sr);
        yk[1] = T(si);
      }
}

}  // namespace kiln::rt
