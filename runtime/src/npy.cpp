#include "kiln/rt/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "kiln/rt/lowp.h"

namespace kiln::rt {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

bool descr_to_dtype(const std::string& d, kiln_dtype& t) {
  if (d.size() != 3) return false;
  const char order = d[0];
  const std::string code = d.substr(1);
  const bool little = order == '<' || order == '|' || order == '=';
  struct Entry {
    const char* code;
    kiln_dtype t;
  };
  static const Entry one_byte[] = {{"i1", KILN_I8}, {"u1", KILN_U8}, {"b1", KILN_BOOL}};
  static const Entry multi_byte[] = {{"f4", KILN_F32}, {"f8", KILN_F64}, {"f2", KILN_F16},
                                     {"i2", KILN_I16}, {"i4", KILN_I32}, {"i8", KILN_I64},
                                     {"u2", KILN_U16}, {"u4", KILN_U32}, {"u8", KILN_U64}};
  for (const Entry& e : one_byte)
    if (code == e.code && (little || order == '>')) {
      t = e.t;
      return true;
    }
  for (const Entry& e : multi_byte)
    if (code == e.code && little) {
      t = e.t;
      return true;
    }
  return false;
}

// A cursor over the header text, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
struct HeaderParser {
  const std::string& s;
  size_t i = 0;
  explicit HeaderParser(const std::string& text) : s(text) {}

  void skip_ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    skip_ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool string(std::string& out) {
    skip_ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) return false;
    const char q = s[i++];
    const size_t end = s.find(q, i);
    if (end == std::string::npos) return false;
    out = s.substr(i, end - i);
    i = end + 1;
    return true;
  }
  bool word(std::string& out) {
    skip_ws();
    const size_t start = i;
    while (i < s.size() && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z'))) ++i;
    out = s.substr(start, i - start);
    return !out.empty();
  }
  bool integer(int64_t& v) {
    skip_ws();
    const size_t start = i;
    v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      const int64_t digit = s[i] - '0';
      if (v > (INT64_MAX - digit) / 10) return false;
      v = v * 10 + digit;
      ++i;
    }
    if (i < s.size() && s[i] == 'L') ++i;  // written by Python 2
    return i > start;
  }
  bool tuple(std::vector<int64_t>& out) {
    if (!eat('(')) return false;
    out.clear();
    for (;;) {
      if (eat(')')) return true;
      int64_t v;
      if (!integer(v)) return false;
      out.push_back(v);
      if (eat(')')) return true;
      if (!eat(',')) return false;
    }
  }
};

