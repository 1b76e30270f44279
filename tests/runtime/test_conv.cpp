#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "kiln/rt/conv.h"
#include "kiln/rt/conv_direct.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/winograd.h"
#include "test_util.h"

using namespace kiln::rt;
using kiln_test::max_rel_diff;
using kiln_test::random_floats;

namespace {

void conv_ref(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y) {
  const int64_t cg = p.C / p.group, mg = p.M / p.group;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m) {
      const int64_t g = m / mg;
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          double s = bias ? bias[m] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < p.KH; ++kh)
              for (int64_t kw = 0; kw < p.KW; ++kw) {
                const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
                s += double(x[((n * p.C + g * cg + c) * p.H + ih) * p.W + iw]) *
                     double(w[((m * cg + c) * p.KH + kh) * p.KW + kw]);
              }
          y[((n * p.M + m) * p.OH + oh) * p.OW + ow] = float(s);
        }
    }
}

// Seeded input, weights and bias for p, and the reference convolution r of them (with bias).
struct ConvCase {
  std::vector<float> x, w, b, r;
};

ConvCase conv_case(const Conv2dParams& p, uint32_t seed) {
  ConvCase c{random_floats(p.N * p.C * p.H * p.W, seed), random_floats(p.M * (p.C / p.group) * p.KH * p.KW, seed + 1),
             random_floats(p.M, seed + 2), std::vector<float>(p.N * p.M * p.OH * p.OW)};
  conv_ref(p, c.x.data(), c.w.data(), c.b.data(), c.r.data());
  return c;
}

// Builds the params with the output size ONNX gives for the pads.
// A convolution's multiply-adds, for kiln_test::skip_when_emulated.
double conv_macs(const Conv2dParams& p) {
  return double(p.N) * p.M * p.OH * p.OW * (p.C / p.group) * p.KH * p.KW;
}

