// VHLO's bytecode encodings of types and attributes (the codes of
// stablehlo/dialect/VhloBytecode.cpp), decoded into VhloType and the text reader's Attr.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "frontend/stablehlo/stablehlo_internal.h"
#include "frontend/stablehlo/vhlo_bytecode.h"

namespace kiln::frontend::stablehlo {
namespace {

constexpr int64_t kMaxRank = 64;

// VHLO type codes: element types by name and width.
struct ElementCode {
  uint64_t code;
  const char* name;
  int bits;
  bool is_float, is_signed;
};
constexpr ElementCode kElements[] = {
    {0, "i1", 1, false, false},    {2, "bf16", 16, true, true},  {3, "f16", 16, true, true},
    {4, "f32", 32, true, true},    {5, "f64", 64, true, true},   {9, "index", 64, false, true},
    {11, "i8", 8, false, true},    {12, "i16", 16, false, true}, {13, "i32", 32, false, true},
    {14, "i64", 64, false, true},  {16, "ui8", 8, false, false}, {17, "ui16", 16, false, false},
    {18, "ui32", 32, false, false}, {19, "ui64", 64, false, false},
};
enum TypeCode : uint64_t { kFunction = 8, kRankedTensor = 20, kRankedTensorWithEncoding = 21, kToken = 22, kTuple = 23 };

enum AttrCode : uint64_t {
  kArray = 1, kBoolean = 2, kComparisonDirection = 3, kComparisonType = 4, kCustomCallApiVersion = 5,
  kDictionary = 6, kFftType = 7, kFloat = 8, kInteger = 9, kOutputOperandAlias = 10, kPrecision = 11,
  kRngAlgorithm = 12, kRngDistribution = 13, kString = 14, kTensor = 15, kTranspose = 16, kType = 17,
  kTypeExtensions = 18, kResultAccuracyMode = 19, kResultAccuracy = 20,
};

// An enum attribute: its kind as StableHLO prints it and the names of its values.
struct EnumCode {
  uint64_t code;
  const char* kind;
  std::vector<const char*> values;
};
const EnumCode kEnums[] = {
    {kComparisonDirection, "comparison_direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}},
    {kComparisonType, "comparison_type", {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}},
    {kPrecision, "precision", {"DEFAULT", "HIGH", "HIGHEST"}},
    {kTranspose, "transpose", {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}},
    {kFftType, "fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}},
    {kRngAlgorithm, "rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX"}},
    {kRngDistribution, "rng_distribution", {"UNIFORM", "NORMAL"}},
    {kResultAccuracyMode, "result_accuracy_mode", {"DEFAULT", "HIGHEST", "TOLERANCE"}},
    {kCustomCallApiVersion, "custom_call_api_version", {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                                        "API_VERSION_STATUS_RETURNING",
                                                        "API_VERSION_STATUS_RETURNING_UNIFIED",
                                                        "API_VERSION_TYPED_FFI"}},
};

std::string hex_blob(const std::string& data) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "\"0x";
  s.reserve(data.size() * 2 + 4);
  for (unsigned char c : data) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s + "\"";
}

// Sign- or zero-extends the low `bits` of `v`.
int64_t extend(uint64_t v, int bits, bool is_signed) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (is_signed && (v >> (bits - 1)) & 1) v |= ~mask;
  return static_cast<int64_t>(v);
}

// MLIR's readAPIntWithKnownWidth for widths up to 64: a byte up to 8 bits, else a signed varint.
uint64_t read_apint(Cursor& c, int bits) {
  if (bits <= 8) return c.byte();
  if (bits <= 64) return static_cast<uint64_t>(c.svarint());
  c.fail(fmt::format("integers of {} bits are not supported", bits));
}

double float_from_bits(uint64_t bits, int width) {
  if (width == 64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  const auto u = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double half_to_double(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(mant | 1024, exp - 25);
  return sign ? -v : v;
}

}  // namespace

void BytecodeFile::fail(size_t offset, const std::string& msg) const {
  kiln::fail("{}: offset {}: {}", *file, offset, msg);
}

const std::string& BytecodeFile::string_at(Cursor& c, uint64_t index) const {
  if (index >= strings.size()) c.fail(fmt::format("string index {} is out of range ({} strings)", index, strings.size()));
  return strings[index];
}

uint64_t BytecodeFile::attr_index(Cursor& c) const {
  const size_t at = c.offset();
  const uint64_t k = c.varint();
  if (k >= attrs.size()) c.fail_at(at, fmt::format("attribute index {} is out of range ({} attributes)", k, attrs.size()));
  return k;
}

uint64_t BytecodeFile::type_index(Cursor& c) const {
  const size_t at = c.offset();
  const uint64_t k = c.varint();
  if (k >= types.size()) c.fail_at(at, fmt::format("type index {} is out of range ({} types)", k, types.size()));
  return k;
}

Cursor BytecodeFile::entry_cursor(const BytecodeEntry& e) const {
  const auto* base = reinterpret_cast<const uint8_t*>(bytes->data()) + attr_type_base;
  return Cursor(base + e.offset, base + e.offset + e.size, attr_type_base + e.offset, file);
}

const VhloType& BytecodeFile::type(uint64_t index, int depth) {
  if (type_cache_.size() != types.size()) type_cache_.resize(types.size());
  if (!type_cache_[index]) type_cache_[index] = decode_type(index, depth);
  return *type_cache_[index];
}

VhloType BytecodeFile::decode_type(uint64_t index, int depth) {
  const BytecodeEntry& e = types[index];
  Cursor c = entry_cursor(e);
  if (depth > kMaxAttrDepth) c.fail(fmt::format("type {} is nested too deeply (or refers to itself)", index));
  const std::string& dialect = dialects[e.dialect];
  VhloType t;
  if (dialect != "vhlo" || !e.custom) {
    t.name = fmt::format("a {} type", dialect);
    return t;
  }
  const uint64_t code = c.varint();
  for (const ElementCode& el : kElements) {
    if (el.code != code) continue;
    t.kind = VhloType::Kind::Element;
    t.name = el.name;
    t.bits = el.bits;
    t.is_float = el.is_float;
    t.is_signed = el.is_signed;
    return t;
  }
  switch (code) {
    case kRankedTensor: {
      const uint64_t rank = c.count("tensor rank");
      if (static_cast<int64_t>(rank) > kMaxRank) c.fail(fmt::format("a tensor of rank {}", rank));
      for (uint64_t k = 0; k < rank; ++k) t.dims.push_back(c.svarint());
      t.element = type_index(c);
      const VhloType& el = type(t.element, depth + 1);
      if (el.kind != VhloType::Kind::Element) {
        t.name = fmt::format("a tensor of {}", el.name);
        return t;
      }
      t.kind = VhloType::Kind::Tensor;
      return t;
    }
    case kFunction: {
      t.kind = VhloType::Kind::Function;
      const uint64_t n_in = c.count("function inputs");
      for (uint64_t k = 0; k < n_in; ++k) t.inputs.push_back(type_index(c));
      const uint64_t n_out = c.count("function results");
      for (uint64_t k = 0; k < n_out; ++k) t.outputs.push_back(type_index(c));
      return t;
    }
    case kRankedTensorWithEncoding: t.name = "a tensor type with an encoding (bounded dims)"; return t;
    case kToken: t.name = "a token"; return t;
    case kTuple: t.name = "a tuple"; return t;
    default: t.name = fmt::format("VHLO type code {}", code); return t;
  }
}

TensorType BytecodeFile::tensor_type(uint64_t index, size_t offset) {
  const VhloType& t = type(index);
  if (t.kind != VhloType::Kind::Tensor) fail(offset, fmt::format("expected a ranked tensor type, found {}", t.name));
  const VhloType& el = type(t.element);
  TensorType out;
  std::optional<ir::DType> dt = element_type(el.name);
  if (!dt) fail(offset, fmt::format("tensors of {} are not supported", el.name));
  out.dtype = *dt;
  for (int64_t d : t.dims)
    if (d < 0) fail(offset, "tensors with dynamic dims are not supported");
  out.dims = t.dims;
  return out;
}

Attr BytecodeFile::attr(uint64_t index, int depth) {
  const BytecodeEntry& e = attrs[index];
  Cursor c = entry_cursor(e);
  if (depth > kMaxAttrDepth) c.fail(fmt::format("attribute {} is nested too deeply (or refers to itself)", index));
  const std::string& dialect = dialects[e.dialect];
  if (dialect != "vhlo") c.fail(fmt::format("attribute {} is of dialect '{}' (only vhlo attributes are read)", index, dialect));
  if (!e.custom) c.fail(fmt::format("attribute {} is stored as text, which kiln does not read", index));
  const size_t at = c.offset();
  const uint64_t code = c.varint();
  Attr a;
  for (const EnumCode& en : kEnums) {
    if (en.code != code) continue;
    const uint64_t v = c.varint();
    if (v >= en.values.size()) c.fail_at(at, fmt::format("{} value {} is out of range", en.kind, v));
    a.kind = Attr::Kind::Opaque;
    a.s = fmt::format("#stablehlo<{} {}>", en.kind, en.values[v]);
    return a;
  }
  switch (code) {
    case kArray: {
      a.kind = Attr::Kind::List;
      const uint64_t n = c.count("array elements");
      for (uint64_t k = 0; k < n; ++k) a.items.push_back(attr(attr_index(c), depth + 1));
      return a;
    }
    case kBoolean: {
      const uint64_t v = c.varint();
      if (v > 1) c.fail_at(at, fmt::format("boolean value {}", v));
      a.kind = Attr::Kind::Bool;
      a.i = static_cast<int64_t>(v);
      return a;
    }
    case kDictionary: {
      a.kind = Attr::Kind::Dict;
      const uint64_t n = c.count("dictionary entries", 2);
      for (uint64_t k = 0; k < n; ++k) {
        Attr key = attr(attr_index(c), depth + 1);
        if (key.kind != Attr::Kind::String) c.fail("a dictionary key that is not a string");
        a.keys.push_back(key.s);
        a.items.push_back(attr(attr_index(c), depth + 1));
      }
      return a;
    }
    case kFloat:
    case kInteger: {
      const uint64_t ti = type_index(c);
      const VhloType& t = type(ti, depth + 1);
      if (t.kind != VhloType::Kind::Element || t.is_float != (code == kFloat) || t.bits < 1)
        c.fail_at(at, fmt::format("a {} attribute of {}", code == kFloat ? "float" : "integer", t.name));
      const uint64_t bits = read_apint(c, t.bits);
      if (code == kInteger) {
        a.kind = Attr::Kind::Int;
        a.i = extend(bits, t.bits, t.is_signed);
        return a;
      }
      a.kind = Attr::Kind::Float;
      if (t.name == "f16") a.f = half_to_double(static_cast<uint16_t>(bits));
      else if (t.name == "bf16") a.f = float_from_bits(bits << 16, 32);
      else a.f = float_from_bits(bits, t.bits);
      return a;
    }
    case kString: {
      a.kind = Attr::Kind::String;
      a.s = string_at(c, c.varint());
      return a;
    }
    case kTensor: {
      const size_t type_at = c.offset();
      const uint64_t ti = type_index(c);
      TensorType tt = tensor_type(ti, type_at);
      const uint64_t size = c.count("tensor bytes", 0);
      std::string data = c.bytes(size);
      if (tt.dtype == ir::DType::Bool) {
        // i1 tensors are stored packed, 8 elements a byte (a splat as one byte).
        uint64_t n = 1;
        for (int64_t d : tt.dims)
          if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) c.fail_at(type_at, "a tensor with too many elements");
        if (n > 1 && data.size() == 1) {
          data = std::string(1, data[0] ? '\1' : '\0');
        } else if (data.size() == (n + 7) / 8 && data.size() != n) {
          std::string unpacked(n, '\0');
          for (uint64_t k = 0; k < n; ++k) unpacked[k] = (static_cast<uint8_t>(data[k / 8]) >> (k % 8)) & 1;
          data = std::move(unpacked);
        }
      }
      a.kind = Attr::Kind::Dense;
      a.s = hex_blob(data);
      a.type = tt;
      return a;
    }
    case kType: {
      a.kind = Attr::Kind::Type;
      a.i = static_cast<int64_t>(type_index(c));
      a.s = type(static_cast<uint64_t>(a.i), depth + 1).name;
      return a;
    }
    case kOutputOperandAlias:
    case kTypeExtensions:
    case kResultAccuracy:
      a.kind = Attr::Kind::Opaque;
      a.s = fmt::format("#vhlo<attribute code {}>", code);
      return a;
    default: c.fail_at(at, fmt::format("unknown VHLO attribute code {}", code));
  }
}

std::string BytecodeFile::location_name(uint64_t index) {
  // Builtin attribute codes (mlir/IR/BuiltinDialectBytecode.td): StringAttr 2, NameLoc 14.
  constexpr uint64_t kStringAttr = 2, kNameLoc = 14;
  const BytecodeEntry& loc = attrs[index];
  if (dialects[loc.dialect] != "builtin" || !loc.custom) return "";
  Cursor c = entry_cursor(loc);
  if (c.varint() != kNameLoc) return "";
  const BytecodeEntry& name = attrs[attr_index(c)];
  if (dialects[name.dialect] != "builtin" || !name.custom) return "";
  Cursor n = entry_cursor(name);
  if (n.varint() != kStringAttr) return "";
  return string_at(n, n.varint());
}

std::vector<int64_t> BytecodeFile::ints(uint64_t index, const std::string& what, size_t offset) {
  Attr a = attr(index);
  if (a.kind == Attr::Kind::Int) return {a.i};
  std::vector<int64_t> out;
  if (a.kind == Attr::Kind::List) {
    for (const Attr& item : a.items) {
      if (item.kind != Attr::Kind::Int) fail(offset, fmt::format("{}: expected integers, found {}", what, item.describe()));
      out.push_back(item.i);
    }
    return out;
  }
  if (a.kind != Attr::Kind::Dense || !a.type || ir::is_float(a.type->dtype) || a.type->dims.size() > 1)
    fail(offset, fmt::format("{}: expected a list of integers, found {}", what, a.describe()));
  // Dim lists are short; a splat blob must not make a long one.
  ImportLimits small;
  small.max_elements = 1 << 16;
  try {
    return dense_tensor(a.s, *a.type, small).to_int64_vector();
  } catch (const Error& e) {
    fail(offset, fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace kiln::frontend::stablehlo
