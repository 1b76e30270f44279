// The weights blob of a generated model: the constants its code reads, each 64-byte aligned.
// With --precision fp16 or bf16, float weights are stored as halves and widened into a
// separate fp32 buffer when the model's context is created (kiln/rt/widen.h): the file
// holds half the bytes, the kernels read fp32 as usual, and run-time memory grows by the
// widened copy.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp/emit_context.h"
#include "ir/tensor.h"
#include "kiln/rt/widen.h"
#include "passes/precision.h"

namespace kiln::codegen::cpp {

class WeightBlob {
 public:
  explicit WeightBlob(passes::Precision precision = passes::Precision::FP32) : precision_(precision) {}

  // Appends a constant; returns where code reads it (Weight, or Widened when stored halved).
  Location add(const ir::Tensor& t);
  // Appends floats computed at compile time (packed weights).
  Location add_floats(const float* data, size_t count);
  // Appends raw bytes computed at compile time (packed int8 weights), never halved.
  Location add_bytes(const void* data, size_t bytes) { return {Location::Weight, 0, append(data, bytes)}; }

  const std::string& bytes() const { return bytes_; }
  std::string take_bytes() { return std::move(bytes_); }
  void pad_if_empty();  // never an empty section
  // The halved weights, and the bytes of the fp32 buffer they are widened into.
  const std::vector<kiln::rt::WidenRange>& widened() const { return ranges_; }
  size_t widened_bytes() const { return widened_bytes_; }
  passes::Precision precision() const { return precision_; }

 private:
  size_t append(const void* data, size_t bytes);
  bool halves(const float* data, size_t count) const;

  passes::Precision precision_;
  std::string bytes_;
  std::vector<kiln::rt::WidenRange> ranges_;
  size_t widened_bytes_ = 0;
};

// The pieces of the generated model.cpp that widen the halved weights of `blob` (all empty
// when none are halved, so fp32 output is unchanged).
struct WidenCode {
  std::string include;  // #include line
  std::string member;   // the context's pointer to the widened buffer
  std::string decls;    // constants: the ranges to widen
  std::string create;   // statements of NAME_create, after the weights are loaded
  std::string check;    // extra condition for "creation failed" in NAME_run
  std::string run;      // declares X in run_graph
  std::string destroy;  // frees the buffer
  std::string note;     // a header comment line
};
WidenCode widen_code(const WeightBlob& blob);

}  // namespace kiln::codegen::cpp
