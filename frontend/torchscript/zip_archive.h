// Reading the zip container of PyTorch's archives (torch.jit.save, torch.save, torch.export's
// .pt2): stored and deflated entries, ZIP64, data descriptors. The file is untrusted: every
// size and offset is checked against the file, inflated sizes against the declared size and
// the limits, and names that leave the archive ("../", absolute) are refused.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor.h"

namespace kiln::frontend::torchscript {

struct ZipLimits {
  uint64_t max_entries = 1'000'000;
  uint64_t max_entry_bytes = uint64_t{1} << 34;   // one entry, inflated
  uint64_t max_total_bytes = uint64_t{1} << 36;   // all entries read, inflated
  uint64_t max_ratio = 1000;                      // inflated / compressed for deflated entries
};

struct ZipEntry {
  std::string name;          // full name in the archive, e.g. "resnet18/data.pkl"
  uint64_t local_offset = 0; // of the local file header
  uint64_t compressed_size = 0;
  uint64_t size = 0;         // uncompressed
  uint32_t crc32 = 0;
  uint16_t method = 0;       // 0 stored, 8 deflated
};

class ZipArchive {
 public:
  // Maps and indexes the archive; throws kiln::Error naming `path` on anything malformed.
  static std::unique_ptr<ZipArchive> open(const std::string& path, const ZipLimits& limits = {});
  // The same over bytes already in memory (fuzzing, tests); `name` is used in messages.
  static std::unique_ptr<ZipArchive> from_buffer(std::shared_ptr<const ir::Buffer> bytes,
                                                 const std::string& name, const ZipLimits& limits = {});

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The folder every entry sits under ("resnet18/"), or "" when entries do not share one.
  const std::string& prefix() const { return prefix_; }
  // The entry named `name` (with or without the prefix), or nullptr.
  const ZipEntry* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The entry's bytes, inflated and CRC-checked; throws naming the archive and the entry.
  std::string read(std::string_view name) const;
  // The entry's bytes as a buffer: a view of the mapped file for stored entries (weights
  // without a copy), an owned buffer for deflated ones.
  std::shared_ptr<const ir::Buffer> read_buffer(std::string_view name) const;

 private:
  ZipArchive() = default;
  // The entry for `name`, checked against the limits (and counted in total_read_).
  const ZipEntry& checked_entry(std::string_view name) const;
  void inflate_into(const ZipEntry& e, uint8_t* out) const;  // exactly e.size bytes
  void check_crc(const ZipEntry& e, const uint8_t* data) const;

  std::string path_;
  std::shared_ptr<const ir::Buffer> bytes_;
  std::vector<ZipEntry> entries_;
  std::vector<uint64_t> data_offsets_;  // of each entry's data, past its local header
  std::map<std::string, size_t, std::less<>> by_name_;
  std::string prefix_;
  ZipLimits limits_;
  mutable uint64_t total_read_ = 0;
};

}  // namespace kiln::frontend::torchscript
