#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/rt/depthwise.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;
using kiln_test::max_rel_diff;
using kiln_test::random_floats;

namespace {

float activate_ref(double v, const StoreActivation& a) {
  if (a.kind == StoreActivation::kRelu) return v > 0 ? float(v) : 0.f;
  if (a.kind == StoreActivation::kClamp) return float(v < a.lo ? a.lo : (v > a.hi ? a.hi : v));
  return float(v);
}

// A 1x1 convolution (w M x C) of N images of C x hw: plain loops.
std::vector<float> pointwise_ref(int64_t N, int64_t C, int64_t hw, int64_t M, const std::vector<float>& x,
                                 const std::vector<float>& w, const float* b, const StoreActivation& a) {
  std::vector<float> y(size_t(N * M * hw));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < hw; ++i) {
        double s = b ? b[m] : 0.0;
        for (int64_t c = 0; c < C; ++c) s += double(w[m * C + c]) * x[(n * C + c) * hw + i];
        y[(n * M + m) * hw + i] = activate_ref(s, a);
      }
  return y;
}

// A depthwise 3x3 (pads `pad` at the top and left) of N images of C x H x W into OH x OW
// planes: plain loops.
std::vector<float> depthwise_ref(int64_t N, int64_t C, int64_t H, int64_t W, int64_t stride, int64_t OH, int64_t OW,
                                 const std::vector<float>& x, const std::vector<float>& w, const float* b,
                                 const StoreActivation& a, int64_t pad = 1) {
  std::vector<float> y(size_t(N * C * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b ? b[c] : 0.0;
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                s += double(w[c * 9 + kh * 3 + kw]) * x[((n * C + c) * H + ih) * W + iw];
            }
          y[((n * C + c) * OH + oh) * OW + ow] = activate_ref(s, a);
        }
  return y;
}

// The expand 1x1 into a whole tensor, then the depthwise 3x3 (pads 1) on it.
std::vector<float> expand_depthwise_ref(const ExpandDepthwiseParams& p, const std::vector<float>& x,
                                        const std::vector<float>& w1, const float* b1, const StoreActivation& a1,
                                        const std::vector<float>& w2, const float* b2, const StoreActivation& a2) {
  const std::vector<float> e = pointwise_ref(p.N, p.C, p.H * p.W, p.M, x, w1, b1, a1);
  return depthwise_ref(p.N, p.M, p.H, p.W, p.stride, p.OH, p.OW, e, w2, b2, a2);
}

// N x C x hw planes to NCHW16c ([N, C / 16, hw, 16]) or back.
std::vector<float> reorder16(const std::vector<float>& v, int64_t N, int64_t C, int64_t hw, bool to_blocked) {
  std::vector<float> r(v.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t q = 0; q < hw; ++q) {
        const size_t plain = size_t((n * C + c) * hw + q), blocked = size_t((n * C + c / 16 * 16) * hw + q * 16 + c % 16);
        r[to_blocked ? blocked : plain] = v[to_blocked ? plain : blocked];
      }
  return r;
}

ExpandDepthwiseParams make(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t stride) {
  return ExpandDepthwiseParams{N, C, H, W, M, stride, (H - 1) / stride + 1, (W - 1) / stride + 1};
}

}  // namespace

