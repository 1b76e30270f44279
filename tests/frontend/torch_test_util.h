// Builders for the PyTorch frontend's tests: zip archives written byte by byte (stored or
// deflated, ZIP64, data descriptors, and any field overridden to make hostile variants) and
// pickles assembled opcode by opcode.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace kiln::test {

// The message of the kiln::Error that `fn` throws ("" if none).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

inline std::shared_ptr<const ir::Buffer> buffer_of(const std::string& bytes) {
  auto b = std::make_shared<ir::OwnedBuffer>(bytes.size());
  if (!bytes.empty()) std::memcpy(b->mutable_data(), bytes.data(), bytes.size());
  return b;
}

inline std::string deflate_raw(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline uint32_t crc_of(const std::string& data) {
  return static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

struct ZipFile {
  std::string name;
  std::string data;            // uncompressed
  bool deflate = false;
  // Overrides of what the central directory records, for hostile archives.
  std::optional<uint64_t> size;
  std::optional<uint32_t> crc;
  std::optional<uint64_t> local_offset;
  std::optional<uint16_t> method;
  uint16_t flags = 0;
};

struct ZipOptions {
  bool zip64 = false;        // ZIP64 extra fields everywhere and the ZIP64 end records
  bool descriptors = false;  // sizes and CRC after the data, zero in the local header
  std::string comment;
  size_t pad_to = 0;         // align data with an "FB" extra field, as PyTorch does (64)
};

// The archive's bytes, and where each part landed.
struct ZipBytes {
  std::string bytes;
  std::vector<size_t> local;  // local header offsets
  size_t cd = 0;              // central directory offset
  size_t eocd = 0;            // end of central directory record offset
};

inline void put16(std::string& s, uint64_t v) { for (int k = 0; k < 2; ++k) s += static_cast<char>(v >> (8 * k)); }
inline void put32(std::string& s, uint64_t v) { for (int k = 0; k < 4; ++k) s += static_cast<char>(v >> (8 * k)); }
inline void put64(std::string& s, uint64_t v) { for (int k = 0; k < 8; ++k) s += static_cast<char>(v >> (8 * k)); }
inline void poke32(std::string& s, size_t at, uint32_t v) {
  for (int k = 0; k < 4; ++k) s[at + k] = static_cast<char>(v >> (8 * k));
}
inline void poke16(std::string& s, size_t at, uint16_t v) {
  for (int k = 0; k < 2; ++k) s[at + k] = static_cast<char>(v >> (8 * k));
}

inline ZipBytes make_zip(const std::vector<ZipFile>& files, const ZipOptions& opt = {}) {
  ZipBytes z;
  std::string& out = z.bytes;
  struct Rec {
    uint64_t csize, size, offset;
    uint32_t crc;
    uint16_t method;
  };
  std::vector<Rec> recs;
  for (const ZipFile& f : files) {
    std::string payload = f.deflate ? deflate_raw(f.data) : f.data;
    Rec r{payload.size(), f.data.size(), out.size(), crc_of(f.data), static_cast<uint16_t>(f.deflate ? 8 : 0)};
    z.local.push_back(out.size());
    uint16_t flags = f.flags | (opt.descriptors ? 0x8 : 0);
    std::string extra;
    if (opt.zip64) {
      put16(extra, 1);
      put16(extra, 16);
      put64(extra, opt.descriptors ? 0 : r.size);
      put64(extra, opt.descriptors ? 0 : r.csize);
    }
    if (opt.pad_to) {
      size_t start = out.size() + 30 + f.name.size() + extra.size() + 4;
      size_t pad = (opt.pad_to - start % opt.pad_to) % opt.pad_to;
      put16(extra, 0x4246);  // "FB"
      put16(extra, pad);
      extra += std::string(pad, 'Z');
    }
    put32(out, 0x04034b50);
    put16(out, opt.zip64 ? 45 : 20);
    put16(out, flags);
    put16(out, r.method);
    put16(out, 0);
    put16(out, 0x21);
    put32(out, opt.descriptors ? 0 : r.crc);
    put32(out, opt.descriptors ? 0 : opt.zip64 ? 0xffffffff : r.csize);
    put32(out, opt.descriptors ? 0 : opt.zip64 ? 0xffffffff : r.size);
    put16(out, f.name.size());
    put16(out, extra.size());
    out += f.name + extra + payload;
    if (opt.descriptors) {
      put32(out, 0x08074b50);
      put32(out, r.crc);
      if (opt.zip64) {
        put64(out, r.csize);
        put64(out, r.size);
      } else {
        put32(out, r.csize);
        put32(out, r.size);
      }
    }
    if (f.size) r.size = *f.size;
    if (f.crc) r.crc = *f.crc;
    if (f.local_offset) r.offset = *f.local_offset;
    if (f.method) r.method = *f.method;
    recs.push_back(r);
  }
  z.cd = out.size();
  for (size_t i = 0; i < files.size(); ++i) {
    const Rec& r = recs[i];
    std::string extra;
    if (opt.zip64) {
      put16(extra, 1);
      put16(extra, 24);
      put64(extra, r.size);
      put64(extra, r.csize);
      put64(extra, r.offset);
    }
    put32(out, 0x02014b50);
    put16(out, 0x031e);
    put16(out, opt.zip64 ? 45 : 20);
    put16(out, files[i].flags | (opt.descriptors ? 0x8 : 0));
    put16(out, r.method);
    put16(out, 0);
    put16(out, 0x21);
    put32(out, r.crc);
    put32(out, opt.zip64 ? 0xffffffff : r.csize);
    put32(out, opt.zip64 ? 0xffffffff : r.size);
    put16(out, files[i].name.size());
    put16(out, extra.size());
    put16(out, 0);
    put16(out, 0);
    put16(out, 0);
    put32(out, 0);
    put32(out, opt.zip64 ? 0xffffffff : r.offset);
    out += files[i].name + extra;
  }
  size_t cd_size = out.size() - z.cd;
  if (opt.zip64) {
    size_t eocd64 = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 0x031e);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, files.size());
    put64(out, files.size());
    put64(out, cd_size);
    put64(out, z.cd);
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, eocd64);
    put32(out, 1);
  }
  z.eocd = out.size();
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, opt.zip64 ? 0xffff : files.size());
  put16(out, opt.zip64 ? 0xffff : files.size());
  put32(out, opt.zip64 ? 0xffffffff : cd_size);
  put32(out, opt.zip64 ? 0xffffffff : z.cd);
  put16(out, opt.comment.size());
  out += opt.comment;
  return z;
}

