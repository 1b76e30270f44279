#include "frontend/tensorflow/tensor_bundle.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "frontend/tensorflow/crc32c.h"
#include "frontend/tensorflow/proto/tf_tensor_bundle.pb.h"
#include "frontend/tensorflow/sstable.h"
#include "frontend/tensorflow/tf_types.h"
#include "frontend/tensorflow/varint.h"
#include "ir/error.h"

namespace kiln::frontend::tensorflow {
namespace {

constexpr int kBundleVersion = 1;  // the format version kiln reads (TF's kTensorBundleVersion)
// TF names shards with five digits (%05d); more shards than that is a hostile header.
constexpr int kMaxShards = 99999;

// A shard held in memory, for the in-memory constructor.
class StringBuffer final : public ir::Buffer {
 public:
  explicit StringBuffer(std::string bytes) : bytes_(std::move(bytes)) {}
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(bytes_.data()); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::string bytes_;
};

std::string dims_text(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

BundleEntry checked_entry(const kiln::tf::BundleEntryProto& proto, const std::string& where,
                          int num_shards, const ImportLimits& limits) {
  BundleEntry e;
  e.dtype = proto.dtype();
  e.num_slices = proto.slices_size();
  const auto& shape = proto.shape();
  if (shape.unknown_rank()) fail("{}: the shape is of unknown rank", where);
  if (shape.dim_size() > limits.max_rank) {
    fail("{}: rank {} is more than the limit of {}", where, shape.dim_size(), limits.max_rank);
  }
  uint64_t elements = 1;
  for (const auto& dim : shape.dim()) {
    if (dim.size() < 0) fail("{}: dim {} is unknown or negative", where, dim.size());
    if (static_cast<uint64_t>(dim.size()) > limits.max_elements ||
        __builtin_mul_overflow(elements, static_cast<uint64_t>(dim.size()), &elements) ||
        elements > limits.max_elements) {
      fail("{}: more elements than the limit of {}", where, limits.max_elements);
    }
    e.dims.push_back(dim.size());
  }
  // A partitioned variable's entry holds only dtype, shape and slices; its bytes are under
  // the slices' own keys.
  if (e.num_slices > 0) return e;
  if (proto.shard_id() < 0 || proto.shard_id() >= num_shards) {
    fail("{}: shard {} is not one of the bundle's {} shards", where, proto.shard_id(), num_shards);
  }
  if (proto.offset() < 0 || proto.size() < 0) {
    fail("{}: negative offset {} or size {}", where, proto.offset(), proto.size());
  }
  e.shard_id = proto.shard_id();
  e.offset = static_cast<uint64_t>(proto.offset());
  e.size = static_cast<uint64_t>(proto.size());
  e.masked_crc32c = proto.crc32c();
  return e;
}

uint64_t element_count(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);  // checked against the limits on open
  return n;
}

}  // namespace

TensorBundle::TensorBundle(const std::string& prefix, const ImportLimits& limits)
    : prefix_(prefix), index_path_(prefix + ".index"), limits_(limits) {
  const std::shared_ptr<const ir::Buffer> index = ir::map_file(index_path_);
  if (index->size() > limits_.max_file_bytes) {
    fail("{}: {} bytes, more than the limit of {}", index_path_, index->size(),
         limits_.max_file_bytes);
  }
  read_index(std::string(reinterpret_cast<const char*>(index->data()), index->size()));
  shards_.resize(static_cast<size_t>(num_shards_));
}

TensorBundle::TensorBundle(const std::string& prefix, std::string index_bytes,
                           std::vector<std::string> shards, const ImportLimits& limits)
    : prefix_(prefix), index_path_(prefix + ".index"), limits_(limits), in_memory_(true) {
  if (index_bytes.size() > limits_.max_file_bytes) {
    fail("{}: {} bytes, more than the limit of {}", index_path_, index_bytes.size(),
         limits_.max_file_bytes);
  }
  read_index(index_bytes);
  shards_.resize(static_cast<size_t>(num_shards_));
  for (size_t i = 0; i < shards.size() && i < shards_.size(); ++i) {
    shards_[i] = std::make_shared<StringBuffer>(std::move(shards[i]));
  }
}

void TensorBundle::read_index(const std::string& index_bytes) {
  const std::vector<SstableEntry> table =
      read_sstable(index_bytes, index_path_, SstableOptions{limits_.max_name_length});
  // The header's key "" sorts before every other key.
  if (table.empty() || !table.front().key.empty()) {
    fail("{}: no header entry (the empty key)", index_path_);
  }
  kiln::tf::BundleHeaderProto header;
  if (!header.ParseFromString(table.front().value)) {
    fail("{}: the header entry is not a BundleHeaderProto", index_path_);
  }
  if (header.num_shards() < 1 || header.num_shards() > kMaxShards) {
    fail("{}: the header gives {} shards; a bundle has 1 to {}", index_path_, header.num_shards(),
         kMaxShards);
  }
  num_shards_ = header.num_shards();
  // Tensor bytes are stored in the writer's byte order; kiln does not swap them.
  const bool host_little = std::endian::native == std::endian::little;
  switch (header.endianness()) {
    case kiln::tf::BundleHeaderProto::LITTLE:
      if (!host_little) fail("{}: the bundle is little-endian and this host is not", index_path_);
      break;
    case kiln::tf::BundleHeaderProto::BIG:
      if (host_little) {
        fail(
            "{}: the bundle was written big-endian; kiln reads bundles in the host's byte "
            "order (little-endian)",
            index_path_);
      }
      break;
    default:
      fail("{}: unknown endianness {} in the header", index_path_,
           static_cast<int>(header.endianness()));
  }
  if (header.version().min_consumer() > kBundleVersion) {
    fail("{}: the bundle needs a reader of format version {}; kiln reads version {}", index_path_,
         header.version().min_consumer(), kBundleVersion);
  }

  for (size_t i = 1; i < table.size(); ++i) {
    const std::string where = fmt::format("{}: key {}", index_path_, quote_key(table[i].key));
    kiln::tf::BundleEntryProto proto;
    if (!proto.ParseFromString(table[i].value)) fail("{}: not a BundleEntryProto", where);
    entries_.emplace(table[i].key, checked_entry(proto, where, num_shards_, limits_));
  }
}

std::string TensorBundle::shard_path(int id) const {
  return fmt::format("{}.data-{:05d}-of-{:05d}", prefix_, id, num_shards_);
}

bool TensorBundle::contains(const std::string& key) const {
  return entries_.count(key) != 0;
}

std::vector<std::string> TensorBundle::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) out.push_back(key);
  return out;
}

