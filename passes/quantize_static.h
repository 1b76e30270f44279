// The pass quantize_static (`kiln compile --precision int8`, docs/guide/quantization.md) with the
// layers to leave in fp32 (`--max-error`).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

struct StaticQuantizeOptions {
  ir::DType activations = ir::DType::U8;  // U8 or I8
  // Reduced-range weights for the Convs that the int8 NHWC dense kernel runs (group 1: input
  // channels a multiple of 4, or row patches such as a 3-channel stem): quantized so that their pairs of products fit int16, for the
  // AVX2 vpmaddubsw tile (quantize_conv_s8_pairs_fit_int16, kiln/rt/qconv_nhwc.h). Others, and
  // all without it, take max |w| / 127.
  bool reduced_range_dense_convs = false;
};

// quantize_static, except for the nodes named in `keep_fp32`. Returns the names of the nodes it
// quantized, in graph order.
std::vector<std::string> quantize_static_except(ir::Graph& graph, const std::set<std::string>& keep_fp32,
                                                const StaticQuantizeOptions& options = {});

}  // namespace kiln::passes
