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

// One output plane of a depthwise convolution (channel c of image n). Row by row: each output
// row stays in L1 while every tap adds into it (vectorized along the row), instead of one pass
// over the whole plane per tap.
void depthwise_plane(const Conv2dParams& p, const float* x, const float* w, float b, float* y) {
  constexpr int64_t kMaxTaps = 64;  // KW up to this keeps the column ranges on the stack
  int64_t lo_buf[kMaxTaps], hi_buf[kMaxTaps];
  const bool stack = p.KW <= kMaxTaps;
  for (int64_t kw = 0; stack && kw < p.KW; ++kw)
    valid_range(p.OW, p.W, p.stride_w, kw * p.dil_w - p.pad_left, lo_buf[kw], hi_buf[kw]);
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    float* yr = y + oh * p.OW;
    for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow] = b;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) continue;
      const float* xr = x + ih * p.W;
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t off_w = kw * p.dil_w - p.pad_left;
        int64_t w_lo, w_hi;
        if (stack) {
          w_lo = lo_buf[kw];
          w_hi = hi_buf[kw];
        } else {
          valid_range(p.OW, p.W, p.stride_w, off_w, w_lo, w_hi);
        }
        if (w_lo >= w_hi) continue;
        const float wv = w[kh * p.KW + kw];
        if (p.stride_w == 1) {
          const float* xs = xr + (w_lo + off_w);  // in bounds: w_lo + off_w >= 0
          float* ys = yr + w_lo;
          const int64_t n = w_hi - w_lo;
          for (int64_t i = 0; i < n; ++i) ys[i] += wv * xs[i];
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

size_t conv2d_packed_weight_floats(const Conv2dParams& p) noexcept {
  if (p.group <= 0 || is_depthwise(p)) return 0;
  return static_cast<size_t>(p.group) * gemm_f32_packed_a_floats(p.M / p.group, p.C / p.group * p.KH * p.KW);
}

void conv2d_pack_weights(const Conv2dParams& p, const float* w, float* packed) noexcept {
  if (p.group <= 0 || is_depthwise(p)) return;
  const int64_t mg = p.M / p.group, kg = p.C / p.group * p.KH * p.KW;
  const size_t per_group = gemm_f32_packed_a_floats(mg, kg);
  for (int64_t g = 0; g < p.group; ++g) gemm_f32_pack_a(false, mg, kg, w + g * mg * kg, kg, packed + g * per_group);
}

void conv2d_f32_epilogue(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                         float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept {
  conv2d_f32_prepacked(p, x, w, false, bias, y, scratch, epilogue, pool);
}

void conv2d_f32_prepacked(const Conv2dParams& p, const float* x, const float* w, bool w_packed, const float* bias,
                          float* y, float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept {
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
      // Bias and epilogue are applied per register tile inside the GEMM, while it is in cache.
      const int64_t y0 = (n * p.M + g * mg) * ohw;
      const GemmOperand wa{w_packed ? w + g * static_cast<int64_t>(gemm_f32_packed_a_floats(mg, kg)) : w + g * mg * kg,
                           kg, false, w_packed};
      gemm_f32_ex(mg, ohw, kg, 1.f, wa, GemmOperand{b, ohw, false, false}, 0.f, y + y0, ohw,
                  bias ? bias + g * mg : nullptr, epilogue, y0, pool);
    }
  }
}

}  // namespace kiln::rt
