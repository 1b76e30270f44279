// Test-side writers of TensorFlow's tensor bundle, byte by byte, since there is no TensorFlow
// in C++ here: LevelDB blocks and tables (prefix-compressed entries, restart points, trailers
// with masked CRC32C, the footer) and bundles (header, entries, data shard). The pieces are
// exposed so that tests can assemble hostile variants.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/tensorflow/crc32c.h"
#include "frontend/tensorflow/proto/tf_tensor_bundle.pb.h"

namespace kiln::test::tf {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

inline void put_fixed32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}

// A block's contents: entries prefix-compressed against the key before them, a restart point
// (a whole key) every `restart_interval` entries, then the restart array and its count. The
// keys are written in the order given, sorted or not.
inline std::string block_of(const KeyValues& entries, int restart_interval = 16) {
  std::string out, previous;
  std::vector<uint32_t> restarts;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [key, value] = entries[i];
    size_t shared = 0;
    if (i % restart_interval == 0) {
      restarts.push_back(static_cast<uint32_t>(out.size()));
    } else {
      while (shared < key.size() && shared < previous.size() && key[shared] == previous[shared]) {
        ++shared;
      }
    }
    put_varint(out, shared);
    put_varint(out, key.size() - shared);
    put_varint(out, value.size());
    out += key.substr(shared);
    out += value;
    previous = key;
  }
  if (restarts.empty()) restarts.push_back(0);
  for (uint32_t r : restarts) put_fixed32(out, r);
  put_fixed32(out, static_cast<uint32_t>(restarts.size()));
  return out;
}

struct Handle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

inline std::string handle_bytes(Handle h) {
  std::string out;
  put_varint(out, h.offset);
  put_varint(out, h.size);
  return out;
}

// Appends `contents` and its trailer (compression type, masked CRC32C of contents + type).
inline Handle append_block(std::string& file, const std::string& contents, uint8_t type = 0) {
  const Handle h{file.size(), contents.size()};
  file += contents;
  file += static_cast<char>(type);
  using kiln::frontend::tensorflow::crc32c;
  using kiln::frontend::tensorflow::mask_crc;
  put_fixed32(file, mask_crc(crc32c(file.data() + h.offset, contents.size() + 1)));
  return h;
}

inline std::string footer_of(Handle metaindex, Handle index) {
  std::string out = handle_bytes(metaindex) + handle_bytes(index);
  out.resize(40, '\0');
  put_fixed32(out, 0x8b80fb57u);
  put_fixed32(out, 0xdb477524u);
  return out;
}

// A whole table: data blocks of about `block_bytes`, an empty metaindex block, the index
// block (each data block's last key, restart interval 1 as LevelDB writes it), the footer.
inline std::string table_of(const KeyValues& entries, size_t block_bytes = 4096) {
  std::string file;
  KeyValues index, pending;
  size_t pending_bytes = 0;
  auto flush = [&] {
    if (pending.empty()) return;
    index.emplace_back(pending.back().first, handle_bytes(append_block(file, block_of(pending))));
    pending.clear();
    pending_bytes = 0;
  };
  for (const auto& kv : entries) {
    pending.push_back(kv);
    pending_bytes += kv.first.size() + kv.second.size() + 3;
    if (pending_bytes >= block_bytes) flush();
  }
  flush();
  const Handle metaindex = append_block(file, block_of({}));
  const Handle index_handle = append_block(file, block_of(index, 1));
  return file + footer_of(metaindex, index_handle);
}

// A one-shard bundle built in memory: add tensors, then index() and data.
struct BundleWriter {
  kiln::tf::BundleHeaderProto header;
  std::map<std::string, kiln::tf::BundleEntryProto> entries;
  std::string data;  // shard 0

  BundleWriter() { header.set_num_shards(1); }

  kiln::tf::BundleEntryProto& add_bytes(const std::string& key, int dtype,
                                        const std::vector<int64_t>& dims, const std::string& bytes,
                                        uint32_t crc) {
    auto& e = entries[key];
    e.set_dtype(dtype);
    for (int64_t d : dims) e.mutable_shape()->add_dim()->set_size(d);
    e.set_shard_id(0);
    e.set_offset(static_cast<int64_t>(data.size()));
    e.set_size(static_cast<int64_t>(bytes.size()));
    e.set_crc32c(kiln::frontend::tensorflow::mask_crc(crc));
    data += bytes;
    return e;
  }

  template <class T>
  kiln::tf::BundleEntryProto& add(const std::string& key, int dtype,
                                  const std::vector<int64_t>& dims, const std::vector<T>& values) {
    std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    return add_bytes(key, dtype, dims, bytes,
                     kiln::frontend::tensorflow::crc32c(bytes.data(), bytes.size()));
  }

  // TF's string layout: varint64 lengths, their masked CRC (over the lengths as uint32),
  // then the bytes; the entry's CRC continues over the length CRC and the bytes.
  kiln::tf::BundleEntryProto& add_strings(const std::string& key, const std::vector<int64_t>& dims,
                                          const std::vector<std::string>& values) {
    using kiln::frontend::tensorflow::crc32c_extend;
    std::string bytes, le;
    uint32_t crc = 0;
    for (const auto& s : values) {
      put_varint(bytes, s.size());
      le.clear();
      put_fixed32(le, static_cast<uint32_t>(s.size()));
      crc = crc32c_extend(crc, le.data(), 4);
    }
    le.clear();
    put_fixed32(le, kiln::frontend::tensorflow::mask_crc(crc));
    bytes += le;
    crc = crc32c_extend(crc, le.data(), 4);
    for (const auto& s : values) {
      bytes += s;
      crc = crc32c_extend(crc, s.data(), s.size());
    }
    return add_bytes(key, 7, dims, bytes, crc);
  }

  KeyValues index_entries() const {
    KeyValues kv{{"", header.SerializeAsString()}};
    for (const auto& [key, e] : entries) kv.emplace_back(key, e.SerializeAsString());
    return kv;
  }
  std::string index(size_t block_bytes = 4096) const {
    return table_of(index_entries(), block_bytes);
  }
};

}  // namespace kiln::test::tf