const BundleEntry& TensorBundle::entry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) fail("{}: no tensor under key {}", index_path_, quote_key(key));
  return it->second;
}

const ir::Buffer& TensorBundle::shard(const std::string& key, int id) const {
  auto& slot = shards_[static_cast<size_t>(id)];
  if (!slot) {
    if (in_memory_) fail("{}: not given (needed by key {})", shard_path(id), quote_key(key));
    try {
      slot = ir::map_file(shard_path(id));
    } catch (const Error& e) {
      fail("{} (needed by key {})", e.what(), quote_key(key));
    }
  }
  return *slot;
}

std::string_view TensorBundle::stored_bytes(const std::string& key, const BundleEntry& e) const {
  if (e.size > limits_.max_tensor_bytes) {
    fail("{}: key {}: {} bytes, more than the limit of {}", index_path_, quote_key(key), e.size,
         limits_.max_tensor_bytes);
  }
  const ir::Buffer& data = shard(key, e.shard_id);
  if (e.offset > data.size() || e.size > data.size() - e.offset) {
    fail("{}: key {}: {} bytes at offset {} run past the end of the file ({} bytes)",
         shard_path(e.shard_id), quote_key(key), e.size, e.offset, data.size());
  }
  return {reinterpret_cast<const char*>(data.data()) + e.offset, static_cast<size_t>(e.size)};
}

