// C entry points of the runtime's kernels (kiln/rt/kernel_abi.h).
#include "kiln/rt/kernel_abi.h"

#include "kiln/rt/conv.h"
#include "kiln/rt/conv_nchwc.h"
#include "kiln/rt/depthwise.h"
#include "kiln/rt/epilogue.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/layout.h"
#include "kiln/rt/norm.h"
#include "kiln/rt/normalize.h"
#include "kiln/rt/attention.h"
#include "kiln/rt/pool.h"
#include "kiln/rt/profile.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/winograd.h"

namespace {

kiln::rt::ThreadPool* pool_of(void* pool) { return static_cast<kiln::rt::ThreadPool*>(pool); }

kiln::rt::Conv2dParams conv2d_params(const int64_t* p) {
  return kiln::rt::Conv2dParams{p[0], p[1], p[2],  p[3],  p[4],  p[5],  p[6],  p[7],
                                p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]};
}

kiln::rt::Pool2dParams pool2d_params(const int64_t* p) {
  kiln::rt::Pool2dParams params{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13]};
  params.pad_bottom = p[14];
  params.pad_right = p[15];
  return params;
}

kiln::rt::StoreActivation store_activation(int32_t kind, float lo, float hi) {
  return kiln::rt::StoreActivation{static_cast<kiln::rt::StoreActivation::Kind>(kind), lo, hi};
}

}  // namespace

extern "C" {

uint64_t kiln_abi_now_ns(void) { return kiln::rt::now_ns(); }

uint64_t kiln_abi_node_begin(void* prof) { return kiln::rt::node_begin(static_cast<kiln::rt::NodeTime*>(prof)); }

void kiln_abi_node_end(void* prof, uint64_t node, uint64_t run_start, uint64_t begin) {
  kiln::rt::node_end(static_cast<kiln::rt::NodeTime*>(prof), static_cast<size_t>(node), run_start, begin);
}

void kiln_abi_nchw_to_nchwc_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, void* pool) {
  kiln::rt::nchw_to_nchwc_f32(N, C, HW, x, y, pool_of(pool));
}

void kiln_abi_nchwc_to_nchw_f32(int64_t N, int64_t C, int64_t HW, const float* x, float* y, void* pool) {
  kiln::rt::nchwc_to_nchw_f32(N, C, HW, x, y, pool_of(pool));
}

void kiln_abi_conv_nchwc_f32(const int64_t* p, const float* x, const float* packed_w, const float* bias,
                             const float* z, int32_t act_kind, float act_lo, float act_hi, float* y, void* pool) {
  const kiln::rt::ConvNchwcParams params{p[0], p[1], p[2],  p[3],  p[4],  p[5],  p[6],
                                         p[7], p[8], p[9], p[10], p[11], p[12], p[13] != 0};
  kiln::rt::conv_nchwc_f32(params, x, packed_w, bias, z, store_activation(act_kind, act_lo, act_hi), y, pool_of(pool));
}

void kiln_abi_maxpool_nchwc_f32(const int64_t* p, const float* x, float* y, void* pool) {
  const kiln::rt::Pool2dParams params{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13]};
  kiln::rt::maxpool_nchwc_f32(params, x, y, pool_of(pool));
}

void kiln_abi_maxpool2d_f32(const int64_t* p, const float* x, float* y, void* pool) {
  kiln::rt::maxpool2d_f32(pool2d_params(p), x, y, pool_of(pool));
}

void kiln_abi_avgpool2d_f32(const int64_t* p, int32_t count_include_pad, const float* x, float* y, void* pool) {
  kiln::rt::avgpool2d_f32(pool2d_params(p), count_include_pad != 0, x, y, pool_of(pool));
}

void kiln_abi_softmax_f32(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y, int32_t log) {
  kiln::rt::softmax_f32(outer, axis_len, inner, x, y, log != 0);
}

void kiln_abi_winograd_conv2d_f32(const int64_t* p, int64_t tile, const float* x, const float* w_packed,
                                  const float* bias, float* y, float* scratch,
                                  void (*ep_fn)(const void*, float*, int64_t, int64_t), const void* ep_ctx,
                                  int32_t ep_is_clamp, float ep_lo, float ep_hi, const float* ep_residual,
                                  int32_t ep_is_relu, void* pool) {
  const kiln::rt::Epilogue ep{ep_fn, ep_ctx, ep_is_clamp != 0, ep_lo, ep_hi, ep_residual, ep_is_relu != 0};
  kiln::rt::winograd_conv2d_f32(conv2d_params(p), static_cast<int>(tile), x, w_packed, bias, y, scratch, ep,
                                pool_of(pool));
}

void kiln_abi_conv2d_f32_prepacked(const int64_t* p, const float* x, const float* w, int32_t w_packed,
                                   const float* bias, float* y, float* scratch,
                                   void (*ep_fn)(const void*, float*, int64_t, int64_t), const void* ep_ctx,
                                   int32_t ep_is_clamp, float ep_lo, float ep_hi, const float* ep_residual,
                                   int32_t ep_is_relu, void* pool) {
  const kiln::rt::Epilogue ep{ep_fn, ep_ctx, ep_is_clamp != 0, ep_lo, ep_hi, ep_residual, ep_is_relu != 0};
  kiln::rt::conv2d_f32_prepacked(conv2d_params(p), x, w, w_packed != 0, bias, y, scratch, ep, pool_of(pool));
}

