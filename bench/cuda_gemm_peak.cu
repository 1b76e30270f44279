// cuBLAS's own GEMM throughput on this GPU: the bar the CUDA backend's models are measured
// against (scripts/gpu_check.sh). SGEMM (fp32, no TF32) and HGEMM-class GEMMs (fp16 operands,
// fp32 accumulation: what kiln's --precision fp16 runs) on square matrices, timed with CUDA events
// over repeated calls; prints one line per case and the best TFLOP/s of each kind.
//
//   nvcc -O2 -o cuda_gemm_peak bench/cuda_gemm_peak.cu -lcublas && ./cuda_gemm_peak
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                     \
  do {                                                                               \
    if ((x) != 0) {                                                                  \
      std::fprintf(stderr, "cuda_gemm_peak: %s failed at line %d\n", #x, __LINE__); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// TFLOP/s of an n x n x n GEMM, fp16 operands when `half`, fp32 results either way.
double measure(cublasHandle_t h, int n, bool half) {
  const size_t elems = static_cast<size_t>(n) * n, op_bytes = elems * (half ? 2 : 4);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMalloc(&a, op_bytes));
  CHECK(cudaMalloc(&b, op_bytes));
  CHECK(cudaMalloc(&c, elems * 4));
  CHECK(cudaMemset(a, 0, op_bytes));
  CHECK(cudaMemset(b, 0, op_bytes));
  const float alpha = 1.f, beta = 0.f;
  auto call = [&] {
    if (half)
      return static_cast<int>(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16F, n, b, CUDA_R_16F, n,
                                           &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return static_cast<int>(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, static_cast<float*>(a), n,
                                        static_cast<float*>(b), n, &beta, static_cast<float*>(c), n));
  };
  for (int i = 0; i < 3; ++i) CHECK(call());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int reps = n >= 8192 ? 10 : 50;
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) CHECK(call());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * n * n * static_cast<double>(n) * reps / (ms * 1e-3) / 1e12;
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  double best[2] = {0, 0};
  for (bool half : {false, true})
    for (int n : {2048, 4096, 8192}) {
      const double t = measure(h, n, half);
      std::printf("%s n=%d: %.1f TFLOP/s\n", half ? "HGEMM (fp16 in, fp32 accumulate)" : "SGEMM (fp32)", n, t);
      if (t > best[half]) best[half] = t;
    }
  std::printf("peak SGEMM %.1f TFLOP/s\npeak HGEMM %.1f TFLOP/s\n", best[0], best[1]);
  cublasDestroy(h);
  return 0;
}