Conv2dParams make(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t KH, int64_t KW, int64_t sh,
                  int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw, int64_t group) {
  Conv2dParams p{};
  p.N = N; p.C = C; p.H = H; p.W = W; p.M = M; p.KH = KH; p.KW = KW;
  p.stride_h = sh; p.stride_w = sw; p.pad_top = pt; p.pad_left = pl; p.dil_h = dh; p.dil_w = dw; p.group = group;
  p.OH = (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1;
  p.OW = (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  return p;
}

void check(const Conv2dParams& p, bool with_bias, ThreadPool* pool, uint32_t seed) {
  const auto x = random_floats(p.N * p.C * p.H * p.W, seed);
  const auto w = random_floats(p.M * (p.C / p.group) * p.KH * p.KW, seed + 1);
  const auto b = random_floats(p.M, seed + 2);
  std::vector<float> y(p.N * p.M * p.OH * p.OW, -7.f), r(y.size());
  std::vector<float> scratch(conv2d_scratch_floats(p));
  conv2d_f32(p, x.data(), w.data(), with_bias ? b.data() : nullptr, y.data(), scratch.empty() ? nullptr : scratch.data(),
             pool);
  conv_ref(p, x.data(), w.data(), with_bias ? b.data() : nullptr, r.data());
  INFO("N=" << p.N << " C=" << p.C << " H=" << p.H << " W=" << p.W << " M=" << p.M << " K=" << p.KH << "x" << p.KW
            << " stride=" << p.stride_h << "," << p.stride_w << " pads=" << p.pad_top << "," << p.pad_left
            << " dil=" << p.dil_h << "," << p.dil_w << " group=" << p.group << " bias=" << with_bias);
  CHECK(max_rel_diff(y, r) < 1e-4);
}

}  // namespace

TEST_CASE("conv2d_f32 matches a naive loop nest") {
  const Conv2dParams cases[] = {
      make(1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),      // same padding
      make(2, 3, 9, 7, 5, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 1),      // stride 2, no pad, odd sizes
      make(1, 4, 10, 11, 6, 3, 2, 2, 1, 2, 0, 1, 3, 1, 1, 2),    // groups, asymmetric pads
      make(1, 2, 12, 12, 3, 3, 3, 1, 2, 2, 1, 2, 1, 2, 3, 1),    // dilation
      make(2, 8, 6, 5, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),     // 1x1 fast path
      make(1, 8, 6, 5, 4, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1),      // 1x1 strided: im2col path
      make(1, 8, 6, 5, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2),      // 1x1 padded, grouped
      make(2, 6, 9, 9, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6),      // depthwise
      make(1, 5, 10, 9, 5, 3, 5, 2, 3, 0, 2, 2, 1, 2, 1, 5),     // depthwise, strided, dilated, asym pads
      make(1, 4, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4),      // depthwise with multiplier 2
      make(1, 3, 1, 20, 4, 1, 5, 1, 2, 0, 2, 0, 2, 1, 1, 1),     // 1-D as H = 1
      make(1, 2, 4, 4, 3, 5, 5, 1, 1, 3, 3, 3, 3, 1, 1, 1),      // kernel larger than input
      make(1, 16, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),  // large enough to thread the gemm
      make(1, 32, 60, 60, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),  // column matrix in chunks
      make(2, 40, 83, 83, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),   // chunks that end mid-row, stride 2
      make(1, 128, 72, 72, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),   // 1x1 in chunks, a short last one
      make(2, 6, 13, 17, 12, 5, 3, 2, 1, 2, 0, 1, 2, 1, 2, 3),   // grouped, strided, dilated, odd
      // few output positions: the transposed GEMM (3x3, stride 2, 1x1, grouped; 14x14 is plain)
      make(1, 32, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
      make(1, 16, 14, 14, 48, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
      make(2, 40, 7, 7, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),
      make(2, 8, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),
      make(1, 24, 14, 14, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),
      // the column matrix written in the GEMM's packed layout: more than one K block (512 rows),
      // plain (8-wide output rows: panels of 16 span rows) and transposed (6-row panels), a
      // stem (7x7 stride 2, whole 16-wide panels from one input row), stride 3, more taps
      // than the cached 64, chunks of 160 positions with 576 rows, a 1x1 stride 2
      make(1, 64, 15, 15, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
      make(1, 80, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
      make(1, 3, 64, 61, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1),
      make(1, 3, 40, 41, 10, 7, 7, 3, 3, 3, 2, 3, 4, 1, 1, 1),
      make(1, 2, 3, 80, 3, 1, 70, 1, 1, 0, 3, 0, 3, 1, 1, 1),
      make(1, 64, 40, 40, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
      make(2, 24, 29, 29, 40, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1),
      // depthwise 3x3 (the row kernel): strides 1 and 2, pads 0..2, odd sizes, tiny planes
      make(2, 3, 11, 13, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3),
      make(1, 4, 12, 15, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4),
      make(1, 4, 13, 14, 4, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 4),
      make(1, 2, 9, 10, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2),
      make(1, 2, 9, 10, 2, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 2),
      make(1, 2, 2, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),
      make(1, 3, 1, 1, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3),
      make(1, 2, 8, 2100, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),   // too large to pad: the row kernel
      make(1, 2, 40, 1701, 2, 3, 3, 2, 2, 1, 0, 1, 1, 1, 1, 2),  // the row kernel at stride 2
      make(1, 2, 2, 4200, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),   // row too long for the row kernel
      // column-matrix panels filled from the padded, phase-split copy: panels of 16 (plain) or 6
      // (transposed) positions spanning 1, 2 or 3 output rows (OW 28, 14, 7, 5, 3), the last
      // panel partial, windows reaching into every pad, strides 1-4, dilation, groups, more than
      // one K block; stride 5 gathers from x
      make(1, 16, 56, 56, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
      make(1, 24, 28, 28, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
      make(1, 64, 14, 14, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
      make(1, 3, 40, 38, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1),
      make(2, 8, 11, 9, 12, 3, 3, 2, 2, 0, 1, 2, 0, 1, 1, 1),
      make(1, 6, 9, 10, 8, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 2),
      make(1, 4, 20, 23, 9, 3, 5, 3, 4, 1, 2, 1, 3, 2, 1, 1),
      make(1, 4, 3, 7, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, 2, 1),
      make(1, 70, 16, 16, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
      make(1, 4, 26, 26, 6, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1),
  };
  ThreadPool pool(3);
  ThreadPool pool2(2);
  uint32_t seed = 100;
  for (const auto& p : cases) {
    REQUIRE(p.OH > 0);
    REQUIRE(p.OW > 0);
    check(p, true, nullptr, seed);
    check(p, false, nullptr, seed);
    check(p, true, &pool, seed);
    check(p, true, &pool2, seed);
    seed += 3;
  }
}

TEST_CASE("conv2d_f32_epilogue sees every output once, at its offset, after the bias") {
  // The epilogue maps y to 2 * y + offset / 1000: any block given twice, skipped, or given
  // the wrong offset shows up against the reference.
  const Epilogue ep{[](const void*, float* y, int64_t offset, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) y[i] = 2.f * y[i] + float(offset + i) / 1000.f;
                    },
                    nullptr};
  const Conv2dParams cases[] = {
      make(2, 6, 9, 11, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6),    // depthwise 3x3 row kernel
      make(1, 4, 9, 9, 4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 4),     // depthwise, general
      make(2, 40, 83, 83, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),  // GEMM in chunks
      make(1, 128, 72, 72, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),  // 1x1 in chunks
      make(2, 8, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),     // transposed GEMM, grouped
  };
  ThreadPool pool(2);
  uint32_t seed = 300;
  for (const auto& p : cases) {
    ConvCase c = conv_case(p, seed);
    const auto &x = c.x, &w = c.w, &b = c.b;
    auto& r = c.r;
    for (size_t i = 0; i < r.size(); ++i) r[i] = 2.f * r[i] + float(i) / 1000.f;
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(r.size(), -7.f), scratch(conv2d_scratch_floats(p));
      conv2d_f32_epilogue(p, x.data(), w.data(), b.data(), y.data(), scratch.empty() ? nullptr : scratch.data(), ep,
                          tp);
      INFO("C=" << p.C << " H=" << p.H << " K=" << p.KH << " group=" << p.group << " threads=" << (tp ? 2 : 1));
      CHECK(max_rel_diff(y, r) < 1e-4);
    }
    seed += 3;
  }
}

TEST_CASE("conv2d_f32_prepacked with weights packed at compile time matches the reference") {
  const Conv2dParams cases[] = {
      make(1, 32, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),    // transposed GEMM
      make(2, 40, 7, 7, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),    // transposed, 1x1
      make(2, 8, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),     // transposed, grouped
      make(1, 4, 10, 11, 6, 3, 2, 2, 1, 2, 0, 1, 3, 1, 1, 2),    // plain GEMM, grouped
      make(2, 40, 83, 83, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),  // plain GEMM in chunks
      make(1, 64, 15, 15, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),  // plain, two K blocks
      make(1, 80, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),    // transposed, two K blocks
      make(1, 3, 64, 61, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1),   // a stem
      make(1, 576, 14, 14, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1), // 1x1 split by positions, two K blocks
      make(2, 48, 15, 14, 100, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1), // by positions, edge tiles both ways
  };
  ThreadPool pool(2);
  uint32_t seed = 500;
  for (const auto& p : cases) {
    ConvCase c = conv_case(p, seed);
    const auto &x = c.x, &w = c.w, &b = c.b;
    auto& r = c.r;
    std::vector<float> packed(conv2d_packed_weight_floats(p));
    REQUIRE(!packed.empty());
    conv2d_pack_weights(p, w.data(), packed.data());
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(r.size(), -7.f), scratch(conv2d_scratch_floats(p));
      conv2d_f32_prepacked(p, x.data(), packed.data(), true, b.data(), y.data(),
                           scratch.empty() ? nullptr : scratch.data(), Epilogue{}, tp);
      INFO("C=" << p.C << " H=" << p.H << " M=" << p.M << " K=" << p.KH << " group=" << p.group);
      CHECK(max_rel_diff(y, r) < 1e-4);
    }
    seed += 3;
  }
}

TEST_CASE("conv2d scratch is zero for the 1x1 and depthwise paths") {
  CHECK(conv2d_scratch_floats(make(1, 8, 8, 8, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)) == 0);
  // 49 positions run transposed (as 54 rows, not 64 columns): scratch holds Y^T.
  CHECK(conv2d_scratch_floats(make(1, 200, 7, 7, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)) == 49 * 16);
  CHECK(conv2d_scratch_floats(make(1, 8, 7, 7, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)) == 49 * 16);
  CHECK(conv2d_scratch_floats(make(1, 8, 14, 14, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)) == 0);
  CHECK(conv2d_scratch_floats(make(1, 6, 9, 9, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6)) == 0);
  // The column matrix, in 16-wide panels, and 16 floats to align it to 64 bytes.
  CHECK(conv2d_scratch_floats(make(1, 4, 8, 8, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2)) == 2 * 9 * 64 + 16);
  CHECK(conv2d_scratch_floats(make(1, 4, 7, 7, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2)) == 2 * 9 * 64 + 16);
}

namespace {

// Largest |y - r| relative to the output's scale (max |r|): Winograd's error grows with the
// magnitude of the values in a tile, not of each output.
double max_err_over_scale(const std::vector<float>& y, const std::vector<float>& r) {
  double scale = 0, err = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    scale = std::max(scale, std::fabs(double(r[i])));
    const double d = std::fabs(double(y[i]) - double(r[i]));
    if (!(d <= err)) err = d;  // NaN counts as a difference
  }
  return err / std::max(scale, 1e-30);
}

}  // namespace

TEST_CASE("winograd_conv2d_f32 F(4,3) and F(2,3) match the reference") {
  // The epilogue maps y to 2 * y + offset / 1000 (as above): each output once, at its offset.
  const Epilogue ep{[](const void*, float* y, int64_t offset, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) y[i] = 2.f * y[i] + float(offset + i) / 1000.f;
                    },
                    nullptr};
  const Conv2dParams cases[] = {
      make(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),   // ResNet-50 layer1, chunks
      make(2, 19, 13, 11, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),   // odd sizes, C and M not multiples of 16
      make(3, 17, 9, 15, 5, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1),     // no padding, batch 3
      make(1, 8, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),      // one partial tile row
      make(2, 24, 30, 140, 33, 3, 3, 1, 1, 2, 1, 0, 2, 1, 1, 1),  // rows longer than a segment, asymmetric pads
      make(1, 3, 2, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),       // smaller than a tile
      make(4, 160, 7, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),    // chunks spanning images
      make(1, 520, 6, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),    // two K blocks of the packed V
  };
  ThreadPool pool(2);
  ThreadPool pool3(3);  // uneven shares of the tiles (the 30 x 140 case: 6 chunks)
  uint32_t seed = 700;
  for (const auto& p : cases) {
    if (kiln_test::skip_when_emulated(conv_macs(p))) continue;
    REQUIRE(winograd_applicable(p));
    ConvCase c = conv_case(p, seed);
    const auto &x = c.x, &w = c.w, &b = c.b;
    auto& r = c.r;
    std::vector<float> re(r);
    for (size_t i = 0; i < re.size(); ++i) re[i] = 2.f * re[i] + float(i) / 1000.f;
    // Residual z, then Relu: fn does it, and the promise says so.
    const std::vector<float> z = random_floats(r.size(), seed + 9);
    std::vector<float> rr(r.size());
    for (size_t i = 0; i < rr.size(); ++i) rr[i] = r[i] + z[i] > 0.f ? r[i] + z[i] : 0.f;
    Epilogue ep_relu{[](const void* c, float* y, int64_t offset, int64_t n) {
                       const float* zr = static_cast<const float*>(c) + offset;
                       for (int64_t i = 0; i < n; ++i) y[i] = y[i] + zr[i] > 0.f ? y[i] + zr[i] : 0.f;
                     },
                     z.data()};
    ep_relu.residual = z.data();
    ep_relu.fn_is_relu = true;
    for (int tile : {4, 2}) {
      std::vector<float> packed(winograd_packed_weight_floats(p, tile));
      winograd_pack_weights(p, tile, w.data(), packed.data());
      for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool, &pool3}) {
        std::vector<float> y(r.size(), -7.f), scratch(winograd_scratch_floats(p, tile));
        winograd_conv2d_f32(p, tile, x.data(), packed.data(), b.data(), y.data(), scratch.data(), Epilogue{}, tp);
        INFO("N=" << p.N << " C=" << p.C << " H=" << p.H << " W=" << p.W << " M=" << p.M << " pads=" << p.pad_top
                  << "," << p.pad_left << " tile=" << tile << " threads=" << (tp ? tp->size() : 1));
        const double err = max_err_over_scale(y, r);
        CHECK(err < (tile == 4 ? 2e-5 : 5e-6));
        std::fill(y.begin(), y.end(), -7.f);
        winograd_conv2d_f32(p, tile, x.data(), packed.data(), b.data(), y.data(), scratch.data(), ep, tp);
        CHECK(max_err_over_scale(y, re) < (tile == 4 ? 2e-5 : 5e-6));
        // An epilogue given as a residual and a Relu (applied as the rows are copied out).
        std::fill(y.begin(), y.end(), -7.f);
        winograd_conv2d_f32(p, tile, x.data(), packed.data(), b.data(), y.data(), scratch.data(), ep_relu, tp);
        CHECK(max_err_over_scale(y, rr) < (tile == 4 ? 2e-5 : 5e-6));
      }
    }
    seed += 3;
  }
}

TEST_CASE("balanced convolutions give the same bits whichever thread takes which chunk") {
  // The GEMM path's chunks and Winograd's are shared with parallel_for_balanced_slots, so what
  // each thread runs depends on timing; every column but the last few sits in a full register
  // tile of the GEMM wherever the pieces fall, so 2 and 3 threads (other shares, other pieces)
  // and a run with a rival thread competing for the cores all give the same bits.
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 900;
  const Conv2dParams gemm_cases[] = {
      make(1, 64, 56, 56, 256, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),  // ResNet-50's 1x1, chunks
      make(2, 40, 83, 83, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),    // im2col chunks
  };
  const Conv2dParams winograd_cases[] = {
      make(2, 24, 30, 140, 33, 3, 3, 1, 1, 2, 1, 0, 2, 1, 1, 1),  // 6 chunks of whole tile rows
      make(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),   // ResNet-50 layer1: 4 chunks, too few for 3
  };
  auto runs_alike = [](const std::function<std::vector<float>(ThreadPool*)>& run, ThreadPool& p2, ThreadPool* p3) {
    const std::vector<float> first = run(&p2);
    if (p3) CHECK(run(p3) == first);
    std::atomic<bool> stop{false};
    std::thread rival([&] {
      while (!stop.load()) {
      }
    });
    for (int i = 0; i < 3; ++i) CHECK(run(&p2) == first);
    stop.store(true);
    rival.join();
  };
  for (const auto& p : gemm_cases) {
    if (kiln_test::skip_when_emulated(conv_macs(p))) continue;
    ConvCase c = conv_case(p, seed++);
    std::vector<float> packed(conv2d_packed_weight_floats(p));
    conv2d_pack_weights(p, c.w.data(), packed.data());
    INFO("GEMM path C=" << p.C << " H=" << p.H << " M=" << p.M);
    runs_alike(
        [&](ThreadPool* tp) {
          std::vector<float> y(c.r.size(), -7.f), scratch(conv2d_scratch_floats(p));
          conv2d_f32_prepacked(p, c.x.data(), packed.data(), true, c.b.data(), y.data(),
                               scratch.empty() ? nullptr : scratch.data(), Epilogue{}, tp);
          CHECK(max_rel_diff(y, c.r) < 1e-4);
          return y;
        },
        pool2, &pool3);
  }
  for (const auto& p : winograd_cases) {
    if (kiln_test::skip_when_emulated(conv_macs(p))) continue;
    ConvCase c = conv_case(p, seed++);
    std::vector<float> packed(winograd_packed_weight_floats(p, 4));
    winograd_pack_weights(p, 4, c.w.data(), packed.data());
    INFO("Winograd C=" << p.C << " H=" << p.H << " M=" << p.M);
    runs_alike(
        [&](ThreadPool* tp) {
          std::vector<float> y(c.r.size(), -7.f), scratch(winograd_scratch_floats(p, 4));
          winograd_conv2d_f32(p, 4, c.x.data(), packed.data(), c.b.data(), y.data(), scratch.data(), Epilogue{}, tp);
          CHECK(max_err_over_scale(y, c.r) < 2e-5);
          return y;
        },
        pool2, p.H == 30 ? &pool3 : nullptr);
  }
}

TEST_CASE("winograd_choose_tile takes the shapes that pay") {
  CHECK(winograd_choose_tile(make(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)) == 4);
  CHECK(winograd_choose_tile(make(1, 3, 224, 224, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)) == 0);  // 3 channels
  CHECK(winograd_choose_tile(make(1, 64, 56, 56, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1)) == 0);   // stride 2
  CHECK(winograd_choose_tile(make(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2)) == 0);   // grouped
}

TEST_CASE("depthwise 3x3 on 8 channels at once (channel-interleaved bands) matches the reference") {
  // Through conv2d_f32 (groups of 8 channels, the rest plane by plane) and with an epilogue
  // that sees offsets; strides 1 and 2, pads 0..2, odd and tiny planes, planes split into
  // several bands, channel counts that are not multiples of 8.
  const Conv2dParams cases[] = {
      make(1, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16),     // MobileNet's 7 x 7
      make(2, 8, 14, 14, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8),      // stride 2, even size
      make(1, 11, 13, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 11),    // 8 + 3 single planes
      make(1, 8, 15, 11, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8),      // stride 2, odd size
      make(1, 8, 9, 10, 8, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 8),       // no padding
      make(1, 8, 9, 10, 8, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 8),       // pads of 2
      make(1, 8, 10, 9, 8, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 8),       // asymmetric pads
      make(1, 8, 1, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8),        // one pixel
      make(1, 8, 2, 3, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8),        // tiny, stride 2
      make(1, 8, 61, 67, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8),      // several bands
      make(1, 16, 113, 111, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16),  // several bands, stride 2
      make(1, 8, 3, 700, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8),      // wide: one row a band
      // Large planes (56 x 56 or more) are split across the threads by rows: two images, the
      // 3 single planes after them, and 3 threads' uneven parts of the rows.
      make(2, 11, 58, 57, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 11),
      make(1, 8, 115, 113, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8),
  };
  const Epilogue ep{[](const void*, float* y, int64_t offset, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) y[i] = 2.f * y[i] + float(offset + i) / 1000.f;
                    },
                    nullptr};
  ThreadPool pool(2), pool3(3);
  uint32_t seed = 700;
  for (const auto& p : cases) {
    REQUIRE(p.OH > 0);
    REQUIRE(p.OW > 0);
    check(p, true, nullptr, seed);
    check(p, false, &pool, seed);
    check(p, true, &pool3, seed);
    ConvCase c = conv_case(p, seed);
    const auto &x = c.x, &w = c.w, &b = c.b;
    auto& r = c.r;
    std::vector<float> y(r.size(), -7.f);
    for (size_t i = 0; i < r.size(); ++i) r[i] = 2.f * r[i] + float(i) / 1000.f;
    conv2d_f32_epilogue(p, x.data(), w.data(), b.data(), y.data(), nullptr, ep, &pool);
    INFO("C=" << p.C << " H=" << p.H << " W=" << p.W << " stride=" << p.stride_h << " pads=" << p.pad_top << ","
              << p.pad_left);
    CHECK(max_rel_diff(y, r) < 1e-4);
    seed += 3;
  }
}

TEST_CASE("an epilogue given as clamp bounds (fn_is_clamp) is applied once, by whichever path") {
  // fn clamps to [-0.5, 0.7]; kernels that know fn_is_clamp apply the bounds themselves.
  const Epilogue ep{[](const void*, float* y, int64_t, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < -0.5f ? -0.5f : (y[i] > 0.7f ? 0.7f : y[i]);
                    },
                    nullptr, true, -0.5f, 0.7f};
  const Conv2dParams cases[] = {
      make(1, 16, 13, 11, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),    // 1x1, edge tiles both ways
      make(2, 40, 23, 23, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),     // im2col GEMM
      make(1, 600, 9, 9, 13, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),     // K over one block (512)
      make(1, 128, 72, 72, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),    // 1x1 in chunks
      make(2, 8, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),       // transposed GEMM
      make(1, 19, 14, 14, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19),   // depthwise, 8 at once + planes
      make(1, 4, 9, 9, 4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 4),        // depthwise, general
      make(2, 3, 17, 30, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),     // direct 3x3, few channels
  };
  ThreadPool pool(2);
  uint32_t seed = 900;
  for (const auto& p : cases) {
    ConvCase c = conv_case(p, seed);
    const auto &x = c.x, &w = c.w, &b = c.b;
    auto& r = c.r;
    ep.fn(nullptr, r.data(), 0, static_cast<int64_t>(r.size()));
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(r.size(), -7.f), scratch(conv2d_scratch_floats(p));
      conv2d_f32_epilogue(p, x.data(), w.data(), b.data(), y.data(), scratch.empty() ? nullptr : scratch.data(), ep,
                          tp);
      INFO("C=" << p.C << " H=" << p.H << " M=" << p.M << " K=" << p.KH << " group=" << p.group);
      CHECK(max_rel_diff(y, r) < 1e-4);
    }
    seed += 3;
  }
}

TEST_CASE("the transposed GEMM's store (8 x 8 blocks in registers) matches the reference, a NaN kept by the clamp") {
  // 1x1 on 7 x 7 runs transposed (scratch = Y^T): 49 positions are 6 blocks of 8 and one
  // left over; M = 63 is three blocks of 16 channels and one of 15 (8 in registers, 7 plain).
  const Conv2dParams cases[] = {
      make(1, 24, 7, 7, 63, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),
      make(2, 40, 7, 7, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),  // two images
  };
  ThreadPool pool(2);
  uint32_t seed = 1300;
  for (const bool with_clamp : {false, true}) {
    const Epilogue ep = with_clamp ? Epilogue{[](const void*, float* y, int64_t, int64_t n) {
                                                for (int64_t i = 0; i < n; ++i) y[i] = clamp_to(y[i], -0.5f, 0.7f);
                                              },
                                              nullptr, true, -0.5f, 0.7f}
                                   : Epilogue{};
    for (const auto& p : cases) {
      REQUIRE(conv2d_scratch_floats(p) == static_cast<size_t>(p.OH * p.OW * p.M));  // Y^T: runs transposed
      ConvCase c = conv_case(p, seed);
      c.x[3] = std::nanf("");  // position 3 of image 0: NaN in every channel
      conv_ref(p, c.x.data(), c.w.data(), c.b.data(), c.r.data());
      if (ep.fn) ep.fn(nullptr, c.r.data(), 0, static_cast<int64_t>(c.r.size()));
      for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<float> y(c.r.size(), -7.f), scratch(conv2d_scratch_floats(p));
        conv2d_f32_epilogue(p, c.x.data(), c.w.data(), c.b.data(), y.data(), scratch.data(), ep, tp);
        INFO("N=" << p.N << " C=" << p.C << " M=" << p.M << " clamp=" << with_clamp << " pool=" << (tp != nullptr));
        size_t nan_mismatch = 0;
        std::vector<float> r = c.r;
        for (size_t i = 0; i < y.size(); ++i) {
          if (std::isnan(r[i]) != std::isnan(y[i])) ++nan_mismatch;
          if (std::isnan(r[i])) y[i] = r[i] = 0.f;
        }
        CHECK(nan_mismatch == 0);
        CHECK(max_rel_diff(y, r) < 1e-4);
      }
      seed += 3;
    }
  }
}

