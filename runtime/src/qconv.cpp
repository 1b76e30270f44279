// Quantized convolution (qconv.h): im2row + qgemm per image and group.
#include "kiln/rt/qconv.h"

#include <type_traits>

#include <cstdlib>
#include <cstring>

#include "kiln/rt/thread_pool.h"

namespace kiln::rt {
namespace {

int64_t patch_len(const Conv2dParams& p) { return p.C / p.group * p.KH * p.KW; }

// Depthwise (one input and one output channel per group, small kernel): a direct loop over
// rows of output pixels, the weights stored plainly as s8 (u8 shifted by 128) after a header
// that records the shift.
constexpr int64_t kMaxDepthwiseTaps = 64;
bool depthwise(const Conv2dParams& p) {
  return p.group == p.C && p.group == p.M && p.KH * p.KW <= kMaxDepthwiseTaps;
}

size_t group_bytes(const Conv2dParams& p) {
  return (qgemm_packed_b_bytes(patch_len(p), p.M / p.group) + 63) / 64 * 64;
}

template <class T>
void pack(const Conv2dParams& p, const T* w, unsigned char* packed) {
  if (depthwise(p)) {
    const int32_t shift = std::is_same_v<T, uint8_t> ? 128 : 0;
    std::memset(packed, 0, 64);
    std::memcpy(packed, &shift, sizeof shift);
    for (int64_t i = 0; i < p.M * p.KH * p.KW; ++i)
      packed[64 + i] = static_cast<unsigned char>(static_cast<int32_t>(w[i]) - shift);
    return;
  }
  const int64_t K = patch_len(p), mg = p.M / p.group;
  for (int64_t g = 0; g < p.group; ++g)
    qgemm_pack_b(K, mg, w + g * mg * K, 1, K, packed + static_cast<size_t>(g) * group_bytes(p));
}

// rows[r * K + col]: pixel r = oh * OW + ow, col = (c * KH + kh) * KW + kw of image n, group g.
// Output rows [oh0, oh1) only (threads take disjoint ranges).
void im2row(const Conv2dParams& p, const unsigned char* x, int64_t n, int64_t g, unsigned char pad,
            unsigned char* rows, int64_t oh0, int64_t oh1) {
  const int64_t cg = p.C / p.group, K = patch_len(p);
  for (int64_t oh = oh0; oh < oh1; ++oh)
    for (int64_t c = 0; c < cg; ++c) {
      const unsigned char* plane = x + ((n * p.C + g * cg + c) * p.H) * p.W;
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          unsigned char* dst = rows + oh * p.OW * K + (c * p.KH + kh) * p.KW + kw;
          if (ih < 0 || ih >= p.H) {
            for (int64_t ow = 0; ow < p.OW; ++ow) dst[ow * K] = pad;
            continue;
          }
          const unsigned char* src = plane + ih * p.W;
          for (int64_t ow = 0; ow < p.OW; ++ow) {
            const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
            dst[ow * K] = iw >= 0 && iw < p.W ? src[iw] : pad;
          }
        }
      }
    }
}

// Channels [m0, m1) of image n: the int32 sums of one channel's output plane in plane_acc, then
// qgemm's epilogue on the plane.
template <class X>
void depthwise_rows(const Conv2dParams& p, const X* x, int32_t x_zero_point, const unsigned char* packed,
                    const int32_t* w_zero_point, int64_t w_zero_point_count, const QGemmOutput& out, int64_t n,
                    int64_t m0, int64_t m1, int32_t* plane_acc) {
  int32_t shift;
  std::memcpy(&shift, packed, sizeof shift);
  const int8_t* weights = reinterpret_cast<const int8_t*>(packed + 64);
  const int64_t taps = p.KH * p.KW;
  for (int64_t m = m0; m < m1; ++m) {
    const int32_t zw = (w_zero_point ? w_zero_point[w_zero_point_count > 1 ? m : 0] : 0) - shift;
    int32_t w[kMaxDepthwiseTaps];
    for (int64_t t = 0; t < taps; ++t) w[t] = static_cast<int32_t>(weights[m * taps + t]) - zw;
    const X* plane = x + (n * p.C + m) * p.H * p.W;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int32_t* __restrict acc = plane_acc + oh * p.OW;
      for (int64_t ow = 0; ow < p.OW; ++ow) acc[ow] = 0;
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        if (ih < 0 || ih >= p.H) continue;
        const X* row = plane + ih * p.W;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          const int64_t off = kw * p.dil_w - p.pad_left;
          // Output columns whose input column ow * stride + off lies inside the row.
          int64_t lo = 0, hi = p.OW;
          while (lo < hi && lo * p.stride_w + off < 0) ++lo;
          while (hi > lo && (hi - 1) * p.stride_w + off >= p.W) --hi;
          const int32_t wk = w[kh * p.KW + kw];
          if (p.stride_w == 1) {
            const X* __restrict src = row + off;
            for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += (static_cast<int32_t>(src[ow]) - x_zero_point) * wk;
          } else {
            for (int64_t ow = lo; ow < hi; ++ow)
              acc[ow] += (static_cast<int32_t>(row[ow * p.stride_w + off]) - x_zero_point) * wk;
          }
        }
      }
    }
    qgemm_finish_column(out, plane_acc, 0, p.OH * p.OW, m);
  }
}

