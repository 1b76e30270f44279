// nhwc::depthwise_conv (qdepthwise_nhwc.h) against qlinear_conv2d on the NCHW transpose of its
// input, byte for byte, on every kernel (portable loops, AVX2 and AVX-512 VNNI where the CPU
// has them), serial and on two threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "kiln/rt/qdepthwise_nhwc.h"
#include "kiln/rt/qgemm.h"
#include "kiln/rt/qlinear.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

const QGemmIsa kIsas[] = {QGemmIsa::portable, QGemmIsa::avx2, QGemmIsa::avx_vnni, QGemmIsa::avx512_vnni, QGemmIsa::automatic};

using kiln_test::random_ints;

// n bytes that end where an unreadable page begins (on Linux), so that a kernel reading or
// writing past the end of its input or output crashes the test instead of passing by luck.
class GuardedBytes {
 public:
  explicit GuardedBytes(size_t n) : n_(n) {
#if defined(__linux__)
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    span_ = (n + page - 1) / page * page + page;
    void* m = mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED && mprotect(static_cast<unsigned char*>(m) + span_ - page, page, PROT_NONE) == 0) {
      base_ = static_cast<unsigned char*>(m);
      data_ = base_ + span_ - page - n;
      return;
    }
    if (m != MAP_FAILED) munmap(m, span_);
#endif
    fallback_.resize(n + 1);
    data_ = fallback_.data();
  }
  ~GuardedBytes() {
#if defined(__linux__)
    if (base_ != nullptr) munmap(base_, span_);
#endif
  }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  unsigned char* data() { return data_; }
  size_t size() const { return n_; }

 private:
  size_t n_, span_ = 0;
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
  std::vector<unsigned char> fallback_;
};

// A depthwise convolution of C channels, padding `pad` on all sides (bottom and right implied).
Conv2dParams depthwise(int64_t N, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t stride,
                       int64_t pad, int64_t dil = 1) {
  const int64_t OH = (H + 2 * pad - dil * (KH - 1) - 1) / stride + 1;
  const int64_t OW = (W + 2 * pad - dil * (KW - 1) - 1) / stride + 1;
  return {N, C, H, W, C, KH, KW, OH, OW, stride, stride, pad, pad, dil, dil, C};
}

// What one check varies besides the shape.
struct Quant {
  int32_t xz, yz;
  std::vector<int32_t> bias;  // empty: null
  std::vector<float> mult;    // empty: null (1); else 1 or C values
};

// x [N, H, W, C] of X; y of Y. Compares every kernel's bytes with the reference's.
template <class X, class Y>
void check(const Conv2dParams& p, const std::vector<X>& x, const std::vector<int8_t>& w, const Quant& q,
           ThreadPool* pool) {
  const int64_t C = p.C, HW = p.H * p.W, OHW = p.OH * p.OW;
  const size_t yn = static_cast<size_t>(p.N * OHW * C);
  std::vector<X> x_nchw(x.size());
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t i = 0; i < HW; ++i)
      for (int64_t c = 0; c < C; ++c) x_nchw[(n * C + c) * HW + i] = x[(n * HW + i) * C + c];
  // With x_scale = y_scale = 1 the reference's multiplier is w_scale[c], exactly.
  const std::vector<float> w_scale = q.mult.empty() ? std::vector<float>{1.0f} : q.mult;
  std::vector<int32_t> acc(yn);
  std::vector<Y> want_nchw(yn), want(yn);
  qlinear_conv2d<X, int8_t, Y, float>(p, x_nchw.data(), 1.0f, q.xz, w.data(), w_scale.data(),
                                       static_cast<int64_t>(w_scale.size()), nullptr, 0, 1.0f, q.yz,
                                       q.bias.empty() ? nullptr : q.bias.data(), acc.data(), want_nchw.data());
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t i = 0; i < OHW; ++i)
      for (int64_t c = 0; c < C; ++c) want[(n * OHW + i) * C + c] = want_nchw[(n * C + c) * OHW + i];

  std::vector<unsigned char> packed(nhwc::depthwise_packed_bytes(p));
  nhwc::depthwise_pack(p, w.data(), packed.data());
  GuardedBytes xg(x.size()), yg(yn);
  std::memcpy(xg.data(), x.data(), x.size());
  QGemmOutput out;
  out.type = std::is_signed_v<Y> ? KILN_I8 : KILN_U8;
  out.y = yg.data();
  out.bias = q.bias.empty() ? nullptr : q.bias.data();
  out.bias_count = static_cast<int64_t>(q.bias.size());
  out.scale = q.mult.empty() ? nullptr : q.mult.data();
  out.scale_count = static_cast<int64_t>(q.mult.size());
  out.y_zero_point = q.yz;
  const QGemmA xa{xg.data(), 0, std::is_signed_v<X>, q.xz};
  for (QGemmIsa isa : kIsas) {
    CAPTURE(qgemm_isa_name(isa));
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), pool}) {
      CAPTURE(tp != nullptr);
      std::memset(yg.data(), 0x5A, yn);
      nhwc::depthwise_conv(p, xa, packed.data(), out, tp, isa);
      int64_t bad = 0;
      for (size_t i = 0; i < yn; ++i) bad += static_cast<Y>(yg.data()[i]) != want[i];
      CHECK(bad == 0);
    }
  }
}

