// Element types of IR tensors. The numbering matches ONNX's TensorProto.DataType and the
// runtime's kiln_dtype, so conversions at the edges are plain casts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::ir {

enum class DType : int {
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  BF16 = 16,
};

// Every DType, in a fixed order, for tests and tables.
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16,
                                       DType::I8,  DType::U8,  DType::I16, DType::U16,
                                       DType::I32, DType::U32, DType::I64, DType::U64,
                                       DType::Bool};

size_t dtype_size(DType);
// Short name used by the textual IR and messages: f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32,
// i64, u64, bool.
std::string_view dtype_name(DType);
std::optional<DType> parse_dtype(std::string_view name);
std::optional<DType> dtype_from_code(int code);
bool is_float(DType);
bool is_integer(DType);  // signed or unsigned integer, not bool
bool is_signed(DType);

}  // namespace kiln::ir
