// Bounded decoding of the little-endian integers and varints of LevelDB tables and tensor
// bundles. Each reader consumes from the front of a string_view and returns false when the
// bytes run out, or when a varint has more bytes or bits than its type holds (LevelDB drops
// such bits silently; kiln refuses them).
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::frontend::tensorflow {

inline uint32_t load_le32(const void* bytes) {
  const auto* p = static_cast<const uint8_t*>(bytes);
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

inline bool get_varint64(std::string_view& in, uint64_t& value) {
  value = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (i == in.size()) return false;
    const auto byte = static_cast<uint8_t>(in[i]);
    if (i == 9 && byte > 1) return false;  // the tenth byte holds only bit 63
    value |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      in.remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

inline bool get_varint32(std::string_view& in, uint32_t& value) {
  std::string_view rest = in;
  uint64_t wide = 0;
  if (!get_varint64(rest, wide) || in.size() - rest.size() > 5 || wide > UINT32_MAX) return false;
  value = static_cast<uint32_t>(wide);
  in = rest;
  return true;
}

inline bool get_fixed32(std::string_view& in, uint32_t& value) {
  if (in.size() < 4) return false;
  value = load_le32(in.data());
  in.remove_prefix(4);
  return true;
}

}  // namespace kiln::frontend::tensorflow
