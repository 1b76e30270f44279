#include "frontend/tensorflow/tf_types.h"

#include <fmt/format.h>

namespace kiln::frontend::tensorflow {

std::optional<ir::DType> tf_dtype(int code) {
  if (code > 100 && code < 200) code -= 100;  // DT_FLOAT_REF and the like
  switch (code) {
    case kTfFloat: return ir::DType::F32;
    case kTfDouble: return ir::DType::F64;
    case kTfInt32: return ir::DType::I32;
    case kTfUint8: return ir::DType::U8;
    case kTfInt16: return ir::DType::I16;
    case kTfInt8: return ir::DType::I8;
    case kTfInt64: return ir::DType::I64;
    case kTfBool: return ir::DType::Bool;
    case kTfUint16: return ir::DType::U16;
    case kTfBfloat16: return ir::DType::BF16;
    case kTfHalf: return ir::DType::F16;
    case kTfUint32: return ir::DType::U32;
    case kTfUint64: return ir::DType::U64;
    default: return std::nullopt;
  }
}

std::string tf_dtype_name(int code) {
  const int base = code > 100 && code < 200 ? code - 100 : code;
  const char* name = nullptr;
  switch (base) {
    case kTfFloat: name = "FLOAT"; break;
    case kTfDouble: name = "DOUBLE"; break;
    case kTfInt32: name = "INT32"; break;
    case kTfUint8: name = "UINT8"; break;
    case kTfInt16: name = "INT16"; break;
    case kTfInt8: name = "INT8"; break;
    case kTfString: name = "STRING"; break;
    case kTfInt64: name = "INT64"; break;
    case kTfBool: name = "BOOL"; break;
    case kTfUint16: name = "UINT16"; break;
    case kTfBfloat16: name = "BFLOAT16"; break;
    case kTfHalf: name = "HALF"; break;
    case kTfResource: name = "RESOURCE"; break;
    case kTfVariant: name = "VARIANT"; break;
    case kTfUint32: name = "UINT32"; break;
    case kTfUint64: name = "UINT64"; break;
    default: return fmt::format("DT_{}", code);
  }
  return fmt::format("DT_{}{}", name, base == code ? "" : "_REF");
}

}  // namespace kiln::frontend::tensorflow
