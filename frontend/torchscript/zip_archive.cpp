#include "frontend/torchscript/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "ir/error.h"

namespace kiln::frontend::torchscript {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kZip64EocdSize = 56;
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kLocalSize = 30;
constexpr uint64_t kMaxComment = 0xffff;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t* p) { return le16(p) | static_cast<uint32_t>(le16(p + 2)) << 16; }
uint64_t le64(const uint8_t* p) { return le32(p) | static_cast<uint64_t>(le32(p + 4)) << 32; }

// [offset, offset + n) inside a file of `size` bytes, without overflowing.
bool fits(uint64_t offset, uint64_t n, uint64_t size) { return offset <= size && n <= size - offset; }

// A slice of the archive's bytes: stored entries are handed out without a copy, and the
// slice keeps the whole mapping alive.
class SliceBuffer final : public ir::Buffer {
 public:
  SliceBuffer(std::shared_ptr<const ir::Buffer> whole, size_t offset, size_t size)
      : whole_(std::move(whole)), offset_(offset), size_(size) {}
  const uint8_t* data() const override { return whole_->data() + offset_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<const ir::Buffer> whole_;
  size_t offset_;
  size_t size_;
};

uint32_t crc_of(const uint8_t* data, uint64_t size) {
  uLong crc = crc32_z(0, Z_NULL, 0);
  if (size) crc = crc32_z(crc, data, static_cast<z_size_t>(size));
  return static_cast<uint32_t>(crc);
}

// A name that could leave the folder it is extracted to, or that means different files on
// different systems, is refused even though kiln extracts nothing: another tool might.
const char* bad_name_reason(std::string_view name) {
  if (name.empty()) return "empty name";
  if (name.find('\0') != std::string_view::npos) return "name holds a NUL byte";
  if (name.find('\\') != std::string_view::npos) return "name holds a backslash";
  if (name.front() == '/') return "absolute name";
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return "name leaves the archive ('..')";
    start = end + 1;
  }
  return nullptr;
}

struct Eocd {
  uint64_t entries = 0;
  uint64_t cd_size = 0;
  uint64_t cd_offset = 0;
  uint64_t cd_limit = 0;  // where the central directory must end: the first trailing record
};

class Indexer {
 public:
  Indexer(const std::string& path, const ir::Buffer& bytes, const ZipLimits& limits)
      : path_(path), data_(bytes.data()), size_(bytes.size()), limits_(limits) {}

  [[noreturn]] void bad(const std::string& why) const { fail("{}: not a zip archive ({})", path_, why); }
  [[noreturn]] void bad_entry(const std::string& name, const std::string& why) const {
    fail("{}: entry '{}': {}", path_, name, why);
  }

  Eocd find_eocd() const {
    if (size_ < kEocdSize) bad(fmt::format("{} bytes, too short for an end of central directory", size_));
    // The record sits at the end, followed only by its comment (at most 64 KiB): scan back
    // from the last place it can start for the one whose comment ends the file, which a
    // comment holding the signature cannot fake; then accept one followed by stray bytes.
    uint64_t last = size_ - kEocdSize;
    uint64_t first = last > kMaxComment ? last - kMaxComment : 0;
    for (bool exact : {true, false}) {
      for (uint64_t pos = last + 1; pos-- > first;) {
        const uint8_t* p = data_ + pos;
        if (le32(p) != kEocdSig) continue;
        uint64_t end = pos + kEocdSize + le16(p + 20);
        if (exact ? end == size_ : end <= size_) return read_eocd(pos);
      }
    }
    bad("no end of central directory record");
  }

