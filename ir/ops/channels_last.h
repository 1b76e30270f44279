// Channels-last 8-bit ops (ir/ops/channels_last.cpp): kiln.ToNhwc, kiln.FromNhwc and
// kiln.QLinearConvNhwc, made by passes/layout_nhwc.cpp, and kiln.DequantizeGlobalAveragePoolNhwc,
// made by passes/fuse_nhwc_global_pool.cpp.
#pragma once

#include "ir/graph.h"
#include "kiln/rt/conv.h"

namespace kiln::ir {

// A kiln.QLinearConvNhwc's geometry (x [N, H, W, C]) as the runtime's conv2d parameters.
// Needs static shapes.
rt::Conv2dParams nhwc_conv_params(const Node& node);

// Whether the runtime's qconv2d_nhwc runs this QLinearConv or kiln.QLinearConvNhwc: a dense
// (group 1) or depthwise convolution it supports (static 4-D shapes), its weights, f32 scales, zero points
// and bias constant, the weights' zero point 0 once packed (0 for s8 weights, 128 for u8).
bool nhwc_conv_runs(const Node& node);

// Whether a dense (group 1) kiln.QLinearConvNhwc's packed weights take the AVX2 vpmaddubsw tile
// (rt::qconv2d_nhwc_pairs_fit_int16: every weight pair within 128 of one sign), as the packing
// finds at compile time. False for depthwise ones.
bool nhwc_conv_pairs_fit_int16(const Node& node);

}  // namespace kiln::ir
