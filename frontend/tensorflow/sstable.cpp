#include "frontend/tensorflow/sstable.h"

#include <fmt/format.h>

#include <cstdint>

#include "frontend/tensorflow/crc32c.h"
#include "frontend/tensorflow/varint.h"
#include "ir/error.h"

namespace kiln::frontend::tensorflow {
namespace {

// LevelDB's table layout (table/format.h): data blocks, meta blocks, the metaindex block, the
// index block, then a fixed-size footer. Every block is followed by a trailer.
constexpr size_t kFooterSize = 48;   // two handles padded to 40 bytes, then the magic
constexpr size_t kHandlesSize = 40;  // 2 * the longest BlockHandle (2 varint64s of 10 bytes)
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kTrailerSize = 5;  // compression type byte, masked CRC32C (fixed32)
constexpr uint8_t kNoCompression = 0;
constexpr uint8_t kSnappyCompression = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // the contents, without the trailer
  uint64_t end() const { return offset + size + kTrailerSize; }
};

class TableReader {
 public:
  TableReader(std::string_view table, const std::string& name, const SstableOptions& options)
      : table_(table), name_(name), options_(options) {}

  std::vector<SstableEntry> read_all();

 private:
  BlockHandle decode_handle(std::string_view& in, const std::string& what);
  std::string_view block_contents(const BlockHandle& h, const std::string& what);
  std::vector<SstableEntry> block_entries(std::string_view block, const std::string& what);

