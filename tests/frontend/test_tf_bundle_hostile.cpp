// Hostile tensor bundles, each refused with a kiln::Error naming the file and saying what is
// wrong: bad checksums, truncation, bad magic, handles outside the data, overlapping blocks
// and loops, bad entries, prefixes and restart points, out-of-order keys, snappy blocks, bad
// headers (shards, endianness, version), bad shapes and limits, short shards and string
// tensors with bad lengths.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "frontend/tensorflow/crc32c.h"
#include "frontend/tensorflow/tensor_bundle.h"
#include "tf_bundle_test_util.h"
#include "tf_bundle_writer.h"

using namespace kiln;
using namespace kiln::frontend::tensorflow;
using namespace kiln::test::tf;

TEST_CASE("hostile index: checksum, truncation, magic") {
  const BundleWriter w = small_bundle();
  const std::string index = w.index();
  read_all(bundle_of(index, w.data));  // the unspoiled bundle reads

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
  check_refused([&] { bundle_of(index, w.data, small); }, kIndex, "more than the limit of 64");
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
    check_index_refused(with_single_block({"z"}, raw_block(entries, {0})), "",
                        "shares 5 bytes with the previous key, which has 1");
  }
  SUBCASE("restart count too big") {
    std::string contents = block_of({{"", header}});
    contents.replace(contents.size() - 4, 4, "\x40\x42\x0f\x00", 4);  // 1000000
    check_index_refused(with_single_block({""}, contents), "", "restart count 1000000 too big");
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
    check_index_refused(with_single_block({"z"}, raw_block(entries, {0, 1})), "",
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
    check_index_refused(with_single_block({"z"}, raw_block(entries, {0, 5})), "",
                        "shares a prefix");
  }
  SUBCASE("no restart point at byte 0") {
    const std::string entries = std::string(
        "\x00\x01\x00"
        "a",
        4);
    check_index_refused(with_single_block({"z"}, raw_block(entries, {})), "", "no restart points");
  }
  SUBCASE("a varint32 of six bytes") {
    const std::string entries = std::string(
        "\x80\x80\x80\x80\x80\x00\x01\x00"
        "a",
        9);
    check_index_refused(with_single_block({"z"}, raw_block(entries, {0})), "",
                        "malformed entry header at byte 0");
  }
  SUBCASE("an entry longer than its block") {
    const std::string entries = std::string(
        "\x00\x7f\x00"
        "a",
        4);
    check_index_refused(with_single_block({"z"}, raw_block(entries, {0})), "",
                        "runs past the entries");
  }
  SUBCASE("keys out of order in a block") {
    check_index_refused(with_single_block({"z"}, block_of({{"", header}, {"b", ""}, {"a", ""}})),
                        "", "keys out of order: 'a' after 'b'");
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
    check_index_refused(with_single_block({"z"}, block_of({{"", header}, {"a", ""}, {"a", ""}})),
                        "", "keys out of order: 'a' after 'a'");
  }
  SUBCASE("a key longer than the name limit") {
    frontend::ImportLimits limits;
    limits.max_name_length = 8;
    const std::string t =
        with_single_block({"zzzzzzzz"}, block_of({{"", header}, {"long_key_name", ""}}));
    check_refused([&] { bundle_of(t, "", limits); }, kIndex,
                  "key of 13 bytes, more than the limit of 8");
  }
  SUBCASE("a snappy-compressed block") {
    check_index_refused(with_single_block({""}, block_of({{"", header}}), 1), "",
                        "data block at offset 0 is snappy-compressed");
  }
  SUBCASE("an unknown compression type") {
    check_index_refused(with_single_block({""}, block_of({{"", header}}), 9), "",
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
    check_refused([&] { bundle_of(w.index(), w.data, limits); }, kIndex,
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
    check_refused([&] { bundle_of(w.index(), w.data).tensor("dense/kernel"); }, kIndex,
                  "key 'dense/kernel': bad checksum");
  }
  SUBCASE("a short shard") {
    const TensorBundle b = bundle_of(w.index(), w.data.substr(0, w.data.size() - 1));
    CHECK(b.tensor("dense/kernel").numel() == 6);
    check_refused([&] { b.tensor("step"); }, shard,
                  "key 'step': 8 bytes at offset 24 run past the end of the file (31 bytes)");
  }
  SUBCASE("a huge offset") {
    w.entries["step"].set_offset(std::numeric_limits<int64_t>::max() - 2);
    check_refused([&] { bundle_of(w.index(), w.data).tensor("step"); }, shard,
                  "run past the end of the file");
  }
  SUBCASE("size does not match the shape") {
    w.entries["dense/kernel"].set_size(20);
    check_refused([&] { bundle_of(w.index(), w.data).tensor("dense/kernel"); }, kIndex,
                  "size 20 bytes does not match shape [2, 3] of DT_FLOAT (24 bytes)");
  }
  SUBCASE("more bytes than the limit") {
    frontend::ImportLimits limits;
    limits.max_tensor_bytes = 16;
    check_refused([&] { bundle_of(w.index(), w.data, limits).tensor("dense/kernel"); }, kIndex,
                  "more than the limit of 16 bytes");
  }
  SUBCASE("a shard that was not given") {
    w.header.set_num_shards(2);
    w.entries["step"].set_shard_id(1);
    check_refused([&] { bundle_of(w.index(), w.data).tensor("step"); },
                  "mem/variables.data-00001-of-00002", "not given (needed by key 'step')");
  }
  SUBCASE("resources, variants and partitioned variables") {
    w.add<uint8_t>("res", 20, {}, {0});
    w.add<uint8_t>("var", 21, {}, {0});
    auto& part = w.add<float>("part", 1, {2}, {1, 2});
    part.add_slices()->add_extent()->set_length(1);
    const TensorBundle b = bundle_of(w.index(), w.data);
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
    check_refused([&] { bundle_of(w.index(), w.data).strings("s"); }, kIndex,
                  "key 's': bad checksum of the string lengths");
  }
  SUBCASE("bad checksum of the bytes") {
    w.data[7] ^= 1;
    check_refused([&] { bundle_of(w.index(), w.data).strings("s"); }, kIndex,
                  "key 's': bad checksum (");
  }
  SUBCASE("strings longer than the size") {
    w.entries["s"].set_size(10);
    check_refused([&] { bundle_of(w.index(), w.data).strings("s"); }, kIndex,
                  "run past the entry's size");
  }
  SUBCASE("bytes after the last string") {
    w.data += "x";
    w.entries["s"].set_size(12);
    check_refused([&] { bundle_of(w.index(), w.data).strings("s"); }, kIndex,
                  "1 bytes after the last string");
  }
  SUBCASE("too small a size for the element count") {
    w.entries["s"].mutable_shape()->mutable_dim(0)->set_size(1000);
    check_refused([&] { bundle_of(w.index(), w.data).strings("s"); }, kIndex,
                  "too small for 1000 string lengths");
  }
  SUBCASE("a length varint of more than ten bytes") {
    const std::string bytes(16, '\xff');
    w.add_bytes("t", 7, {1}, bytes, crc32c(bytes.data(), bytes.size()));
    check_refused([&] { bundle_of(w.index(), w.data).strings("t"); }, kIndex,
                  "key 't': malformed string length");
  }
}
