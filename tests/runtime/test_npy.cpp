#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "kiln/rt/mapped_file.h"
#include "kiln/rt/npy.h"
#include "kiln/rt/sanitize.h"

using namespace kiln::rt;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("kiln_rt_npy_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::FILE* f = std::fopen(p.string().c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

std::string read_file(const fs::path& p) {
  std::FILE* f = std::fopen(p.string().c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// A version 1 file with the given header text (padded by the caller or not).
std::string npy_v1(const std::string& header, const std::string& data) {
  std::string s("\x93NUMPY\x01\x00", 8);
  s += char(header.size() & 0xff);
  s += char(header.size() >> 8);
  return s + header + data;
}

HostTensor make_tensor(kiln_dtype t, std::vector<int64_t> shape) {
  HostTensor h;
  h.dtype = t;
  h.shape = std::move(shape);
  h.data.resize(size_t(h.numel()) * dtype_size(t));
  for (size_t i = 0; i < h.data.size(); ++i) h.data[i] = static_cast<unsigned char>(i * 7 + 3);
  return h;
}

}  // namespace

TEST_CASE("npy write/read round trip for every dtype and several shapes") {
  const fs::path dir = temp_dir();
  const kiln_dtype types[] = {KILN_F32, KILN_F64, KILN_F16, KILN_I8, KILN_U8, KILN_I16, KILN_I32, KILN_I64, KILN_BOOL};
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {1, 3, 4, 2}};
  for (kiln_dtype t : types)
    for (const auto& s : shapes) {
      HostTensor h = make_tensor(t, s);
      if (t == KILN_BOOL)
        for (auto& b : h.data) b &= 1;
      const std::string path = (dir / "rt.npy").string();
      std::string err;
      REQUIRE_MESSAGE(write_npy(path, h, err), err);
      // Data starts at a multiple of 64 bytes.
      const std::string bytes = read_file(path);
      CHECK((bytes.size() - h.data.size()) % 64 == 0);
      CHECK(bytes.back() == (h.data.empty() ? '\n' : char(h.data.back())));
      HostTensor r;
      REQUIRE_MESSAGE(read_npy(path, r, err), err);
      CHECK(r.dtype == t);
      CHECK(r.shape == s);
      CHECK(r.data == h.data);
    }
  fs::remove_all(dir);
}

TEST_CASE("npy writes bf16 as f32") {
  const fs::path dir = temp_dir();
  HostTensor h;
  h.dtype = KILN_BF16;
  h.shape = {2};
  h.data = {0x80, 0x3F, 0x40, 0xC0};  // 1.0, -3.0
  std::string err;
  REQUIRE(write_npy((dir / "b.npy").string(), h, err));
  HostTensor r;
  REQUIRE(read_npy((dir / "b.npy").string(), r, err));
  CHECK(r.dtype == KILN_F32);
  float v[2];
  std::memcpy(v, r.data.data(), 8);
  CHECK(v[0] == 1.f);
  CHECK(v[1] == -3.f);
  fs::remove_all(dir);
}

TEST_CASE("npy reads a hand-written v1 header and v2/v3 versions") {
  const fs::path dir = temp_dir();
  const float vals[3] = {1.5f, -2.f, 3.25f};
  const std::string data(reinterpret_cast<const char*>(vals), 12);
  // Unpadded, double quotes, keys in another order, no trailing comma.
  write_file(dir / "a.npy", npy_v1("{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<f4\"}\n", data));
  HostTensor t;
  std::string err;
  REQUIRE_MESSAGE(read_npy((dir / "a.npy").string(), t, err), err);
  CHECK(t.dtype == KILN_F32);
  CHECK(t.shape == std::vector<int64_t>{3});
  CHECK(std::memcmp(t.data.data(), vals, 12) == 0);

  const std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 1), }\n";
  for (char version : {'\x02', '\x03'}) {
    std::string s("\x93NUMPY", 6);
    s += version;
    s += '\0';
    const uint32_t len = uint32_t(header.size());
    s.append(reinterpret_cast<const char*>(&len), 4);
    s += header;
    s += std::string("\x01\x00", 2);
    write_file(dir / "v.npy", s);
    REQUIRE_MESSAGE(read_npy((dir / "v.npy").string(), t, err), err);
    CHECK(t.dtype == KILN_BOOL);
    CHECK(t.shape == std::vector<int64_t>{2, 1});
  }
  // '<u1' and scalar shape.
  write_file(dir / "u.npy", npy_v1("{'descr': '<u1', 'fortran_order': False, 'shape': ()}", "\x07"));
  REQUIRE_MESSAGE(read_npy((dir / "u.npy").string(), t, err), err);
  CHECK(t.dtype == KILN_U8);
  CHECK(t.shape.empty());
  CHECK(t.numel() == 1);
  fs::remove_all(dir);
}

