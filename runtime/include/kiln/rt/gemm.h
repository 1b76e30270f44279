// Single-precision matrix multiply.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/epilogue.h"

namespace kiln::rt {

class ThreadPool;

// C = alpha * op(A) * op(B) + beta * C, row-major, op(X) = X or X^T.
// op(A) is M x K, op(B) is K x N, C is M x N. lda/ldb/ldc are the row strides
// (in elements) of A, B and C as stored. beta == 0 means C is write-only (its
// contents, NaN included, are ignored). pool may be nullptr (serial).
// The result does not depend on the number of threads.
void gemm_f32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
              int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
              ThreadPool* pool) noexcept;

// gemm_f32, then `epilogue` on C: called on row segments of C (offset i * ldc + j), each
// right after its block of register tiles is final, while it is still in cache.
void gemm_f32_epilogue(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                       const Epilogue& epilogue, ThreadPool* pool) noexcept;

// gemm_f32_epilogue with a bias per row of C (M floats, or nullptr) added before the epilogue,
// and epilogue offsets counted from offset_base (offset_base + i * ldc + j): for a GEMM that
// computes one slice of a larger output (a convolution's image and group).
void gemm_f32_fused(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                    const float* row_bias, const Epilogue& epilogue, int64_t offset_base,
                    ThreadPool* pool) noexcept;

// The instruction set of the f32 GEMM's register tile chosen here: "avx512", "avx2", "neon",
// "vector" (vector extensions for the build's flags) or "portable" (KILN_CPU_ISA=portable).
const char* gemm_f32_isa_name() noexcept;

// Constant operands (weights) packed once, at compile time, into the micro-kernel's panel
// order, so that runs never repack them. The size functions give the packed floats; the
// layout is private to this runtime version (the compiler packs with the runtime it emits).
size_t gemm_f32_packed_a_floats(int64_t M, int64_t K) noexcept;
void gemm_f32_pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda, float* packed) noexcept;
size_t gemm_f32_packed_b_floats(int64_t K, int64_t N) noexcept;
void gemm_f32_pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb, float* packed) noexcept;

// The packed layouts' geometry, for code that writes an operand straight into them (a
// convolution's column matrix: built in a plain layout, it was copied a second time by the
// GEMM's packing). Along K, both layouts hold blocks of kGemmF32BlockK rows (the last kc =
// K - pc rows, block pc); within a block, panels of `width` columns (B, whose N must then be
// at most kGemmF32BlockN) or rows (A) of kc steps of `width` values each. Element (k, j) of a
// packed K x N B, or (j, k) of a packed M x K A (j < cols = N or M), thus lies at
//   pc * round_up(cols, width) + j / width * (kc * width) + (k - pc) * width + j % width,
// with width kGemmF32PanelB for B and kGemmF32PanelA for A; the columns (rows) past cols of the
// last panel are zero.
inline constexpr int64_t kGemmF32PanelA = 6;
inline constexpr int64_t kGemmF32PanelB = 16;
inline constexpr int64_t kGemmF32BlockK = 512;
inline constexpr int64_t kGemmF32BlockN = 2048;
// Such an operand is best 64-byte aligned (the kernel's 32-byte loads of it then never cross a
// cache line): scratch that holds one has kGemmF32AlignFloats floats more, and the operand
// starts at gemm_f32_align(scratch).
inline constexpr int64_t kGemmF32AlignFloats = 16;
inline float* gemm_f32_align(float* p) noexcept {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return p + (((a + 63) & ~uintptr_t{63}) - a) / sizeof(float);
}

// One operand of gemm_f32_ex: a plain matrix (data, ld, trans as in gemm_f32), or packed by
// gemm_f32_pack_a / gemm_f32_pack_b for exactly this M, N, K (ld and trans then unused).
struct GemmOperand {
  const float* data;
  int64_t ld;
  bool trans;
  bool packed;
  // B only: the same B packed by gemm_bf16_pack_b (kiln/rt/gemm_bf16.h), or nullptr. Where the
  // CPU has native bf16 (gemm_bf16_native) and A is plain, gemm_f32_ex runs gemm_bf16 on it, and
  // `data` may then be nullptr.
  const uint16_t* bf16 = nullptr;
};

// gemm_f32_fused with either operand possibly packed (and B possibly bf16: GemmOperand::bf16).
void gemm_f32_ex(int64_t M, int64_t N, int64_t K, float alpha, const GemmOperand& A, const GemmOperand& B,
                 float beta, float* C, int64_t ldc, const float* row_bias, const Epilogue& epilogue,
                 int64_t offset_base, ThreadPool* pool) noexcept;

}  // namespace kiln::rt
