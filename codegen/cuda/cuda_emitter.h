// Per-op device code of the CUDA backend: how a node becomes kernel launches and cuBLAS calls in
// model.cu. An op's semantics stay in its IR registry entry: elementwise and activation
// arithmetic is the registry's scalar expression compiled for the device.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "codegen/cpp/emit_context.h"
#include "codegen/cpp/graph_plan.h"
#include "codegen/cpp/weight_blob.h"
#include "ir/graph.h"
#include "passes/precision.h"

namespace kiln::codegen::cuda {

// What an op's device code sees: device pointers of its values and scratch, the weights (for
// constants stored in another form), generated kernels, and checked calls. Inside run_graph
// the device arena is DA, the device weights DW, the device inputs and outputs DI[i] and DO[j],
// the stream S and the cuBLAS handle H.
class NodeCode {
 public:
  NodeCode(cpp::EmitContext& ctx, const cpp::Plan& plan, cpp::WeightBlob& weights, passes::Precision precision,
           std::string& kernels, std::map<std::string, std::string>& kernel_names, std::map<int, std::string>& messages,
           std::set<std::string>& launched)
      : ctx_(ctx), plan_(plan), weights_(weights), precision_(precision), kernels_(kernels),
        kernel_names_(kernel_names), messages_(messages), launched_(launched) {}

  cpp::EmitContext& ctx() { return ctx_; }
  passes::Precision precision() const { return precision_; }
  bool half() const { return precision_ == passes::Precision::FP16 || precision_ == passes::Precision::BF16; }

  // Typed device pointer of a value, of the node's input i (nullptr when omitted) and output i.
  std::string ptr(const ir::Value* v, bool writable) const;
  std::string in(const ir::Node& n, size_t i) const { return n.has_input(i) ? ptr(n.input(i), false) : "nullptr"; }
  std::string out(const ir::Node& n, size_t i) const { return ptr(n.output(i), true); }
  // `unsigned char*` device scratch of the node (device_scratch_bytes of its emitter), at `offset`.
  std::string scratch(const ir::Node& n, size_t offset = 0) const;
  // A constant's elements as fp16 (or bf16 with --precision bf16) in the weights, converted at
  // compile time: a `const void*` device pointer expression.
  std::string half_weight(const ir::Value* v);
  // Raw bytes appended to the weights: `const unsigned char*` device pointer expression.
  std::string weight_bytes(const void* data, size_t bytes);
  // A generated __global__ function: `code` with @NAME@ where its name goes; identical code is
  // shared. Returns the name.
  std::string kernel(const std::string& code);
  // A launch of `kernel` (an expression, e.g. "kiln_cuda::to_half<>") over `n` elements
  // (grid-stride), checked.
  void launch(const ir::Node& n, const std::string& kernel, const std::string& elements, const std::string& args);
  // A launch with explicit grid and block, checked.
  void launch_grid(const ir::Node& n, const std::string& kernel, const std::string& grid, const std::string& block,
                   const std::string& args);
  // A cuBLAS call (returns cublasStatus_t), checked; `what` names it in the error.
  void cublas(const ir::Node& n, const std::string& call, const std::string& what);
  // A CUDA runtime call (returns cudaError_t), checked.
  void cuda(const ir::Node& n, const std::string& call, const std::string& what);
  // A new error code for a check the device makes while running (an index out of range): the
  // run reports the node's message when a kernel stores the code in the device flag, DF (an
  // `int*`), which the run reads back after the last kernel.
  int error_code(const ir::Node& n, const std::string& message);

 private:
  cpp::EmitContext& ctx_;
  const cpp::Plan& plan_;
  cpp::WeightBlob& weights_;
  passes::Precision precision_;
  std::string& kernels_;
  std::map<std::string, std::string>& kernel_names_;
  std::map<int, std::string>& messages_;
  std::set<std::string>& launched_;  // every kernel launched (the device passes must instantiate them)
};

struct CudaEmitter {
  void (*emit)(NodeCode& code, const ir::Node& node) = nullptr;
  // Why this node stays on the host (a dtype, rank or attribute the device code lacks), or "".
  std::string (*unsupported)(const ir::Node& node, passes::Precision precision) = nullptr;
  // Device scratch bytes while it runs.
  size_t (*scratch_bytes)(const ir::Node& node, passes::Precision precision) = nullptr;
  // True when the device code reads constant input i from the weights as it is (false: it
  // stores its own form, e.g. fp16 weights). nullptr: every input as it is.
  bool (*reads_weight)(const ir::Node& node, size_t i, passes::Precision precision) = nullptr;
};

// True when every value the node reads and writes has a static shape (device code is
// specialized for fixed shapes; nodes with bounded dims run on the host).
bool all_static(const ir::Node& n);

// The device emitter of `op`, or nullptr.
const CudaEmitter* find_cuda_emitter(std::string_view op);

}  // namespace kiln::codegen::cuda
