// TensorFlow's tensor bundle reader: CRC32C, the LevelDB table reader and TensorBundle, on
// bundles written byte by byte by tf_bundle_writer.h; hostile variants (bad checksums, bad
// handles, loops, bad prefixes and restarts, out-of-order keys, bad sizes and limits, snappy,
// missing shards, bad headers) refused with a kiln::Error naming the file; and, when present,
// the SavedModels of models/tensorflow/ written by TensorFlow.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "frontend/tensorflow/crc32c.h"
#include "frontend/tensorflow/sstable.h"
#include "frontend/tensorflow/tensor_bundle.h"
#include "ir/error.h"
#include "tf_bundle_writer.h"

using namespace kiln;
using namespace kiln::frontend::tensorflow;
using namespace kiln::test::tf;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "mem/variables";
constexpr const char* kIndex = "mem/variables.index";

TensorBundle open(const std::string& index, const std::string& data,
                  const frontend::ImportLimits& limits = {}) {
  return TensorBundle(kPrefix, index, {data}, limits);
}

// The message of the kiln::Error `fn` throws; fails the test if it throws nothing.
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("no kiln::Error thrown");
  return {};
}

// Checks that `fn` throws a kiln::Error naming `file` and saying `what`.
void check_refused(const std::function<void()>& fn, const std::string& file,
                   const std::string& what) {
  const std::string message = error_of(fn);
  INFO("message: ", message);
  CHECK(message.find(file) != std::string::npos);
  CHECK(message.find(what) != std::string::npos);
}

void check_index_refused(const std::string& index, const std::string& data,
                         const std::string& what) {
  check_refused([&] { open(index, data); }, kIndex, what);
}

// Opens the bundle and reads every tensor, failing on the first refusal.
void read_all(const TensorBundle& b) {
  for (const auto& key : b.keys()) {
    if (b.entry(key).dtype == 7) {
      b.strings(key);
    } else {
      b.tensor(key);
    }
  }
}

template <class T>
std::vector<T> values_of(const ir::Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), t.nbytes());
  return out;
}

BundleWriter small_bundle() {
  BundleWriter w;
  w.add<float>("dense/kernel", 1, {2, 3}, {1.5f, -2, 3, 4, 5, 6.25f});
  w.add<int64_t>("step", 9, {}, {42});
  return w;
}

// Rewrites the first data block of a table built by table_of as `contents` (same length
// or not), keeping the trailer's CRC right, the index pointing at it and the rest as is.
std::string with_single_block(const KeyValues& index_kv, const std::string& contents,
                              uint8_t type = 0) {
  std::string file;
  const Handle data = append_block(file, contents, type);
  KeyValues index;
  for (const auto& [key, value] : index_kv) index.emplace_back(key, handle_bytes(data));
  const Handle meta = append_block(file, block_of({}));
  const Handle idx = append_block(file, block_of(index, 1));
  return file + footer_of(meta, idx);
}

}  // namespace

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
  const TensorBundle b = open(w.index(), w.data);
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
  const TensorBundle b = open(w.index(), w.data);
  CHECK(b.strings("_CHECKPOINTABLE_OBJECT_GRAPH") == std::vector<std::string>{graph});
  CHECK(b.strings("words") == words);
  CHECK(b.strings("none").empty());
  check_refused([&] { b.tensor("words"); }, kIndex, "dtype DT_STRING is not a numeric tensor");
}