// Random data for p: every signedness of input and output, per-tensor and per-channel
// multipliers, bias null and given.
void check_random(const Conv2dParams& p, uint32_t seed, ThreadPool* pool) {
  const size_t xn = static_cast<size_t>(p.N * p.H * p.W * p.C), C = static_cast<size_t>(p.C);
  const auto w = random_ints<int8_t>(C * static_cast<size_t>(p.KH * p.KW), seed, -128, 127);
  const auto xu = random_ints<uint8_t>(xn, seed + 1, 0, 255);
  const auto xs = random_ints<int8_t>(xn, seed + 2, -128, 127);
  const auto bias = random_ints<int32_t>(C, seed + 3, -20000, 20000);
  std::vector<float> mult(C);
  for (size_t c = 0; c < C; ++c) mult[c] = 0.0008f + 0.0003f * float(c % 11);
  for (int variant = 0; variant < 16; ++variant) {
    const bool x_signed = variant & 1, y_signed = variant & 2, per_channel = variant & 4, with_bias = variant & 8;
    CAPTURE(x_signed);
    CAPTURE(y_signed);
    CAPTURE(per_channel);
    CAPTURE(with_bias);
    Quant q;
    q.xz = x_signed ? -9 : 117;
    q.yz = y_signed ? -13 : 131;
    if (with_bias) q.bias = bias;
    q.mult = per_channel ? mult : std::vector<float>{0.0021f};
    if (x_signed && y_signed)
      check<int8_t, int8_t>(p, xs, w, q, pool);
    else if (x_signed)
      check<int8_t, uint8_t>(p, xs, w, q, pool);
    else if (y_signed)
      check<uint8_t, int8_t>(p, xu, w, q, pool);
    else
      check<uint8_t, uint8_t>(p, xu, w, q, pool);
  }
}

// check_random on each of the cases, seeds from `seed` on.
template <size_t Count>
void check_cases(const Conv2dParams (&cases)[Count], uint32_t seed, ThreadPool* pool) {
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.C);
    CAPTURE(p.W);
    CAPTURE(p.KH);
    CAPTURE(p.KW);
    CAPTURE(p.stride_h);
    CAPTURE(p.stride_w);
    CAPTURE(p.dil_h);
    check_random(p, seed += 10, pool);
  }
}

}  // namespace

TEST_CASE("depthwise nhwc 3x3 MobileNetV2 layers match qlinear_conv2d: stride 1 and 2, every signedness") {
  ThreadPool pool(2);
  const Conv2dParams cases[] = {
      depthwise(1, 32, 14, 14, 3, 3, 1, 1),  depthwise(1, 96, 7, 7, 3, 3, 1, 1),
      depthwise(1, 144, 9, 11, 3, 3, 1, 1),  depthwise(1, 576, 14, 14, 3, 3, 1, 1),
      depthwise(1, 960, 7, 7, 3, 3, 1, 1),   depthwise(1, 32, 14, 14, 3, 3, 2, 1),
      depthwise(1, 96, 14, 14, 3, 3, 2, 1),  depthwise(1, 144, 9, 11, 3, 3, 2, 1),
      depthwise(1, 576, 7, 7, 3, 3, 2, 1),   depthwise(2, 96, 7, 7, 3, 3, 1, 1),  // two images
      depthwise(2, 144, 9, 11, 3, 3, 2, 1),
      // stride 2 padded as TF's SAME: top and left 0, bottom and right 1
      Conv2dParams{1, 32, 14, 14, 32, 3, 3, 7, 7, 2, 2, 0, 0, 1, 1, 32},
  };
  uint32_t seed = 100;
  for (const Conv2dParams& p : cases) {
    CAPTURE(p.N);
    CAPTURE(p.C);
    CAPTURE(p.H);
    CAPTURE(p.W);
    CAPTURE(p.stride_h);
    check_random(p, seed += 10, &pool);
  }
}