TEST_CASE("expand 1x1 + depthwise 3x3 fused band by band matches the two convolutions") {
  // Odd and tiny planes, strides 1 and 2 (zero rows at both edges), several chunks of rows and
  // several bands a chunk (the rows bands share kept), pairs of groups and single ones (an odd
  // number of groups: a last unit of one), batches, 1 and 2 threads (one image: the rows split
  // between them, fewer rows than threads), every activation, biases absent, weights packed
  // per call and once.
  const ExpandDepthwiseParams cases[] = {
      make(1, 16, 28, 28, 96, 2),   // MobileNetV2's shape, smaller
      make(1, 24, 14, 14, 144, 1),  //
      make(2, 5, 9, 11, 16, 1),     // odd sizes, batch 2
      make(1, 5, 9, 11, 16, 2),     // stride 2, odd
      make(1, 3, 10, 12, 8, 2),     // stride 2, even
      make(1, 7, 1, 1, 8, 1),       // one pixel
      make(1, 7, 2, 3, 8, 2),       // tiny, stride 2
      make(1, 9, 7, 7, 24, 1),      // 7 x 7: fewer than 12 pixels a row
      make(1, 300, 40, 170, 8, 1),  // a chunk per output row, several bands a plane
      make(1, 40, 61, 200, 16, 2),  // several chunks and bands, stride 2
      make(1, 3, 5, 400, 24, 1),    // rows too wide for two groups' bands: one group a unit
      make(1, 6, 3, 3, 24, 1),      // 3 rows for 2 threads, 3 groups
      make(1, 6, 4, 4, 40, 2),      // 2 output rows, stride 2, 5 groups
      make(2, 32, 13, 15, 48, 2),   // NCHW16c: two blocks in, three out, batch 2
      make(1, 16, 5, 400, 32, 1),   // NCHW16c with one group a unit: a unit writes half a block
      make(1, 16, 5, 7, 24, 1),     // 24 channels out: y cannot be blocked, x can
  };
  const StoreActivation acts[] = {StoreActivation{StoreActivation::kClamp, 0.f, 6.f},
                                  StoreActivation{StoreActivation::kRelu}, StoreActivation{},
                                  StoreActivation{StoreActivation::kClamp, -0.3f, 0.4f}};
  ThreadPool pool(2);
  uint32_t seed = 900;
  int k = 0;
  for (const auto& p : cases) {
    REQUIRE(expand_depthwise3x3_applicable(p));
    const std::vector<float> x = random_floats(size_t(p.N * p.C * p.H * p.W), seed);
    const std::vector<float> w1 = random_floats(size_t(p.M * p.C), seed + 1, -0.5f, 0.5f);
    const std::vector<float> b1 = random_floats(size_t(p.M), seed + 2);
    const std::vector<float> w2 = random_floats(size_t(p.M * 9), seed + 3);
    const std::vector<float> b2 = random_floats(size_t(p.M), seed + 4);
    const StoreActivation& a1 = acts[k % 4];
    const StoreActivation& a2 = acts[(k + 1) % 4];
    const float* b1p = k % 3 == 2 ? nullptr : b1.data();
    const float* b2p = k % 5 == 4 ? nullptr : b2.data();
    const std::vector<float> r = expand_depthwise_ref(p, x, w1, b1p, a1, w2, b2p, a2);
    // The weights packed once, in a buffer exactly as long as the kernel says (ASan checks it).
    std::vector<float> packed(size_t(expand_depthwise3x3_packed_floats(p)));
    expand_depthwise3x3_pack(p, w1.data(), b1p, w2.data(), b2p, packed.data());
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool})
      for (bool prepacked : {false, true})
        // x and y plain, or NCHW16c where their channels come in 16s (the packing is the same).
        for (int layout = 0; layout < 4; ++layout) {
          ExpandDepthwiseParams q = p;
          q.x_nchw16c = layout & 1;
          q.y_nchw16c = layout & 2;
          if ((q.x_nchw16c && p.C % 16) || (q.y_nchw16c && p.M % 16)) {
            CHECK_FALSE(expand_depthwise3x3_applicable(q));
            continue;
          }
          REQUIRE(expand_depthwise3x3_applicable(q));
          const std::vector<float> xq = q.x_nchw16c ? reorder16(x, p.N, p.C, p.H * p.W, true) : x;
          std::vector<float> y(r.size(), -7.f);
          if (prepacked)
            expand_depthwise3x3_f32_prepacked(q, xq.data(), packed.data(), a1, a2, y.data(), tp);
          else
            expand_depthwise3x3_f32(q, xq.data(), w1.data(), b1p, a1, w2.data(), b2p, a2, y.data(), tp);
          if (q.y_nchw16c) y = reorder16(y, p.N, p.M, p.OH * p.OW, false);
          INFO("C=" << p.C << " M=" << p.M << " H=" << p.H << " W=" << p.W << " stride=" << p.stride
                    << " threads=" << (tp ? 2 : 1) << " prepacked=" << prepacked << " x_nchw16c=" << q.x_nchw16c
                    << " y_nchw16c=" << q.y_nchw16c);
          CHECK(max_rel_diff(y, r) < 1e-4);
        }
    seed += 7;
    ++k;
  }
}

TEST_CASE("expand 1x1 + depthwise 3x3 applies only where its kernel does, and is chosen where it pays") {
  CHECK_FALSE(expand_depthwise3x3_applicable(make(1, 16, 8, 8, 12, 1)));   // M not a multiple of 8
  CHECK_FALSE(expand_depthwise3x3_applicable(make(1, 16, 8, 8, 16, 3)));   // stride 3
  CHECK_FALSE(expand_depthwise3x3_applicable(make(1, 600, 8, 8, 16, 1)));  // C over 512
  ExpandDepthwiseParams p = make(1, 16, 8, 8, 16, 2);
  p.OH = 3;  // not the output of pads 1
  CHECK_FALSE(expand_depthwise3x3_applicable(p));
  CHECK(expand_depthwise3x3_pays(make(1, 16, 112, 112, 96, 2)));
  CHECK(expand_depthwise3x3_pays(make(1, 32, 28, 28, 192, 1)));
  CHECK(expand_depthwise3x3_pays(make(1, 64, 14, 14, 384, 1)));
  CHECK_FALSE(expand_depthwise3x3_pays(make(1, 160, 7, 7, 960, 1)));
}