TEST_CASE("bundle: many keys across blocks; contains, keys and a missing key") {
  BundleWriter w;
  std::vector<std::string> expected;
  for (int i = 0; i < 200; ++i) {
    const std::string key =
        "model/layer_" + std::to_string(i) + "/kernel/.ATTRIBUTES/VARIABLE_VALUE";
    w.add<int32_t>(key, 3, {2}, {i, -i});
    expected.push_back(key);
  }
  std::sort(expected.begin(), expected.end());
  const TensorBundle b = open(w.index(512), w.data);
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

TEST_CASE("hostile index: checksum, truncation, magic") {
  const BundleWriter w = small_bundle();
  const std::string index = w.index();
  read_all(open(index, w.data));  // the unspoiled bundle reads

  std::string bad_crc = index;
  bad_crc[5] ^= 1;  // inside the data block at offset 0
  check_index_refused(bad_crc, w.data, "data block at offset 0: bad checksum");
  check_index_refused(index.substr(0, 20), w.data, "truncated: 20 bytes");
  check_index_refused(index.substr(0, index.size() - 1), w.data, "bad magic");
  check_index_refused("", w.data, "truncated: 0 bytes");
  std::string bad_magic = index;
  bad_magic.back() ^= 0x10;
  check_index_refused(bad_magic, w.data, "bad magic");
  frontend::ImportLimits small;
  small.max_file_bytes = 64;
  check_refused([&] { open(index, w.data, small); }, kIndex, "more than the limit of 64");
}

TEST_CASE("hostile index: handles outside the data, overlapping blocks and loops") {
  const KeyValues kv = small_bundle().index_entries();
  std::string file;
  const Handle data = append_block(file, block_of(kv));
  const Handle meta = append_block(file, block_of({}));
  const std::string good_index_block = block_of({{"step", handle_bytes(data)}}, 1);

  SUBCASE("the footer's index handle points past the file") {
    std::string t = file;
    append_block(t, good_index_block);
    t += footer_of(meta, Handle{uint64_t{1} << 40, 4});
    check_index_refused(t, "", "footer's index handle: block at offset 1099511627776");
  }
  SUBCASE("the index block's handle reaches into the footer") {
    std::string t = file;
    const Handle idx = append_block(t, good_index_block);
    t += footer_of(meta, Handle{idx.offset, idx.size + 8});
    check_index_refused(t, "", "runs past the data");
  }
  SUBCASE("a handle of huge varints (overflowing offset + size)") {
    std::string t = file;
    append_block(t, good_index_block);
    t += footer_of(meta, Handle{~uint64_t{0} - 2, 8});
    check_index_refused(t, "", "runs past the data");
  }
  SUBCASE("an index entry points past the file") {
    std::string t = file;
    const Handle idx =
        append_block(t, block_of({{"step", handle_bytes(Handle{t.size() + 100, 10})}}, 1));
    t += footer_of(meta, idx);
    check_index_refused(t, "", "index entry 'step': block at offset");
  }
  SUBCASE("an index entry points at the index block itself") {
    std::string t = file;
    // The handle is inside the block it names: settle its size by iterating.
    Handle self{t.size(), 0};
    std::string contents;
    for (int i = 0; i < 4; ++i) {
      contents = block_of({{"step", handle_bytes(self)}}, 1);
      self.size = contents.size();
    }
    const Handle idx = append_block(t, contents);
    REQUIRE(idx.size == self.size);
    t += footer_of(meta, idx);
    check_index_refused(t, "", "overlaps the index block");
  }
  SUBCASE("two index entries name the same data block") {
    std::string t;
    const Handle d = append_block(t, block_of({{"", kv[0].second}}));
    const Handle m = append_block(t, block_of({}));
    const Handle idx =
        append_block(t, block_of({{"", handle_bytes(d)}, {"a", handle_bytes(d)}}, 1));
    t += footer_of(m, idx);
    check_index_refused(t, "", "listed twice");
  }
  SUBCASE("an index value with bytes after the handle") {
    std::string t = file;
    const Handle idx = append_block(t, block_of({{"step", handle_bytes(data) + "x"}}, 1));
    t += footer_of(meta, idx);
    check_index_refused(t, "", "1 bytes after the block handle");
  }
  SUBCASE("a data block past its index key") {
    std::string t = file;
    const Handle idx = append_block(t, block_of({{"a", handle_bytes(data)}}, 1));
    t += footer_of(meta, idx);
    check_index_refused(t, "", "lies outside the range its index entry 'a' gives");
  }
}

TEST_CASE("hostile index: entries, prefixes, restarts and key order") {
  const std::string header = small_bundle().index_entries()[0].second;
  auto raw_block = [](const std::string& entries, const std::vector<uint32_t>& restarts) {
    std::string out = entries;
    for (uint32_t r : restarts) put_fixed32(out, r);
    put_fixed32(out, static_cast<uint32_t>(restarts.size()));
    return out;
  };

  SUBCASE("shared prefix longer than the previous key") {
    const std::string entries = std::string(
                                    "\x00\x01\x00"
                                    "a",
                                    4) +
                                std::string(
                                    "\x05\x01\x00"
                                    "b",
                                    4);
    check_index_refused(with_single_block({{"z", ""}}, raw_block(entries, {0})), "",
                        "shares 5 bytes with the previous key, which has 1");
  }
  SUBCASE("restart count too big") {
    std::string contents = block_of({{"", header}});
    contents.replace(contents.size() - 4, 4, "\x40\x42\x0f\x00", 4);  // 1000000
    check_index_refused(with_single_block({{"", ""}}, contents), "",
                        "restart count 1000000 too big");
  }
  SUBCASE("a restart point inside an entry") {
    const std::string entries = std::string(
                                    "\x00\x01\x00"
                                    "a",
                                    4) +
                                std::string(
                                    "\x00\x01\x00"
                                    "b",
                                    4);
    check_index_refused(with_single_block({{"z", ""}}, raw_block(entries, {0, 1})), "",
                        "restart point 1 (byte 1) is not the start of an entry");
  }
  SUBCASE("a restart point on an entry that shares a prefix") {
    const std::string entries = std::string(
                                    "\x00\x02\x00"
                                    "ab",
                                    5) +
                                std::string(
                                    "\x01\x01\x00"
                                    "c",
                                    4);
    check_index_refused(with_single_block({{"z", ""}}, raw_block(entries, {0, 5})), "",
                        "shares a prefix");
  }
  SUBCASE("no restart point at byte 0") {
    const std::string entries = std::string(
        "\x00\x01\x00"
        "a",
        4);
    check_index_refused(with_single_block({{"z", ""}}, raw_block(entries, {})), "",
                        "no restart points");
  }
  SUBCASE("a varint32 of six bytes") {
    const std::string entries = std::string(
        "\x80\x80\x80\x80\x80\x00\x01\x00"
        "a",
        9);
    check_index_refused(with_single_block({{"z", ""}}, raw_block(entries, {0})), "",
                        "malformed entry header at byte 0");
  }
  SUBCASE("an entry longer than its block") {
    const std::string entries = std::string(
        "\x00\x7f\x00"
        "a",
        4);
    check_index_refused(with_single_block({{"z", ""}}, raw_block(entries, {0})), "",
                        "runs past the entries");
  }
  SUBCASE("keys out of order in a block") {
    check_index_refused(
        with_single_block({{"z", ""}}, block_of({{"", header}, {"b", ""}, {"a", ""}})), "",
        "keys out of order: 'a' after 'b'");
  }
  SUBCASE("keys out of order across blocks") {
    std::string t;
    const Handle d1 = append_block(t, block_of({{"", header}, {"b", ""}}));
    const Handle d2 = append_block(t, block_of({{"a", ""}}));
    const Handle m = append_block(t, block_of({}));
    const Handle idx =
        append_block(t, block_of({{"b", handle_bytes(d1)}, {"c", handle_bytes(d2)}}, 1));
    check_index_refused(t + footer_of(m, idx), "", "keys out of order: 'a' after 'b'");
  }
  SUBCASE("a duplicate key") {
    check_index_refused(
        with_single_block({{"z", ""}}, block_of({{"", header}, {"a", ""}, {"a", ""}})), "",
        "keys out of order: 'a' after 'a'");
  }
  SUBCASE("a key longer than the name limit") {
    frontend::ImportLimits limits;
    limits.max_name_length = 8;
    const std::string t =
        with_single_block({{"zzzzzzzz", ""}}, block_of({{"", header}, {"long_key_name", ""}}));
    check_refused([&] { open(t, "", limits); }, kIndex,
                  "key of 13 bytes, more than the limit of 8");
  }
  SUBCASE("a snappy-compressed block") {
    check_index_refused(with_single_block({{"", ""}}, block_of({{"", header}}), 1), "",
                        "data block at offset 0 is snappy-compressed");
  }
  SUBCASE("an unknown compression type") {
    check_index_refused(with_single_block({{"", ""}}, block_of({{"", header}}), 9), "",
                        "unknown compression type 9");
  }
}

TEST_CASE("hostile bundle: header") {
  BundleWriter w = small_bundle();
  SUBCASE("no header entry") {
    KeyValues kv = w.index_entries();
    kv.erase(kv.begin());
    check_index_refused(table_of(kv), w.data, "no header entry");
  }
  SUBCASE("a header that does not parse") {
    KeyValues kv = w.index_entries();
    kv[0].second = "\xff\xff\xff";
    check_index_refused(table_of(kv), w.data, "the header entry is not a BundleHeaderProto");
  }
  SUBCASE("num_shards 0") {
    w.header.set_num_shards(0);
    check_index_refused(w.index(), w.data, "the header gives 0 shards");
  }
  SUBCASE("num_shards huge") {
    w.header.set_num_shards(1 << 30);
    check_index_refused(w.index(), w.data, "the header gives 1073741824 shards");
  }
  SUBCASE("big-endian") {
    w.header.set_endianness(kiln::tf::BundleHeaderProto::BIG);
    check_index_refused(w.index(), w.data, "written big-endian");
  }
  SUBCASE("an unknown endianness") {
    w.header.set_endianness(static_cast<kiln::tf::BundleHeaderProto::Endianness>(7));
    check_index_refused(w.index(), w.data, "unknown endianness 7");
  }
  SUBCASE("a newer format version") {
    w.header.mutable_version()->set_min_consumer(2);
    check_index_refused(w.index(), w.data, "needs a reader of format version 2");
  }
}

TEST_CASE("hostile bundle: entries") {
  BundleWriter w = small_bundle();
  auto& kernel = w.entries["dense/kernel"];
  SUBCASE("an entry that does not parse") {
    KeyValues kv = w.index_entries();
    kv[1].second = "\x0a\xff";
    check_index_refused(table_of(kv), w.data, "key 'dense/kernel': not a BundleEntryProto");
  }
  SUBCASE("a negative dim") {
    kernel.mutable_shape()->mutable_dim(0)->set_size(-1);
    check_index_refused(w.index(), w.data, "dim -1 is unknown or negative");
  }
  SUBCASE("unknown rank") {
    kernel.mutable_shape()->set_unknown_rank(true);
    check_index_refused(w.index(), w.data, "unknown rank");
  }
  SUBCASE("more elements than the limits allow") {
    frontend::ImportLimits limits;
    limits.max_elements = 5;
    check_refused([&] { open(w.index(), w.data, limits); }, kIndex,
                  "key 'dense/kernel': more elements than the limit of 5");
  }
  SUBCASE("dims whose product overflows") {
    kernel.mutable_shape()->mutable_dim(0)->set_size(int64_t{1} << 31);
    kernel.mutable_shape()->mutable_dim(1)->set_size(int64_t{1} << 31);
    check_index_refused(w.index(), w.data, "more elements than the limit");
  }
  SUBCASE("rank over the limit") {
    for (int i = 0; i < 40; ++i) kernel.mutable_shape()->add_dim()->set_size(1);
    check_index_refused(w.index(), w.data, "rank 42 is more than the limit of 32");
  }
  SUBCASE("a shard id out of range") {
    kernel.set_shard_id(3);
    check_index_refused(w.index(), w.data, "shard 3 is not one of the bundle's 1 shards");
  }
  SUBCASE("a negative offset") {
    kernel.set_offset(-8);
    check_index_refused(w.index(), w.data, "negative offset -8");
  }
}

TEST_CASE("hostile bundle: tensor bytes") {
  BundleWriter w = small_bundle();
  const std::string shard = "mem/variables.data-00000-of-00001";
  SUBCASE("bad tensor checksum") {
    w.data[1] ^= 1;
    check_refused([&] { open(w.index(), w.data).tensor("dense/kernel"); }, kIndex,
                  "key 'dense/kernel': bad checksum");
  }
  SUBCASE("a short shard") {
    const TensorBundle b = open(w.index(), w.data.substr(0, w.data.size() - 1));
    CHECK(b.tensor("dense/kernel").numel() == 6);
    check_refused([&] { b.tensor("step"); }, shard,
                  "key 'step': 8 bytes at offset 24 run past the end of the file (31 bytes)");
  }
  SUBCASE("a huge offset") {
    w.entries["step"].set_offset(std::numeric_limits<int64_t>::max() - 2);
    check_refused([&] { open(w.index(), w.data).tensor("step"); }, shard,
                  "run past the end of the file");
  }
  SUBCASE("size does not match the shape") {
    w.entries["dense/kernel"].set_size(20);
    check_refused([&] { open(w.index(), w.data).tensor("dense/kernel"); }, kIndex,
                  "size 20 bytes does not match shape [2, 3] of DT_FLOAT (24 bytes)");
  }
  SUBCASE("more bytes than the limit") {
    frontend::ImportLimits limits;
    limits.max_tensor_bytes = 16;
    check_refused([&] { open(w.index(), w.data, limits).tensor("dense/kernel"); }, kIndex,
                  "more than the limit of 16 bytes");
  }
  SUBCASE("a shard that was not given") {
    w.header.set_num_shards(2);
    w.entries["step"].set_shard_id(1);
    check_refused([&] { open(w.index(), w.data).tensor("step"); },
                  "mem/variables.data-00001-of-00002", "not given (needed by key 'step')");
  }
  SUBCASE("resources, variants and partitioned variables") {
    w.add<uint8_t>("res", 20, {}, {0});
    w.add<uint8_t>("var", 21, {}, {0});
    auto& part = w.add<float>("part", 1, {2}, {1, 2});
    part.add_slices()->add_extent()->set_length(1);
    const TensorBundle b = open(w.index(), w.data);
    check_refused([&] { b.tensor("res"); }, kIndex,
                  "key 'res': dtype DT_RESOURCE is not a numeric tensor");
    check_refused([&] { b.tensor("var"); }, kIndex, "dtype DT_VARIANT");
    check_refused([&] { b.tensor("part"); }, kIndex,
                  "key 'part': a partitioned variable (1 slices)");
    check_refused([&] { b.strings("step"); }, kIndex, "dtype DT_INT64, not DT_STRING");
  }
}

TEST_CASE("hostile bundle: string tensors") {
  BundleWriter w;
  w.add_strings("s", {2}, {"ab", "cde"});
  // Layout: 2 one-byte lengths, 4 bytes of length CRC, then "abcde".
  SUBCASE("bad checksum of the lengths") {
    w.data[3] ^= 1;
    check_refused([&] { open(w.index(), w.data).strings("s"); }, kIndex,
                  "key 's': bad checksum of the string lengths");
  }
  SUBCASE("bad checksum of the bytes") {
    w.data[7] ^= 1;
    check_refused([&] { open(w.index(), w.data).strings("s"); }, kIndex, "key 's': bad checksum (");
  }
  SUBCASE("strings longer than the size") {
    w.entries["s"].set_size(10);
    check_refused([&] { open(w.index(), w.data).strings("s"); }, kIndex,
                  "run past the entry's size");
  }
  SUBCASE("bytes after the last string") {
    w.data += "x";
    w.entries["s"].set_size(12);
    check_refused([&] { open(w.index(), w.data).strings("s"); }, kIndex,
                  "1 bytes after the last string");
  }
  SUBCASE("too small a size for the element count") {
    w.entries["s"].mutable_shape()->mutable_dim(0)->set_size(1000);
    check_refused([&] { open(w.index(), w.data).strings("s"); }, kIndex,
                  "too small for 1000 string lengths");
  }
  SUBCASE("a length varint of more than ten bytes") {
    const std::string bytes(16, '\xff');
    w.add_bytes("t", 7, {1}, bytes, crc32c(bytes.data(), bytes.size()));
    check_refused([&] { open(w.index(), w.data).strings("t"); }, kIndex,
                  "key 't': malformed string length");
  }
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
