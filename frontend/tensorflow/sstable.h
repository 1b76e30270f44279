// A reader of LevelDB tables (SSTables), the format of a tensor bundle's `.index` file, for
// tables held in memory. The table is untrusted: every length, offset, handle, varint and
// restart point is checked, and errors name the file and the block or key.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::frontend::tensorflow {

struct SstableEntry {
  std::string key;
  std::string value;
};

struct SstableOptions {
  // Keys are rebuilt from prefix-compressed entries; a cap on their length keeps a small
  // hostile table from growing quadratically in memory.
  size_t max_key_bytes = 4096;
  // As LevelDB's ReadOptions::verify_checksums: off only where the bytes were made to look
  // like a table without their CRCs being right (fuzzing), so that the checks after them run.
  bool verify_checksums = true;
};

// Every entry of the table, in key order (bytewise, strictly increasing). `name` is the file
// the bytes came from, for messages. Uncompressed blocks only: a snappy block is refused
// (TensorFlow writes bundle indexes uncompressed). The metaindex block is bounds-checked but
// not read: TensorFlow writes no filter blocks.
std::vector<SstableEntry> read_sstable(std::string_view table, const std::string& name,
                                       const SstableOptions& options = {});

// Printable form of a key for error messages: non-printable bytes escaped, long keys cut.
std::string quote_key(std::string_view key);

}  // namespace kiln::frontend::tensorflow
