// The weights blob of a generated model: the constants its code reads, each 64-byte aligned.
// With --precision fp16 or bf16, float weights are stored as halves and widened into a
// separate fp32 buffer when the model's context is created (kiln/rt/widen.h): the file
// holds half the bytes, the kernels read fp32 as usual, and run-time memory grows by the
// widened copy. With bf16, the B of a MatMul or Gemm and the weights of a 1x1 blocked Conv
// are stored packed for the native bf16 GEMM (kiln/rt/gemm_bf16.h) and widened, into a buffer
// of their own, only on CPUs without it.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp/emit_context.h"
#include "ir/tensor.h"
#include "kiln/rt/gemm_bf16.h"
#include "kiln/rt/widen.h"
#include "passes/precision.h"

namespace kiln::codegen::cpp {

class WeightBlob {
 public:
  // Smaller float constants (scalars, tiny tables, epsilons) stay fp32: they weigh nothing and
  // some are exact parameters.
  static constexpr size_t kMinHalvedElements = 16;

  explicit WeightBlob(passes::Precision precision = passes::Precision::FP32) : precision_(precision) {}

  // Appends a constant; returns where code reads it (Weight, or Widened when stored halved).
  Location add(const ir::Tensor& t);
  // Appends floats computed at compile time (packed weights).
  Location add_floats(const float* data, size_t count);
  // Appends a MatMul/Gemm B packed by gemm_bf16_pack_b (K x N), or a 1x1 kiln.ConvNchwc's
  // weights packed by conv_nchwc_bf16_pack_weights (conv: K = C, N = M): its byte offset in the
  // weights and, where the CPU lacks native bf16, in the widened buffer (the fp32 kernel's
  // packed layout).
  struct GemmB {
    size_t bf16, widened;
  };
  GemmB add_gemm_b_bf16(const std::vector<uint16_t>& packed, int64_t K, int64_t N, bool conv = false);
  // Appends raw bytes computed at compile time (packed int8 weights), never halved.
  Location add_bytes(const void* data, size_t bytes) { return {Location::Weight, 0, append(data, bytes)}; }

  const std::string& bytes() const { return bytes_; }
  std::string take_bytes() { return std::move(bytes_); }
  void pad_if_empty();  // never an empty section
  // The halved weights, and the bytes of the fp32 buffer they are widened into.
  const std::vector<kiln::rt::WidenRange>& widened() const { return ranges_; }
  size_t widened_bytes() const { return widened_bytes_; }
  // The Bs of add_gemm_b_bf16, the bytes they take as bf16, and as fp32 once widened.
  const std::vector<kiln::rt::WidenGemmB>& gemm_b() const { return gemm_b_; }
  size_t gemm_b_bytes() const { return gemm_b_bytes_; }
  size_t widened_gemm_b_bytes() const { return widened_gemm_b_bytes_; }
  passes::Precision precision() const { return precision_; }

 private:
  size_t append(const void* data, size_t bytes);
  bool halves(const float* data, size_t count) const;

  passes::Precision precision_;
  std::string bytes_;
  std::vector<kiln::rt::WidenRange> ranges_;
  size_t widened_bytes_ = 0;
  std::vector<kiln::rt::WidenGemmB> gemm_b_;
  size_t gemm_b_bytes_ = 0, widened_gemm_b_bytes_ = 0;
};

// The pieces of the generated model.cpp that widen the halved weights of `blob` (all empty
// when none are halved, so fp32 output is unchanged).
struct WidenCode {
  std::string include;  // #include line
  std::string member;   // the context's pointer to the widened buffer
  std::string decls;    // constants: the ranges to widen
  std::string create;   // statements of NAME_create, after the weights are loaded
  std::string check;    // extra condition for "creation failed" in NAME_run
  std::string run;      // declares X (and XB, the widened Bs) in run_graph
  std::string destroy;  // frees the buffer
  std::string note;     // a header comment line
};
WidenCode widen_code(const WeightBlob& blob);

}  // namespace kiln::codegen::cpp
