#include "kiln/rt/pool.h"

#include <limits>
#include <type_traits>

#include "kiln/rt/thread_pool.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kiln::rt {
namespace {

struct PoolArgs {
  const Pool2dParams* p;
  const float* x;
  float* y;
  bool include_pad;
  int64_t pad_bottom, pad_right;
};

// max that lets a NaN in (from either side) win, as the comparisons below do (integers: max).
template <class T>
inline T max_nan(T m, T v) { return (v > m || v != v) ? v : m; }

// What padding holds: -inf for floats, the lowest value for integers.
template <class T>
constexpr T pool_lowest() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

// The general loop: every tap checks its bounds. For windows whose padded row does not fit
// maxpool_plane_rows's buffer.
template <class T>
void maxpool_plane_checked(const Pool2dParams& p, const T* x, T* y) {
  const T lowest = pool_lowest<T>();
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    for (int64_t ow = 0; ow < p.OW; ++ow) {
      T m = lowest;
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        if (ih < 0 || ih >= p.H) continue;
        const T* xr = x + ih * p.W;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
          if (iw < 0 || iw >= p.W) continue;
          m = max_nan(m, xr[iw]);  // NaN propagates
        }
      }
      y[oh * p.OW + ow] = m;
    }
  }
}

// One row of a 3-wide, stride-2 max on bytes (ResNet's quantized stem): y[i] = max(b[2i], b[2i + 1],
// b[2i + 2]) for the first outputs of the row, 16 (then 8) at a time with SSE2 (u8 max; s8
// flipped into u8 order), reading b up to b[2 OW + 1]; returns how many it wrote (0 for other
// types or CPUs).
template <class T>
int64_t max3_stride2_bytes(const T* b, T* y, int64_t OW) {
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 1) {
    const __m128i low = _mm_set1_epi16(0x00FF);
    const __m128i flip = _mm_set1_epi8(static_cast<char>(std::is_signed_v<T> ? 0x80 : 0));
    // 8 outputs in the low bytes of 16-bit lanes: the pairs (b[2i], b[2i + 1]), then b[2i + 2]
    const auto eight = [&](const T* q) {
      const __m128i w = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), flip);
      const __m128i n = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 2)), flip);
      return _mm_and_si128(_mm_max_epu8(_mm_max_epu8(w, _mm_srli_epi16(w, 8)), n), low);
    };
    int64_t ow = 0;
    for (; ow + 16 <= OW; ow += 16) {
      const __m128i m = _mm_packus_epi16(eight(b + 2 * ow), eight(b + 2 * ow + 16));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + ow), _mm_xor_si128(m, flip));
    }
    if (ow + 8 <= OW) {
      const __m128i m = eight(b + 2 * ow);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + ow), _mm_xor_si128(_mm_packus_epi16(m, m), flip));
      ow += 8;
    }
    return ow;
  }
#endif
  (void)b;
  (void)y;
  (void)OW;
  return 0;
}

// row[c] = max(row[c], x[c]) for c < n; bytes 16 at a time with SSE2 (GCC's own vectorization
// of the byte loop left 48 of ResNet's 112 columns to a scalar remainder).
template <class T>
void max_into(T* row, const T* x, int64_t n) {
  int64_t c = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 1) {
    const __m128i flip = _mm_set1_epi8(static_cast<char>(std::is_signed_v<T> ? 0x80 : 0));
    for (; c + 16 <= n; c += 16) {
      const __m128i r = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c)), flip);
      const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + c)), flip);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row + c), _mm_xor_si128(_mm_max_epu8(r, v), flip));
    }
  }
#endif
  for (; c < n; ++c) row[c] = max_nan(row[c], x[c]);
}

// Row by row: the window's input rows are first reduced to one row of column maxima (a
// vertical max, contiguous and vectorized) in a buffer laid out as the padded row (pads and
// overhang hold -inf), then each output takes the max of its KW taps in that buffer, with no
// bounds checks in either loop.
template <class T>
void maxpool_plane(const Pool2dParams& p, const T* x, T* y) {
  constexpr int64_t kRow = 4096;
  const int64_t len = (p.OW - 1) * p.stride_w + (p.KW - 1) * p.dil_w + 1;  // padded row, as read
  if (len > kRow || p.pad_left < 0) {
    maxpool_plane_checked(p, x, y);
    return;
  }
  const T lowest = pool_lowest<T>();
  T buf[kRow + 1];  // one more: max3_stride2_bytes reads buf[len]
  // Input columns [0, cols) land at buf[c + pad_left]; the rest of buf stays -inf.
  const int64_t cols = p.W < len - p.pad_left ? p.W : len - p.pad_left;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    for (int64_t i = 0; i <= len; ++i) buf[i] = lowest;
    T* const row = buf + p.pad_left;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) continue;
      const T* xr = x + ih * p.W;
      max_into(row, xr, cols);
    }
    T* yr = y + oh * p.OW;
    if (p.KW == 3 && p.dil_w == 1 && p.stride_w == 2) {  // ResNet's stem: 3x3, stride 2
      for (int64_t ow = max3_stride2_bytes(buf, yr, p.OW); ow < p.OW; ++ow) {
        const T* b = buf + 2 * ow;
        yr[ow] = max_nan(max_nan(b[0], b[1]), b[2]);
      }
    } else if (p.KW == 3 && p.dil_w == 1 && p.stride_w == 1) {
      for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow] = max_nan(max_nan(buf[ow], buf[ow + 1]), buf[ow + 2]);
    } else {
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        const T* b = buf + ow * p.stride_w;
        T m = b[0];
        for (int64_t kw = 1; kw < p.KW; ++kw) m = max_nan(m, b[kw * p.dil_w]);
        yr[ow] = m;
      }
    }
  }
}

