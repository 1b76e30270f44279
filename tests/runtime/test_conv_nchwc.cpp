#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <limits>
#include <vector>

#include "kiln/rt/conv_nchwc.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

// Every kernel family of the table; each test runs those this machine supports.
constexpr NchwcIsa kIsas[] = {NchwcIsa::portable, NchwcIsa::avx2, NchwcIsa::avx512, NchwcIsa::neon};

// [N, C, HW] -> [N, C / 16, HW, 16], written out index by index.
std::vector<float> blocked(const std::vector<float>& x, int64_t N, int64_t C, int64_t HW) {
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t q = 0; q < HW; ++q) y[((n * (C / 16) + c / 16) * HW + q) * 16 + c % 16] = x[(n * C + c) * HW + q];
  return y;
}

// act(sum w[m][c][kh][kw] x[n][c][oh * sh - pt + kh][ow * sw - pl + kw] + b[m] + z[n][m][oh][ow])
// in doubles, NCHW, zero outside the image.
std::vector<float> conv_reference(const ConvNchwcParams& p, const std::vector<float>& x, const std::vector<float>& w,
                                  const float* b, const float* z, const StoreActivation& act) {
  std::vector<float> y(static_cast<size_t>(p.N * p.M * p.OH * p.OW));
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          double s = b ? b[m] : 0.0;
          for (int64_t c = 0; c < p.C; ++c)
            for (int64_t kh = 0; kh < p.KH; ++kh)
              for (int64_t kw = 0; kw < p.KW; ++kw) {
                const int64_t ih = oh * p.stride_h - p.pad_top + kh, iw = ow * p.stride_w - p.pad_left + kw;
                if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
                s += double(w[((m * p.C + c) * p.KH + kh) * p.KW + kw]) * x[((n * p.C + c) * p.H + ih) * p.W + iw];
              }
          const int64_t o = ((n * p.M + m) * p.OH + oh) * p.OW + ow;
          if (z) s += z[o];
          if (act.kind == StoreActivation::kRelu) s = s > 0 ? s : 0;
          if (act.kind == StoreActivation::kClamp) s = s < act.lo ? act.lo : (s > act.hi ? act.hi : s);
          y[o] = static_cast<float>(s);
        }
  return y;
}

}  // namespace

TEST_CASE("nchw_to_nchwc_f32 blocks 16 channels per position and nchwc_to_nchw_f32 undoes it") {
  ThreadPool pool(2);
  // Planes of 7 x 7 (a partial group of 8 positions), 8 x 8 and 1 x 3.
  for (const int64_t HW : {49, 64, 3})
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      const int64_t N = 2, C = 48;
      const auto x = kiln_test::random_floats(static_cast<size_t>(N * C * HW), 3);
      std::vector<float> y(x.size(), -7.f), back(x.size(), -9.f);
      nchw_to_nchwc_f32(N, C, HW, x.data(), y.data(), tp);
      CHECK(y == blocked(x, N, C, HW));
      nchwc_to_nchw_f32(N, C, HW, y.data(), back.data(), tp);
      CHECK(back == x);
    }
}