TEST_CASE("an epilogue given as a residual (Epilogue::residual), with or without a clamp, is applied once") {
  const Conv2dParams cases[] = {
      make(1, 16, 13, 11, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),  // 1x1, edge tiles both ways
      make(2, 40, 23, 23, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),   // im2col GEMM, two images
      make(1, 600, 9, 9, 13, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),   // K over one block (512)
      make(1, 128, 72, 72, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),  // 1x1 in chunks
      make(2, 8, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),     // transposed GEMM
      make(1, 19, 14, 14, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19), // depthwise
  };
  ThreadPool pool(2);
  uint32_t seed = 1100;
  for (const bool with_clamp : {false, true}) {
    for (const auto& p : cases) {
      const auto x = random_floats(p.N * p.C * p.H * p.W, seed);
      const auto w = random_floats(p.M * (p.C / p.group) * p.KH * p.KW, seed + 1);
      const auto b = random_floats(p.M, seed + 2);
      const auto z = random_floats(p.N * p.M * p.OH * p.OW, seed + 3);
      struct Ctx {
        const float* z;
        bool clamp;
      } ctx{z.data(), with_clamp};
      const Epilogue ep{[](const void* c, float* y, int64_t offset, int64_t n) {
                          const Ctx& q = *static_cast<const Ctx*>(c);
                          for (int64_t i = 0; i < n; ++i) {
                            const float v = y[i] + q.z[offset + i];
                            y[i] = !q.clamp ? v : (v < -0.5f ? -0.5f : (v > 0.7f ? 0.7f : v));
                          }
                        },
                        &ctx, with_clamp, with_clamp ? -0.5f : 0.f, with_clamp ? 0.7f : 0.f, z.data()};
      std::vector<float> r(p.N * p.M * p.OH * p.OW);
      conv_ref(p, x.data(), w.data(), b.data(), r.data());
      ep.fn(&ctx, r.data(), 0, static_cast<int64_t>(r.size()));
      for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<float> y(r.size(), -7.f), scratch(conv2d_scratch_floats(p));
        conv2d_f32_epilogue(p, x.data(), w.data(), b.data(), y.data(), scratch.empty() ? nullptr : scratch.data(),
                            ep, tp);
        INFO("C=" << p.C << " H=" << p.H << " M=" << p.M << " K=" << p.KH << " group=" << p.group
                  << " clamp=" << with_clamp);
        CHECK(max_rel_diff(y, r) < 1e-4);
      }
      seed += 4;
    }
  }
}

