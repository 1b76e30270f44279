// TEMPORARY, linked only into test_pt2_import (never into a library): stand-ins for the zip
// reader and the unpickler of frontend/torchscript/, which other branches are writing. The
// zip reader reads stored entries (all that PyTorch's writers produce for .pt2 files) with
// bounds checks but no CRC check; the unpickler refuses everything. Delete this file when
// kiln_frontend_torchscript is a real library.
#include <map>

#include "frontend/torchscript/pickle.h"
#include "frontend/torchscript/zip_archive.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {
namespace {

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) { return u16(p) | (static_cast<uint32_t>(u16(p + 2)) << 16); }
uint64_t u64(const uint8_t* p) { return u32(p) | (static_cast<uint64_t>(u32(p + 4)) << 32); }

class SubBuffer final : public ir::Buffer {
 public:
  SubBuffer(std::shared_ptr<const ir::Buffer> parent, size_t offset, size_t size)
      : parent_(std::move(parent)), offset_(offset), size_(size) {}
  const uint8_t* data() const override { return parent_->data() + offset_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<const ir::Buffer> parent_;
  size_t offset_, size_;
};

}  // namespace

std::unique_ptr<ZipArchive> ZipArchive::open(const std::string& path, const ZipLimits& limits) {
  return from_buffer(ir::map_file(path), path, limits);
}

std::unique_ptr<ZipArchive> ZipArchive::from_buffer(std::shared_ptr<const ir::Buffer> bytes, const std::string& name,
                                                    const ZipLimits& limits) {
  std::unique_ptr<ZipArchive> z(new ZipArchive());
  z->path_ = name;
  z->bytes_ = bytes;
  z->limits_ = limits;
  const uint8_t* p = bytes->data();
  const uint64_t n = bytes->size();
  if (n < 22) fail("{}: not a zip archive ({} bytes)", name, n);
  uint64_t eocd = UINT64_MAX;
  for (uint64_t at = n - 22;; --at) {
    if (u32(p + at) == 0x06054b50) {
      eocd = at;
      break;
    }
    if (at == 0 || n - at > 22 + 65535) break;
  }
  if (eocd == UINT64_MAX) fail("{}: not a zip archive (no end of central directory)", name);
  uint64_t count = u16(p + eocd + 10), cd_offset = u32(p + eocd + 16);
  if ((count == 0xFFFF || cd_offset == 0xFFFFFFFF) && eocd >= 20 && u32(p + eocd - 20) == 0x07064b50) {
    uint64_t z64 = u64(p + eocd - 20 + 8);
    if (z64 > n - 56 || u32(p + z64) != 0x06064b50) fail("{}: bad zip64 end of central directory", name);
    count = u64(p + z64 + 32);
    cd_offset = u64(p + z64 + 48);
  }
  if (count > limits.max_entries) fail("{}: {} entries, over the limit", name, count);
  uint64_t at = cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    if (at > n || n - at < 46 || u32(p + at) != 0x02014b50) fail("{}: bad central directory entry {}", name, i);
    ZipEntry e;
    e.method = u16(p + at + 10);
    e.crc32 = u32(p + at + 16);
    e.compressed_size = u32(p + at + 20);
    e.size = u32(p + at + 24);
    uint64_t name_len = u16(p + at + 28), extra_len = u16(p + at + 30), comment_len = u16(p + at + 32);
    e.local_offset = u32(p + at + 42);
    if (n - at - 46 < name_len + extra_len + comment_len) fail("{}: central directory entry {} overruns", name, i);
    e.name.assign(reinterpret_cast<const char*>(p + at + 46), name_len);
    const uint8_t* extra = p + at + 46 + name_len;
    for (uint64_t x = 0; x + 4 <= extra_len;) {
      uint16_t id = u16(extra + x), len = u16(extra + x + 2);
      if (x + 4 + len > extra_len) break;
      if (id == 0x0001) {
        const uint8_t* f = extra + x + 4;
        uint64_t left = len;
        auto take = [&](uint64_t& v) {
          if (v == 0xFFFFFFFF && left >= 8) {
            v = u64(f);
            f += 8;
            left -= 8;
          }
        };
        take(e.size);
        take(e.compressed_size);
        take(e.local_offset);
      }
      x += 4 + len;
    }
    if (e.name.find("..") != std::string::npos || (!e.name.empty() && e.name[0] == '/'))
      fail("{}: entry name '{}' leaves the archive", name, e.name);
    z->by_name_[e.name] = z->entries_.size();
    z->entries_.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
  if (!z->entries_.empty()) {
    const std::string& first = z->entries_[0].name;
    size_t slash = first.find('/');
    std::string prefix = slash == std::string::npos ? "" : first.substr(0, slash + 1);
    for (const ZipEntry& e : z->entries_)
      if (!prefix.empty() && e.name.rfind(prefix, 0) != 0) prefix.clear();
    z->prefix_ = prefix;
  }
  return z;
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end() && !prefix_.empty()) it = by_name_.find(prefix_ + std::string(name));
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

std::shared_ptr<const ir::Buffer> ZipArchive::read_buffer(std::string_view name) const {
  const ZipEntry* e = find(name);
  if (!e) fail("{}: no entry '{}'", path_, name);
  if (e->method != 0) fail("{}: entry '{}' is compressed (the test stub reads stored entries only)", path_, name);
  const uint8_t* p = bytes_->data();
  const uint64_t n = bytes_->size();
  if (e->local_offset > n || n - e->local_offset < 30 || u32(p + e->local_offset) != 0x04034b50)
    fail("{}: entry '{}': bad local header", path_, name);
  uint64_t data = e->local_offset + 30 + u16(p + e->local_offset + 26) + u16(p + e->local_offset + 28);
  if (data > n || n - data < e->size) fail("{}: entry '{}' reaches past the end of the file", path_, name);
  if (e->size > limits_.max_entry_bytes) fail("{}: entry '{}' is over the entry size limit", path_, name);
  return std::make_shared<SubBuffer>(bytes_, data, e->size);
}

std::string ZipArchive::read(std::string_view name) const {
  auto b = read_buffer(name);
  return std::string(reinterpret_cast<const char*>(b->data()), b->size());
}

PyRef unpickle(std::string_view, const std::string& where, const StorageLoader&, const PickleLimits&) {
  fail("{}: the unpickler is not linked into this test (torchscript_stub_for_tests.cpp)", where);
}

std::string py_kind_name(const PyObject& o) { return fmt::format("kind {}", static_cast<int>(o.kind)); }

}  // namespace kiln::frontend::torchscript
