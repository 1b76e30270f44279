// dequantize_global_avgpool_nhwc against what it replaces: kiln.FromNhwc's transpose
// (transpose_planes_8bit), dequantize_linear per tensor and global_avgpool_f32, bit for bit.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kiln/rt/pool.h"
#include "kiln/rt/qconv_nhwc.h"
#include "kiln/rt/quantize.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;

namespace {

template <class Q>
void check(int64_t N, int64_t spatial, int64_t C, float scale, Q zp, ThreadPool* pool, uint32_t seed) {
  const auto x = kiln_test::random_ints<Q>(static_cast<size_t>(N * spatial * C), seed,
                                           std::is_signed_v<Q> ? -128 : 0, std::is_signed_v<Q> ? 127 : 255);
  std::vector<Q> nchw(x.size());
  transpose_planes_8bit(N, spatial, C, x.data(), nchw.data(), nullptr);
  std::vector<float> dq(x.size());
  dequantize_linear<Q, float, float>(nchw.data(), &scale, &zp, dq.data(), QuantLayout{1, 1, N * spatial * C});
  std::vector<float> want(static_cast<size_t>(N * C)), got(want.size(), -1.0f);
  global_avgpool_f32(N * C, spatial, dq.data(), want.data());
  dequantize_global_avgpool_nhwc<Q>(N, spatial, C, x.data(), scale, static_cast<float>(zp), got.data(), pool);
  CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("dequantize_global_avgpool_nhwc equals FromNhwc, DequantizeLinear and GlobalAveragePool bit for bit") {
  ThreadPool pool(2);
  uint32_t seed = 1;
  // (N, spatial, C): MobileNetV2's 7 x 7 x 1280, rows of 8 pixels and a rest, channel tails, one pixel
  const int64_t shapes[][3] = {{1, 49, 1280}, {2, 49, 24}, {1, 8, 8}, {1, 9, 13}, {3, 1, 17}, {1, 64, 7}, {2, 100, 40},
                               {1, 196, 576}};
  for (const auto& s : shapes) {
    CAPTURE(s[0]);
    CAPTURE(s[1]);
    CAPTURE(s[2]);
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      check<uint8_t>(s[0], s[1], s[2], 0.0237f, uint8_t{131}, tp, seed++);
      check<uint8_t>(s[0], s[1], s[2], 3.1e-5f, uint8_t{0}, tp, seed++);
      check<int8_t>(s[0], s[1], s[2], 0.11f, int8_t{-7}, tp, seed++);
    }
  }
}
