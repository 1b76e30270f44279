#include "kiln/rt/conv.h"

#include <cstring>

#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_pool.h"

namespace kiln::rt {
namespace {

bool is_depthwise(const Conv2dParams& p) { return p.group == p.C && p.group == p.M && p.group > 1; }

bool is_pointwise(const Conv2dParams& p) {
  return p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         p.OH == p.H && p.OW == p.W;
}

// Output positions o in [0, n_out) whose input index o*stride + offset lies in
// [0, n_in): returns [lo, hi).
void valid_range(int64_t n_out, int64_t n_in, int64_t stride, int64_t offset, int64_t& lo, int64_t& hi) {
  // o*stride + offset >= 0  <=>  o >= ceil(-offset / stride)
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // o*stride + offset <= n_in - 1  <=>  o <= floor((n_in - 1 - offset) / stride)
  const int64_t last = n_in - 1 - offset;
  hi = last < 0 ? 0 : last / stride + 1;
  if (hi > n_out) hi = n_out;
  if (lo > hi) lo = hi;
}

// Rows [r0, r1) of the column matrix for one image and group: row (c, kh, kw)
// holds, for every output position, the input value it multiplies (0 in padding).
void im2col_rows(const Conv2dParams& p, const float* x, float* col, int64_t r0, int64_t r1) {
  const int64_t ohw = p.OH * p.OW;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t kw = r % p.KW, kh = (r / p.KW) % p.KH, c = r / (p.KW * p.KH);
    const float* xc = x + c * p.H * p.W;
    float* out = col + r * ohw;
    int64_t w_lo, w_hi;
    valid_range(p.OW, p.W, p.stride_w, kw * p.dil_w - p.pad_left, w_lo, w_hi);
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      float* o = out + oh * p.OW;
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) {
        std::memset(o, 0, sizeof(float) * p.OW);
        continue;
      }
      const float* xr = xc + ih * p.W;  // input index of ow: ow * stride_w + off_w
      const int64_t off_w = kw * p.dil_w - p.pad_left;
      for (int64_t ow = 0; ow < w_lo; ++ow) o[ow] = 0.f;
      if (p.stride_w == 1) {
        if (w_hi > w_lo) std::memcpy(o + w_lo, xr + (w_lo + off_w), sizeof(float) * (w_hi - w_lo));
      } else {
        for (int64_t ow = w_lo; ow < w_hi; ++ow) o[ow] = xr[ow * p.stride_w + off_w];
      }
      for (int64_t ow = w_hi; ow < p.OW; ++ow) o[ow] = 0.f;
    }
  }
}

// One output plane of a depthwise convolution (channel c of image n).
void depthwise_plane(const Conv2dParams& p, const float* x, const float* w, float b, float* y) {
  for (int64_t i = 0; i < p.OH * p.OW; ++i) y[i] = b;
  for (int64_t kw = 0; kw < p.KW; ++kw) {
    int64_t w_lo, w_hi;
    const int64_t off_w = kw * p.dil_w - p.pad_left;
    valid_range(p.OW, p.W, p.stride_w, off_w, w_lo, w_hi);
    if (w_lo >= w_hi) continue;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      float* yr = y + oh * p.OW;
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        if (ih < 0 || ih >= p.H) continue;
        const float wv = w[kh * p.KW + kw];
        const float* xr = x + ih * p.W;
        if (p.stride_w == 1) {
          const float* xs = xr + (w_lo + off_w);  // in bounds: w_lo + off_w >= 0
          for (int64_t ow = w_lo; ow < w_hi; ++ow) yr[ow] += wv * xs[ow - w_lo];
        } else {
          for (int64_t ow = w_lo; ow < w_hi; ++ow) yr[ow] += wv * xr[ow * p.stride_w + off_w];
        }
      }
    }
  }
}

struct ConvArgs {
  const Conv2dParams* p;
  const float* x;
  const float* w;
  const float* bias;
  float* y;
  float* col;
  const Epilogue* epilogue;
};

}  // namespace

size_t conv2d_scratch_floats(const Conv2dParams& p) noexcept {
  if (p.group <= 0 || is_depthwise(p) || is_pointwise(p)) return 0;
  return static_cast<size_t>(p.C / p.group * p.KH * p.KW * p.OH * p.OW);
}

void conv2d_f32(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y, float* scratch,
                ThreadPool* pool) noexcept {
  conv2d_f32_epilogue(p, x, w, bias, y, scratch, Epilogue{}, pool);
}

void conv2d_f32_epilogue(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                         float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept {
  if (p.N <= 0 || p.M <= 0 || p.OH <= 0 || p.OW <= 0 || p.group <= 0) return;
  const int64_t ohw = p.OH * p.OW;
  ConvArgs args{&p, x, w, bias, y, scratch, &epilogue};

  if (is_depthwise(p)) {
    parallel_for(pool, p.N * p.C, [a = &args](int64_t i0, int64_t i1) {
      const Conv2dParams& q = *a->p;
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t c = i % q.C;
        float* plane = a->y + i * q.OH * q.OW;
        depthwise_plane(q, a->x + i * q.H * q.W, a->w + c * q.KH * q.KW, a->bias ? a->bias[c] : 0.f, plane);
        if (a->epilogue->fn) a->epilogue->fn(a->epilogue->ctx, plane, i * q.OH * q.OW, q.OH * q.OW);
      }
    });
    return;
  }

  const int64_t cg = p.C / p.group, mg = p.M / p.group, kg = cg * p.KH * p.KW;
  const bool pointwise = is_pointwise(p);
  for (int64_t n = 0; n < p.N; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      const float* xg = x + (n * p.C + g * cg) * p.H * p.W;
      const float* b = xg;
      if (!pointwise) {
        ConvArgs ga = args;
        ga.x = xg;
        parallel_for(pool, kg, [a = &ga](int64_t r0, int64_t r1) { im2col_rows(*a->p, a->x, a->col, r0, r1); });
        b = scratch;
      }
      gemm_f32(false, false, mg, ohw, kg, 1.f, w + g * mg * kg, kg, b, ohw, 0.f, y + (n * p.M + g * mg) * ohw, ohw,
               pool);
    }
  }
  if (bias != nullptr || epilogue.fn) {
    parallel_for(pool, p.N * p.M, [a = &args](int64_t i0, int64_t i1) {
      const int64_t plane = a->p->OH * a->p->OW;
      for (int64_t i = i0; i < i1; ++i) {
        float* yp = a->y + i * plane;
        if (a->bias) {
          const float bv = a->bias[i % a->p->M];
          for (int64_t j = 0; j < plane; ++j) yp[j] += bv;
        }
        if (a->epilogue->fn) a->epilogue->fn(a->epilogue->ctx, yp, i * plane, plane);
      }
    });
  }
}

}  // namespace kiln::rt
