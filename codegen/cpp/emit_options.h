// The choices a user of the compiler makes about how nodes become code, the same for every
// node (kiln compile's flags): CppOptions::emit carries them to the emitters, which read them
// from EmitContext::options() and from the Emitter hooks that size scratch memory.
#pragma once

#include <optional>
#include <string_view>

namespace kiln::codegen::cpp {

// How a 3x3 stride-1 convolution with constant weights runs (kiln compile --conv-algo): chosen
// by shape (kiln::rt::winograd_choose_tile), or forced to im2col + GEMM or to Winograd
// F(4x4,3x3) or F(2x2,3x3) wherever Winograd applies (for comparison).
enum class ConvAlgo { Auto, Im2col, Winograd4, Winograd2 };

// --conv-algo's values: auto, im2col, winograd (F(4x4,3x3)), winograd4, winograd2.
inline constexpr std::string_view kConvAlgoNames = "auto, im2col, winograd, winograd4 or winograd2";
inline std::optional<ConvAlgo> parse_conv_algo(std::string_view text) {
  if (text == "auto") return ConvAlgo::Auto;
  if (text == "im2col") return ConvAlgo::Im2col;
  if (text == "winograd" || text == "winograd4") return ConvAlgo::Winograd4;
  if (text == "winograd2") return ConvAlgo::Winograd2;
  return std::nullopt;
}

struct EmitOptions {
  ConvAlgo conv_algo = ConvAlgo::Auto;
};

}  // namespace kiln::codegen::cpp
