// The zip reader of the PyTorch frontend: archives written by the test (stored, deflated,
// ZIP64, data descriptors) and hostile variants of them, then PyTorch's own archives.
#include <doctest/doctest.h>

#include "frontend/torchscript/zip_archive.h"
#include "torch_test_util.h"

using kiln::frontend::torchscript::ZipArchive;
using kiln::frontend::torchscript::ZipLimits;
using kiln::test::buffer_of;
using kiln::test::error_of;
using kiln::test::make_zip;
using kiln::test::ZipFile;
using kiln::test::ZipOptions;

namespace {

std::unique_ptr<ZipArchive> zip_of(const std::string& bytes, const ZipLimits& limits = {}) {
  return ZipArchive::from_buffer(buffer_of(bytes), "t.pt", limits);
}

std::string zip_error(const std::string& bytes, const ZipLimits& limits = {}) {
  return error_of([&] { zip_of(bytes, limits); });
}

// An error from reading `name` of an archive that opens.
std::string read_error(const std::string& bytes, const std::string& name, const ZipLimits& limits = {}) {
  auto zip = zip_of(bytes, limits);
  return error_of([&] { zip->read(name); });
}

std::string text(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + (i * 7 + i / 13) % 26);
  return s;
}

const std::vector<ZipFile> kFiles = {
    {"m/data.pkl", "\x80\x02K\x07."},
    {"m/code/__torch__/m.py", text(3000), true},
    {"m/data/0", std::string(64, '\x01')},
    {"m/empty", ""},
    {"m/empty_deflated", "", true},
};

void check_files(const ZipArchive& zip) {
  REQUIRE(zip.entries().size() == kFiles.size());
  CHECK(zip.prefix() == "m/");
  for (const ZipFile& f : kFiles) {
    CAPTURE(f.name);
    CHECK(zip.read(f.name) == f.data);
    CHECK(zip.read(f.name.substr(2)) == f.data);  // without the prefix
    auto buf = zip.read_buffer(f.name);
    CHECK(std::string(reinterpret_cast<const char*>(buf->data()), buf->size()) == f.data);
  }
  CHECK(zip.find("code/__torch__/m.py")->method == 8);
  CHECK(zip.has("data/0"));
  CHECK_FALSE(zip.has("data/1"));
  CHECK_FALSE(zip.has("m/m/data/0"));
}

}  // namespace

TEST_CASE("zip: stored and deflated entries, with and without ZIP64 and data descriptors") {
  for (bool zip64 : {false, true})
    for (bool descriptors : {false, true})
      for (size_t pad : {0, 64}) {
        CAPTURE(zip64);
        CAPTURE(descriptors);
        CAPTURE(pad);
        ZipOptions opt;
        opt.zip64 = zip64;
        opt.descriptors = descriptors;
        opt.pad_to = pad;
        check_files(*zip_of(make_zip(kFiles, opt).bytes));
      }
}

TEST_CASE("zip: a stored entry is a view of the archive's bytes, a deflated one is its own") {
  auto bytes = buffer_of(make_zip(kFiles).bytes);
  auto zip = ZipArchive::from_buffer(bytes, "t.pt");
  auto stored = zip->read_buffer("data/0");
  CHECK(stored->data() > bytes->data());
  CHECK(stored->data() + stored->size() < bytes->data() + bytes->size());
  auto deflated = zip->read_buffer("code/__torch__/m.py");
  CHECK((deflated->data() < bytes->data() || deflated->data() >= bytes->data() + bytes->size()));
}

TEST_CASE("zip: the end record is found behind a comment of up to 64 KiB") {
  ZipOptions opt;
  // A comment that holds a false end record signature (its length does not fit the file).
  opt.comment = "PK\x05\x06" + std::string(65535 - 4, 'c');
  check_files(*zip_of(make_zip(kFiles, opt).bytes));
  opt.zip64 = true;
  check_files(*zip_of(make_zip(kFiles, opt).bytes));
  // Past 64 KiB of trailing bytes the record is not looked for.
  std::string bytes = make_zip(kFiles).bytes + std::string(65536 + 10, '\0');
  CHECK(zip_error(bytes) == "t.pt: not a zip archive (no end of central directory record)");
}

TEST_CASE("zip: the prefix is the folder every entry shares, or none") {
  CHECK(zip_of(make_zip({{"a/x", "1"}, {"b/y", "2"}}).bytes)->prefix() == "");
  CHECK(zip_of(make_zip({{"x", "1"}, {"y", "2"}}).bytes)->prefix() == "");
  CHECK(zip_of(make_zip({{"a/x", "1"}, {"ab/y", "2"}}).bytes)->prefix() == "");
  CHECK(zip_of(make_zip({{"archive/x", "1"}, {"archive/d/y", "2"}}).bytes)->prefix() == "archive/");
  auto zip = zip_of(make_zip({{"a/x", "1"}, {"b/y", "2"}}).bytes);
  CHECK(zip->read("a/x") == "1");
  CHECK_FALSE(zip->has("x"));
  CHECK(zip_of(make_zip({}).bytes)->entries().empty());
}

