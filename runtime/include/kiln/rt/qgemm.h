// 8-bit integer matrix multiply: u8 (or s8) activations times s8 (or u8) weights, exact int32
// accumulation, and the requantization of ONNX's quantized ops in the epilogue of each tile.
//
// acc(i, j) = sum_k (A[i, k] - a_zero_point) * (B[k, j] - b_zero_point[j]), modulo 2^32 as
// numpy's int32 arithmetic (and kiln's reference loops in qlinear.h) compute it. The weights B
// are packed once (at compile time for constants) with their column sums, so the zero points
// cost one multiply-add per output, not per product.
//
// Overflow of u8 x s8 pairs: x86's _mm256_maddubs_epi16 adds two u8 x s8 products in int16
// and saturates (255 * -128 * 2 = -65280), which MLAS and oneDNN avoid by quantizing weights
// to 7 bits. kiln instead widens both operands to int16 and uses _mm256_madd_epi16 (pairs
// summed in int32: exact for all values) on AVX2, and vpdpbusd (exact) where AVX-512 VNNI is
// present; a portable loop elsewhere. The kernel is chosen once per process by CPU feature.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/rt/dtype.h"

namespace kiln::rt {

class ThreadPool;

// The packed form of B (K x N): panels of 16 columns, K in groups of 4, plus N column sums.
// Element (k, n) of the source is at src[k * stride_k + n * stride_n] (a [K,N] matrix: N, 1;
// a [N,K] one, as convolution weights are: 1, K). u8 weights are stored as b - 128, which the
// packed form records (qgemm then shifts the zero point). The layout is private to this
// runtime version (the compiler packs with the runtime it emits).
size_t qgemm_packed_b_bytes(int64_t K, int64_t N) noexcept;
void qgemm_pack_b(int64_t K, int64_t N, const int8_t* src, int64_t stride_k, int64_t stride_n,
                  unsigned char* packed) noexcept;
void qgemm_pack_b(int64_t K, int64_t N, const uint8_t* src, int64_t stride_k, int64_t stride_n,
                  unsigned char* packed) noexcept;

// Which kernel runs: the best the CPU has (auto), or one named (for tests and comparisons; a
// kernel the CPU lacks falls back to auto). avx_vnni: the AVX2 kernels, with vpdpbusd on ymm
// registers (AVX-VNNI, no AVX-512) where a family has it (qconv2d_nhwc's dense layers), exact
// for any weights where plain AVX2 must widen to int16 or know that the weights' pairs fit.
enum class QGemmIsa { automatic, portable, avx2, avx512_vnni, avx_vnni };
bool qgemm_isa_supported(QGemmIsa isa) noexcept;
const char* qgemm_isa_name(QGemmIsa isa) noexcept;

// The kernel qgemm runs, for other packings of the same panels (qconv2d): a 6 x 16 int32 tile
// c[r * 16 + j] = sum over kq groups g and t < 4 of broadcast[g * 24 + r * 4 + t] x
// vector[g * 64 + j * 4 + t], for rows r < `rows`, exact. One operand is u8, the other s8:
// `broadcast_signed` makes the broadcast one s8 (qgemm's A is u8 and its B s8).
using QTileKernel = void (*)(int64_t kq, const void* broadcast, const void* vector, int32_t* c, int rows);
QTileKernel qgemm_tile_kernel(QGemmIsa isa, bool broadcast_signed) noexcept;

// The same tile with s8 broadcast (qconv2d's weights), its rows requantized as they leave the
// registers (a plain 8-bit output, see qgemm_requantize_row): row r's first n (<= 16) values
// y[r * y_stride + j] = requantize_f32(c[r * 16 + j] + add[r], scale[r], out.y_zero_point) of
// out.type. Null where the CPU lacks AVX-512 VNNI (then the tile kernel and
// qgemm_requantize_rows do it).
struct QGemmOutput;
using QTileRequantKernel = void (*)(int64_t kq, const void* broadcast, const void* vector, int rows, int64_t n,
                                    const int32_t* add, const float* scale, const QGemmOutput& out, unsigned char* y,
                                    int64_t y_stride);
QTileRequantKernel qgemm_tile_requant_kernel(QGemmIsa isa) noexcept;

// What is done with acc(i, j) once the tile is final. With t = acc + bias[j] (wrapping):
//   KILN_I32: y = t
//   otherwise v = clamp(t * scale[j] + offset[j], lo, hi) (in double), then
//   KILN_F32: y = v;  KILN_U8 / KILN_I8: y = saturate(round_half_even(v) + y_zero_point);
//   except an 8-bit output with no offset and no clamp (qgemm_plain_8bit_output: QLinearConv's,
//   QLinearMatMul's): y = requantize_f32(t, scale[j], y_zero_point) (qlinear.h; in float).
// Per-column arrays have `count` 1 (per tensor) or N; null pointers mean 0 (bias, offset) or
// 1 (scale). y(i, j) is at y[i * row_stride + j * col_stride] (elements).
struct QGemmOutput {
  kiln_dtype type = KILN_I32;
  void* y = nullptr;
  int64_t row_stride = 0, col_stride = 1;
  const int32_t* bias = nullptr;
  int64_t bias_count = 0;
  const float* scale = nullptr;
  int64_t scale_count = 0;
  const float* offset = nullptr;
  int64_t offset_count = 0;
  float lo = -3.4028235e38f, hi = 3.4028235e38f;
  int32_t y_zero_point = 0;
};

// A (M x K, row i at data + i * lda) of u8, or of s8 (a_signed). b_zero_point (of the weights
// as given to qgemm_pack_b): `b_zero_point_count` values (1 or N) or null (0).
struct QGemmA {
  const void* data = nullptr;
  int64_t lda = 0;
  bool a_signed = false;
  int32_t zero_point = 0;
};

void qgemm(int64_t M, int64_t N, int64_t K, const QGemmA& a, const unsigned char* packed_b,
           const int32_t* b_zero_point, int64_t b_zero_point_count, const QGemmOutput& out, ThreadPool* pool,
           QGemmIsa isa = QGemmIsa::automatic) noexcept;

// qgemm's epilogue alone, for kernels that compute the corrected sums themselves (depthwise
// convolution): acc[k] is acc(i0 + k, j), k < n, zero points already applied.
void qgemm_finish_column(const QGemmOutput& out, const int32_t* acc, int64_t i0, int64_t n, int64_t j) noexcept;

// True when `out` is 8-bit with no offset and no clamp of its own (QLinearConv's, QLinearMatMul's).
bool qgemm_plain_8bit_output(const QGemmOutput& out) noexcept;

// For such an output: n contiguous values y[k] = requantize_f32(acc[k] + add, scale,
// out.y_zero_point) (acc[k] + add wrapping), the epilogue's result, vectorized where the CPU
// allows (AVX-512: 16 values an instruction); out.type and out.y_zero_point are read, nothing else.
void qgemm_requantize_row(const QGemmOutput& out, const int32_t* acc, int64_t n, int32_t add, float scale,
                          unsigned char* y) noexcept;

// qgemm_requantize_row for `rows` rows at once: row r's n values from acc + r * acc_stride,
// with add[r] and scale[r], to y + r * y_stride.
void qgemm_requantize_rows(const QGemmOutput& out, const int32_t* acc, int64_t acc_stride, int64_t rows, int64_t n,
                           const int32_t* add, const float* scale, unsigned char* y, int64_t y_stride) noexcept;

}  // namespace kiln::rt