// A pickle, opcode by opcode (pickletools' names).
struct Pickle {
  std::string b;
  Pickle() { op(0x80).op(2); }  // PROTO 2
  Pickle& op(uint8_t c) { b += static_cast<char>(c); return *this; }
  Pickle& raw(const std::string& s) { b += s; return *this; }
  Pickle& le(uint64_t v, int n) { for (int k = 0; k < n; ++k) b += static_cast<char>(v >> (8 * k)); return *this; }
  Pickle& mark() { return op('('); }
  Pickle& stop() { return op('.'); }
  Pickle& none() { return op('N'); }
  Pickle& boolean(bool v) { return op(v ? 0x88 : 0x89); }
  Pickle& int1(uint8_t v) { return op('K').le(v, 1); }
  Pickle& int2(uint16_t v) { return op('M').le(v, 2); }
  Pickle& int4(int32_t v) { return op('J').le(static_cast<uint32_t>(v), 4); }
  Pickle& long1(int64_t v, int n = 8) { return op(0x8a).le(n, 1).le(static_cast<uint64_t>(v), n); }
  // Small ints the way pickles write them.
  Pickle& integer(int64_t v) {
    if (v >= 0 && v < 256) return int1(static_cast<uint8_t>(v));
    if (v >= INT32_MIN && v <= INT32_MAX) return int4(static_cast<int32_t>(v));
    return long1(v);
  }
  Pickle& real(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    op('G');
    for (int k = 7; k >= 0; --k) b += static_cast<char>(bits >> (8 * k));
    return *this;
  }
  Pickle& str(const std::string& s) { return op('X').le(s.size(), 4).raw(s); }
  Pickle& global(const std::string& module, const std::string& name) { return op('c').raw(module + "\n" + name + "\n"); }
  Pickle& put(uint8_t i) { return op('q').le(i, 1); }
  Pickle& get(uint8_t i) { return op('h').le(i, 1); }
  Pickle& tuple() { return op('t'); }
  Pickle& empty_tuple() { return op(')'); }
  Pickle& reduce() { return op('R'); }
  Pickle& ints_tuple(const std::vector<int64_t>& v) {
    mark();
    for (int64_t x : v) integer(x);
    return tuple();
  }
  // ('storage', torch.<type>, key, 'cpu', numel) BINPERSID
  Pickle& storage(const std::string& type, const std::string& key, int64_t numel) {
    mark().str("storage").global("torch", type).str(key).str("cpu").integer(numel).tuple();
    return op('Q');
  }
  // _rebuild_tensor_v2(<storage pushed by `storage_ops`>, offset, sizes, strides, False, OrderedDict())
  template <class StorageOps>
  Pickle& tensor(StorageOps storage_ops, int64_t offset, const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides, bool requires_grad = false) {
    global("torch._utils", "_rebuild_tensor_v2").mark();
    storage_ops(*this);
    integer(offset).ints_tuple(sizes).ints_tuple(strides).boolean(requires_grad);
    global("collections", "OrderedDict").empty_tuple().reduce();
    return tuple().reduce();
  }
};

// Storages for the unpickler from a map of key -> bytes, counting the loads.
struct Storages {
  std::map<std::string, std::string> bytes;
  std::map<std::string, int> loads;
  template <class T>
  void add(const std::string& key, const std::vector<T>& values) {
    bytes[key] = std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  auto loader() {
    return [this](const std::string& key, ir::DType, uint64_t) -> std::shared_ptr<const ir::Buffer> {
      ++loads[key];
      auto it = bytes.find(key);
      if (it == bytes.end()) fail("no storage '{}'", key);
      return buffer_of(it->second);
    };
  }
};

}  // namespace kiln::test
