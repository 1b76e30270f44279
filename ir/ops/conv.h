// Geometry of Conv and ConvTranspose (ir/ops/conv.cpp), shared by their shape rules, their
// references and the code generator, so that all three validate and resolve the attributes the
// same way.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/window.h"
#include "kiln/rt/conv.h"
#include "kiln/rt/conv_transpose.h"

namespace kiln::ir {

// A 1-D or 2-D convolution (Conv, QLinearConv, ConvInteger) as kiln::rt's conv2d parameters,
// a 1-D one lifted to H = KH = OH = 1: from the static dims of X and W (both rank 3 or 4), the
// group and the window resolve_window gave for them.
rt::Conv2dParams conv2d_params(const std::vector<int64_t>& x, const std::vector<int64_t>& w, int64_t group,
                               const ResolvedWindow& window);

struct ConvTransposeGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, out;  // per spatial axis
  int64_t group = 1, out_channels = -1;                               // -1 when symbolic
};

// For X and W dims (-1 for a symbolic dim): validates the node's attributes against them and
// resolves pads (auto_pad, output_shape) and the output's spatial dims (-1 where unknown) as
// ONNX's reference does. Fails naming the node.
ConvTransposeGeometry conv_transpose_geometry(const Node& node, const std::vector<int64_t>& x,
                                              const std::vector<int64_t>& w);

struct Col2ImGeometry {
  int64_t channels = 0;
  std::vector<int64_t> blocks, image, block, strides, dilations, pads_begin;  // per spatial axis
};

// Col2Im for input dims x (N, C * prod(block), L) and the values of image_shape and
// block_shape: validates them and the attributes (L must be the number of sliding blocks).
Col2ImGeometry col2im_geometry(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& image,
                               const std::vector<int64_t>& block);

// DeformConv (2-D) for X, W, offset and mask dims (mask nullptr when omitted): validates them
// and returns the kernel's parameters.
rt::DeformConvParams deform_conv_params(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w, const std::vector<int64_t>& offset,
                                        const std::vector<int64_t>* mask);

}  // namespace kiln::ir