  Eocd read_eocd(uint64_t pos) const {
    const uint8_t* p = data_ + pos;
    Eocd e;
    uint16_t disk = le16(p + 4), cd_disk = le16(p + 6);
    uint64_t on_disk = le16(p + 8);
    e.entries = le16(p + 10);
    e.cd_size = le32(p + 12);
    e.cd_offset = le32(p + 16);
    e.cd_limit = pos;
    if (pos >= kZip64LocatorSize && le32(data_ + pos - kZip64LocatorSize) == kZip64LocatorSig) {
      const uint8_t* loc = data_ + pos - kZip64LocatorSize;
      uint64_t at = le64(loc + 8);
      if (le32(loc + 4) != 0 || le32(loc + 16) > 1) bad("spanned archives are not supported");
      if (!fits(at, kZip64EocdSize, pos - kZip64LocatorSize))
        bad(fmt::format("ZIP64 end of central directory at offset {} runs past its locator", at));
      const uint8_t* z = data_ + at;
      if (le32(z) != kZip64EocdSig)
        bad(fmt::format("no ZIP64 end of central directory at offset {}", at));
      disk = le32(z + 16) ? 1 : 0;
      cd_disk = le32(z + 20) ? 1 : 0;
      on_disk = le64(z + 24);
      e.entries = le64(z + 32);
      e.cd_size = le64(z + 40);
      e.cd_offset = le64(z + 48);
      e.cd_limit = at;
    }
    if (disk != 0 || cd_disk != 0 || on_disk != e.entries) bad("spanned archives are not supported");
    if (!fits(e.cd_offset, e.cd_size, e.cd_limit))
      bad(fmt::format("central directory of {} bytes at offset {} runs past its end at {}", e.cd_size,
                      e.cd_offset, e.cd_limit));
    if (e.entries > limits_.max_entries)
      bad(fmt::format("{} entries, over the limit max_entries of {}", e.entries, limits_.max_entries));
    if (e.entries > e.cd_size / kCentralSize)
      bad(fmt::format("{} entries cannot fit a central directory of {} bytes", e.entries, e.cd_size));
    return e;
  }

  // One central directory record at `pos`; returns the position of the next.
  uint64_t read_central(uint64_t pos, uint64_t end, uint64_t index, ZipEntry& out) const {
    if (!fits(pos, kCentralSize, end) || le32(data_ + pos) != kCentralSig)
      bad(fmt::format("central directory entry {} at offset {} is truncated or corrupt", index, pos));
    const uint8_t* p = data_ + pos;
    uint16_t flags = le16(p + 8);
    uint64_t name_len = le16(p + 28), extra_len = le16(p + 30), comment_len = le16(p + 32);
    uint64_t record = kCentralSize + name_len + extra_len + comment_len;
    if (!fits(pos, record, end))
      bad(fmt::format("central directory entry {} at offset {} runs past the central directory", index, pos));
    out.name.assign(reinterpret_cast<const char*>(p + kCentralSize), name_len);
    out.method = le16(p + 10);
    out.crc32 = le32(p + 16);
    out.compressed_size = le32(p + 20);
    out.size = le32(p + 24);
    out.local_offset = le32(p + 42);
    uint32_t disk = le16(p + 34);
    read_zip64_extra(out, p + kCentralSize + name_len, extra_len, disk);
    if (const char* why = bad_name_reason(out.name)) bad_entry(out.name, why);
    if (flags & 0x41) bad_entry(out.name, "encrypted entries are not supported");
    if (disk != 0) bad_entry(out.name, "spanned archives are not supported");
    if (out.method != 0 && out.method != 8)
      bad_entry(out.name, fmt::format("compression method {} is not supported (only stored and deflated)",
                                      out.method));
    if (out.method == 0 && out.compressed_size != out.size)
      bad_entry(out.name, fmt::format("stored entry of {} bytes has {} bytes of data", out.size,
                                      out.compressed_size));
    return pos + record;
  }

  // The ZIP64 extra field holds, in order, only the fields whose 32-bit value is saturated.
  void read_zip64_extra(ZipEntry& e, const uint8_t* extra, uint64_t len, uint32_t& disk) const {
    bool saturated = e.size == 0xffffffff || e.compressed_size == 0xffffffff || e.local_offset == 0xffffffff ||
                     disk == 0xffff;
    for (uint64_t at = 0; at + 4 <= len;) {
      uint16_t id = le16(extra + at), n = le16(extra + at + 2);
      if (at + 4 + n > len) bad_entry(e.name, "extra field runs past its record");
      if (id == 0x0001) {
        const uint8_t* f = extra + at + 4;
        uint64_t used = 0;
        auto take = [&](uint64_t& field, uint64_t width) {
          if (used + width > n) bad_entry(e.name, "ZIP64 extra field is too short");
          field = width == 8 ? le64(f + used) : le32(f + used);
          used += width;
        };
        uint64_t d = disk;
        if (e.size == 0xffffffff) take(e.size, 8);
        if (e.compressed_size == 0xffffffff) take(e.compressed_size, 8);
        if (e.local_offset == 0xffffffff) take(e.local_offset, 8);
        if (disk == 0xffff) take(d, 4);
        disk = static_cast<uint32_t>(std::min<uint64_t>(d, 0xffffffff));
        return;
      }
      at += 4 + n;
    }
    if (saturated) bad_entry(e.name, "saturated sizes or offset without a ZIP64 extra field");
  }

