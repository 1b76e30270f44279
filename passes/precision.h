// The precision a model is compiled in (`kiln compile --precision`): fp32 as written; fp16
// and bf16 store float weights in half precision (computing in fp32); int8 and int8-dynamic
// quantize (docs/guide/quantization.md).
#pragma once

#include <optional>
#include <string_view>

namespace kiln::passes {

enum class Precision { FP32, FP16, BF16, Int8, Int8Dynamic };

inline std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
    case Precision::Int8: return "int8";
    case Precision::Int8Dynamic: return "int8-dynamic";
  }
  return "?";
}

inline std::optional<Precision> parse_precision(std::string_view text) {
  for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16, Precision::Int8, Precision::Int8Dynamic})
    if (precision_name(p) == text) return p;
  return std::nullopt;
}

// fp16 and bf16: float weights stored in half precision, computed in fp32.
inline bool halves_weights(Precision p) { return p == Precision::FP16 || p == Precision::BF16; }

}  // namespace kiln::passes