namespace {

DepthwisePointwiseParams make_dp(int64_t N, int64_t C, int64_t H, int64_t W, int64_t stride, int64_t M) {
  return DepthwisePointwiseParams{N, C, H, W, stride, (H - 1) / stride + 1, (W - 1) / stride + 1, M};
}

}  // namespace

TEST_CASE("depthwise 3x3 on NCHW16c tensors matches the plain convolution") {
  // MobileNetV2's 7 x 7 (960 channels, smaller), odd planes, strides 1 and 2, pads 0 to 2,
  // planes of several bands (units a band each), batches, 1 and 2 threads, every activation,
  // bias absent.
  struct Case {
    int64_t N, C, H, W, stride, pad;
  };
  const Case cases[] = {{1, 96, 7, 7, 1, 1},   {2, 32, 9, 11, 2, 1},  {1, 16, 5, 6, 1, 0},  {1, 16, 8, 5, 2, 2},
                        {1, 16, 60, 130, 1, 1}, {1, 48, 41, 90, 2, 1}, {1, 16, 1, 1, 1, 1},  {1, 16, 2, 3, 2, 0}};
  const StoreActivation acts[] = {StoreActivation{StoreActivation::kClamp, 0.f, 6.f},
                                  StoreActivation{StoreActivation::kRelu}, StoreActivation{}};
  ThreadPool pool(2);
  uint32_t seed = 300;
  int k = 0;
  for (const Case& c : cases) {
    const int64_t OH = (c.H + 2 * c.pad - 3) / c.stride + 1, OW = (c.W + 2 * c.pad - 3) / c.stride + 1;
    const Conv2dParams p{c.N, c.C, c.H, c.W, c.C, 3, 3, OH, OW, c.stride, c.stride, c.pad, c.pad, 1, 1, c.C};
    REQUIRE(depthwise3x3_nchw16c_applicable(p));
    const std::vector<float> x = random_floats(size_t(c.N * c.C * c.H * c.W), seed);
    const std::vector<float> w = random_floats(size_t(c.C * 9), seed + 1);
    const std::vector<float> b = random_floats(size_t(c.C), seed + 2);
    const StoreActivation& a = acts[k % 3];
    const float* bp = k % 4 == 3 ? nullptr : b.data();
    const std::vector<float> r = depthwise_ref(c.N, c.C, c.H, c.W, c.stride, OH, OW, x, w, bp, a, c.pad);
    const std::vector<float> xb = reorder16(x, c.N, c.C, c.H * c.W, true);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> yb(r.size(), -7.f);
      depthwise3x3_nchw16c_f32(p, xb.data(), w.data(), bp, a, yb.data(), tp);
      INFO("C=" << c.C << " H=" << c.H << " W=" << c.W << " stride=" << c.stride << " pad=" << c.pad
                << " threads=" << (tp ? 2 : 1));
      CHECK(max_rel_diff(reorder16(yb, c.N, c.C, OH * OW, false), r) < 1e-5);
    }
    seed += 5;
    ++k;
  }
  auto params = [](int64_t C, int64_t M, int64_t group, int64_t K, int64_t stride_w, int64_t pad, int64_t W) {
    const int64_t OW = (W + 2 * pad - K) / stride_w + 1;
    return Conv2dParams{1, C, 8, W, M, K, K, (8 + 2 * pad - K) / 1 + 1, OW, 1, stride_w, pad, pad, 1, 1, group};
  };
  CHECK(depthwise3x3_nchw16c_applicable(params(32, 32, 32, 3, 1, 1, 8)));
  CHECK_FALSE(depthwise3x3_nchw16c_applicable(params(24, 24, 24, 3, 1, 1, 8)));    // not whole blocks
  CHECK_FALSE(depthwise3x3_nchw16c_applicable(params(32, 32, 1, 3, 1, 1, 8)));     // not depthwise
  CHECK_FALSE(depthwise3x3_nchw16c_applicable(params(32, 32, 32, 5, 1, 2, 8)));    // 5x5
  CHECK_FALSE(depthwise3x3_nchw16c_applicable(params(32, 32, 32, 3, 2, 1, 8)));    // strides differ
  CHECK_FALSE(depthwise3x3_nchw16c_applicable(params(32, 32, 32, 3, 1, 3, 8)));    // pads of 3
  CHECK_FALSE(depthwise3x3_nchw16c_applicable(params(32, 32, 32, 3, 1, 1, 4000))); // too wide for a band
}