bool parse_header(const std::string& h, kiln_dtype& t, std::vector<int64_t>& shape, std::string& err) {
  HeaderParser p(h);
  bool have_descr = false, have_order = false, have_shape = false;
  if (!p.eat('{')) {
    err = "malformed header: expected '{'";
    return false;
  }
  for (;;) {
    if (p.eat('}')) break;
    std::string key;
    if (!p.string(key) || !p.eat(':')) {
      err = "malformed header: expected a quoted key and ':'";
      return false;
    }
    if (key == "descr") {
      std::string d;
      if (!p.string(d)) {
        err = "malformed header: 'descr' is not a string (structured dtypes are not supported)";
        return false;
      }
      if (!descr_to_dtype(d, t)) {
        err = "unsupported dtype '" + d + "'";
        return false;
      }
      have_descr = true;
    } else if (key == "fortran_order") {
      std::string w;
      if (!p.word(w) || (w != "True" && w != "False")) {
        err = "malformed header: 'fortran_order' is not True or False";
        return false;
      }
      if (w == "True") {
        err = "fortran_order arrays are not supported (save a C-ordered array)";
        return false;
      }
      have_order = true;
    } else if (key == "shape") {
      if (!p.tuple(shape)) {
        err = "malformed header: 'shape' is not a tuple of integers";
        return false;
      }
      have_shape = true;
    } else {
      err = "malformed header: unknown key '" + key + "'";
      return false;
    }
    if (p.eat('}')) break;
    if (!p.eat(',')) {
      err = "malformed header: expected ',' or '}'";
      return false;
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    err = "malformed header: missing 'descr', 'fortran_order' or 'shape'";
    return false;
  }
  return true;
}

// The .npy bytes in memory; `name` starts every message.
bool parse_npy_impl(const unsigned char* bytes, uint64_t file_size, const std::string& name, HostTensor& out,
                    std::string& error) {
  auto fail = [&](const std::string& what) {
    error = name + ": " + what;
    return false;
  };
  if (file_size < 10) return fail("not a .npy file: too short");
  if (std::memcmp(bytes, "\x93NUMPY", 6) != 0) return fail("not a .npy file: bad magic");
  const int major = bytes[6];
  uint64_t header_len, prefix;
  if (major == 1) {
    header_len = bytes[8] | (static_cast<uint64_t>(bytes[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (file_size < 12) return fail("truncated header");
    header_len = bytes[8] | (static_cast<uint64_t>(bytes[9]) << 8) | (static_cast<uint64_t>(bytes[10]) << 16) |
                 (static_cast<uint64_t>(bytes[11]) << 24);
    prefix = 12;
  } else {
    return fail("unsupported .npy format version " + std::to_string(major));
  }
  if (prefix + header_len > file_size)
    return fail("truncated header: expected " + std::to_string(header_len) + " bytes, file has " +
                std::to_string(file_size - prefix));
  std::string header(reinterpret_cast<const char*>(bytes) + prefix, header_len);

  kiln_dtype t = KILN_F32;
  std::vector<int64_t> shape;
  std::string err;
  if (!parse_header(header, t, shape, err)) return fail(err);
  const uint64_t es = dtype_size(t);
  uint64_t expected = es;
  for (int64_t d : shape) {
    if (d != 0 && expected > UINT64_MAX / static_cast<uint64_t>(d)) return fail("shape too large");
    expected *= static_cast<uint64_t>(d);
  }
  const uint64_t available = file_size - prefix - header_len;
  if (available < expected)
    return fail("truncated data: expected " + std::to_string(expected) + " bytes, file has " +
                std::to_string(available));
  if (available > expected)
    return fail("unexpected data after the array: expected " + std::to_string(expected) + " bytes, file has " +
                std::to_string(available));
  out.dtype = t;
  out.shape = std::move(shape);
  out.data.assign(bytes + prefix + header_len, bytes + prefix + header_len + expected);
  return true;
}

bool read_npy_impl(const std::string& path, HostTensor& out, std::string& error) {
  auto fail = [&](const std::string& what) {
    error = path + ": " + what;
    return false;
  };
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return fail(std::string("cannot open: ") + std::strerror(errno));
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return fail("cannot seek");
  const long size_l = std::ftell(f.get());
  if (size_l < 0) return fail("cannot determine the file size");
  std::rewind(f.get());
  std::vector<unsigned char> bytes(static_cast<size_t>(size_l));
  if (!bytes.empty() && std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) return fail("read error");
  return parse_npy_impl(bytes.data(), bytes.size(), path, out, error);
}

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

bool write_npy_impl(const std::string& path, const HostTensor& t, std::string& error) {
  auto fail = [&](const std::string& what) {
    error = path + ": " + what;
    return false;
  };
  const size_t es = dtype_size(t.dtype);
  if (es == 0) return fail("invalid dtype");
  const int64_t n = t.numel();
  if (n < 0 || t.data.size() != static_cast<size_t>(n) * es)
    return fail("tensor has " + std::to_string(t.data.size()) + " bytes, its shape needs " +
                std::to_string(static_cast<size_t>(n) * es));

  const unsigned char* payload = t.data.data();
  size_t payload_size = t.data.size();
  std::vector<unsigned char> converted;
  if (t.dtype == KILN_BF16 || is_storage_float(t.dtype)) {
    converted.resize(static_cast<size_t>(n) * 4);
    for (int64_t i = 0; i < n; ++i) {
      float v;
      if (t.dtype == KILN_BF16) {
        uint16_t b;
        std::memcpy(&b, payload + 2 * i, 2);
        v = bf16_bits_to_f32(b);
      } else {
        v = storage_float_to_f32(t.dtype, payload[i]);
      }
      std::memcpy(converted.data() + 4 * i, &v, 4);
    }
    payload = converted.data();
    payload_size = converted.size();
  }

  std::string dict = std::string("{'descr': '") + npy_descr(t.dtype) + "', 'fortran_order': False, 'shape': " +
                     shape_tuple(t.shape) + ", }";
  // Pad with spaces so that the data starts at a multiple of 64, end with '\n'.
  size_t prefix = 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 65535) {
    prefix = 12;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  const size_t header_len = total - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict += '\n';
  std::string pre("\x93NUMPY", 6);
  pre += static_cast<char>(prefix == 10 ? 1 : 2);
  pre += '\0';
  pre += static_cast<char>(header_len & 0xff);
  pre += static_cast<char>((header_len >> 8) & 0xff);
  if (prefix == 12) {
    pre += static_cast<char>((header_len >> 16) & 0xff);
    pre += static_cast<char>((header_len >> 24) & 0xff);
  }

  const std::string tmp = path + ".tmp";
  {
    File f(std::fopen(tmp.c_str(), "wb"));
    if (!f) return fail(std::string("cannot create: ") + std::strerror(errno));
    bool ok = std::fwrite(pre.data(), 1, pre.size(), f.get()) == pre.size() &&
              std::fwrite(dict.data(), 1, dict.size(), f.get()) == dict.size() &&
              (payload_size == 0 || std::fwrite(payload, 1, payload_size, f.get()) == payload_size);
    ok = std::fflush(f.get()) == 0 && ok;
    if (!ok) {
      f.reset();
      std::remove(tmp.c_str());
      return fail("write error");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return fail(std::string("cannot rename the temporary file: ") + std::strerror(errno));
  }
  return true;
}

}  // namespace

const char* npy_descr(kiln_dtype t) noexcept {
  switch (t) {
    case KILN_F32: return "<f4";
    case KILN_U8: return "|u1";
    case KILN_I8: return "|i1";
    case KILN_I16: return "<i2";
    case KILN_U16: return "<u2";
    case KILN_U32: return "<u4";
    case KILN_U64: return "<u8";
    case KILN_I32: return "<i4";
    case KILN_I64: return "<i8";
    case KILN_BOOL: return "|b1";
    case KILN_F16: return "<f2";
    case KILN_F64: return "<f8";
    case KILN_BF16: return "<f4";  // written converted to f32
    case KILN_F8E4M3FN:
    case KILN_F8E4M3FNUZ:
    case KILN_F8E5M2:
    case KILN_F8E5M2FNUZ:
    case KILN_F8E8M0:
    case KILN_F4E2M1: return "<f4";  // written converted to f32
    case KILN_I4:
    case KILN_I2: return "|i1";  // one value per byte
    case KILN_U4:
    case KILN_U2: return "|u1";
  }
  return "";
}

bool parse_npy(const unsigned char* bytes, size_t size, const std::string& name, HostTensor& out,
               std::string& error) noexcept {
  try {
    return parse_npy_impl(bytes, size, name, out, error);
  } catch (...) {
    error = name + ": out of memory";
    return false;
  }
}

bool read_npy(const std::string& path, HostTensor& out, std::string& error) noexcept {
  try {
    return read_npy_impl(path, out, error);
  } catch (const std::exception& e) {
    try {
      error = path + ": " + e.what();
    } catch (...) {
    }
    return false;
  } catch (...) {
    return false;
  }
}

bool write_npy(const std::string& path, const HostTensor& t, std::string& error) noexcept {
  try {
    return write_npy_impl(path, t, error);
  } catch (const std::exception& e) {
    try {
      error = path + ": " + e.what();
    } catch (...) {
    }
    return false;
  } catch (...) {
    return false;
  }
}

}  // namespace kiln::rt