TEST_CASE("zip: not a zip archive") {
  CHECK(zip_error("") == "t.pt: not a zip archive (0 bytes, too short for an end of central directory)");
  CHECK(zip_error(std::string(100, 'x')) == "t.pt: not a zip archive (no end of central directory record)");
  CHECK(error_of([] { ZipArchive::open("/nonexistent/m.pt"); }).starts_with("/nonexistent/m.pt: cannot open"));
}

TEST_CASE("zip: a truncated or inconsistent central directory is refused") {
  auto z = make_zip(kFiles);
  // One entry more than the directory holds.
  std::string more = z.bytes;
  kiln::test::poke16(more, z.eocd + 8, kFiles.size() + 1);
  kiln::test::poke16(more, z.eocd + 10, kFiles.size() + 1);
  CHECK(zip_error(more).starts_with("t.pt: not a zip archive (central directory entry 5 at offset"));
  // The directory claims to run past the end record.
  std::string longer = z.bytes;
  kiln::test::poke32(longer, z.eocd + 12, static_cast<uint32_t>(z.eocd - z.cd + 1));
  CHECK(zip_error(longer).starts_with("t.pt: not a zip archive (central directory of"));
  // An archive cut short inside its central directory.
  std::string cut = z.bytes.substr(0, z.cd + 20) + z.bytes.substr(z.eocd);
  CHECK(zip_error(cut).starts_with("t.pt: not a zip archive (central directory of"));
  // More entries than fit at 46 bytes each.
  std::string many = z.bytes;
  kiln::test::poke16(many, z.eocd + 8, 0xfff0);
  kiln::test::poke16(many, z.eocd + 10, 0xfff0);
  CHECK(zip_error(many).find("entries cannot fit a central directory") != std::string::npos);
  // Spanned archives.
  std::string spanned = z.bytes;
  kiln::test::poke16(spanned, z.eocd + 4, 1);
  CHECK(zip_error(spanned) == "t.pt: not a zip archive (spanned archives are not supported)");
}

TEST_CASE("zip: ZIP64 records that point outside the file are refused") {
  ZipOptions opt;
  opt.zip64 = true;
  auto z = make_zip(kFiles, opt);
  std::string bad = z.bytes;
  // The locator's offset of the ZIP64 end record.
  for (int k = 0; k < 8; ++k) bad[z.eocd - 20 + 8 + k] = static_cast<char>(0xff);
  CHECK(zip_error(bad).find("ZIP64 end of central directory at offset") != std::string::npos);
  std::string wrong = z.bytes;
  wrong[z.eocd - 20 + 8] = static_cast<char>(wrong[z.eocd - 20 + 8] - 1);
  CHECK(zip_error(wrong).find("no ZIP64 end of central directory at offset") != std::string::npos);
}

TEST_CASE("zip: entries whose offsets lie past the end or in the central directory are refused") {
  std::vector<ZipFile> files = kFiles;
  files[2].local_offset = 0x7fffffff;
  CHECK(zip_error(make_zip(files).bytes)
            .starts_with("t.pt: entry 'm/data/0': local header at offset 2147483647 is past the entries' end at "));
}

TEST_CASE("zip: a declared size past the data, or data overlapping another entry, is refused") {
  std::vector<ZipFile> files = {{"a", "1234"}, {"b", "5678"}};
  auto z = make_zip(files);
  std::string bytes = z.bytes;
  // Entry 'a' claims 10 bytes, running over the local header of 'b'.
  size_t central_a = z.cd;
  kiln::test::poke32(bytes, central_a + 20, 10);
  kiln::test::poke32(bytes, central_a + 24, 10);
  CHECK(zip_error(bytes) == "t.pt: entry 'a': its data overlaps entry 'b'");
  // Entry 'b' claims data running into the central directory.
  bytes = z.bytes;
  size_t central_b = z.cd + 46 + 1;
  kiln::test::poke32(bytes, central_b + 20, 40);
  kiln::test::poke32(bytes, central_b + 24, 40);
  CHECK(zip_error(bytes).starts_with("t.pt: entry 'b': 40 bytes of data at offset"));
  // Two names for one local header.
  files[1].local_offset = 0;
  CHECK(zip_error(make_zip(files).bytes) == "t.pt: entry 'b': the local header names another entry");
}