TEST_CASE("depthwise 3x3 + 1x1 fused chunk by chunk matches the two convolutions") {
  // MobileNetV2's first block (smaller and whole), odd and tiny planes, strides 1 and 2, several
  // chunks (uneven rows), M not a multiple of 4 (the 1x1's single-channel tiles), positions not
  // a multiple of 8 or 24, batches, 1 and 2 threads, every activation, biases absent.
  const DepthwisePointwiseParams cases[] = {
      make_dp(1, 32, 112, 112, 1, 16),  // MobileNetV2's first block
      make_dp(1, 32, 40, 44, 2, 16),    //
      make_dp(2, 8, 9, 11, 1, 5),       // odd sizes, batch 2
      make_dp(1, 16, 9, 11, 2, 7),      // stride 2, odd
      make_dp(1, 8, 1, 1, 1, 3),        // one pixel
      make_dp(1, 8, 2, 3, 2, 4),        // tiny, stride 2
      make_dp(1, 24, 7, 7, 1, 9),       // 7 x 7
      make_dp(1, 64, 61, 200, 2, 12),   // several chunks, stride 2
      make_dp(1, 8, 5, 400, 1, 1),      // wide rows, one output channel
  };
  const StoreActivation acts[] = {StoreActivation{StoreActivation::kClamp, 0.f, 6.f},
                                  StoreActivation{StoreActivation::kRelu}, StoreActivation{},
                                  StoreActivation{StoreActivation::kClamp, -0.3f, 0.4f}};
  ThreadPool pool(2);
  uint32_t seed = 1900;
  int k = 0;
  for (const auto& p : cases) {
    REQUIRE(depthwise3x3_pointwise_applicable(p));
    const std::vector<float> x = random_floats(size_t(p.N * p.C * p.H * p.W), seed);
    const std::vector<float> w1 = random_floats(size_t(p.C * 9), seed + 1);
    const std::vector<float> b1 = random_floats(size_t(p.C), seed + 2);
    const std::vector<float> w2 = random_floats(size_t(p.M * p.C), seed + 3, -0.5f, 0.5f);
    const std::vector<float> b2 = random_floats(size_t(p.M), seed + 4);
    const StoreActivation& a1 = acts[k % 4];
    const StoreActivation& a2 = acts[(k + 1) % 4];
    const float* b1p = k % 3 == 2 ? nullptr : b1.data();
    const float* b2p = k % 5 == 4 ? nullptr : b2.data();
    const std::vector<float> d = depthwise_ref(p.N, p.C, p.H, p.W, p.stride, p.OH, p.OW, x, w1, b1p, a1);
    const std::vector<float> r = pointwise_ref(p.N, p.C, p.OH * p.OW, p.M, d, w2, b2p, a2);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(r.size(), -7.f);
      depthwise3x3_pointwise_f32(p, x.data(), w1.data(), b1p, a1, w2.data(), b2p, a2, y.data(), tp);
      INFO("C=" << p.C << " M=" << p.M << " H=" << p.H << " W=" << p.W << " stride=" << p.stride
                << " threads=" << (tp ? 2 : 1));
      CHECK(max_rel_diff(y, r) < 1e-4);
    }
    seed += 7;
    ++k;
  }
}

TEST_CASE("depthwise 3x3 + 1x1 applies only where its kernel does, and is chosen where it pays") {
  CHECK_FALSE(depthwise3x3_pointwise_applicable(make_dp(1, 12, 8, 8, 1, 16)));  // C not a multiple of 8
  CHECK_FALSE(depthwise3x3_pointwise_applicable(make_dp(1, 16, 8, 8, 3, 16)));  // stride 3
  DepthwisePointwiseParams p = make_dp(1, 16, 8, 8, 2, 16);
  p.OH = 3;  // not the output of pads 1
  CHECK_FALSE(depthwise3x3_pointwise_applicable(p));
  CHECK(depthwise3x3_pointwise_pays(make_dp(1, 32, 112, 112, 1, 16)));
  CHECK_FALSE(depthwise3x3_pointwise_pays(make_dp(1, 960, 7, 7, 1, 160)));
}