TEST_CASE("npy rejects truncated and garbage and unsupported files with the file named") {
  const fs::path dir = temp_dir();
  const std::string path = (dir / "x.npy").string();
  HostTensor t;
  std::string err;
  auto reject = [&](const std::string& bytes, const std::string& expected) {
    write_file(path, bytes);
    err.clear();
    CHECK_FALSE(read_npy(path, t, err));
    INFO("error: " << err);
    CHECK(err.rfind(path + ": ", 0) == 0);
    CHECK(err.find(expected) != std::string::npos);
  };
  const std::string hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 16, 16), }\n";
  reject(npy_v1(hdr, std::string(100, 'x')), "truncated data: expected 3072 bytes, file has 100");
  reject(npy_v1(hdr, std::string(3073, 'x')), "expected 3072 bytes, file has 3073");
  reject("hello world, this is not numpy", "bad magic");
  reject("\x93NUM", "too short");
  reject(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18), "truncated header");
  reject(std::string("\x93NUMPY\x04\x00\x00\x00", 10), "version 4");
  reject(npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", std::string(8, 'x')), "fortran_order");
  reject(npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, 'x')), "'>f4'");
  reject(npy_v1("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", std::string(16, 'x')), "'<c8'");
  reject(npy_v1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", ""), "structured");
  reject(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", ""), "shape");
  reject(npy_v1("{'descr': '<f4', 'shape': (2,), }", ""), "missing");
  reject(npy_v1("['descr']", ""), "expected '{'");
  reject(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }", ""),
         "too large");
  CHECK_FALSE(read_npy((dir / "missing.npy").string(), t, err));
  CHECK(err.find("missing.npy: cannot open") == 0 + err.find("missing.npy"));
  fs::remove_all(dir);
}

TEST_CASE("sanitize_file_name") {
  CHECK(sanitize_file_name("logits") == "logits");
  CHECK(sanitize_file_name("a/b:c d") == "a_b_c_d");
  CHECK(sanitize_file_name("x.1-y_Z9") == "x.1-y_Z9");
  CHECK(sanitize_file_name("") == "_");
  CHECK(sanitize_file_name("..") == "__");
  CHECK(sanitize_file_name("\xc3\xa9") == "__");
}

TEST_CASE("MappedFile maps a whole file and names it on failure") {
  const fs::path dir = temp_dir();
  write_file(dir / "w.bin", std::string("\x01\x02\x03\x04\x05", 5));
  write_file(dir / "empty.bin", "");
  MappedFile m;
  std::string err;
  REQUIRE_MESSAGE(m.open((dir / "w.bin").string(), err), err);
  CHECK(m.size() == 5);
  CHECK(m.data()[4] == 5);
  MappedFile moved(std::move(m));
  CHECK(m.data() == nullptr);
  CHECK(moved.size() == 5);
  REQUIRE(moved.open((dir / "empty.bin").string(), err));
  CHECK(moved.size() == 0);
  CHECK_FALSE(moved.open((dir / "nope.bin").string(), err));
  CHECK(err.find("nope.bin: cannot open: ") != std::string::npos);
  fs::remove_all(dir);
}
