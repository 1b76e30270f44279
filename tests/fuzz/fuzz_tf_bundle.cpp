// libFuzzer target: TensorFlow tensor bundles (the LevelDB index table, its entries and one
// data shard) read in memory, every key as a tensor and as strings; and the index alone with
// block CRCs unchecked, so that mutations reach the block parser. Anything but a kiln::Error is
// a finding. Input: a 4-byte little-endian length n, then n bytes of `.index`, then the
// shard's bytes (n past the end takes everything as the index).
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tensorflow/sstable.h"
#include "frontend/tensorflow/tensor_bundle.h"
#include "ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const size_t index_size = uint32_t{data[0]} | uint32_t{data[1]} << 8 | uint32_t{data[2]} << 16 |
                            uint32_t{data[3]} << 24;
  const char* rest = reinterpret_cast<const char*>(data) + 4;
  const size_t rest_size = size - 4;
  const size_t n = index_size < rest_size ? index_size : rest_size;
  std::string index(rest, n);
  std::string shard(rest + n, rest_size - n);

  kiln::frontend::tensorflow::SstableOptions unchecked;
  unchecked.max_key_bytes = 256;
  unchecked.verify_checksums = false;
  try {
    kiln::frontend::tensorflow::read_sstable(index, "fuzz/variables.index", unchecked);
  } catch (const kiln::Error&) {
  }

  kiln::frontend::ImportLimits limits;  // keep the fuzzer's allocations small
  limits.max_elements = 1 << 20;
  limits.max_tensor_bytes = 1 << 24;
  limits.max_name_length = 256;
  try {
    const kiln::frontend::tensorflow::TensorBundle bundle("fuzz/variables", std::move(index),
                                                          {std::move(shard)}, limits);
    for (const std::string& key : bundle.keys()) {
      try {
        bundle.tensor(key);
      } catch (const kiln::Error&) {
      }
      try {
        bundle.strings(key);
      } catch (const kiln::Error&) {
      }
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
