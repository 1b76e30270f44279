// Reading and writing NumPy .npy files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/rt/dtype.h"
#include "kiln/rt/sanitize.h"

namespace kiln::rt {

// A dense row-major tensor in host memory (little-endian element bytes).
struct HostTensor {
  kiln_dtype dtype = KILN_F32;
  std::vector<int64_t> shape;       // empty: a scalar
  std::vector<unsigned char> data;  // numel() * dtype_size(dtype) bytes
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// Reads format versions 1, 2 and 3 with descriptors '<f4' '<f8' '<f2' '|i1'
// '|u1' '<i2' '<i4' '<i8' '|b1' (byte order '<', '|' or '=', and any for
// one-byte types). C order only. bf16 has no .npy descriptor and is never
// read. On failure returns false and sets error to one line that starts with
// the path, e.g. "x.npy: truncated data: expected 3072 bytes, file has 100".
bool read_npy(const std::string& path, HostTensor& out, std::string& error) noexcept;

// The same for the bytes of a .npy file already in memory (an entry of an .npz archive);
// `name` starts the error message as the path does for read_npy.
bool parse_npy(const unsigned char* bytes, size_t size, const std::string& name, HostTensor& out,
               std::string& error) noexcept;

// Writes format version 1 (2 when the header needs it). bf16 tensors are
// written as '<f4' (converted exactly to f32), since .npy has no bf16; so are
// the storage-only floats (float8, float4), and int4/int2 (uint4/uint2) as
// '|i1' ('|u1'), one value per byte as kiln holds them. The
// file is written next to path under a temporary name, then renamed.
bool write_npy(const std::string& path, const HostTensor& t, std::string& error) noexcept;

// The .npy descriptor written for a dtype ("<f4", "|b1", ...).
const char* npy_descr(kiln_dtype t) noexcept;

}  // namespace kiln::rt
