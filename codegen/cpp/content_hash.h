// The hash NAME.h carries as KILN_MODEL_<NAME>_HASH: of what a model's libraries are built from
// (generated code, weights, the build's identity). An identity, not a defence: FNV-1a's
// step over 8-byte words, so that hashing 100+ MB of weights takes tens of milliseconds rather
// than the byte-wise loop's half second; every step is a bijection of the state, so inputs that
// differ in one word always hash differently.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace kiln::codegen {

inline uint64_t content_hash(std::string_view data, uint64_t h = 1469598103934665603ull) {
  constexpr uint64_t kPrime = 1099511628211ull;
  size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, data.data() + i, 8);
    h = (h ^ w) * kPrime;
  }
  for (; i < data.size(); ++i) h = (h ^ static_cast<unsigned char>(data[i])) * kPrime;
  return h ^ (h >> 29);
}

}  // namespace kiln::codegen