TEST_CASE("conv_nchwc_f32 matches the reference: 1x1s and 3x3s, strides, padding, tails, epilogues") {
  ThreadPool pool(2), three(3);
  struct Case {
    int64_t N, C, H, W, M, k, sh, sw, pad;
  };
  // M = 16 .. 96: groups of 4 output blocks and the 1-, 2- and 3-block tails; planes whose
  // positions leave 1 to 5 past the last full tile of 6; strides 2 and (2, 1) with odd sizes;
  // 3x3s with pads 1 (ResNet's stride-2 3x3: tiles at the left edge skip a column of taps, the
  // right edge and last rows too where the sizes are odd) and a 3x3 without padding.
  const Case cases[] = {{1, 16, 7, 7, 16, 1, 1, 1, 0},   {2, 32, 5, 9, 80, 1, 1, 1, 0},
                        {1, 48, 14, 14, 48, 1, 1, 1, 0}, {1, 64, 13, 11, 32, 1, 2, 2, 0},
                        {2, 16, 9, 7, 64, 1, 2, 1, 0},   {1, 128, 3, 4, 96, 1, 1, 1, 0},
                        {1, 32, 14, 14, 48, 3, 2, 2, 1}, {2, 16, 13, 9, 32, 3, 2, 2, 1},
                        {1, 16, 8, 15, 16, 3, 1, 1, 1},  {1, 32, 9, 10, 16, 3, 1, 2, 0},
                        // Weights past L2 (ResNet-50's layer 4): a group's positions as neighbours
                        // (2 MB, 256 KiB a group), and also its input channels in chunks with
                        // partial sums in y (2.4 MB, 1.2 MB a group of 64 outputs).
                        {1, 1024, 9, 9, 512, 1, 2, 2, 0}, {1, 512, 9, 9, 128, 3, 2, 2, 1}};
  for (const Case& c : cases)
    for (int variant = 0; variant < 4; ++variant) {
      const int64_t OH = (c.H + 2 * c.pad - c.k) / c.sh + 1, OW = (c.W + 2 * c.pad - c.k) / c.sw + 1;
      if (kiln_test::skip_when_emulated(double(c.N) * c.M * OH * OW * c.C * c.k * c.k)) continue;
      ConvNchwcParams p{c.N, c.C, c.H, c.W, c.M, c.k, c.k, OH, OW, c.sh, c.sw, c.pad, c.pad};
      REQUIRE(conv_nchwc_applicable(p));
      const int64_t in = p.N * p.C * p.H * p.W, out = p.N * p.M * p.OH * p.OW;
      const auto x = kiln_test::random_floats(static_cast<size_t>(in), 11);
      const auto w = kiln_test::random_floats(static_cast<size_t>(p.M * p.C * p.KH * p.KW), 12, -0.3f, 0.3f);
      const auto b = kiln_test::random_floats(static_cast<size_t>(p.M), 13);
      const auto z = kiln_test::random_floats(static_cast<size_t>(out), 14);
      const bool with_bias = variant != 1, with_z = variant >= 2;
      const StoreActivation act = variant == 0   ? StoreActivation{}
                                  : variant == 3 ? StoreActivation{StoreActivation::kClamp, -0.5f, 0.75f}
                                                 : StoreActivation{StoreActivation::kRelu};
      std::vector<float> packed(conv_nchwc_packed_floats(p));
      conv_nchwc_pack_weights(p, w.data(), packed.data());
      const auto want = blocked(
          conv_reference(p, x, w, with_bias ? b.data() : nullptr, with_z ? z.data() : nullptr, act), p.N, p.M,
          p.OH * p.OW);
      const auto xb = blocked(x, p.N, p.C, p.H * p.W), zb = blocked(z, p.N, p.M, p.OH * p.OW);
      for (const NchwcIsa isa : kIsas) {
        if (!conv_nchwc_isa_supported(isa)) continue;
        std::vector<float> serial;
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool, &three}) {
          std::vector<float> y(static_cast<size_t>(out), -3.f);
          conv_nchwc_f32(p, xb.data(), packed.data(), with_bias ? b.data() : nullptr,
                            with_z ? zb.data() : nullptr, act, y.data(), tp, isa);
          INFO("C " << c.C << " M " << c.M << " " << c.H << "x" << c.W << " k " << c.k << " stride " << c.sh << ","
                    << c.sw << " pad " << c.pad
                    << " variant " << variant << " isa " << static_cast<int>(isa) << " threads "
                    << (tp ? tp->size() : 1));
          // fp32 sums of C * KH * KW products against double ones: the error grows as their root.
          CHECK(kiln_test::max_rel_diff(y, want) < 1e-5 * std::max(1.0, std::sqrt(p.C * p.KH * p.KW / 256.0)));
          if (serial.empty())
            serial = y;
          else
            CHECK(y == serial);  // each value summed the same way on any thread count
        }
        if (c.k == 1 && (c.sh > 1 || c.sw > 1)) {
          // A strided 1x1 gathers its positions into a thread buffer first; without one, it
          // reads them in place.
          set_thread_buffer_limit(0);
          std::vector<float> y(static_cast<size_t>(out), -3.f);
          conv_nchwc_f32(p, xb.data(), packed.data(), with_bias ? b.data() : nullptr, with_z ? zb.data() : nullptr,
                         act, y.data(), &pool, isa);
          set_thread_buffer_limit(SIZE_MAX);
          INFO("strided 1x1 without a buffer: C " << c.C << " isa " << static_cast<int>(isa));
          CHECK(kiln_test::max_rel_diff(y, want) < 1e-5 * std::max(1.0, std::sqrt(p.C / 256.0)));
        }
      }
    }
}

