// Geometry of the copying ops in ir/ops/slice_pad.cpp (Slice, Split, Pad, Expand, Tile,
// DepthToSpace, SpaceToDepth), shared by their reference implementations and the code
// generators so that both read the same elements.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {

// out[idx] = in[offset + sum_k idx[k] * strides[k]] for idx over dims (strides in elements,
// may be 0 or negative).
struct StridedView {
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
};

// The input's elements read through `view`, as a new dense tensor of view.dims.
Tensor strided_copy(const Tensor& x, const StridedView& view);

// Slice of an input of `in_dims` with the node's starts, ends, axes and steps; nullopt when
// they are not all known (constant inputs) at compile time. `in` overrides with eval values.
std::optional<StridedView> slice_view(const Node& node, const std::vector<int64_t>& in_dims,
                                      std::span<const Tensor* const> in = {});
// The part of `in_dims` each of Split's outputs takes along its axis.
std::optional<std::vector<int64_t>> split_sizes(const Node& node, int64_t dim,
                                                std::span<const Tensor* const> in = {});
int64_t split_axis(const Node& node, int64_t rank);
StridedView expand_view(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims);
// Tile: view dims are [r0, d0, r1, d1, ...]; the output is that, reshaped.
StridedView tile_view(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& repeats);
// DepthToSpace / SpaceToDepth: a reshape then a transpose, as one view (dims of rank 6).
StridedView depth_space_view(const Node& node, const std::vector<int64_t>& in_dims);

// Pad: for each output dim, the input element offset (index * input stride) each output
// index reads, or -1 where it takes the constant value.
std::optional<std::vector<std::vector<int64_t>>> pad_tables(
    const Node& node, const std::vector<int64_t>& in_dims, std::span<const Tensor* const> in = {});

// Pad's begin and end amounts per dim of a rank-`rank` input, from its pads and axes (constant
// inputs, or `in`); nullopt when they are not known.
std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pad_amounts(
    const Node& node, size_t rank, std::span<const Tensor* const> in = {});

// The same for explicit begin and end pads (negative ones crop) and a Pad mode.
std::vector<std::vector<int64_t>> pad_tables_for(const Node& node, const std::vector<int64_t>& in_dims,
                                                 const std::vector<int64_t>& begin,
                                                 const std::vector<int64_t>& end, const std::string& mode);

// CenterCropPad's tables as Pad's (constant zeros); its axes are axes_attr_or_all's.
std::optional<std::vector<std::vector<int64_t>>> center_crop_pad_tables(
    const Node& node, const std::vector<int64_t>& in_dims, std::span<const Tensor* const> in = {});

}  // namespace kiln::ir
