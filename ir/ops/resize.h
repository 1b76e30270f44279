// Geometry of Resize (ir/ops/resize.cpp): the output dims and the per-axis scales and roi
// that the reference and the code generator hand to kiln::rt::resize, resolved once here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/ops/op_helpers.h"
#include "kiln/rt/resize.h"

namespace kiln::ir {

struct ResizePlan {
  std::vector<int64_t> in_dims, out_dims;
  std::vector<double> scales;  // one per axis of X, 1 where the op does not resize
  std::vector<double> roi;     // starts then ends, one per axis; empty unless tf_crop_and_resize
  rt::ResizeParams params{};   // points into the vectors above: do not copy a plan

  ResizePlan() = default;
  ResizePlan(const ResizePlan&) = delete;
  ResizePlan& operator=(const ResizePlan&) = delete;
};

// Resolves the node for X of `x_dims` and the values of its roi, scales and sizes inputs
// (nullptr when omitted or empty; roi is only read under tf_crop_and_resize). Validates
// every attribute and input length and fails naming the node.
void resize_plan(const Node& node, const std::vector<int64_t>& x_dims, const Tensor* roi, const Tensor* scales,
                 const Tensor* sizes, ResizePlan& plan);

// Input i of the node as a value for resize_plan: its constant, or nullptr when omitted or
// empty (ONNX marks an unused roi or scales with an empty tensor).
const Tensor* resize_input_constant(const Node& node, size_t i);

}  // namespace kiln::ir