TEST_CASE("conv3x3_direct (3x3, at most 4 input channels) matches the reference, every column stored once") {
  const Conv2dParams cases[] = {
      make(1, 3, 224, 224, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),  // MobileNetV2's stem
      make(2, 3, 17, 30, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),    // 15 columns, 10 channels (4 + 4 + 1 + 1)
      make(1, 1, 9, 50, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),      // stride 1, 50 columns (24 + 24 + 2)
      make(1, 4, 11, 8, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1),      // no padding, 6 columns
      make(1, 2, 10, 41, 7, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1),     // pads of 2 at stride 2
      make(1, 2, 12, 13, 3, 3, 3, 1, 1, 2, 0, 1, 2, 1, 1, 1),     // asymmetric pads
      make(3, 3, 5, 49, 9, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 1),      // several images, 25 columns
      make(1, 3, 1, 1, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),       // one pixel
  };
  // A plain epilogue (not a clamp) counts its calls per output, so a column stored twice or
  // never shows; the clamp's bounds are applied in registers instead of fn.
  struct Seen {
    std::vector<int>* hits;
  };
  ThreadPool pool(2);
  uint32_t seed = 1200;
  for (const auto& p : cases) {
    REQUIRE(conv3x3_direct_applicable(p));
    CHECK(conv2d_packed_weight_floats(p) == 0);
    CHECK(conv2d_scratch_floats(p) == 0);
    const ConvCase c = conv_case(p, seed);
    INFO("N=" << p.N << " C=" << p.C << " H=" << p.H << " W=" << p.W << " M=" << p.M << " stride=" << p.stride_h
              << " pads=" << p.pad_top << "," << p.pad_left);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<int> hits(c.r.size(), 0);
      Seen seen{&hits};
      const Epilogue count{[](const void* ctx, float*, int64_t offset, int64_t n) {
                             auto& h = *static_cast<const Seen*>(ctx)->hits;
                             for (int64_t i = 0; i < n; ++i) ++h[offset + i];
                           },
                           &seen};
      std::vector<float> y(c.r.size(), -7.f);
      conv3x3_direct(p, c.x.data(), c.w.data(), c.b.data(), y.data(), count, tp);
      CHECK(max_rel_diff(y, c.r) < 1e-5);
      CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));

      const Epilogue clamp{[](const void*, float* v, int64_t, int64_t n) {
                             for (int64_t i = 0; i < n; ++i) v[i] = v[i] < -0.5f ? -0.5f : (v[i] > 0.7f ? 0.7f : v[i]);
                           },
                           nullptr, true, -0.5f, 0.7f};
      std::vector<float> r = c.r, z(c.r.size(), -7.f);
      clamp.fn(nullptr, r.data(), 0, static_cast<int64_t>(r.size()));
      conv2d_f32_prepacked(p, c.x.data(), c.w.data(), false, c.b.data(), z.data(), nullptr, clamp, tp);
      CHECK(max_rel_diff(z, r) < 1e-5);
    }
    seed += 3;
  }
  CHECK_FALSE(conv3x3_direct_applicable(make(1, 5, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)));   // 5 channels
  CHECK_FALSE(conv3x3_direct_applicable(make(1, 3, 8, 8, 4, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1)));   // 5x5
  CHECK_FALSE(conv3x3_direct_applicable(make(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2)));   // grouped
  CHECK_FALSE(conv3x3_direct_applicable(make(1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 1)));   // dilated
  CHECK_FALSE(conv3x3_direct_applicable(make(1, 3, 8, 8, 4, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1)));   // stride 3
}