TEST_CASE("conv_nchwc_f32 reads plain NCHW input of any channel count (stems): 7x7 and 3x3, stride 2, pads") {
  ThreadPool pool(2);
  struct Case {
    int64_t N, C, H, W, M, k, s, pad;
  };
  // ResNet's stem (7x7, stride 2, pad 3) and MobileNetV2's (3x3, stride 2, pad 1) on small odd
  // images, 1 to 4 output blocks (the 4-block group and its tails), a 1x1 over 5 channels; three
  // channels at strides 1, 3 (no fixed-stride tap kernel) and 4 (a patchify stem, 4x4).
  const Case cases[] = {{1, 3, 23, 19, 64, 7, 2, 3}, {2, 3, 15, 17, 32, 3, 2, 1}, {1, 1, 9, 9, 48, 3, 1, 1},
                        {1, 5, 6, 7, 16, 1, 1, 0},   {1, 3, 11, 13, 16, 3, 1, 1}, {1, 3, 20, 22, 16, 3, 3, 1},
                        {1, 3, 33, 35, 32, 4, 4, 0}};
  for (const Case& c : cases) {
    const int64_t OH = (c.H + 2 * c.pad - c.k) / c.s + 1, OW = (c.W + 2 * c.pad - c.k) / c.s + 1;
    ConvNchwcParams p{c.N, c.C, c.H, c.W, c.M, c.k, c.k, OH, OW, c.s, c.s, c.pad, c.pad, true};
    REQUIRE(conv_nchwc_applicable(p));
    const int64_t out = p.N * p.M * p.OH * p.OW;
    const auto x = kiln_test::random_floats(static_cast<size_t>(p.N * p.C * p.H * p.W), 21);
    const auto w = kiln_test::random_floats(static_cast<size_t>(p.M * p.C * p.KH * p.KW), 22, -0.3f, 0.3f);
    const auto b = kiln_test::random_floats(static_cast<size_t>(p.M), 23);
    const StoreActivation relu{StoreActivation::kRelu};
    std::vector<float> packed(conv_nchwc_packed_floats(p));
    conv_nchwc_pack_weights(p, w.data(), packed.data());
    const auto want = blocked(conv_reference(p, x, w, b.data(), nullptr, relu), p.N, p.M, p.OH * p.OW);
    for (const NchwcIsa isa : kIsas) {
      if (!conv_nchwc_isa_supported(isa)) continue;
      for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<float> y(static_cast<size_t>(out), -3.f);
        conv_nchwc_f32(p, x.data(), packed.data(), b.data(), nullptr, relu, y.data(), tp, isa);
        INFO("C " << c.C << " M " << c.M << " k " << c.k << " isa " << static_cast<int>(isa));
        CHECK(kiln_test::max_rel_diff(y, want) < 1e-5);
      }
    }
  }
}

