// TensorFlow's tensor bundle: the `variables/` folder of a SavedModel (and TF2 checkpoints).
// `PREFIX.index` is a LevelDB table whose key "" holds a BundleHeaderProto and every other key
// a BundleEntryProto; the tensors' bytes are in `PREFIX.data-NNNNN-of-MMMMM`, each entry naming
// its shard, offset, size and masked CRC32C. Everything read is untrusted and checked against
// the ImportLimits; errors are kiln::Error naming the file and the key.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/onnx/onnx_importer.h"  // ImportLimits
#include "ir/tensor.h"

namespace kiln::frontend::tensorflow {

// One BundleEntryProto, checked for shape (known rank, dims >= 0, rank and element count
// within the limits) and location (shard in range, offset and size >= 0).
struct BundleEntry {
  int dtype = 0;  // TensorFlow's DataType code (tf_types.h)
  std::vector<int64_t> dims;
  int shard_id = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t masked_crc32c = 0;
  int num_slices = 0;  // > 0: a partitioned variable, its bytes under other keys
};

class TensorBundle {
 public:
  // Reads and checks `prefix`.index (e.g. "saved/variables/variables"); the data shards are
  // opened when a tensor first needs them.
  TensorBundle(const std::string& prefix, const ImportLimits& limits);
  // A bundle held in memory (tests, fuzzing): the index file's bytes and the shards' bytes by
  // shard id. `prefix` only names the bundle in messages, as if it were on disk.
  TensorBundle(const std::string& prefix, std::string index_bytes, std::vector<std::string> shards,
               const ImportLimits& limits);

  const std::string& index_path() const { return index_path_; }
  int num_shards() const { return num_shards_; }
  // The data file of shard `id`: PREFIX.data-%05d-of-%05d.
  std::string shard_path(int id) const;

  // Tensor keys, sorted; the header's key "" is not one of them.
  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;
  const BundleEntry& entry(const std::string& key) const;

  // The numeric tensor under `key`, its CRC verified. Strings, resources and variants are
  // refused (see strings()), and so are partitioned variables.
  ir::Tensor tensor(const std::string& key) const;
  // The elements of the DT_STRING tensor under `key` in row-major order, both of its CRCs
  // verified. `_CHECKPOINTABLE_OBJECT_GRAPH` is one: a scalar holding a serialized
  // TrackableObjectGraph.
  std::vector<std::string> strings(const std::string& key) const;

 private:
  void read_index(const std::string& index_bytes);
  // The bytes [entry.offset, entry.offset + entry.size) of `key`'s shard, bounds-checked.
  std::string_view stored_bytes(const std::string& key, const BundleEntry& entry) const;
  const ir::Buffer& shard(const std::string& key, int id) const;

  std::string prefix_;
  std::string index_path_;
  ImportLimits limits_;
  int num_shards_ = 0;
  std::map<std::string, BundleEntry> entries_;
  bool in_memory_ = false;
  // Shards by id, mapped (or, in memory, wrapped) on first use: reading tensors from several
  // threads at once needs a lock around the bundle.
  mutable std::vector<std::shared_ptr<const ir::Buffer>> shards_;
};

}  // namespace kiln::frontend::tensorflow
