#include "frontend/tensorflow/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define KILN_CRC32C_SSE42 1
#endif

namespace kiln::frontend::tensorflow {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;  // Castagnoli, reflected

// Slicing-by-8: kTables[k][b] is the CRC of byte b followed by k zero bytes, so eight input
// bytes are folded with eight lookups. Built at compile time (no static constructor).
using Tables = std::array<std::array<uint32_t, 256>, 8>;
constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}
constexpr Tables kTables = make_tables();

uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

#ifdef KILN_CRC32C_SSE42
__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const uint8_t* p,
                                                        size_t size) {
  uint64_t c = crc ^ 0xffffffffu;
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; size > 0; ++p, --size) c32 = _mm_crc32_u8(c32, *p);
  return c32 ^ 0xffffffffu;
}
#endif

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = crc ^ 0xffffffffu;
  for (; size >= 8; p += 8, size -= 8) {
    const uint32_t lo = load_le32(p) ^ c;
    const uint32_t hi = load_le32(p + 4);
    c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
        kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
  }
  for (; size > 0; ++p, --size) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xff];
  return c ^ 0xffffffffu;
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
#ifdef KILN_CRC32C_SSE42
  // Weights are hundreds of megabytes: the CRC instruction is several times faster.
  if (__builtin_cpu_supports("sse4.2")) {
    return extend_sse42(crc, static_cast<const uint8_t*>(data), size);
  }
#endif
  return crc32c_extend_portable(crc, data, size);
}

}  // namespace kiln::frontend::tensorflow