ir::Tensor TensorBundle::tensor(const std::string& key) const {
  const BundleEntry& e = entry(key);
  const std::string where = fmt::format("{}: key {}", index_path_, quote_key(key));
  if (e.num_slices > 0) {
    fail("{}: a partitioned variable ({} slices); kiln reads only whole tensors", where,
         e.num_slices);
  }
  const std::optional<ir::DType> dtype = tf_dtype(e.dtype);
  if (!dtype) fail("{}: dtype {} is not a numeric tensor", where, tf_dtype_name(e.dtype));
  const uint64_t elements = element_count(e.dims);
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(elements, ir::dtype_size(*dtype), &nbytes) ||
      nbytes > limits_.max_tensor_bytes) {
    fail("{}: {} elements of {} are more than the limit of {} bytes", where, elements,
         tf_dtype_name(e.dtype), limits_.max_tensor_bytes);
  }
  if (e.size != nbytes) {
    fail("{}: size {} bytes does not match shape {} of {} ({} bytes)", where, e.size,
         dims_text(e.dims), tf_dtype_name(e.dtype), nbytes);
  }
  const std::string_view bytes = stored_bytes(key, e);
  const uint32_t actual = crc32c(bytes.data(), bytes.size());
  if (actual != unmask_crc(e.masked_crc32c)) {
    fail("{}: bad checksum (stored {:08x}, computed {:08x} over {} bytes of {})", where,
         unmask_crc(e.masked_crc32c), actual, bytes.size(), shard_path(e.shard_id));
  }
  ir::Tensor t(*dtype, e.dims);
  if (nbytes > 0) std::memcpy(t.mutable_raw(), bytes.data(), bytes.size());
  if (*dtype == ir::DType::Bool) {
    // TF's bools are bytes; any other value than 0 or 1 would not be a valid C++ bool.
    auto* b = static_cast<uint8_t*>(t.mutable_raw());
    for (uint64_t i = 0; i < elements; ++i) b[i] = b[i] != 0;
  }
  return t;
}

// TF's layout (tensor_bundle.cc, WriteStringTensor): a varint64 length per element, a masked
// CRC32C (fixed32) of those lengths, then the elements' bytes. The CRCs run over the lengths
// as fixed-width little-endian integers (uint32, or uint64 for lengths past 4 GiB), not over
// their varint bytes; the entry's CRC continues over the stored length CRC and the bytes.
std::vector<std::string> TensorBundle::strings(const std::string& key) const {
  const BundleEntry& e = entry(key);
  const std::string where = fmt::format("{}: key {}", index_path_, quote_key(key));
  if (e.dtype != kTfString && e.dtype != kTfString + 100) {
    fail("{}: dtype {}, not DT_STRING", where, tf_dtype_name(e.dtype));
  }
  if (e.num_slices > 0) {
    fail("{}: a partitioned variable ({} slices); kiln reads only whole tensors", where,
         e.num_slices);
  }
  const uint64_t elements = element_count(e.dims);
  // Each length takes at least one byte: this bounds the allocations below by the file.
  if (e.size < 4 || e.size - 4 < elements) {
    fail("{}: size {} bytes is too small for {} string lengths and their checksum", where, e.size,
         elements);
  }
  std::string_view in = stored_bytes(key, e);

  std::vector<uint64_t> lengths(elements);
  uint32_t crc = 0;
  for (uint64_t& length : lengths) {
    if (!get_varint64(in, length)) fail("{}: malformed string length", where);
    uint8_t le[8];
    const size_t width = length <= UINT32_MAX ? 4 : 8;
    for (size_t i = 0; i < width; ++i) le[i] = static_cast<uint8_t>(length >> (8 * i));
    crc = crc32c_extend(crc, le, width);
  }
  uint32_t stored_length_crc = 0;
  if (!get_fixed32(in, stored_length_crc)) fail("{}: the string lengths run past the size", where);
  if (unmask_crc(stored_length_crc) != crc) {
    fail("{}: bad checksum of the string lengths (stored {:08x}, computed {:08x})", where,
         unmask_crc(stored_length_crc), crc);
  }
  uint8_t stored_le[4];
  for (size_t i = 0; i < 4; ++i) stored_le[i] = static_cast<uint8_t>(stored_length_crc >> (8 * i));
  crc = crc32c_extend(crc, stored_le, 4);

  std::vector<std::string> out;
  out.reserve(elements);
  for (uint64_t length : lengths) {
    if (length > in.size())
      fail("{}: the strings run past the entry's size of {} bytes", where, e.size);
    out.emplace_back(in.substr(0, length));
    crc = crc32c_extend(crc, in.data(), length);
    in.remove_prefix(length);
  }
  if (!in.empty()) fail("{}: {} bytes after the last string", where, in.size());
  if (crc != unmask_crc(e.masked_crc32c)) {
    fail("{}: bad checksum (stored {:08x}, computed {:08x})", where, unmask_crc(e.masked_crc32c),
         crc);
  }
  return out;
}

}  // namespace kiln::frontend::tensorflow