void depthwise_conv(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed, const int32_t* w_zero_point,
                    int64_t w_zero_point_count, const QGemmOutput& out, ThreadPool* pool) {
  const int64_t plane = p.OH * p.OW;
  const size_t elem = out.type == KILN_I32 || out.type == KILN_F32 ? 4 : 1;
  for (int64_t n = 0; n < p.N; ++n) {
    QGemmOutput o = out;
    o.y = static_cast<unsigned char*>(out.y) + static_cast<size_t>(n * p.M * plane) * elem;
    o.row_stride = 1;
    o.col_stride = plane;
    parallel_for(pool, p.M, [&](int64_t m0, int64_t m1) {
      int32_t* acc = static_cast<int32_t*>(std::malloc(static_cast<size_t>(plane) * sizeof(int32_t)));
      if (acc == nullptr) return;  // out of memory: the output stays unwritten
      if (x.a_signed)
        depthwise_rows(p, static_cast<const int8_t*>(x.data), x.zero_point, packed, w_zero_point, w_zero_point_count,
                       o, n, m0, m1, acc);
      else
        depthwise_rows(p, static_cast<const uint8_t*>(x.data), x.zero_point, packed, w_zero_point,
                       w_zero_point_count, o, n, m0, m1, acc);
      std::free(acc);
    });
  }
}

}  // namespace

size_t qconv2d_packed_weight_bytes(const Conv2dParams& p) noexcept {
  if (depthwise(p)) return static_cast<size_t>(64 + p.M * p.KH * p.KW);
  return static_cast<size_t>(p.group) * group_bytes(p);
}

void qconv2d_pack_weights(const Conv2dParams& p, const int8_t* w, unsigned char* packed) noexcept {
  pack(p, w, packed);
}

void qconv2d_pack_weights(const Conv2dParams& p, const uint8_t* w, unsigned char* packed) noexcept {
  pack(p, w, packed);
}

size_t qconv2d_scratch_bytes(const Conv2dParams& p) noexcept {
  if (depthwise(p)) return 0;
  return static_cast<size_t>(p.OH * p.OW * patch_len(p));
}

void qconv2d(const Conv2dParams& p, const QGemmA& x, const unsigned char* packed_w, const int32_t* w_zero_point,
             int64_t w_zero_point_count, const QGemmOutput& out, unsigned char* scratch, ThreadPool* pool) noexcept {
  if (depthwise(p)) return depthwise_conv(p, x, packed_w, w_zero_point, w_zero_point_count, out, pool);
  const int64_t K = patch_len(p), mg = p.M / p.group, plane = p.OH * p.OW;
  const size_t elem = out.type == KILN_I32 || out.type == KILN_F32 ? 4 : 1;
  const unsigned char pad = static_cast<unsigned char>(x.zero_point);
  auto column = [mg](const auto* a, int64_t count, int64_t g) { return a && count > 1 ? a + g * mg : a; };
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      parallel_for(pool, p.OH, [&](int64_t oh0, int64_t oh1) {
        im2row(p, static_cast<const unsigned char*>(x.data), n, g, pad, scratch, oh0, oh1);
      });
      QGemmOutput o = out;
      o.y = static_cast<unsigned char*>(out.y) + static_cast<size_t>((n * p.M + g * mg) * plane) * elem;
      o.row_stride = 1;
      o.col_stride = plane;
      o.bias = column(out.bias, out.bias_count, g);
      o.scale = column(out.scale, out.scale_count, g);
      o.offset = column(out.offset, out.offset_count, g);
      qgemm(plane, mg, K, QGemmA{scratch, K, x.a_signed, x.zero_point},
            packed_w + static_cast<size_t>(g) * group_bytes(p), column(w_zero_point, w_zero_point_count, g),
            w_zero_point_count, o, pool);
    }
}

}  // namespace kiln::rt
