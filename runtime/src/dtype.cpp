#include "kiln/rt/dtype.h"

namespace kiln::rt {

size_t dtype_size(kiln_dtype t) noexcept {
  switch (t) {
    case KILN_F32: return 4;
    case KILN_U8: return 1;
    case KILN_I8: return 1;
    case KILN_I16: return 2;
    case KILN_U16: return 2;
    case KILN_U32: return 4;
    case KILN_U64: return 8;
    case KILN_I32: return 4;
    case KILN_I64: return 8;
    case KILN_BOOL: return 1;
    case KILN_F16: return 2;
    case KILN_F64: return 8;
    case KILN_BF16: return 2;
  }
  return 0;
}

const char* dtype_name(kiln_dtype t) noexcept {
  switch (t) {
    case KILN_F32: return "f32";
    case KILN_U8: return "u8";
    case KILN_I8: return "i8";
    case KILN_I16: return "i16";
    case KILN_U16: return "u16";
    case KILN_U32: return "u32";
    case KILN_U64: return "u64";
    case KILN_I32: return "i32";
    case KILN_I64: return "i64";
    case KILN_BOOL: return "bool";
    case KILN_F16: return "f16";
    case KILN_F64: return "f64";
    case KILN_BF16: return "bf16";
  }
  return "invalid";
}

}  // namespace kiln::rt
