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
  // Storage-only dtypes (runtime/include/kiln/rt/lowp.h): one byte per element in memory.
  // Only ops whose OpDef sets `storage_dtypes` (Cast, CastLike, the quantization ops, BitCast
  // and a few that only move data) accept them; the rest do not instantiate them.
  F8E4M3FN = 17,
  F8E4M3FNUZ = 18,
  F8E5M2 = 19,
  F8E5M2FNUZ = 20,
  U4 = 21,
  I4 = 22,
  F4E2M1 = 23,
  F8E8M0 = 24,
  U2 = 25,
  I2 = 26,
};

// Every DType, in a fixed order, for tests and tables.
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16,
                                       DType::I8,  DType::U8,  DType::I16, DType::U16,
                                       DType::I32, DType::U32, DType::I64, DType::U64,
                                       DType::Bool, DType::F8E4M3FN, DType::F8E4M3FNUZ,
                                       DType::F8E5M2, DType::F8E5M2FNUZ, DType::F8E8M0,
                                       DType::F4E2M1, DType::I4, DType::U4, DType::I2, DType::U2};

size_t dtype_size(DType);
// Short name used by the textual IR and messages: f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32,
// i64, u64, bool, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f8e8m0, f4e2m1, i4, u4, i2, u2.
std::string_view dtype_name(DType);
std::optional<DType> parse_dtype(std::string_view name);
std::optional<DType> dtype_from_code(int code);
bool is_float(DType);    // f32, f64, f16, bf16: not the storage-only floats
bool is_integer(DType);  // signed or unsigned integer, not bool, not the storage-only ones
bool is_signed(DType);
// float8, float4, int4, uint4, int2, uint2: kept and converted, never computed in.
bool is_storage_only(DType);
// The storage-only floats (compared as floats: NaN, signed zero).
bool is_storage_float(DType);

}  // namespace kiln::ir