  // The local header's own name and extra lengths give where the data starts; its sizes are
  // ignored (zero when a data descriptor follows the data): the central directory's are used.
  uint64_t data_offset(const ZipEntry& e, uint64_t cd_offset) const {
    if (!fits(e.local_offset, kLocalSize, cd_offset))
      bad_entry(e.name, fmt::format("local header at offset {} is past the entries' end at {}", e.local_offset,
                                    cd_offset));
    const uint8_t* p = data_ + e.local_offset;
    if (le32(p) != kLocalSig) bad_entry(e.name, fmt::format("no local header at offset {}", e.local_offset));
    uint64_t name_len = le16(p + 26), extra_len = le16(p + 28);
    uint64_t start = e.local_offset + kLocalSize + name_len + extra_len;
    if (start > cd_offset) bad_entry(e.name, "local header runs into the central directory");
    if (std::string_view(reinterpret_cast<const char*>(p + kLocalSize), name_len) != e.name)
      bad_entry(e.name, "the local header names another entry");
    if (le16(p + 8) != e.method) bad_entry(e.name, "local header and central directory disagree on the method");
    if (!fits(start, e.compressed_size, cd_offset))
      bad_entry(e.name, fmt::format("{} bytes of data at offset {} run into the central directory at {}",
                                    e.compressed_size, start, cd_offset));
    return start;
  }

 private:
  const std::string& path_;
  const uint8_t* data_;
  uint64_t size_;
  const ZipLimits& limits_;
};

// The common top folder of every name, or "".
std::string common_prefix(const std::vector<ZipEntry>& entries) {
  if (entries.empty()) return "";
  size_t slash = entries[0].name.find('/');
  if (slash == std::string::npos) return "";
  std::string prefix = entries[0].name.substr(0, slash + 1);
  for (const ZipEntry& e : entries)
    if (e.name.compare(0, prefix.size(), prefix) != 0) return "";
  return prefix;
}

}  // namespace

std::unique_ptr<ZipArchive> ZipArchive::open(const std::string& path, const ZipLimits& limits) {
  return from_buffer(ir::map_file(path), path, limits);
}

std::unique_ptr<ZipArchive> ZipArchive::from_buffer(std::shared_ptr<const ir::Buffer> bytes,
                                                    const std::string& name, const ZipLimits& limits) {
  if (!bytes) fail("{}: not a zip archive (no bytes)", name);
  std::unique_ptr<ZipArchive> zip(new ZipArchive());
  zip->path_ = name;
  zip->limits_ = limits;
  zip->bytes_ = std::move(bytes);
  Indexer ix(zip->path_, *zip->bytes_, zip->limits_);
  Eocd eocd = ix.find_eocd();

  zip->entries_.resize(eocd.entries);
  uint64_t pos = eocd.cd_offset, end = eocd.cd_offset + eocd.cd_size;
  for (uint64_t i = 0; i < eocd.entries; ++i) {
    ZipEntry& e = zip->entries_[i];
    pos = ix.read_central(pos, end, i, e);
    if (!zip->by_name_.emplace(e.name, i).second) ix.bad_entry(e.name, "duplicate name");
  }

  // Every entry's data lies before the central directory and apart from every other entry's:
  // overlapping entries are how some zip bombs multiply their output.
  zip->data_offsets_.resize(eocd.entries);
  std::vector<uint64_t> order(eocd.entries);
  for (uint64_t i = 0; i < eocd.entries; ++i) {
    zip->data_offsets_[i] = ix.data_offset(zip->entries_[i], eocd.cd_offset);
    order[i] = i;
  }
  const std::vector<ZipEntry>& entries = zip->entries_;
  std::sort(order.begin(), order.end(),
            [&](uint64_t a, uint64_t b) { return entries[a].local_offset < entries[b].local_offset; });
  for (uint64_t k = 0; k + 1 < eocd.entries; ++k) {
    const ZipEntry &e = entries[order[k]], &next = entries[order[k + 1]];
    if (zip->data_offsets_[order[k]] + e.compressed_size > next.local_offset)
      ix.bad_entry(e.name, fmt::format("its data overlaps entry '{}'", next.name));
  }
  zip->prefix_ = common_prefix(zip->entries_);
  return zip;
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end() && !prefix_.empty()) it = by_name_.find(prefix_ + std::string(name));
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

