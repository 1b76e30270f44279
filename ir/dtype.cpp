#include "ir/dtype.h"

namespace kiln::ir {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::I8: return 1;
    case DType::U8: return 1;
    case DType::I16: return 2;
    case DType::U16: return 2;
    case DType::I32: return 4;
    case DType::U32: return 4;
    case DType::I64: return 8;
    case DType::U64: return 8;
    case DType::Bool: return 1;
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0:
    case DType::F4E2M1:
    case DType::I4:
    case DType::U4:
    case DType::I2:
    case DType::U2: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    case DType::I16: return "i16";
    case DType::U16: return "u16";
    case DType::I32: return "i32";
    case DType::U32: return "u32";
    case DType::I64: return "i64";
    case DType::U64: return "u64";
    case DType::Bool: return "bool";
    case DType::F8E4M3FN: return "f8e4m3fn";
    case DType::F8E4M3FNUZ: return "f8e4m3fnuz";
    case DType::F8E5M2: return "f8e5m2";
    case DType::F8E5M2FNUZ: return "f8e5m2fnuz";
    case DType::F8E8M0: return "f8e8m0";
    case DType::F4E2M1: return "f4e2m1";
    case DType::I4: return "i4";
    case DType::U4: return "u4";
    case DType::I2: return "i2";
    case DType::U2: return "u2";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

std::optional<DType> dtype_from_code(int code) {
  for (DType t : kAllDTypes)
    if (static_cast<int>(t) == code) return t;
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

bool is_integer(DType t) {
  return t == DType::I8 || t == DType::U8 || t == DType::I16 || t == DType::U16 ||
         t == DType::I32 || t == DType::U32 || t == DType::I64 || t == DType::U64;
}

bool is_storage_float(DType t) {
  return t == DType::F8E4M3FN || t == DType::F8E4M3FNUZ || t == DType::F8E5M2 ||
         t == DType::F8E5M2FNUZ || t == DType::F8E8M0 || t == DType::F4E2M1;
}

bool is_storage_only(DType t) {
  return is_storage_float(t) || t == DType::I4 || t == DType::U4 || t == DType::I2 || t == DType::U2;
}

bool is_signed(DType t) {
  return is_float(t) || t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

}  // namespace kiln::ir
