// dense<...> literals: splats, nested lists and hex blobs, checked against their tensor type.
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "frontend/stablehlo/stablehlo_internal.h"
#include "ir/error.h"
#include "ir/tensor.h"

namespace kiln::frontend::stablehlo {
namespace {

constexpr int kMaxListDepth = 64;

// Writes elements of one dtype from their text form into a byte buffer.
class ElementWriter {
 public:
  ElementWriter(ir::DType dt, uint8_t* out) : dt_(dt), size_(ir::dtype_size(dt)), out_(out) {}

  // One element from `text` (a number, true/false, or 0x... bits) at index i.
  void write(int64_t i, const std::string& text) {
    uint8_t* dst = out_ + static_cast<size_t>(i) * size_;
    if (text.empty()) fail("empty element");
    if (text == "true" || text == "false") {
      if (dt_ != ir::DType::Bool) fail("'{}' in a literal of {}", text, ir::dtype_name(dt_));
      *dst = text == "true";
      return;
    }
    const bool neg = text[0] == '-';
    const size_t body = (text[0] == '-' || text[0] == '+') ? 1 : 0;
    const bool hex = text.size() > body + 2 && text[body] == '0' && (text[body + 1] == 'x' || text[body + 1] == 'X');
    if (ir::is_float(dt_)) {
      if (hex) {
        uint64_t bits = parse_hex(text.substr(body + 2), text);
        if (neg) fail("negative hexadecimal float bits '{}'", text);
        if (size_ < 8 && bits >> (8 * size_)) fail("'{}' has more bits than a {} element", text, ir::dtype_name(dt_));
        std::memcpy(dst, &bits, size_);  // little-endian: the low bytes
        return;
      }
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size()) fail("'{}' is not a number", text);
      write_float(dst, v);
      return;
    }
    uint64_t mag = 0;
    if (hex) {
      mag = parse_hex(text.substr(body + 2), text);
    } else {
      for (size_t k = body; k < text.size(); ++k)
        if (!std::isdigit(static_cast<unsigned char>(text[k])))
          fail("'{}' in a literal of {}, which holds integers", text, ir::dtype_name(dt_));
      if (text.size() == body) fail("'{}' is not a number", text);
      errno = 0;
      mag = std::strtoull(text.c_str() + body, nullptr, 10);
      if (errno == ERANGE) fail("'{}' is out of range", text);
    }
    write_integer(dst, mag, neg, hex, text);
  }

 private:
  static uint64_t parse_hex(const std::string& digits, const std::string& text) {
    if (digits.empty() || digits.size() > 16) fail("malformed hexadecimal element '{}'", text);
    for (char c : digits)
      if (!std::isxdigit(static_cast<unsigned char>(c))) fail("malformed hexadecimal element '{}'", text);
    return std::stoull(digits, nullptr, 16);
  }

  void write_float(uint8_t* dst, double v) {
    switch (dt_) {
      case ir::DType::F32: {
        float f = static_cast<float>(v);
        std::memcpy(dst, &f, 4);
        return;
      }
      case ir::DType::F64: std::memcpy(dst, &v, 8); return;
      case ir::DType::F16: {
        ir::f16 h(static_cast<float>(v));
        std::memcpy(dst, &h, 2);
        return;
      }
      case ir::DType::BF16: {
        ir::bf16 h(static_cast<float>(v));
        std::memcpy(dst, &h, 2);
        return;
      }
      default: fail("float element in a literal of {}", ir::dtype_name(dt_));
    }
  }

  void write_integer(uint8_t* dst, uint64_t mag, bool neg, bool hex, const std::string& text) {
    if (dt_ == ir::DType::Bool) {
      if (neg || mag > 1) fail("'{}' is not a boolean (0, 1, true or false)", text);
      *dst = static_cast<uint8_t>(mag);
      return;
    }
    const int bits = static_cast<int>(8 * size_);
    if (!ir::is_signed(dt_)) {
      if (neg && mag != 0) fail("'{}' is negative in a literal of {}", text, ir::dtype_name(dt_));
      if (bits < 64 && mag >> bits) fail("'{}' does not fit {}", text, ir::dtype_name(dt_));
      std::memcpy(dst, &mag, size_);
      return;
    }
    int64_t v = 0;
    if (hex && !neg) {  // a bit pattern: 0xFF is -1 in an i8
      if (bits < 64 && mag >> bits) fail("'{}' does not fit {}", text, ir::dtype_name(dt_));
      v = bits < 64 ? static_cast<int64_t>(mag << (64 - bits)) >> (64 - bits) : static_cast<int64_t>(mag);
    } else {
      if (mag > (neg ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX)))
        fail("'{}' does not fit {}", text, ir::dtype_name(dt_));
      v = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
      const int64_t lo = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
      const int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
      if (v < lo || v > hi) fail("'{}' does not fit {}", text, ir::dtype_name(dt_));
    }
    std::memcpy(dst, &v, size_);  // little-endian: the low bytes
  }

  ir::DType dt_;
  size_t size_;
  uint8_t* out_;
};

// A cursor over the text of a nested list literal.
class ListReader {
 public:
  ListReader(const std::string& s, const std::vector<int64_t>& dims, ElementWriter& w) : s_(s), dims_(dims), w_(w) {}

  void read() {
    list(0);
    ws();
    if (p_ != s_.size()) fail("unexpected '{}' after the list", s_.substr(p_, 12));
  }
  int64_t count() const { return next_; }