TEST_CASE("zip: names that leave the archive, and duplicate names, are refused") {
  CHECK(zip_error(make_zip({{"../x", "1"}}).bytes) == "t.pt: entry '../x': name leaves the archive ('..')");
  CHECK(zip_error(make_zip({{"a/../../x", "1"}}).bytes) ==
        "t.pt: entry 'a/../../x': name leaves the archive ('..')");
  CHECK(zip_error(make_zip({{"/etc/passwd", "1"}}).bytes) == "t.pt: entry '/etc/passwd': absolute name");
  CHECK(zip_error(make_zip({{"a\\b", "1"}}).bytes) == "t.pt: entry 'a\\b': name holds a backslash");
  CHECK(zip_error(make_zip({{"", "1"}}).bytes) == "t.pt: entry '': empty name");
  CHECK(zip_of(make_zip({{"a..b/c..", "1"}}).bytes)->read("a..b/c..") == "1");
  CHECK(zip_error(make_zip({{"m/x", "1"}, {"m/x", "2"}}).bytes) == "t.pt: entry 'm/x': duplicate name");
}

TEST_CASE("zip: unsupported methods and encryption are refused") {
  std::vector<ZipFile> files = {{"a", "1"}};
  files[0].method = 12;
  CHECK(zip_error(make_zip(files).bytes) ==
        "t.pt: entry 'a': compression method 12 is not supported (only stored and deflated)");
  files = {{"a", "1"}};
  files[0].flags = 1;
  CHECK(zip_error(make_zip(files).bytes) == "t.pt: entry 'a': encrypted entries are not supported");
}

TEST_CASE("zip: a CRC mismatch is refused on every read") {
  for (bool deflate : {false, true}) {
    std::vector<ZipFile> files = {{"m/a", text(500), deflate}};
    files[0].crc = kiln::test::crc_of(text(500)) ^ 1;
    auto zip = zip_of(make_zip(files).bytes);
    std::string err = error_of([&] { zip->read("a"); });
    CHECK(err.starts_with("t.pt: entry 'm/a': CRC-32 "));
    CHECK(err.find("does not match the recorded") != std::string::npos);
    CHECK(error_of([&] { zip->read_buffer("a"); }) == err);
  }
  CHECK(read_error(make_zip(kFiles).bytes, "nope") == "t.pt: entry 'nope': not in the archive");
}

TEST_CASE("zip: a zip bomb stops at its declared size") {
  // 1 KB declared, 1 MB of zeros deflated (about 1 KB compressed).
  std::vector<ZipFile> files = {{"bomb", std::string(1 << 20, '\0'), true}};
  files[0].size = 1000;
  CHECK(read_error(make_zip(files).bytes, "bomb") ==
        "t.pt: entry 'bomb': inflates to more than its declared size of 1000 bytes");
  // Declared 1 MB truthfully, but over the ratio.
  files[0].size.reset();
  ZipLimits strict;
  strict.max_ratio = 100;
  std::string err = read_error(make_zip(files).bytes, "bomb", strict);
  CHECK(err.starts_with("t.pt: entry 'bomb': 1048576 bytes deflated to "));
  CHECK(err.ends_with("over the limit max_ratio of 100"));
  // A declared size larger than the stream gives.
  files = {{"short", text(5000), true}};
  files[0].size = 5001;
  CHECK(read_error(make_zip(files).bytes, "short") ==
        "t.pt: entry 'short': inflates to 5000 bytes, not its declared size of 5001");
}

TEST_CASE("zip: the limits on entries and bytes name themselves") {
  ZipLimits limits;
  limits.max_entries = 4;
  CHECK(zip_error(make_zip(kFiles).bytes, limits) ==
        "t.pt: not a zip archive (5 entries, over the limit max_entries of 4)");
  limits = {};
  limits.max_entry_bytes = 100;
  CHECK(read_error(make_zip(kFiles).bytes, "code/__torch__/m.py", limits) ==
        "t.pt: entry 'm/code/__torch__/m.py': 3000 bytes, over the limit max_entry_bytes of 100");
  limits = {};
  limits.max_total_bytes = 3100;
  auto zip = zip_of(make_zip(kFiles).bytes, limits);
  zip->read("code/__torch__/m.py");
  zip->read("data/0");
  CHECK(error_of([&] { zip->read("data/0"); }) ==
        "t.pt: entry 'm/data/0': 64 bytes after 3064 already read, over the limit max_total_bytes of 3100");
}

TEST_CASE("zip: corrupt and truncated deflate data is refused") {
  std::vector<ZipFile> files = {{"a", text(2000), true}};
  auto z = make_zip(files);
  std::string bytes = z.bytes;
  size_t data = z.local[0] + 30 + 1;
  bytes[data] = static_cast<char>(0xff);  // an invalid block type
  std::string err = read_error(bytes, "a");
  CHECK(err.starts_with("t.pt: entry 'a': corrupt deflate data ("));
  // Half the compressed bytes.
  bytes = z.bytes;
  size_t csize = z.cd - data;
  kiln::test::poke32(bytes, z.cd + 20, static_cast<uint32_t>(csize / 2));
  CHECK(read_error(bytes, "a").starts_with("t.pt: entry 'a': deflate data ends early, after "));
}