TEST_CASE("conv_nchwc_f32 takes the NEON tile on ARM64 and the plain loops under KILN_CPU_ISA=portable") {
  const char* cap = std::getenv("KILN_CPU_ISA");
  const bool portable = cap != nullptr && std::string(cap) == "portable";
  CHECK(std::string(conv_nchwc_isa_name(NchwcIsa::portable)) == "portable");
#if defined(__aarch64__)
  CHECK(conv_nchwc_isa_supported(NchwcIsa::neon) == !portable);
  CHECK(std::string(conv_nchwc_isa_name(NchwcIsa::automatic)) == (portable ? "portable" : "neon"));
  CHECK(std::string(gemm_f32_isa_name()) == (portable ? "portable" : "neon"));
  CHECK_FALSE(conv_nchwc_isa_supported(NchwcIsa::avx2));
#else
  CHECK_FALSE(conv_nchwc_isa_supported(NchwcIsa::neon));
  CHECK(std::string(conv_nchwc_isa_name(NchwcIsa::neon)) == conv_nchwc_isa_name(NchwcIsa::automatic));
  if (portable) CHECK(std::string(conv_nchwc_isa_name(NchwcIsa::automatic)) == "portable");
#endif
}

TEST_CASE("conv_nchwc_applicable wants blocks of 16 channels, sizes of at least 1 and pads of at least 0") {
  CHECK(conv_nchwc_applicable({1, 32, 8, 8, 64, 1, 1, 8, 8, 1, 1, 0, 0}));
  CHECK(conv_nchwc_applicable({1, 32, 7, 7, 64, 3, 3, 4, 4, 2, 2, 1, 1}));
  CHECK_FALSE(conv_nchwc_applicable({1, 24, 8, 8, 64, 1, 1, 8, 8, 1, 1, 0, 0}));
  CHECK(conv_nchwc_applicable({1, 24, 8, 8, 64, 1, 1, 8, 8, 1, 1, 0, 0, true}));  // plain input: any C
  CHECK_FALSE(conv_nchwc_applicable({1, 3, 8, 8, 40, 1, 1, 8, 8, 1, 1, 0, 0, true}));
  CHECK_FALSE(conv_nchwc_applicable({1, 32, 8, 8, 40, 1, 1, 8, 8, 1, 1, 0, 0}));
  CHECK_FALSE(conv_nchwc_applicable({1, 32, 7, 7, 64, 3, 3, 4, 4, 0, 2, 1, 1}));
  CHECK_FALSE(conv_nchwc_applicable({1, 32, 7, 7, 64, 3, 3, 4, 4, 2, 2, -1, 1}));
}

TEST_CASE("maxpool_nchwc_f32 is maxpool2d_f32 on the blocked tensors: pads, strides, dilation, NaN, empty windows") {
  ThreadPool pool(2);
  // ResNet's 3x3 stride-2 pad-1 pool on an odd plane; a dilated 2x2; a window past the image
  // (pads larger than the kernel reach: windows with no element give -inf).
  const Pool2dParams cases[] = {{1, 32, 13, 11, 3, 3, 7, 6, 2, 2, 1, 1, 1, 1},
                                {2, 16, 8, 9, 2, 2, 6, 7, 1, 1, 0, 0, 2, 1},
                                {1, 16, 4, 4, 2, 2, 4, 4, 2, 2, 3, 3, 1, 1}};
  for (const Pool2dParams& p : cases) {
    auto x = kiln_test::random_floats(static_cast<size_t>(p.N * p.C * p.H * p.W), 31);
    x[5] = std::numeric_limits<float>::quiet_NaN();
    x[x.size() - 3] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> want(static_cast<size_t>(p.N * p.C * p.OH * p.OW));
    maxpool2d_f32(p, x.data(), want.data(), nullptr);
    const auto xb = blocked(x, p.N, p.C, p.H * p.W), wb = blocked(want, p.N, p.C, p.OH * p.OW);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(wb.size(), 5.f);
      maxpool_nchwc_f32(p, xb.data(), y.data(), tp);
      REQUIRE(y.size() == wb.size());
      for (size_t i = 0; i < y.size(); ++i) {
        INFO("element " << i);
        if (std::isnan(wb[i]))
          CHECK(std::isnan(y[i]));
        else
          CHECK(y[i] == wb[i]);
      }
    }
  }
}