 private:
  void ws() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  void list(size_t depth) {
    ws();
    if (depth > kMaxListDepth) fail("lists nested too deeply");
    if (depth == dims_.size()) {
      element();
      return;
    }
    if (p_ >= s_.size() || s_[p_] != '[')
      fail("expected a list of {} at depth {} (the type's dims are {})", dims_[depth], depth, ir::dims_str(dims_));
    ++p_;
    int64_t n = 0;
    ws();
    if (p_ < s_.size() && s_[p_] == ']') {
      ++p_;
    } else {
      for (;;) {
        if (n >= dims_[depth]) fail("a list at depth {} has more than {} elements (the type's dims are {})", depth, dims_[depth], ir::dims_str(dims_));
        list(depth + 1);
        ++n;
        ws();
        if (p_ < s_.size() && s_[p_] == ',') {
          ++p_;
          continue;
        }
        if (p_ < s_.size() && s_[p_] == ']') {
          ++p_;
          break;
        }
        fail("expected ',' or ']' in the list{}", p_ >= s_.size() ? " (it ends early)" : "");
      }
    }
    if (n != dims_[depth])
      fail("a list at depth {} has {} elements, the type's dims {} need {}", depth, n, ir::dims_str(dims_), dims_[depth]);
  }
  void element() {
    ws();
    if (p_ < s_.size() && s_[p_] == '[')
      fail("a list where an element belongs: the literal has more dims than the type's {}", ir::dims_str(dims_));
    if (p_ < s_.size() && s_[p_] == '(') fail("complex elements are not supported");
    size_t start = p_;
    while (p_ < s_.size() && s_[p_] != ',' && s_[p_] != ']' && !std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
    w_.write(next_++, s_.substr(start, p_ - start));
  }

  const std::string& s_;
  const std::vector<int64_t>& dims_;
  ElementWriter& w_;
  size_t p_ = 0;
  int64_t next_ = 0;
};

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

}  // namespace

ir::Tensor dense_tensor(const std::string& text, const TensorType& type, const ImportLimits& limits) {
  uint64_t count = 1;
  for (int64_t d : type.dims)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) fail("{} has too many elements", type.str());
  if (count > limits.max_elements)
    fail("{} has {} elements, over the element limit of {} (--max-elements)", type.str(), count, limits.max_elements);
  const size_t esize = ir::dtype_size(type.dtype);
  if (count > limits.max_tensor_bytes / esize)
    fail("{} needs {} bytes, over the tensor size limit of {} bytes (--max-tensor-bytes)", type.str(), count * esize,
         limits.max_tensor_bytes);
  ir::Tensor t(type.dtype, type.dims);
  auto* out = static_cast<uint8_t*>(t.mutable_raw());
  const std::string body = trim(text);
  if (body.empty()) fail("empty dense<> literal");
  ElementWriter writer(type.dtype, out);

  auto splat = [&](const auto& write_first) {
    if (count == 0) return;
    write_first();
    for (uint64_t i = 1; i < count; ++i) std::memcpy(out + i * esize, out, esize);
  };

  if (body[0] == '"') {  // "0x...": the raw little-endian bytes
    if (body.size() < 4 || body.back() != '"' || body.compare(0, 3, "\"0x") != 0)
      fail("a quoted dense literal must be a \"0x...\" hex blob");
    const std::string hex = body.substr(3, body.size() - 4);
    if (hex.size() % 2) fail("hex blob has an odd number of digits");
    for (char c : hex)
      if (!std::isxdigit(static_cast<unsigned char>(c))) fail("hex blob has a non-hex character {}", c >= 0x20 && c < 0x7f ? std::string(1, c) : "byte");
    const uint64_t bytes = hex.size() / 2;
    auto nibble = [](char c) { return static_cast<uint8_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10); };
    auto byte_at = [&](uint64_t k) { return static_cast<uint8_t>(nibble(hex[2 * k]) << 4 | nibble(hex[2 * k + 1])); };
    if (bytes == count * esize) {
      for (uint64_t k = 0; k < bytes; ++k) out[k] = byte_at(k);
    } else if (bytes == esize) {
      splat([&] {
        for (uint64_t k = 0; k < bytes; ++k) out[k] = byte_at(k);
      });
    } else {
      fail("hex blob has {} bytes, {} needs {} (or {} for one repeated element)", bytes, type.str(), count * esize, esize);
    }
    if (type.dtype == ir::DType::Bool)
      for (uint64_t i = 0; i < count; ++i) out[i] = out[i] != 0;
    return t;
  }
  if (body[0] == '[') {
    if (type.dims.empty()) {
      // A 0-d tensor written as a one-element list is not something MLIR prints.
      fail("a list literal for the 0-d {}", type.str());
    }
    ListReader reader(body, type.dims, writer);
    reader.read();
    return t;
  }
  if (body[0] == '(') fail("complex literals are not supported");
  if (body.find_first_of(", []") != std::string::npos) fail("malformed dense literal '{}'", body.substr(0, 40));
  splat([&] { writer.write(0, body); });
  if (count == 0) {
    ir::Tensor scratch(type.dtype, {});
    ElementWriter check(type.dtype, static_cast<uint8_t*>(scratch.mutable_raw()));
    check.write(0, body);  // still a valid element
  }
  return t;
}

}  // namespace kiln::frontend::stablehlo
