// Small helpers shared by the C++ emitters.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/cpp/emit_context.h"
#include "codegen/cpp/emitter.h"
#include "ir/op_registry.h"
#include "kiln/rt/conv.h"

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

// Gemm semantics (Y = alpha * op(A) op(B) + beta * C, C broadcast) through the runtime's
// GEMM, with an `ep` the caller has declared when with_epilogue. A constant B is packed here,
// at compile time (gemm_packs_b says when).
void emit_gemm(EmitContext& ctx, const ir::Node& node, bool with_epilogue);
bool gemm_packs_b(const ir::Node& node, size_t input);

// The graph's bounds of its symbolic dims (empty for a node outside a graph).
const ir::DimRanges& ranges_of(const ir::Node& node);
// Whether a shape of the node's inputs or outputs holds a symbolic dim.
bool has_symbols(const ir::Node& node);
// The node's symbols at their tuning points (--dim H=MIN..MAX@OPT; MAX without one).
std::map<std::string, int64_t> tuning_point(const ir::Node& node);
// The largest f over the values the node's symbols take (all of them when there are at most
// 4096 combinations, else the bounds and the tuning point): scratch sizes.
size_t max_over_range(const ir::Node& node, const std::function<size_t(const std::map<std::string, int64_t>&)>& f);

// Conv and kiln.FusedConv (1-D and 2-D) as the runtime's 2-D parameters (1-D lifted to H = 1).
kiln::rt::Conv2dParams conv2d_params(const ir::Node& node);
// The same with the symbolic dims bound to `at`.
kiln::rt::Conv2dParams conv2d_params_at(const ir::Node& node, const std::map<std::string, int64_t>& at);
// The parameters' fields in Conv2dParams' order (a braced initializer's, or kernel_abi.h's array).
std::vector<int64_t> conv_fields(const kiln::rt::Conv2dParams& p);
// Empty when the conv compiles, else why not.
std::string unsupported_conv2d(const ir::Node& node);
// True when axis `axis` of `v` is a data-dependent dim (passes::bound_data_dependent_dims): a
// symbol the node that writes `v` sets when it runs.
bool is_data_dependent_dim(const ir::Value* v, size_t axis);
// The node's `axis` attribute normalized against input 0's rank, or 0 without one (ops that
// then work on the flattened input: Unique, Compress).
size_t axis_or_flat(const ir::Node& node);
// "" for the dtypes the data-dependent kernels instantiate (f32, f64, integers, bool), else
// why `op` is refused.
std::string require_plain_numeric(const ir::Node& node, const char* op);
size_t conv2d_scratch_bytes(const ir::Node& node, const EmitOptions& options);
// The Winograd tile (4: F(4x4,3x3), 2: F(2x2,3x3)) emit_conv2d runs `node` with, 0 for im2col:
// for constant weights where Winograd applies, chosen by shape (kiln::rt::winograd_choose_tile)
// or forced by options.conv_algo (kiln compile --conv-algo).
int conv2d_winograd_tile(const ir::Node& node, const EmitOptions& options);
// Writes `const kiln::rt::Conv2dParams p` and the call, with `epilogue` (an expression) and
// the weights packed at compile time when they are constant (conv2d_packs_weights).
void emit_conv2d(EmitContext& ctx, const ir::Node& node, const std::string& epilogue);
bool conv2d_packs_weights(const ir::Node& node, size_t input);

// LayerNormalization and RMSNormalization: "" when they compile (a float input, scale and bias
// of the normalized length), else why not.
std::string unsupported_layer_norm(const ir::Node& node);

// True when `v` is an f32 constant (weights the emitter may rearrange at compile time).
bool is_f32_constant(const ir::Value* v);

// `kiln::rt::GemmOperand{...}` for B (K x N, transposed as stored when trans): packed into
// the weights at compile time when `v` is an f32 constant, else read as it is from `expr`.
std::string gemm_b_operand(EmitContext& ctx, const ir::Value* v, const std::string& expr, bool trans, int64_t K,
                           int64_t N);

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
// The same for an output shape that may hold symbolic dims (--dim NAME=MIN..MAX): an input
// dim of 1 against a larger output dim is broadcast (stride 0); equal dims are not.
// Why Gemm or kiln.FusedGemm cannot be emitted (f32 only; with symbolic dims only M may be one).
std::string unsupported_gemm(const ir::Node& node);
BroadcastArgs broadcast_shape_args(EmitContext& ctx, const ir::Shape& out, const std::vector<const ir::Value*>& inputs);
// The product of dims [begin, end) of a shape.
ir::Dim dims_product(const ir::Shape& s, size_t begin, size_t end);

// A fused node's activation (its attributes named with `prefix`) as the kiln::rt::StoreActivation
// a kernel applies in registers; the node's activation must be one (ir::store_activation).
std::string store_activation_expr(const ir::Node& node, const char* prefix = "activation");

}  // namespace kiln::codegen::cpp
