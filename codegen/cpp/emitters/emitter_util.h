// Small helpers shared by the C++ emitters.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp/emit_context.h"
#include "codegen/cpp/emitter.h"
#include "ir/op_registry.h"

namespace kiln::codegen::cpp {

inline std::vector<int64_t> dims_of(const ir::Value* v) { return v->shape().values(); }
inline int64_t numel_of(const ir::Value* v) { return v->shape().numel(); }

// A 1-D or 2-D sliding window (Conv, pools) resolved and lifted to the runtime's 2-D
// parameters: a 1-D window runs as H = KH = OH = 1.
struct Window2d {
  int64_t H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right,
      dil_h, dil_w;
};
Window2d window_2d(const ir::Node& node, const std::vector<int64_t>& spatial_in,
                   std::vector<int64_t> kernel);

// Gemm semantics (Y = alpha * op(A) op(B) + beta * C, C broadcast) through gemm_f32, or
// through gemm_f32_epilogue with an `ep` the caller has declared.
void emit_gemm(EmitContext& ctx, const ir::Node& node, bool with_epilogue);

// "constexpr float alpha = 0.2f; ..." for every attribute `def` declares: its value in
// `attrs`, or its default (an elementwise op's scalar expression reads them by name).
std::string attr_constants(const ir::OpDef& def, const ir::AttributeMap& attrs);

// Empty when every listed input and output 0 is f32, else the reason.
std::string require_f32(const ir::Node& node);

// "rank, dims, strides" arguments for reading `v` broadcast to `out_dims` (rank >= 1).
struct BroadcastArgs {
  int rank;
  std::string out_dims;
  std::vector<std::string> strides;
};
BroadcastArgs broadcast_args(EmitContext& ctx, const std::vector<int64_t>& out_dims,
                             const std::vector<const ir::Value*>& inputs);

}  // namespace kiln::codegen::cpp
