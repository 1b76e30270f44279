#include "frontend/torch_export/pt2_schema.h"

#include <cmath>
#include <limits>

#include "ir/error.h"

namespace kiln::frontend::torch_export {
namespace {

[[noreturn]] void wrong_kind(const JsonValue& v, std::string_view what, std::string_view expected) {
  fail("{}: expected {}, found {}", what, expected, json_kind_name(v.kind()));
}

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

const JsonValue& field(const JsonValue& object, std::string_view key, std::string_view what) {
  const JsonValue* v = optional_field(object, key, what);
  if (!v) fail("{}: missing '{}'", what, key);
  return *v;
}

const JsonValue* optional_field(const JsonValue& object, std::string_view key, std::string_view what) {
  if (!object.is_object()) wrong_kind(object, what, "an object");
  const JsonValue* v = object.find(key);
  return v && !v->is_null() ? v : nullptr;
}

const std::vector<JsonValue>& array_of(const JsonValue& v, std::string_view what) {
  if (!v.is_array()) wrong_kind(v, what, "an array");
  return v.items();
}

const std::string& string_of(const JsonValue& v, std::string_view what) {
  if (!v.is_string()) wrong_kind(v, what, "a string");
  return v.string();
}

int64_t int_of(const JsonValue& v, std::string_view what) {
  if (!v.is_integer()) wrong_kind(v, what, "an integer");
  return v.integer();
}

bool bool_of(const JsonValue& v, std::string_view what) {
  if (!v.is_bool()) wrong_kind(v, what, "true or false");
  return v.boolean();
}

double float_of(const JsonValue& v, std::string_view what) {
  if (v.is_number()) return v.number();
  if (v.is_string()) {
    if (v.string() == "Infinity") return std::numeric_limits<double>::infinity();
    if (v.string() == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (v.string() == "NaN") return std::numeric_limits<double>::quiet_NaN();
    fail("{}: expected a number, found the string '{}'", what, v.string());
  }
  wrong_kind(v, what, "a number");
}

std::pair<std::string_view, const JsonValue&> union_of(const JsonValue& v, std::string_view what) {
  if (!v.is_object()) wrong_kind(v, what, "a one-key object (a union)");
  if (v.members().size() != 1)
    fail("{}: a union must have exactly one key, found {}", what, v.members().size());
  const auto& [key, value] = v.members()[0];
  return {key, value};
}

std::vector<std::string> expr_symbols(std::string_view expr) {
  // Identifiers that are not sympy's constructors and keywords, and not quoted words other
  // than Symbol's first argument: "Mul(Integer(2), Symbol('s0', integer=True))" -> s0.
  std::vector<std::string> out;
  auto add = [&](std::string s) {
    for (const auto& o : out)
      if (o == s) return;
    out.push_back(std::move(s));
  };
  static constexpr std::string_view kSymbol = "Symbol('";
  if (expr.find(kSymbol) != std::string_view::npos) {
    for (size_t p = expr.find(kSymbol); p != std::string_view::npos; p = expr.find(kSymbol, p + 1)) {
      size_t start = p + kSymbol.size();
      size_t end = expr.find('\'', start);
      if (end == std::string_view::npos) break;
      add(std::string(expr.substr(start, end - start)));
    }
    return out;
  }
  for (size_t i = 0; i < expr.size();) {
    if (!is_ident_char(expr[i]) || (expr[i] >= '0' && expr[i] <= '9')) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < expr.size() && is_ident_char(expr[i])) ++i;
    bool call = i < expr.size() && expr[i] == '(';
    if (!call) add(std::string(expr.substr(start, i - start)));
  }
  return out;
}

std::optional<std::string> single_symbol(std::string_view expr) {
  static constexpr std::string_view kSymbol = "Symbol('";
  if (expr.substr(0, kSymbol.size()) == kSymbol) {
    size_t end = expr.find('\'', kSymbol.size());
    if (end == std::string_view::npos || expr.back() != ')') return std::nullopt;
    // Only keyword assumptions may follow the name: no nested expression.
    if (expr.find('(', kSymbol.size()) != std::string_view::npos) return std::nullopt;
    return std::string(expr.substr(kSymbol.size(), end - kSymbol.size()));
  }
  if (expr.empty() || (expr[0] >= '0' && expr[0] <= '9')) return std::nullopt;
  for (char c : expr)
    if (!is_ident_char(c)) return std::nullopt;
  return std::string(expr);
}

ir::Dim dim_of(const JsonValue& sym_int, std::string_view what) {
  auto [kind, value] = union_of(sym_int, what);
  if (kind == "as_int") {
    int64_t v = int_of(value, what);
    if (v < 0) fail("{}: negative size {}", what, v);
    return ir::Dim(v);
  }
  if (kind == "as_expr") {
    const std::string& expr = string_of(field(value, "expr_str", what), what);
    if (auto symbol = single_symbol(expr)) return ir::Dim::symbol(*symbol);
    return ir::Dim::unknown();
  }
  fail("{}: expected as_int or as_expr, found '{}'", what, kind);
}

TensorMeta tensor_meta_of(const JsonValue& meta, std::string_view what, const ImportLimits& limits) {
  TensorMeta out;
  out.dtype = dtype_of_scalar_type(int_of(field(meta, "dtype", what), what), what);
  const auto& sizes = array_of(field(meta, "sizes", what), what);
  if (sizes.size() > static_cast<size_t>(limits.max_rank))
    fail("{}: rank {} is over the rank limit of {} (--max-rank)", what, sizes.size(), limits.max_rank);
  std::vector<ir::Dim> dims;
  for (size_t i = 0; i < sizes.size(); ++i) dims.push_back(dim_of(sizes[i], fmt::format("{}: sizes[{}]", what, i)));
  out.shape = ir::Shape(std::move(dims));
  if (out.shape.is_static()) {
    uint64_t count = 1;
    bool zero = false;
    for (const ir::Dim& d : out.shape.dims()) {
      zero = zero || d.value() == 0;
      if (count != UINT64_MAX && __builtin_mul_overflow(count, static_cast<uint64_t>(d.value()), &count))
        count = UINT64_MAX;
    }
    if (!zero && count > limits.max_elements)
      fail("{}: shape {} has more than {} elements, the element limit (--max-elements)", what, out.shape.str(),
           limits.max_elements);
    uint64_t size = ir::dtype_size(out.dtype);
    if (!zero && size && count > limits.max_tensor_bytes / size)
      fail("{}: shape {} needs more than {} bytes, the tensor size limit (--max-tensor-bytes)", what,
           out.shape.str(), limits.max_tensor_bytes);
  }
  if (const JsonValue* strides = optional_field(meta, "strides", what)) {
    const auto& list = array_of(*strides, what);
    std::vector<int64_t> values;
    for (size_t i = 0; i < list.size(); ++i) {
      ir::Dim d = dim_of(list[i], fmt::format("{}: strides[{}]", what, i));
      if (!d.is_static()) {
        values.clear();
        break;
      }
      values.push_back(d.value());
    }
    if (!values.empty() && values.size() != sizes.size())
      fail("{}: {} strides for {} sizes", what, values.size(), sizes.size());
    out.strides = std::move(values);
  }
  if (const JsonValue* offset = optional_field(meta, "storage_offset", what)) {
    ir::Dim d = dim_of(*offset, fmt::format("{}: storage_offset", what));
    out.storage_offset = d.is_static() ? d.value() : 0;
  }
  return out;
}

ir::DType dtype_of_scalar_type(int64_t code, std::string_view what) {
  switch (code) {
    case 1: return ir::DType::U8;
    case 2: return ir::DType::I8;
    case 3: return ir::DType::I16;
    case 4: return ir::DType::I32;
    case 5: return ir::DType::I64;
    case 6: return ir::DType::F16;
    case 7: return ir::DType::F32;
    case 8: return ir::DType::F64;
    case 12: return ir::DType::Bool;
    case 13: return ir::DType::BF16;
    case 28: return ir::DType::U16;
    case 29: return ir::DType::F8E4M3FN;
    case 30: return ir::DType::F8E5M2;
    case 31: return ir::DType::F8E4M3FNUZ;
    case 32: return ir::DType::F8E5M2FNUZ;
    case 33: return ir::DType::F8E8M0;
    case 34: return ir::DType::U32;
    case 35: return ir::DType::U64;
    case 9:
    case 10:
    case 11: fail("{}: complex tensors are not supported (ScalarType {})", what, code);
    default: fail("{}: unknown ScalarType {}", what, code);
  }
}

int64_t c10_scalar_type(int64_t code, std::string_view what) {
  // schema.py's ScalarType -> c10::ScalarType
  switch (code) {
    case 1: return 0;    // uint8
    case 2: return 1;    // int8
    case 3: return 2;    // int16
    case 4: return 3;    // int32
    case 5: return 4;    // int64
    case 6: return 5;    // float16
    case 7: return 6;    // float32
    case 8: return 7;    // float64
    case 9: return 8;    // complex32
    case 10: return 9;   // complex64
    case 11: return 10;  // complex128
    case 12: return 11;  // bool
    case 13: return 15;  // bfloat16
    case 28: return 27;  // uint16
    case 29: return 24;  // float8_e4m3fn
    case 30: return 23;  // float8_e5m2
    case 31: return 26;  // float8_e4m3fnuz
    case 32: return 25;  // float8_e5m2fnuz
    case 33: return 44;  // float8_e8m0fnu
    case 34: return 28;  // uint32
    case 35: return 29;  // uint64
    default: fail("{}: unknown ScalarType {}", what, code);
  }
}

int64_t c10_layout(int64_t code, std::string_view what) {
  switch (code) {
    case 7: return 0;  // strided
    case 1: return 1;  // sparse_coo
    case 2: return 2;  // sparse_csr
    case 6: return 3;  // _mkldnn
    case 3: return 4;  // sparse_csc
    case 4: return 5;  // sparse_bsr
    case 5: return 6;  // sparse_bsc
    default: fail("{}: unknown Layout {}", what, code);
  }
}

int64_t c10_memory_format(int64_t code, std::string_view what) {
  switch (code) {
    case 1: return 0;  // contiguous_format
    case 4: return 1;  // preserve_format
    case 2: return 2;  // channels_last
    case 3: return 3;  // channels_last_3d
    default: fail("{}: unknown MemoryFormat {}", what, code);
  }
}

}  // namespace kiln::frontend::torch_export