void kiln_abi_depthwise3x3_nchw16c_f32(const int64_t* p, const float* x, const float* w, const float* bias,
                                       int32_t act, float lo, float hi, float* y, void* pool) {
  const kiln::rt::Conv2dParams params{p[0], p[1], p[2],  p[3],  p[4],  p[5],  p[6],  p[7],
                                      p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]};
  kiln::rt::depthwise3x3_nchw16c_f32(params, x, w, bias, store_activation(act, lo, hi), y, pool_of(pool));
}

void kiln_abi_expand_depthwise3x3_f32_prepacked(const int64_t* p, const float* x, const float* packed,
                                                int32_t act1, float lo1, float hi1, int32_t act2, float lo2,
                                                float hi2, float* y, void* pool) {
  const kiln::rt::ExpandDepthwiseParams params{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8] != 0, p[9] != 0};
  kiln::rt::expand_depthwise3x3_f32_prepacked(params, x, packed, store_activation(act1, lo1, hi1),
                                              store_activation(act2, lo2, hi2), y, pool_of(pool));
}

void kiln_abi_expand_depthwise3x3_f32(const int64_t* p, const float* x, const float* w1, const float* b1, int32_t act1,
                                      float lo1, float hi1, const float* w2, const float* b2, int32_t act2, float lo2,
                                      float hi2, float* y, void* pool) {
  const kiln::rt::ExpandDepthwiseParams params{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8] != 0, p[9] != 0};
  kiln::rt::expand_depthwise3x3_f32(params, x, w1, b1, store_activation(act1, lo1, hi1), w2, b2,
                                    store_activation(act2, lo2, hi2), y, pool_of(pool));
}

void kiln_abi_depthwise3x3_pointwise_f32(const int64_t* p, const float* x, const float* w1, const float* b1,
                                         int32_t act1, float lo1, float hi1, const float* w2, const float* b2,
                                         int32_t act2, float lo2, float hi2, float* y, void* pool) {
  const kiln::rt::DepthwisePointwiseParams params{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
  kiln::rt::depthwise3x3_pointwise_f32(params, x, w1, b1, store_activation(act1, lo1, hi1), w2, b2,
                                       store_activation(act2, lo2, hi2), y, pool_of(pool));
}

void kiln_abi_layer_norm_f32(int64_t rows, int64_t len, const float* x, const float* scale, const float* bias,
                             float eps, float* y, float* mean_out, float* inv_std_out) {
  kiln::rt::layer_norm<float, float, float>(rows, len, x, scale, bias, eps, y, mean_out, inv_std_out);
}

void kiln_abi_rms_norm_f32(int64_t rows, int64_t len, const float* x, const float* scale, float eps, float* y) {
  kiln::rt::rms_norm<float, float>(rows, len, x, scale, eps, y);
}

int32_t kiln_abi_attention_f32(const int64_t* f, int32_t causal, int32_t mask_kind, const void* mask, float scale,
                               float softcap, const float* q, const float* k, const float* v, float* y, void* pool) {
  kiln::rt::AttentionParams p;
  p.batch = f[0];
  p.q_heads = f[1];
  p.kv_heads = f[2];
  p.q_len = f[3];
  p.kv_len = f[4];
  p.head_dim = f[5];
  p.v_head_dim = f[6];
  kiln::rt::AttentionLayout* layouts[4] = {&p.q, &p.k, &p.v, &p.y};
  for (int l = 0; l < 4; ++l) *layouts[l] = kiln::rt::AttentionLayout{f[7 + 3 * l], f[8 + 3 * l], f[9 + 3 * l]};
  p.scale = scale;
  p.softcap = softcap;
  if (causal) {
    p.mask.causal = true;
    p.mask.causal_offset = f[24];
  }
  if (mask_kind != 0) {
    if (mask_kind == 1)
      p.mask.allow = static_cast<const bool*>(mask);
    else
      p.mask.bias = static_cast<const float*>(mask);
    p.mask.keys = f[23];
    for (int d = 0; d < 4; ++d) p.mask.stride[d] = f[19 + d];
  }
  return kiln::rt::attention_f32(p, q, k, v, y, pool_of(pool)) ? 1 : 0;
}

void kiln_abi_global_avgpool_f32(int64_t NC, int64_t spatial, const float* x, float* y, void* pool) {
  kiln::rt::global_avgpool_f32(NC, spatial, x, y, pool_of(pool));
}

void kiln_abi_gemm_f32(const int64_t* g, float alpha, const float* a, const float* b, float beta, float* c,
                       void (*ep_fn)(const void*, float*, int64_t, int64_t), const void* ep_ctx,
                       int32_t ep_is_clamp, float ep_lo, float ep_hi, const float* ep_residual, int32_t ep_is_relu,
                       void* pool) {
  const kiln::rt::Epilogue ep{ep_fn, ep_ctx, ep_is_clamp != 0, ep_lo, ep_hi, ep_residual, ep_is_relu != 0};
  kiln::rt::gemm_f32_ex(g[0], g[1], g[2], alpha, kiln::rt::GemmOperand{a, g[3], g[4] != 0, false},
                        kiln::rt::GemmOperand{b, g[5], g[6] != 0, g[7] != 0}, beta, c, g[8], nullptr, ep, 0,
                        pool_of(pool));
}

void kiln_abi_strided_copy_bytes(int64_t elem_size, int64_t rank, const int64_t* out_dims, const void* src,
                                 const int64_t* src_strides, int64_t src_offset, void* dst) {
  kiln::rt::strided_copy_bytes(static_cast<size_t>(elem_size), static_cast<int>(rank), out_dims, src, src_strides,
                               src_offset, dst);
}

}  // extern "C"
