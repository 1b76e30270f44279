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
    case KILN_F8E4M3FN:
    case KILN_F8E4M3FNUZ:
    case KILN_F8E5M2:
    case KILN_F8E5M2FNUZ:
    case KILN_F8E8M0:
    case KILN_F4E2M1:
    case KILN_I4:
    case KILN_U4:
    case KILN_I2:
    case KILN_U2: return 1;  // one element per byte, unpacked
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
    case KILN_F8E4M3FN: return "f8e4m3fn";
    case KILN_F8E4M3FNUZ: return "f8e4m3fnuz";
    case KILN_F8E5M2: return "f8e5m2";
    case KILN_F8E5M2FNUZ: return "f8e5m2fnuz";
    case KILN_F8E8M0: return "f8e8m0";
    case KILN_F4E2M1: return "f4e2m1";
    case KILN_I4: return "i4";
    case KILN_U4: return "u4";
    case KILN_I2: return "i2";
    case KILN_U2: return "u2";
  }
  return "invalid";
}

}  // namespace kiln::rt
