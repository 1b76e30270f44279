// TensorFlow's tensor bundle reader: CRC32C, the LevelDB table reader and TensorBundle, on
// bundles written byte by byte by tf_bundle_writer.h, and, when present, the SavedModels of
// models/tensorflow/ written by TensorFlow. Hostile bundles: test_tf_bundle_hostile.cpp.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "frontend/tensorflow/crc32c.h"
#include "frontend/tensorflow/sstable.h"
#include "frontend/tensorflow/tensor_bundle.h"
#include "ir/error.h"
#include "tf_bundle_test_util.h"
#include "tf_bundle_writer.h"

using namespace kiln;
using namespace kiln::frontend::tensorflow;
using namespace kiln::test::tf;
namespace fs = std::filesystem;

TEST_CASE("crc32c: known vectors, masking, and the portable and dispatched versions agree") {
  CHECK(crc32c("123456789", 9) == 0xe3069283u);
  const std::string zeros(32, '\0');
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8a9136aau);
  CHECK(crc32c("", 0) == 0u);
  CHECK(crc32c_extend(crc32c("1234", 4), "56789", 5) == 0xe3069283u);
  for (uint32_t c : {0u, 1u, 0xe3069283u, 0xffffffffu}) CHECK(unmask_crc(mask_crc(c)) == c);
  CHECK(mask_crc(0) == 0xa282ead8u);

  std::mt19937 rng(7);
  std::string bytes(1000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (size_t start : {0, 1, 3, 7}) {
    for (size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 500, 993}) {
      CHECK(crc32c_extend(5, bytes.data() + start, n) ==
            crc32c_extend_portable(5, bytes.data() + start, n));
    }
  }
}

TEST_CASE("sstable: many keys over many blocks and restart points read back in order") {
  KeyValues kv;
  for (int i = 0; i < 500; ++i) {
    char key[64];
    std::snprintf(key, sizeof key, "layer_%03d/sub/.ATTRIBUTES/VARIABLE_VALUE", i);
    kv.emplace_back(key, std::string(static_cast<size_t>(i % 7), static_cast<char>('a' + i % 26)));
  }
  for (size_t block_bytes : {1, 200, 4096, 1 << 20}) {
    const auto entries = read_sstable(table_of(kv, block_bytes), "t.index");
    REQUIRE(entries.size() == kv.size());
    for (size_t i = 0; i < kv.size(); ++i) {
      CHECK(entries[i].key == kv[i].first);
      CHECK(entries[i].value == kv[i].second);
    }
  }
  CHECK(read_sstable(table_of({}), "empty.index").empty());
}

TEST_CASE("sstable: verify_checksums off reads a block whose CRC is wrong") {
  std::string table = table_of({{"a", "1"}, {"b", "2"}});
  table[4] ^= 1;  // a byte of the value "1" in the data block at offset 0
  CHECK_THROWS_WITH_AS(read_sstable(table, "t.index"),
                       doctest::Contains("t.index: data block at offset 0: bad checksum"), Error);
  SstableOptions options;
  options.verify_checksums = false;
  const auto entries = read_sstable(table, "t.index", options);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].value == "0");
}

TEST_CASE("bundle: float, double, int32, int64, bool, half, bfloat16 and uint8 round trip") {
  BundleWriter w;
  w.add<float>("f32", 1, {2, 3}, {1.5f, -2, 3, 4, 5, 6.25f});
  w.add<double>("f64", 2, {2}, {1e300, -0.5});
  w.add<int32_t>("i32", 3, {4}, {1, -2, 3, INT32_MIN});
  w.add<int64_t>("i64", 9, {}, {INT64_MAX});
  w.add<uint8_t>("bool", 10, {3}, {1, 0, 7});
  w.add<uint16_t>("f16", 19, {2}, {0x3c00, 0xc000});  // 1.0, -2.0
  w.add<uint16_t>("bf16", 14, {1}, {0x3f80});         // 1.0
  w.add<uint8_t>("u8", 4, {2, 1}, {200, 3});
  w.add<float>("empty", 1, {0, 5}, {});
  w.add<float>("ref", 101, {1}, {9.0f});  // DT_FLOAT_REF (a TF1 variable)
  const TensorBundle b = bundle_of(w.index(), w.data);
  CHECK(b.num_shards() == 1);
  CHECK(b.index_path() == kIndex);
  CHECK(b.keys() == std::vector<std::string>{"bf16", "bool", "empty", "f16", "f32", "f64", "i32",
                                             "i64", "ref", "u8"});

  const ir::Tensor f32 = b.tensor("f32");
  CHECK(f32.dtype() == ir::DType::F32);
  CHECK(f32.dims() == std::vector<int64_t>{2, 3});
  CHECK(values_of<float>(f32) == std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f});
  CHECK(values_of<double>(b.tensor("f64")) == std::vector<double>{1e300, -0.5});
  CHECK(values_of<int32_t>(b.tensor("i32")) == std::vector<int32_t>{1, -2, 3, INT32_MIN});
  const ir::Tensor i64 = b.tensor("i64");
  CHECK(i64.rank() == 0);
  CHECK(values_of<int64_t>(i64) == std::vector<int64_t>{INT64_MAX});
  const ir::Tensor flags = b.tensor("bool");
  CHECK(flags.dtype() == ir::DType::Bool);
  CHECK(values_of<uint8_t>(flags) == std::vector<uint8_t>{1, 0, 1});  // 7 read as true
  const ir::Tensor half = b.tensor("f16");
  CHECK(half.dtype() == ir::DType::F16);
  CHECK(half.as_double(0) == 1.0);
  CHECK(half.as_double(1) == -2.0);
  CHECK(b.tensor("bf16").dtype() == ir::DType::BF16);
  CHECK(b.tensor("bf16").as_double(0) == 1.0);
  CHECK(values_of<uint8_t>(b.tensor("u8")) == std::vector<uint8_t>{200, 3});
  CHECK(b.tensor("empty").numel() == 0);
  CHECK(b.tensor("ref").as_double(0) == 9.0);
}

