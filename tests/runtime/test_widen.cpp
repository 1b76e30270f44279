// Widening of weights stored in half precision (kiln/rt/widen.h) against dtype.h's scalar
// conversions, for every 16-bit pattern, at lengths that exercise the vector loop's tail.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kiln/rt/dtype.h"
#include "kiln/rt/widen.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<uint16_t> all_patterns() {
  std::vector<uint16_t> v(65536);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

}  // namespace

TEST_CASE("widen_f16 matches the scalar conversion for every pattern") {
  std::vector<uint16_t> h = all_patterns();
  std::vector<float> out(h.size() + 1, -7.0f);
  kiln::rt::widen_f16(h.data(), out.data(), h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    float want = kiln::rt::f16_bits_to_f32(h[i]);
    if (want != want)
      CHECK(out[i] != out[i]);  // NaN stays NaN
    else
      CHECK(bits_of(out[i]) == bits_of(want));
  }
  CHECK(out[h.size()] == -7.0f);  // nothing written past the end
}

TEST_CASE("widen_f16 and widen_bf16 handle short and odd lengths") {
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 17u}) {
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = kiln::rt::f32_to_f16_bits(static_cast<float>(i) * 0.25f - 1.0f);
    std::vector<float> out(n + 1, -7.0f);
    kiln::rt::widen_f16(h.data(), out.data(), n);
    for (size_t i = 0; i < n; ++i) CHECK(out[i] == static_cast<float>(i) * 0.25f - 1.0f);
    CHECK(out[n] == -7.0f);
  }
}

TEST_CASE("widen_bf16 is the 16-bit shift") {
  std::vector<uint16_t> h = all_patterns();
  std::vector<float> out(h.size());
  kiln::rt::widen_bf16(h.data(), out.data(), h.size());
  for (size_t i = 0; i < h.size(); ++i) CHECK(bits_of(out[i]) == static_cast<uint32_t>(h[i]) << 16);
}

TEST_CASE("widen_weights widens each range") {
  alignas(64) unsigned char weights[128] = {};
  const uint16_t a[3] = {kiln::rt::f32_to_bf16_bits(1.5f), kiln::rt::f32_to_bf16_bits(-2.0f),
                         kiln::rt::f32_to_bf16_bits(0.25f)};
  std::memcpy(weights + 64, a, sizeof a);
  alignas(64) float widened[32] = {};
  const kiln::rt::WidenRange ranges[] = {{64, 64, 3}};
  kiln::rt::widen_weights(weights, reinterpret_cast<unsigned char*>(widened), ranges, 1, kiln::rt::widen_bf16);
  CHECK(widened[16] == 1.5f);
  CHECK(widened[17] == -2.0f);
  CHECK(widened[18] == 0.25f);
  CHECK(widened[0] == 0.0f);
}

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

TEST_CASE("widen_weights releases the halves' pages of a file mapping, which still read back") {
  const size_t count = 3 * 4096;  // halves spanning whole pages
  std::vector<uint16_t> h(count);
  for (size_t i = 0; i < count; ++i) h[i] = kiln::rt::f32_to_f16_bits(static_cast<float>(i % 1000));
  char path[] = "/tmp/kiln-test-widen-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, h.data(), count * 2) == static_cast<ssize_t>(count * 2));
  void* p = mmap(nullptr, count * 2, PROT_READ, MAP_PRIVATE, fd, 0);
  REQUIRE(p != MAP_FAILED);
  const auto* weights = static_cast<const unsigned char*>(p);
  void* widened = std::aligned_alloc(64, count * 4);
  const kiln::rt::WidenRange ranges[] = {{0, 0, count}};
  kiln::rt::widen_weights(weights, static_cast<unsigned char*>(widened), ranges, 1, kiln::rt::widen_f16);
  for (size_t i = 0; i < count; i += 997) CHECK(static_cast<float*>(widened)[i] == static_cast<float>(i % 1000));
  CHECK(std::memcmp(weights, h.data(), count * 2) == 0);  // read back from the file
  std::free(widened);
  munmap(p, count * 2);
  close(fd);
  unlink(path);
}
#endif