TEST_CASE("depthwise nhwc channel tails and other kernels match qlinear_conv2d") {
  ThreadPool pool(2);
  const Conv2dParams cases[] = {
      depthwise(1, 3, 9, 11, 3, 3, 1, 1),     // one masked vector
      depthwise(1, 20, 7, 7, 3, 3, 1, 1),     // 16 + 4
      depthwise(1, 70, 9, 11, 3, 3, 1, 1),    // a full block + 6
      depthwise(2, 70, 7, 7, 3, 3, 2, 1),     // two images, stride 2
      depthwise(1, 100, 5, 6, 3, 3, 1, 1),    // 64 + 36: a tail of 3 vectors
      depthwise(1, 17, 6, 5, 3, 3, 1, 1),     // a tail of 2 vectors, the second of 1 channel
      depthwise(1, 70, 9, 11, 5, 5, 1, 2),    // 5x5: 6 groups of 4 taps and 1
      depthwise(1, 144, 14, 14, 5, 5, 2, 2),  // 5x5 stride 2
      depthwise(1, 40, 9, 9, 3, 3, 1, 2, 2),  // dilation 2
      depthwise(1, 20, 5, 5, 1, 1, 1, 0),     // 1x1: a single tap
      depthwise(1, 33, 6, 7, 1, 2, 1, 0),     // 2 taps
      depthwise(1, 33, 6, 7, 3, 1, 1, 1),     // 3 taps
      depthwise(1, 24, 9, 9, 7, 7, 1, 3),     // 49 taps
      depthwise(1, 130, 11, 10, 9, 9, 2, 4),  // 81 taps, 64 + 64 + 2 channels
      depthwise(1, 16, 4, 4, 3, 3, 1, 4),     // padding wider than the kernel: rows of padding only
      // C <= 32 at stride 1: runs of 64 / C pixels a block inside the image, single pixels at the border
      depthwise(1, 3, 5, 70, 3, 3, 1, 1),     // runs of 21 pixels (63 bytes)
      depthwise(1, 8, 6, 30, 3, 3, 1, 1),     // runs of 8, 64 bytes
      depthwise(1, 11, 5, 17, 3, 3, 1, 1),    // runs of 5 (55 bytes)
      depthwise(2, 24, 6, 13, 3, 3, 1, 1),    // runs of 2 (48 bytes: 3 vectors)
      depthwise(1, 32, 9, 12, 5, 5, 1, 2),    // 5x5, runs of 2
      depthwise(1, 16, 5, 19, 1, 2, 1, 0),    // 2 taps, runs of 4
      depthwise(1, 16, 7, 19, 3, 3, 1, 2, 2), // dilation 2, runs of 4
      Conv2dParams{1, 19, 10, 13, 19, 2, 3, 3, 4, 3, 3, 0, 1, 1, 1, 19},  // 2x3 stride 3, odd padding
      Conv2dParams{1, 64, 8, 9, 64, 3, 3, 8, 9, 1, 1, 2, 0, 1, 1, 64},    // padding 2 at the top only
  };
  check_cases(cases, 300, &pool);
}

TEST_CASE("depthwise nhwc 3x3 with C a multiple of 8 (the AVX2 rolling kernel): narrow images, borders, blocks") {
  // (On VNNI hosts the layers of 32 channels or fewer run on it too.)
  // Its windows' columns roll through registers, checked against the image's columns only
  // near the borders; these shapes put every pixel of a row near one, or none.
  ThreadPool pool(2);
  const Conv2dParams cases[] = {
      depthwise(1, 8, 5, 1, 3, 3, 1, 1),    // one column
      depthwise(1, 8, 5, 2, 3, 3, 1, 1),    // two
      depthwise(1, 16, 5, 3, 3, 3, 1, 1),   // three
      depthwise(1, 8, 5, 1, 3, 3, 2, 1),    // stride 2, one column
      depthwise(1, 8, 6, 2, 3, 3, 2, 1),    // stride 2, two columns: the last window's right column outside
      depthwise(1, 24, 6, 3, 3, 3, 2, 1),   // stride 2, three
      depthwise(1, 16, 5, 4, 3, 3, 2, 1),   // stride 2, four
      depthwise(1, 40, 4, 17, 3, 3, 1, 1),  // a block of 32 and one of 8; an odd number of pixels inside
      depthwise(1, 56, 4, 16, 3, 3, 1, 1),  // 32 + 24
      depthwise(2, 48, 5, 19, 3, 3, 2, 1),  // 32 + 16, two images, stride 2
      depthwise(1, 8, 3, 9, 3, 3, 1, 0),    // no padding
      depthwise(1, 8, 3, 10, 3, 3, 2, 0),   // no padding, stride 2
      depthwise(1, 16, 4, 6, 3, 3, 1, 3),   // padding 3: every window has columns outside
      Conv2dParams{1, 16, 9, 12, 16, 3, 3, 3, 12, 3, 1, 1, 1, 1, 1, 16},  // stride 3 down, 1 across
      Conv2dParams{1, 16, 9, 12, 16, 3, 3, 9, 6, 1, 2, 1, 0, 1, 1, 16},   // stride 2 across only, no left pad
      Conv2dParams{1, 32, 7, 13, 32, 3, 3, 7, 7, 1, 2, 1, 2, 1, 1, 32},   // left padding 2 at stride 2
  };
  check_cases(cases, 500, &pool);
}

