// CRC32C (Castagnoli), the checksum of LevelDB blocks and of TensorFlow's tensor bundle data,
// and the masking both apply to a CRC before storing it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::frontend::tensorflow {

// The CRC32C of `data` continued from `crc` (the CRC of the bytes before it; 0 to start).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(const void* data, size_t size) {
  return crc32c_extend(0, data, size);
}
// The table-driven version, whatever the CPU offers (crc32c_extend may use SSE4.2 instead);
// exposed so tests can compare the two.
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size);

// Stored CRCs are masked: a CRC computed over bytes that contain CRCs is then less likely to
// be degenerate (LevelDB's crc32c::Mask).
constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
constexpr uint32_t mask_crc(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta;
}
constexpr uint32_t unmask_crc(uint32_t masked) {
  const uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace kiln::frontend::tensorflow
