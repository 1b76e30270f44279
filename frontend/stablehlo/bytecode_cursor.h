// A bounds-checked cursor over untrusted MLIR bytecode: bytes, MLIR's prefix varints, signed
// (zigzag) varints and counts. Every read past the end, and every count larger than the
// bytes left could hold, fails with kiln::Error naming the file and the byte offset.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "ir/error.h"

namespace kiln::frontend::stablehlo {

class Cursor {
 public:
  Cursor() = default;
  // The bytes [begin, end) of the file `file`; `base` is the offset of `begin` in the file.
  Cursor(const uint8_t* begin, const uint8_t* end, size_t base, const std::string* file)
      : begin_(begin), p_(begin), end_(end), base_(base), file_(file) {}

  size_t offset() const { return base_ + static_cast<size_t>(p_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool empty() const { return p_ >= end_; }

  [[noreturn]] void fail(const std::string& msg) const { fail_at(offset(), msg); }
  [[noreturn]] void fail_at(size_t off, const std::string& msg) const {
    kiln::fail("{}: offset {}: {}", file_ ? *file_ : std::string("bytecode"), off, msg);
  }

  uint8_t byte() {
    if (p_ >= end_) fail("the data ends early");
    return *p_++;
  }

  // MLIR's prefix varint: the trailing zeros of the first byte count the bytes that follow.
  uint64_t varint() {
    const uint8_t first = byte();
    if (first & 1) return first >> 1;
    if (first == 0) {
      need(8);
      uint64_t v = 0;
      std::memcpy(&v, p_, 8);  // little-endian hosts only, as the rest of kiln
      p_ += 8;
      return v;
    }
    const int extra = __builtin_ctz(first);
    need(static_cast<size_t>(extra));
    uint64_t v = first;
    for (int k = 0; k < extra; ++k) v |= static_cast<uint64_t>(p_[k]) << (8 * (k + 1));
    p_ += extra;
    return v >> (extra + 1);
  }
  int64_t svarint() {
    const uint64_t v = varint();
    return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  // A varint whose low bit is a flag (MLIR's parseVarIntWithFlag).
  uint64_t varint_flag(bool& flag) {
    const uint64_t v = varint();
    flag = v & 1;
    return v >> 1;
  }
  // A count of items that take at least `min_bytes` each: never more than the bytes left allow.
  uint64_t count(const char* what, size_t min_bytes = 1) {
    const size_t at = offset();
    const uint64_t n = varint();
    if (min_bytes && n > remaining() / min_bytes)
      fail_at(at, fmt::format("{} count {} is more than the {} bytes left can hold", what, n, remaining()));
    return n;
  }
  // The next `n` bytes as a cursor of their own.
  Cursor take(uint64_t n) {
    need(n);
    Cursor sub(p_, p_ + n, offset(), file_);
    p_ += n;
    return sub;
  }
  std::string bytes(uint64_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  void skip(uint64_t n) {
    need(n);
    p_ += n;
  }

 private:
  void need(uint64_t n) const {
    if (n > remaining()) fail(fmt::format("{} bytes needed, {} left", n, remaining()));
  }

  const uint8_t* begin_ = nullptr;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  size_t base_ = 0;
  const std::string* file_ = nullptr;
};

}  // namespace kiln::frontend::stablehlo