void avgpool_plane(const PoolArgs& a, const float* x, float* y) {
  const Pool2dParams& p = *a.p;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    for (int64_t ow = 0; ow < p.OW; ++ow) {
      float s = 0.f;
      int64_t inside = 0, rows_padded = 0, cols_padded = 0;
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        if (ih >= -p.pad_top && ih < p.H + a.pad_bottom) ++rows_padded;
        if (ih < 0 || ih >= p.H) continue;
        const float* xr = x + ih * p.W;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
          if (iw < 0 || iw >= p.W) continue;
          s += xr[iw];
          ++inside;
        }
      }
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
        if (iw >= -p.pad_left && iw < p.W + a.pad_right) ++cols_padded;
      }
      const int64_t count = a.include_pad ? rows_padded * cols_padded : inside;
      y[oh * p.OW + ow] = count > 0 ? s / static_cast<float>(count) : 0.f;
    }
  }
}

// The end padding the output shape needs: the last window's far edge minus the input size.
int64_t implied_end_pad(int64_t out, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_begin) {
  const int64_t need = (out - 1) * stride + (k - 1) * dil + 1 - in - pad_begin;
  return need > 0 ? need : 0;
}

}  // namespace

namespace {

template <class T>
void maxpool2d(const Pool2dParams& p, const T* x, T* y, ThreadPool* pool) {
  parallel_for(pool, p.N * p.C, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) maxpool_plane(p, x + i * p.H * p.W, y + i * p.OH * p.OW);
  });
}

}  // namespace

void maxpool2d_f32(const Pool2dParams& p, const float* x, float* y, ThreadPool* pool) noexcept {
  maxpool2d(p, x, y, pool);
}

void maxpool2d_u8(const Pool2dParams& p, const uint8_t* x, uint8_t* y, ThreadPool* pool) noexcept {
  maxpool2d(p, x, y, pool);
}

void maxpool2d_s8(const Pool2dParams& p, const int8_t* x, int8_t* y, ThreadPool* pool) noexcept {
  maxpool2d(p, x, y, pool);
}

void avgpool2d_f32(const Pool2dParams& p, bool count_include_pad, const float* x, float* y,
                   ThreadPool* pool) noexcept {
  const int64_t pb = p.pad_bottom >= 0 ? p.pad_bottom : implied_end_pad(p.OH, p.H, p.KH, p.stride_h, p.dil_h, p.pad_top);
  const int64_t pr =
      p.pad_right >= 0 ? p.pad_right : implied_end_pad(p.OW, p.W, p.KW, p.stride_w, p.dil_w, p.pad_left);
  PoolArgs args{&p, x, y, count_include_pad, pb, pr};
  parallel_for(pool, p.N * p.C, [a = &args](int64_t i0, int64_t i1) {
    const Pool2dParams& q = *a->p;
    for (int64_t i = i0; i < i1; ++i) avgpool_plane(*a, a->x + i * q.H * q.W, a->y + i * q.OH * q.OW);
  });
}

namespace {

void global_avg_rows(int64_t i0, int64_t i1, int64_t spatial, const float* x, float* y) {
  for (int64_t i = i0; i < i1; ++i) {
    const float* xs = x + i * spatial;
    y[i] = plane_mean(spatial, [xs](int64_t j) { return xs[j]; });
  }
}

// Below this many input floats the planes are averaged on the calling thread: waking the pool
// costs more than it saves.
constexpr int64_t kParallelGlobalFloats = 16 * 1024;

}  // namespace

void global_avgpool_f32(int64_t NC, int64_t spatial, const float* x, float* y, ThreadPool* pool) noexcept {
  if (NC * spatial < kParallelGlobalFloats) pool = nullptr;
  // Split by planes: the threads take the channels the one before (split by output channels,
  // as MobileNetV2's last 1x1 on 7 x 7) left in their caches.
  struct Args {
    int64_t spatial;
    const float* x;
    float* y;
  } args{spatial, x, y};
  // One pointer captured: std::function keeps it without allocating.
  parallel_for(pool, NC, [a = &args](int64_t i0, int64_t i1) { global_avg_rows(i0, i1, a->spatial, a->x, a->y); });
}

}  // namespace kiln::rt
