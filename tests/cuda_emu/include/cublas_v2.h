// CPU emulation of the cuBLAS calls the CUDA backend makes (see cuda_runtime.h): plain loops
// written from cuBLAS's documentation (column-major operands, C = alpha op(A) op(B) + beta C), so
// that the generated code's row-major-to-column-major arguments are checked independently.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_runtime.h"

enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_NOT_SUPPORTED = 15 };
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cudaDataType { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68 };
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };
struct kiln_emu_cublas {};
using cublasHandle_t = kiln_emu_cublas*;

inline cublasStatus_t cublasCreate(cublasHandle_t* h) {
  *h = new kiln_emu_cublas;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) { return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasSetWorkspace(cublasHandle_t, void*, size_t) { return CUBLAS_STATUS_SUCCESS; }
inline const char* cublasGetStatusString(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_INVALID_VALUE";
}

namespace kiln_emu {
inline float element(const void* p, cudaDataType t, long long i) {
  if (t == CUDA_R_16F) return static_cast<const __half*>(p)[i];
  if (t == CUDA_R_16BF) return static_cast<const __nv_bfloat16*>(p)[i];
  return static_cast<const float*>(p)[i];
}
// op(X)(i, j) of a column-major X with leading dimension ld.
inline float op_element(const void* p, cudaDataType t, cublasOperation_t op, int ld, long long i, long long j) {
  return op == CUBLAS_OP_N ? element(p, t, i + j * ld) : element(p, t, j + i * ld);
}
inline cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const void* A,
                           cudaDataType at, int lda, long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
                           float beta, float* C, int ldc, long long sc, int batch) {
  if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < m) return CUBLAS_STATUS_INVALID_VALUE;
  if (lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n)) return CUBLAS_STATUS_INVALID_VALUE;
  // op(A) as m rows of k and op(B) as n columns of k, contiguous, then dot products.
  std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k);
  for (int bi = 0; bi < batch; ++bi) {
    const void* Ab = static_cast<const char*>(A) + (at == CUDA_R_32F ? 4 : 2) * sa * bi;
    const void* Bb = static_cast<const char*>(B) + (bt == CUDA_R_32F ? 4 : 2) * sb * bi;
    float* Cb = C + sc * bi;
    for (int i = 0; i < m; ++i)
      for (int l = 0; l < k; ++l) a[static_cast<size_t>(i) * k + l] = op_element(Ab, at, ta, lda, i, l);
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < k; ++l) b[static_cast<size_t>(j) * k + l] = op_element(Bb, bt, tb, ldb, l, j);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const float* ar = a.data() + static_cast<size_t>(i) * k;
        const float* bc = b.data() + static_cast<size_t>(j) * k;
        double acc = 0;
        for (int l = 0; l < k; ++l) acc += static_cast<double>(ar[l]) * bc[l];
        float& c = Cb[i + static_cast<long long>(j) * ldc];
        c = static_cast<float>(alpha * acc + (beta == 0.f ? 0.0 : static_cast<double>(beta) * c));
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace kiln_emu

inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                                int k, const float* alpha, const float* A, int lda, long long sa,
                                                const float* B, int ldb, long long sb, const float* beta, float* C,
                                                int ldc, long long sc, int batch) {
  return kiln_emu::gemm(ta, tb, m, n, k, *alpha, A, CUDA_R_32F, lda, sa, B, CUDA_R_32F, ldb, sb, *beta, C, ldc, sc, batch);
}
inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                                 int k, const void* alpha, const void* A, cudaDataType at, int lda,
                                                 long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
                                                 const void* beta, void* C, cudaDataType ct, int ldc, long long sc,
                                                 int batch, cublasComputeType_t, cublasGemmAlgo_t) {
  if (ct != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  return kiln_emu::gemm(ta, tb, m, n, k, *static_cast<const float*>(alpha), A, at, lda, sa, B, bt, ldb, sb,
                        *static_cast<const float*>(beta), static_cast<float*>(C), ldc, sc, batch);
}
