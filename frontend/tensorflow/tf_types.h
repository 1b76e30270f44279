// TensorFlow's DataType codes (tensorflow/core/framework/types.proto) as kiln sees them.
#pragma once

#include <optional>
#include <string>

#include "ir/dtype.h"

namespace kiln::frontend::tensorflow {

// TF codes kiln names in messages; the `_REF` variants (TF1 variables) are the code + 100.
enum TfDataType : int {
  kTfFloat = 1, kTfDouble = 2, kTfInt32 = 3, kTfUint8 = 4, kTfInt16 = 5, kTfInt8 = 6,
  kTfString = 7, kTfInt64 = 9, kTfBool = 10, kTfUint16 = 17, kTfBfloat16 = 14, kTfHalf = 19,
  kTfResource = 20, kTfVariant = 21, kTfUint32 = 22, kTfUint64 = 23,
};

// The IR dtype of a TF numeric dtype (`_REF` codes read as their base), or nullopt for the
// ones kiln cannot hold (strings, resources, variants, complex, quantized).
std::optional<ir::DType> tf_dtype(int code);
// "DT_FLOAT", "DT_STRING", ... or "DT_<code>" for one kiln does not know.
std::string tf_dtype_name(int code);

}  // namespace kiln::frontend::tensorflow
