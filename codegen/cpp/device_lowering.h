// A device beside the host (the CUDA backend: codegen/cuda) that runs some of the main graph's
// nodes instead of the C++ emitters. The C++ backend still writes the whole model (its C API,
// shapes, weights, control flow and every node the device does not take); at each node it asks
// the device lowering whether the node is the device's, and lets it write the code that runs
// the node there or that brings the node's inputs back to the host first. The device memory
// mirrors the host arena: the same memory plan, the same offsets, so both sides share one plan.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln::codegen::cpp {

class EmitContext;
class WeightBlob;
struct Plan;

// Text the device adds to the generated model.cpp (all C++; model.cu with the CUDA backend).
struct DeviceCode {
  std::string file_name = "model.cpp";  // the model's source file
  // Code at the top of the file that the device compiler sees (kernels); the rest of the file,
  // the host's, is then fenced off from the device passes with #if !defined(__CUDA_ARCH__).
  std::string device_prelude;
  std::string includes;                 // #include lines
  std::string context_members;          // members of NAME_context
  std::string functions;                // namespace-scope code before run_graph (kernels, helpers)
  std::string run_prologue;             // statements at the top of run_graph (device pointers)
  std::string create;                   // statements of NAME_create once arena and weights are ready
  std::string check;                    // extra condition for "creation failed" in NAME_run: " || ..."
  std::string run_call;                 // replaces "run_graph(ctx, inputs, outputs)" in NAME_run
  std::string destroy;                  // statements of NAME_destroy
  std::string api;                      // extern "C" functions added to the C API
};

class DeviceLowering {
 public:
  virtual ~DeviceLowering() = default;
  // True when main-graph node `n` runs on the device (its C++ emitter is then not used).
  virtual bool on_device(const ir::Node& n) const = 0;
  // Arena bytes the device code of `n` needs while it runs.
  virtual size_t scratch_bytes(const ir::Node& n) const = 0;
  // True when the device code of `n` reads constant input `i` from the weights as it is.
  virtual bool reads_weight(const ir::Node& n, size_t i) const = 0;
  // Once the main graph is planned, before its first node.
  virtual void begin(EmitContext& ctx, const Plan& plan, WeightBlob& weights) = 0;
  // The code of device node `n`.
  virtual void emit(EmitContext& ctx, const ir::Node& n) = 0;
  // Around the C++ code of a host node: copies of its inputs to the host, then noting that its
  // outputs are now on the host only.
  virtual void before_host(EmitContext& ctx, const ir::Node& n) = 0;
  virtual void after_host(EmitContext& ctx, const ir::Node& n) = 0;
  // After the last node: the graph outputs placed where the device code returns them, including
  // `final_copies` (output index, source), which the host then does not copy.
  virtual void end(EmitContext& ctx, const std::vector<std::pair<size_t, const ir::Value*>>& final_copies) = 0;
  // The model-level code, once every node is emitted.
  virtual DeviceCode code() const = 0;
};

}  // namespace kiln::codegen::cpp
