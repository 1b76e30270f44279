// The runtime's kernels behind a C calling convention for generated code that is not C++ (the
// LLVM backend, codegen/llvm): parameter structs arrive as arrays of int64_t in the structs'
// field order, pools as void*, and each entry point calls the C++ kernel of the same name, so
// both backends run the same arithmetic.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

// Per-node timing (kiln/rt/profile.h): `prof` is the run's NodeTime array or null.
uint64_t kiln_abi_now_ns(void);
uint64_t kiln_abi_node_begin(void* prof);
void kiln_abi_node_end(void* prof, uint64_t node, uint64_t run_start, uint64_t begin);

void kiln_abi_nchw_to_nchwc_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, void* pool);
void kiln_abi_nchwc_to_nchw_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, void* pool);
// p: ConvNchwcParams (13 fields, then x_nchw as 0 or 1). act_kind: StoreActivation::Kind.
void kiln_abi_conv_nchwc_f32(const int64_t* p, const float* x, const float* packed_w, const float* bias,
                             const float* z, int32_t act_kind, float act_lo, float act_hi, float* y, void* pool);
// p: Pool2dParams' first 14 fields.
void kiln_abi_maxpool_nchwc_f32(const int64_t* p, const float* x, float* y, void* pool);
// p: Pool2dParams' 16 fields.
void kiln_abi_maxpool2d_f32(const int64_t* p, const float* x, float* y, void* pool);
void kiln_abi_avgpool2d_f32(const int64_t* p, int32_t count_include_pad, const float* x, float* y, void* pool);
void kiln_abi_softmax_f32(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y, int32_t log);
// p: Conv2dParams (16 fields); the epilogue's fields as kiln::rt::Epilogue's.
void kiln_abi_winograd_conv2d_f32(const int64_t* p, int64_t tile, const float* x, const float* w_packed,
                                  const float* bias, float* y, float* scratch,
                                  void (*ep_fn)(const void*, float*, int64_t, int64_t), const void* ep_ctx,
                                  int32_t ep_is_clamp, float ep_lo, float ep_hi, const float* ep_residual,
                                  int32_t ep_is_relu, void* pool);
// conv2d_f32_prepacked: w packed by conv2d_pack_weights when w_packed is 1.
void kiln_abi_conv2d_f32_prepacked(const int64_t* p, const float* x, const float* w, int32_t w_packed,
                                   const float* bias, float* y, float* scratch,
                                   void (*ep_fn)(const void*, float*, int64_t, int64_t), const void* ep_ctx,
                                   int32_t ep_is_clamp, float ep_lo, float ep_hi, const float* ep_residual,
                                   int32_t ep_is_relu, void* pool);
// p: Conv2dParams (16 fields); act as a StoreActivation's kind, lo, hi.
void kiln_abi_depthwise3x3_nchw16c_f32(const int64_t* p, const float* x, const float* w, const float* bias,
                                       int32_t act, float lo, float hi, float* y, void* pool);
// p: ExpandDepthwiseParams (10 fields, x_nchw16c and y_nchw16c 0 or 1); each activation as a StoreActivation's kind, lo, hi.
void kiln_abi_expand_depthwise3x3_f32_prepacked(const int64_t* p, const float* x, const float* packed,
                                                int32_t act1, float lo1, float hi1, int32_t act2, float lo2,
                                                float hi2, float* y, void* pool);
void kiln_abi_expand_depthwise3x3_f32(const int64_t* p, const float* x, const float* w1, const float* b1, int32_t act1,
                                      float lo1, float hi1, const float* w2, const float* b2, int32_t act2, float lo2,
                                      float hi2, float* y, void* pool);
// p: DepthwisePointwiseParams (8 fields).
void kiln_abi_depthwise3x3_pointwise_f32(const int64_t* p, const float* x, const float* w1, const float* b1,
                                         int32_t act1, float lo1, float hi1, const float* w2, const float* b2,
                                         int32_t act2, float lo2, float hi2, float* y, void* pool);
// LayerNormalization (mean_out and inv_std_out may be null) and RMSNormalization, f32.
void kiln_abi_layer_norm_f32(int64_t rows, int64_t len, const float* x, const float* scale, const float* bias,
                             float eps, float* y, float* mean_out, float* inv_std_out);
void kiln_abi_rms_norm_f32(int64_t rows, int64_t len, const float* x, const float* scale, float eps, float* y);
// f: batch, q_heads, kv_heads, q_len, kv_len, head_dim, v_head_dim, the q, k, v and y layouts
// (batch, head, seq strides), the mask's 4 strides, its keys and the causal offset.
// mask_kind: 0 none, 1 bool (allow), 2 f32 (bias). 1 when done, 0 when out of memory.
int32_t kiln_abi_attention_f32(const int64_t* f, int32_t causal, int32_t mask_kind, const void* mask, float scale,
                               float softcap, const float* q, const float* k, const float* v, float* y, void* pool);
// kiln::rt::erf on one float (Gelu's exact form in generated code that is not C++).
float kiln_abi_erf_f32(float x);
void kiln_abi_global_avgpool_f32(int64_t NC, int64_t spatial, const float* x, float* y, void* pool);
// g: M, N, K, A's ld and trans, B's ld, trans and packed, C's ld; then the epilogue's fields.
void kiln_abi_gemm_f32(const int64_t* g, float alpha, const float* a, const float* b, float beta, float* c,
                       void (*ep_fn)(const void*, float*, int64_t, int64_t), const void* ep_ctx,
                       int32_t ep_is_clamp, float ep_lo, float ep_hi, const float* ep_residual, int32_t ep_is_relu,
                       void* pool);
void kiln_abi_strided_copy_bytes(int64_t elem_size, int64_t rank, const int64_t* out_dims, const void* src,
                                 const int64_t* src_strides, int64_t src_offset, void* dst);

}  // extern "C"