  std::string_view table_;
  const std::string& name_;
  SstableOptions options_;
};

// A handle must leave room for its block's trailer before the footer; the sums cannot
// overflow because each term is checked against the data region's size first.
BlockHandle TableReader::decode_handle(std::string_view& in, const std::string& what) {
  BlockHandle h;
  if (!get_varint64(in, h.offset) || !get_varint64(in, h.size)) {
    fail("{}: {}: malformed block handle", name_, what);
  }
  const uint64_t data_end = table_.size() - kFooterSize;
  if (h.size > data_end || h.offset > data_end - h.size ||
      data_end - h.size - h.offset < kTrailerSize) {
    fail(
        "{}: {}: block at offset {} of {} bytes (with its {}-byte trailer) runs past the "
        "data, which ends at the footer at offset {}",
        name_, what, h.offset, h.size, kTrailerSize, data_end);
  }
  return h;
}

std::string_view TableReader::block_contents(const BlockHandle& h, const std::string& what) {
  const auto* start = reinterpret_cast<const uint8_t*>(table_.data()) + h.offset;
  const uint8_t type = start[h.size];
  if (type == kSnappyCompression) {
    fail(
        "{}: {} is snappy-compressed; kiln reads only uncompressed tables, as TensorFlow "
        "writes bundle indexes",
        name_, what);
  }
  if (type != kNoCompression) {
    fail("{}: {}: unknown compression type {}", name_, what, type);
  }
  // The CRC covers the contents and the type byte.
  const uint32_t expected = unmask_crc(load_le32(start + h.size + 1));
  const uint32_t actual = crc32c(start, h.size + 1);
  if (options_.verify_checksums && expected != actual) {
    fail("{}: {}: bad checksum (stored {:08x}, computed {:08x})", name_, what, expected, actual);
  }
  return table_.substr(h.offset, h.size);
}

// A block: entries (varint32 shared, non_shared and value lengths, the key's non-shared
// suffix, the value), then the restart array (fixed32 offsets of entries whose key is stored
// whole) and its fixed32 count. Entries are read in order; each restart offset must be the
// start of an entry with no shared prefix.
std::vector<SstableEntry> TableReader::block_entries(std::string_view block,
                                                     const std::string& what) {
  const auto* base = reinterpret_cast<const uint8_t*>(block.data());
  if (block.size() < 4) fail("{}: {}: {} bytes, too short for a block", name_, what, block.size());
  const uint32_t num_restarts = load_le32(base + block.size() - 4);
  const size_t max_restarts = (block.size() - 4) / 4;
  if (num_restarts > max_restarts) {
    fail("{}: {}: restart count {} too big for a block of {} bytes", name_, what, num_restarts,
         block.size());
  }
  const size_t entries_end = block.size() - 4 - size_t{num_restarts} * 4;
  if (num_restarts == 0 && entries_end != 0) {
    fail("{}: {}: {} bytes of entries but no restart points", name_, what, entries_end);
  }

  std::vector<SstableEntry> entries;
  std::string key;
  uint32_t next_restart = 0;  // index into the restart array
  std::string_view in = block.substr(0, entries_end);
  while (!in.empty()) {
    const size_t entry_offset = entries_end - in.size();
    uint32_t shared = 0, non_shared = 0, value_length = 0;
    if (!get_varint32(in, shared) || !get_varint32(in, non_shared) ||
        !get_varint32(in, value_length)) {
      fail("{}: {}: malformed entry header at byte {}", name_, what, entry_offset);
    }
    if (uint64_t{non_shared} + value_length > in.size()) {
      fail("{}: {}: entry at byte {} ({} key bytes, {} value bytes) runs past the entries", name_,
           what, entry_offset, non_shared, value_length);
    }
    if (shared > key.size()) {
      fail(
          "{}: {}: entry at byte {} shares {} bytes with the previous key, which has {} "
          "(after {})",
          name_, what, entry_offset, shared, key.size(), quote_key(key));
    }
    if (uint64_t{shared} + non_shared > options_.max_key_bytes) {
      fail("{}: {}: entry at byte {}: key of {} bytes, more than the limit of {}", name_, what,
           entry_offset, uint64_t{shared} + non_shared, options_.max_key_bytes);
    }
    if (next_restart < num_restarts) {
      const uint32_t restart = load_le32(base + entries_end + 4 * size_t{next_restart});
      if (restart < entry_offset) {
        fail("{}: {}: restart point {} (byte {}) is not the start of an entry", name_, what,
             next_restart, restart);
      }
      if (restart == entry_offset) {
        if (shared != 0) {
          fail("{}: {}: entry at restart point {} (byte {}) shares a prefix", name_, what,
               next_restart, restart);
        }
        ++next_restart;
      }
    }
    if (entry_offset == 0 && next_restart == 0) {
      fail("{}: {}: the first restart point is not byte 0", name_, what);
    }
    key.resize(shared);
    key.append(in.substr(0, non_shared));
    in.remove_prefix(non_shared);
    entries.push_back({key, std::string(in.substr(0, value_length))});
    in.remove_prefix(value_length);
  }
  // An empty block still has its restart point at byte 0, as LevelDB writes it.
  const bool empty_block = entries_end == 0 && num_restarts == 1 && load_le32(base) == 0;
  if (next_restart != num_restarts && !empty_block) {
    fail("{}: {}: restart point {} (byte {}) is not the start of an entry", name_, what,
         next_restart, load_le32(base + entries_end + 4 * size_t{next_restart}));
  }
  return entries;
}

std::vector<SstableEntry> TableReader::read_all() {
  if (table_.size() < kFooterSize) {
    fail("{}: truncated: {} bytes, a table has at least its {}-byte footer", name_, table_.size(),
         kFooterSize);
  }
  const auto* footer =
      reinterpret_cast<const uint8_t*>(table_.data()) + table_.size() - kFooterSize;
  const uint64_t magic = uint64_t{load_le32(footer + kHandlesSize)} |
                         uint64_t{load_le32(footer + kHandlesSize + 4)} << 32;
  if (magic != kTableMagic) {
    fail("{}: bad magic {:016x} (a LevelDB table ends with {:016x})", name_, magic, kTableMagic);
  }
  std::string_view handles = table_.substr(table_.size() - kFooterSize, kHandlesSize);
  const BlockHandle metaindex = decode_handle(handles, "footer's metaindex handle");
  const BlockHandle index = decode_handle(handles, "footer's index handle");
  const std::string index_what = fmt::format("index block at offset {}", index.offset);
  const std::vector<SstableEntry> index_entries =
      block_entries(block_contents(index, index_what), index_what);

  auto overlaps = [](const BlockHandle& a, const BlockHandle& b) {
    return a.offset < b.end() && b.offset < a.end();
  };
  std::vector<SstableEntry> entries;
  const std::string* previous_index_key = nullptr;
  uint64_t previous_end = 0;  // data blocks come in file order, each after the one before
  for (const SstableEntry& index_entry : index_entries) {
    if (previous_index_key && index_entry.key <= *previous_index_key) {
      fail("{}: {}: keys out of order: {} after {}", name_, index_what, quote_key(index_entry.key),
           quote_key(*previous_index_key));
    }
    const std::string what = fmt::format("index entry {}", quote_key(index_entry.key));
    std::string_view value = index_entry.value;
    const BlockHandle data = decode_handle(value, what);
    if (!value.empty()) fail("{}: {}: {} bytes after the block handle", name_, what, value.size());
    if (data.offset < previous_end) {
      fail(
          "{}: {}: data block at offset {} is listed twice or overlaps a block before it "
          "(data blocks end at {} so far)",
          name_, what, data.offset, previous_end);
    }
    if (overlaps(data, index) || overlaps(data, metaindex)) {
      fail("{}: {}: data block at offset {} overlaps the {} block", name_, what, data.offset,
           overlaps(data, index) ? "index" : "metaindex");
    }
    previous_end = data.end();

    const std::string block_what = fmt::format("data block at offset {}", data.offset);
    for (SstableEntry& e : block_entries(block_contents(data, block_what), block_what)) {
      if (!entries.empty() && e.key <= entries.back().key) {
        fail("{}: {}: keys out of order: {} after {}", name_, block_what, quote_key(e.key),
             quote_key(entries.back().key));
      }
      // The index key separates blocks: each block's keys are above the previous index key
      // and at most its own.
      if (e.key > index_entry.key || (previous_index_key && e.key <= *previous_index_key)) {
        fail("{}: {}: key {} lies outside the range its index entry {} gives", name_, block_what,
             quote_key(e.key), quote_key(index_entry.key));
      }
      entries.push_back(std::move(e));
    }
    previous_index_key = &index_entry.key;
  }
  return entries;
}

}  // namespace

std::vector<SstableEntry> read_sstable(std::string_view table, const std::string& name,
                                       const SstableOptions& options) {
  return TableReader(table, name, options).read_all();
}

std::string quote_key(std::string_view key) {
  constexpr size_t kShown = 120;
  std::string out = "'";
  for (size_t i = 0; i < key.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  out += key.size() > kShown ? fmt::format("'... ({} bytes)", key.size()) : "'";
  return out;
}

}  // namespace kiln::frontend::tensorflow