TEST_CASE("bundle: string tensors, scalar and not, short and long") {
  BundleWriter w;
  std::string graph = "\x0a\x05hello";
  graph += std::string(300, 'x');  // a length of two varint bytes
  w.add_strings("_CHECKPOINTABLE_OBJECT_GRAPH", {}, {graph});
  const std::vector<std::string> words{"", "a", std::string("b\0c", 3), "last"};
  w.add_strings("words", {2, 2}, words);
  w.add_strings("none", {0}, {});
  const TensorBundle b = bundle_of(w.index(), w.data);
  CHECK(b.strings("_CHECKPOINTABLE_OBJECT_GRAPH") == std::vector<std::string>{graph});
  CHECK(b.strings("words") == words);
  CHECK(b.strings("none").empty());
  check_refused([&] { b.tensor("words"); }, kIndex, "dtype DT_STRING is not a numeric tensor");
}

TEST_CASE("bundle: many keys across blocks, contains, keys and a missing key") {
  BundleWriter w;
  std::vector<std::string> expected;
  for (int i = 0; i < 200; ++i) {
    const std::string key =
        "model/layer_" + std::to_string(i) + "/kernel/.ATTRIBUTES/VARIABLE_VALUE";
    w.add<int32_t>(key, 3, {2}, {i, -i});
    expected.push_back(key);
  }
  std::sort(expected.begin(), expected.end());
  const TensorBundle b = bundle_of(w.index(512), w.data);
  CHECK(b.keys() == expected);
  CHECK(b.contains("model/layer_17/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
  CHECK_FALSE(b.contains("model/layer_200/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
  CHECK_FALSE(b.contains(""));  // the header is not a tensor
  CHECK(values_of<int32_t>(b.tensor("model/layer_123/kernel/.ATTRIBUTES/VARIABLE_VALUE")) ==
        std::vector<int32_t>{123, -123});
  check_refused([&] { b.tensor("nope"); }, kIndex, "no tensor under key 'nope'");
  check_refused([&] { b.strings(""); }, kIndex, "no tensor under key ''");
}

TEST_CASE("bundle: read from files by prefix, shards opened when needed") {
  const fs::path dir = fs::temp_directory_path() / ("kiln_tf_bundle_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string prefix = (dir / "variables").string();
  auto write = [](const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  };

  BundleWriter w = small_bundle();
  write(prefix + ".index", w.index());
  write(prefix + ".data-00000-of-00001", w.data);
  {
    const TensorBundle b(prefix, {});
    CHECK(b.index_path() == prefix + ".index");
    CHECK(values_of<float>(b.tensor("dense/kernel"))[5] == 6.25f);
  }

  SUBCASE("a missing shard file is named") {
    w.header.set_num_shards(2);
    w.entries["step"].set_shard_id(1);
    write(prefix + ".index", w.index());
    write(prefix + ".data-00000-of-00002", w.data);
    const TensorBundle b(prefix, {});
    CHECK(b.tensor("dense/kernel").numel() == 6);  // shard 0 is there
    check_refused([&] { b.tensor("step"); }, prefix + ".data-00001-of-00002", "cannot open");
  }
  SUBCASE("a missing index file is named") {
    check_refused([&] { TensorBundle(prefix + "_nope", {}); }, prefix + "_nope.index",
                  "cannot open");
  }
  fs::remove_all(dir);
}

// The SavedModels of models/tensorflow/ (written by TensorFlow, see its make_tf_models.py):
// every key reads, the object graph is a non-empty string.
TEST_CASE("real bundles written by TensorFlow") {
  const fs::path root = KILN_TF_MODELS;
  if (!fs::is_directory(root)) {
    MESSAGE("skipped: no TensorFlow fixtures in " << root.string());
    return;
  }
  int bundles = 0;
  for (const auto& model : fs::directory_iterator(root)) {
    const fs::path prefix = model.path() / "saved_model" / "variables" / "variables";
    if (!fs::exists(prefix.string() + ".index")) continue;
    INFO("bundle: ", prefix.string());
    const TensorBundle b(prefix.string(), {});
    ++bundles;
    CHECK(b.num_shards() >= 1);
    CHECK_FALSE(b.keys().empty());
    REQUIRE(b.contains("_CHECKPOINTABLE_OBJECT_GRAPH"));
    const auto graph = b.strings("_CHECKPOINTABLE_OBJECT_GRAPH");
    REQUIRE(graph.size() == 1);
    CHECK_FALSE(graph[0].empty());
    for (const auto& key : b.keys()) {
      INFO("key: ", key);
      const BundleEntry& e = b.entry(key);
      if (e.dtype == 7) {
        CHECK_NOTHROW(b.strings(key));
      } else {
        const ir::Tensor t = b.tensor(key);
        CHECK(t.dims() == e.dims);
      }
    }
  }
  MESSAGE(bundles << " TensorFlow bundles read");
}
