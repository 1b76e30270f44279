// Native bf16 GEMM (`kiln compile --precision bf16` on CPUs with AVX-512 BF16): a constant B
// stored as bfloat16 is read as it is stored, A is rounded to bfloat16 as it is packed, and
// vdpbf16ps sums pairs of products into fp32 (32 multiply-adds an instruction where an fp32
// FMA does 16). Elsewhere the same stored B is widened once, at context creation, into
// gemm_f32's packed layout and the fp32 GEMM runs (kiln/rt/gemm.h, GemmOperand::bf16).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/conv_nchwc.h"
#include "kiln/rt/epilogue.h"

namespace kiln::rt {

class ThreadPool;

// True when gemm_bf16 can run here: the CPU and the OS support AVX-512F/BW and AVX512_BF16,
// and the environment does not set KILN_NATIVE_BF16=0 (which makes bf16 models take the
// widened fp32 path, to compare the two on one machine). Asked once per process.
bool gemm_bf16_native() noexcept;

// B (K x N, or N x K when trans_b) rounded to bfloat16 (nearest, ties to even) and packed:
// for each block of kGemmBf16BlockK rows of K, panels of kGemmBf16PanelN columns, each a run
// of k-pairs; a pair holds, per column, the values of rows 2p and 2p + 1 side by side (rows
// past K and columns past N are zero). The layout is private to this runtime version.
inline constexpr int64_t kGemmBf16PanelN = 32;
inline constexpr int64_t kGemmBf16BlockK = 512;  // even: only the last block has an odd row
size_t gemm_bf16_packed_b_halves(int64_t K, int64_t N) noexcept;
void gemm_bf16_pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb, uint16_t* packed) noexcept;

// A B packed by gemm_bf16_pack_b, widened exactly into gemm_f32_pack_b's layout (floats:
// gemm_f32_packed_b_floats(K, N)) for CPUs without native bf16. False when out of memory.
bool gemm_bf16_widen_b(int64_t K, int64_t N, const uint16_t* packed, float* f32_packed) noexcept;

// C = alpha * bf16(A) * B + beta * C (beta == 0: C is write-only), A plain (M x K, row stride
// lda; its transpose when trans_a), B packed by gemm_bf16_pack_b; then row_bias (M floats or
// nullptr) and the epilogue (offsets from offset_base + i * ldc + j), as gemm_f32_ex applies
// them. Products are exact in fp32 and summed in fp32; inputs and results that are fp32
// denormals are flushed to zero (as vdpbf16ps does). The result does not depend on the number
// of threads. Only where gemm_bf16_native().
void gemm_bf16(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
               const uint16_t* B, float beta, float* C, int64_t ldc, const float* row_bias, const Epilogue& epilogue,
               int64_t offset_base, ThreadPool* pool) noexcept;

// A blocked 1x1 convolution (kiln.ConvNchwc, stride 1, no padding) on the same kernel: an
// image's positions are the rows of A (read from the NCHW16c input, rounded to bf16 as it is
// packed), its input channels the columns, and B is W^T (C x M), packed once. The output,
// bias, residual z and activation are as conv_nchwc_f32's (conv_nchwc.h); conv_nchwc_f32
// runs this where the CPU has native bf16 and it is given the weights so packed.
bool conv_nchwc_bf16_applicable(const ConvNchwcParams& p) noexcept;
size_t conv_nchwc_bf16_packed_halves(const ConvNchwcParams& p) noexcept;
void conv_nchwc_bf16_pack_weights(const ConvNchwcParams& p, const float* w, uint16_t* packed) noexcept;
// Widened exactly into conv_nchwc_pack_weights's layout (M * C floats); false when out of memory.
bool conv_nchwc_bf16_widen_weights(const ConvNchwcParams& p, const uint16_t* packed, float* f32_packed) noexcept;
// Only where gemm_bf16_native() and conv_nchwc_bf16_applicable(p).
void conv_nchwc_bf16(const ConvNchwcParams& p, const float* x, const uint16_t* packed_w, const float* bias,
                     const float* z, const StoreActivation& act, float* y, ThreadPool* pool) noexcept;

// The stored bf16 weights of one MatMul or Gemm B (K x N) or of one 1x1 kiln.ConvNchwc (conv:
// K = C input and N = M output channels), at byte `from` of the weights, widened at context
// creation to byte `to` of a separate buffer when the CPU lacks native bf16.
struct WidenGemmB {
  size_t from, to;
  int64_t K, N;
  bool conv = false;
};
// The floats such weights take once widened.
size_t gemm_bf16_widened_floats(const WidenGemmB& r) noexcept;

// Widens every `ranges` entry into `widened` (64-byte aligned), then releases the bf16 pages
// (as widen_weights does). False when out of memory.
bool widen_gemm_b_weights(const unsigned char* weights, unsigned char* widened, const WidenGemmB* ranges,
                          size_t n) noexcept;

}  // namespace kiln::rt
