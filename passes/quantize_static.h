// The pass quantize_static (`kiln compile --precision int8`, docs/quantization.md) with the
// layers to leave in fp32 (`--max-error`).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

struct StaticQuantizeOptions {
  ir::DType activations = ir::DType::U8;  // U8 or I8
  // The largest |q| of the weights of a Conv that the int8 NHWC kernel runs (group 1, input
  // channels a multiple of 4): 127, or 64 for reduced-range weights, whose pairs of products
  // then fit int16 (the AVX2 vpmaddubsw tile, kiln/rt/qconv_nhwc.h). Others take 127.
  int dense_conv_weight_limit = 127;
};

// quantize_static, except for the nodes named in `keep_fp32`. Returns the names of the nodes it
// quantized, in graph order.
std::vector<std::string> quantize_static_except(ir::Graph& graph, const std::set<std::string>& keep_fp32,
                                                const StaticQuantizeOptions& options = {});

}  // namespace kiln::passes