const ZipEntry& ZipArchive::checked_entry(std::string_view name) const {
  const ZipEntry* e = find(name);
  if (!e) fail("{}: entry '{}': not in the archive", path_, name);
  auto bad = [&](const std::string& why) { fail("{}: entry '{}': {}", path_, e->name, why); };
  if (e->size > limits_.max_entry_bytes)
    bad(fmt::format("{} bytes, over the limit max_entry_bytes of {}", e->size, limits_.max_entry_bytes));
  if (e->method == 8 && static_cast<unsigned __int128>(e->compressed_size) * limits_.max_ratio < e->size)
    bad(fmt::format("{} bytes deflated to {}, over the limit max_ratio of {}", e->size, e->compressed_size,
                    limits_.max_ratio));
  if (e->size > limits_.max_total_bytes - std::min(total_read_, limits_.max_total_bytes))
    bad(fmt::format("{} bytes after {} already read, over the limit max_total_bytes of {}", e->size,
                    total_read_, limits_.max_total_bytes));
  total_read_ += e->size;
  return *e;
}

void ZipArchive::inflate_into(const ZipEntry& e, uint8_t* out) const {
  auto bad = [&](const std::string& why) { fail("{}: entry '{}': {}", path_, e.name, why); };
  const uint8_t* in = bytes_->data() + data_offsets_[&e - entries_.data()];
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) bad("cannot start inflating");
  constexpr uint64_t kChunk = std::numeric_limits<uInt>::max();
  uint64_t in_left = e.compressed_size, out_left = e.size;
  int ret = Z_OK;
  // The output is the declared size and no more: a stream that would write past it is
  // refused when it tries, so a bomb never gets more memory than its honest declaration.
  uint8_t spare = 0;
  bool into_spare = false;
  while (ret == Z_OK) {
    if (z.avail_in == 0 && in_left) {
      z.next_in = const_cast<Bytef*>(in);
      z.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
      in += z.avail_in;
      in_left -= z.avail_in;
    }
    if (z.avail_out == 0) {
      if (out_left) {
        z.next_out = out;
        z.avail_out = static_cast<uInt>(std::min(out_left, kChunk));
        out += z.avail_out;
        out_left -= z.avail_out;
      } else if (!into_spare) {
        into_spare = true;
        z.next_out = &spare;
        z.avail_out = 1;
      } else {
        break;
      }
    }
    ret = inflate(&z, Z_NO_FLUSH);
    if (ret == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) break;
  }
  bool over = into_spare && z.avail_out == 0;
  uint64_t produced = z.total_out;
  std::string msg = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (over) bad(fmt::format("inflates to more than its declared size of {} bytes", e.size));
  if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT) bad(fmt::format("corrupt deflate data ({})", msg));
  if (ret == Z_MEM_ERROR) bad("out of memory inflating");
  if (ret != Z_STREAM_END) bad(fmt::format("deflate data ends early, after {} of {} bytes", produced, e.size));
  if (produced != e.size) bad(fmt::format("inflates to {} bytes, not its declared size of {}", produced, e.size));
}

void ZipArchive::check_crc(const ZipEntry& e, const uint8_t* data) const {
  uint32_t crc = crc_of(data, e.size);
  if (crc != e.crc32) fail("{}: entry '{}': CRC-32 {:08x} does not match the recorded {:08x}", path_, e.name, crc, e.crc32);
}

std::string ZipArchive::read(std::string_view name) const {
  const ZipEntry& e = checked_entry(name);
  std::string out(e.size, '\0');
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  if (e.method == 0) {
    if (e.size) std::memcpy(dst, bytes_->data() + data_offsets_[&e - entries_.data()], e.size);
  } else {
    inflate_into(e, dst);
  }
  check_crc(e, dst);
  return out;
}

std::shared_ptr<const ir::Buffer> ZipArchive::read_buffer(std::string_view name) const {
  const ZipEntry& e = checked_entry(name);
  if (e.method == 0) {
    auto slice = std::make_shared<SliceBuffer>(bytes_, data_offsets_[&e - entries_.data()], e.size);
    check_crc(e, slice->data());
    return slice;
  }
  auto owned = std::make_shared<ir::OwnedBuffer>(e.size);
  inflate_into(e, owned->mutable_data());
  check_crc(e, owned->data());
  return owned;
}

}  // namespace kiln::frontend::torchscript