TEST_CASE("conv1x1_direct (at most 192 input channels, 96+ positions, few channels or positions) matches the reference with every epilogue") {
  const Conv2dParams cases[] = {
      make(1, 32, 112, 112, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),  // MobileNetV2's 32 -> 16
      make(1, 16, 13, 11, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),    // 143 positions: a padded last block
      make(2, 160, 10, 10, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),   // blocks of 24 x 4, 4; 2 images
      make(1, 192, 14, 14, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),    // the largest K
      make(3, 1, 1, 101, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),      // one channel, blocks 24 x 4 and 5
      make(1, 7, 4, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),       // one output channel, 4 whole blocks
  };
  // fn: x + z (the residual z), then a clamp to [-0.5, 0.7] (act 1) or a Relu (act 2); given to
  // the kernel as Epilogue::residual, bounds and fn_is_relu, or as a plain fn counting each
  // output's calls.
  struct Ctx {
    const float* z;
    int act;
    std::vector<int>* hits;
  };
  auto fn = [](const void* c, float* y, int64_t offset, int64_t n) {
    const Ctx& q = *static_cast<const Ctx*>(c);
    for (int64_t i = 0; i < n; ++i) {
      const float v = y[i] + (q.z ? q.z[offset + i] : 0.f);
      y[i] = q.act == 1 ? (v < -0.5f ? -0.5f : (v > 0.7f ? 0.7f : v)) : q.act == 2 ? (v > 0.f ? v : 0.f) : v;
      if (q.hits) ++(*q.hits)[offset + i];
    }
  };
  ThreadPool pool(2), pool3(3);
  uint32_t seed = 1500;
  for (const auto& p : cases) {
    REQUIRE(conv1x1_direct_applicable(p));
    CHECK(conv2d_packed_weight_floats(p) == 0);
    CHECK(conv2d_scratch_floats(p) == 0);
    const ConvCase c = conv_case(p, seed);
    const auto z = random_floats(c.r.size(), seed + 7);
    INFO("N=" << p.N << " C=" << p.C << " H=" << p.H << " W=" << p.W << " M=" << p.M);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool, &pool3}) {
      for (const bool residual : {false, true})
        for (const int act : {0, 1, 2}) {
          const bool clamp = act == 1;
          std::vector<float> r = c.r;
          Ctx plain{residual ? z.data() : nullptr, act, nullptr};
          fn(&plain, r.data(), 0, static_cast<int64_t>(r.size()));
          // As the emitter states it: bounds and residual the kernel applies itself.
          Ctx promised{residual ? z.data() : nullptr, act, nullptr};
          const Epilogue in_regs{fn, &promised, clamp, clamp ? -0.5f : 0.f, clamp ? 0.7f : 0.f,
                                 residual ? z.data() : nullptr, act == 2};
          std::vector<float> y(c.r.size(), -7.f);
          conv2d_f32_prepacked(p, c.x.data(), c.w.data(), false, c.b.data(), y.data(), nullptr, in_regs, tp);
          INFO("residual=" << residual << " act=" << act);
          CHECK(max_rel_diff(y, r) < 1e-5);
          // As an opaque fn: called once on every output.
          std::vector<int> hits(c.r.size(), 0);
          Ctx counted{residual ? z.data() : nullptr, act, &hits};
          std::vector<float> y2(c.r.size(), -7.f);
          conv1x1_direct(p, c.x.data(), c.w.data(), c.b.data(), y2.data(), Epilogue{fn, &counted}, tp);
          CHECK(max_rel_diff(y2, r) < 1e-5);
          CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
        }
    }
    seed += 3;
  }
  CHECK_FALSE(conv1x1_direct_applicable(make(1, 193, 8, 8, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)));  // K > 192
  CHECK_FALSE(conv1x1_direct_applicable(make(1, 8, 8, 8, 4, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1)));    // strided
  CHECK_FALSE(conv1x1_direct_applicable(make(1, 8, 8, 8, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)));    // padded
  CHECK_FALSE(conv1x1_direct_applicable(make(1, 8, 8, 8, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2)));    // grouped
  CHECK_FALSE(conv1x1_direct_applicable(make(1, 8, 7, 7, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)));    // 49 positions
  CHECK_FALSE(conv1x1_direct_applicable(make(1, 64, 56, 56, 256, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)));  // GEMM's
  CHECK(conv1x1_direct_applicable(make(1, 64, 56, 56, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)));         // few outputs
  CHECK(conv1x1_direct_applicable(make(1, 24, 56, 56, 144, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)));        // few inputs
  CHECK(conv1x1_direct_applicable(make(1, 96, 14, 14, 576, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1)));        // 196 positions
}