TEST_CASE("depthwise nhwc extreme values: exact sums (no int16 saturation), int32 wrapping like the reference") {
  ThreadPool pool(2);
  for (const Conv2dParams& p : {depthwise(1, 70, 7, 9, 3, 3, 1, 1), depthwise(2, 35, 6, 6, 5, 5, 1, 2),
                                depthwise(1, 40, 7, 9, 3, 3, 1, 1), depthwise(2, 48, 7, 9, 3, 3, 2, 1)}) {
    CAPTURE(p.C);
    const size_t xn = static_cast<size_t>(p.N * p.H * p.W * p.C), wn = static_cast<size_t>(p.C * p.KH * p.KW);
    std::vector<int8_t> w_low(wn, -128), w_high(wn, 127), w_mixed(wn);
    for (size_t i = 0; i < wn; ++i) w_mixed[i] = i % 3 == 0 ? 127 : -128;
    Quant q;
    q.yz = 0;
    q.mult = {0.0001f};  // 25 taps of 255 x 128 = 816000: -81.6, in range
    for (const auto& w : {w_low, w_high, w_mixed}) {
      q.xz = 0;
      check<uint8_t, int8_t>(p, std::vector<uint8_t>(xn, 255), w, q, &pool);
      q.xz = 255;
      check<uint8_t, int8_t>(p, std::vector<uint8_t>(xn, 0), w, q, &pool);
      q.xz = 127;
      check<int8_t, int8_t>(p, std::vector<int8_t>(xn, -128), w, q, &pool);
      q.xz = -128;
      check<int8_t, int8_t>(p, std::vector<int8_t>(xn, 127), w, q, &pool);
    }
    // A bias next to INT32_MAX and the largest positive sums: the reference's int32 wraps to
    // about -2^31, which a saturating sum would not.
    q.xz = 0;
    q.bias.assign(static_cast<size_t>(p.C), INT32_MAX - 1000);
    q.mult = {5e-8f};
    check<uint8_t, int8_t>(p, std::vector<uint8_t>(xn, 255), w_high, q, &pool);
    q.xz = -128;
    check<int8_t, uint8_t>(p, std::vector<int8_t>(xn, 127), w_high, q, &pool);
    // No scale at all: multiplier 1, everything saturates one way or the other.
    q.bias.clear();
    q.mult.clear();
    check<int8_t, uint8_t>(p, random_ints<int8_t>(xn, 7, -128, 127), w_mixed, q, &pool);
  }
}

TEST_CASE("depthwise nhwc pack writes exactly depthwise_packed_bytes") {
  for (const Conv2dParams& p : {depthwise(1, 3, 5, 5, 3, 3, 1, 1), depthwise(1, 64, 5, 5, 5, 5, 1, 2),
                                depthwise(1, 130, 5, 5, 1, 1, 1, 0)}) {
    CAPTURE(p.C);
    const size_t bytes = nhwc::depthwise_packed_bytes(p);
    std::vector<unsigned char> packed(bytes + 64, 0xA5);
    nhwc::depthwise_pack(p, random_ints<int8_t>(static_cast<size_t>(p.C * p.KH * p.KW), 5, -128, 127).data(),
                         packed.data());
    CHECK(std::all_of(packed.begin() + static_cast<std::ptrdiff_t>(bytes), packed.end(),
                      [](unsigned char b) { return b == 0xA5; }));
  }
}
