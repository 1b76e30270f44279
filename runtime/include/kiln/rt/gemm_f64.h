// Double-precision matrix product for f64 models (MatMul in the interpreter and compiled code).
#pragma once

#include <cstdint>

namespace kiln::rt {

class ThreadPool;

// C = alpha * op(A) * op(B) + beta * C, row-major; op(X) = X^T when trans_X. A is M x K after
// op, B is K x N after op. beta == 0: C is not read. pool == nullptr: one thread.
void gemm_f64(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
              int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc,
              ThreadPool* pool) noexcept;

}  // namespace kiln::rt
