// The LLVM backend: lowers a planned graph to LLVM IR in process (the run function with its
// kernel calls, the fused epilogue loops, the weights, the C API's table) and writes a
// relocatable object for a target triple with LLVM's TargetMachine, no C++ compiler involved.
// It shares the IR, the passes, the plan (codegen/cpp/graph_plan.h) and the weight packing
// with the C++ backend, and calls the same runtime kernels (kiln/rt/kernel_abi.h), so both give
// the same bits. The C API is the runtime's (kiln/rt/model_host.h), reached through NAME_*
// functions the object defines.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "codegen/cpp/emit_options.h"
#include "ir/graph.h"
#include "passes/plan_memory.h"

namespace kiln::codegen::llvm_ir {

struct LlvmOptions {
  std::string name;          // a C identifier: prefix of every exported symbol
  std::string triple;        // "x86_64-linux-gnu", "aarch64-linux-gnu"
  std::string cpu;           // kiln's --cpu: generic, native, x86-64-v2, x86-64-v3
  bool external_weights = false;  // weights in NAME.weights, memory-mapped at run time
  std::string build_info;    // the executable's --version line
  cpp::EmitOptions emit;     // --conv-algo, as the C++ backend takes it
};

// True when kiln was built with LLVM (KILN_WITH_LLVM).
bool available();

// One line per node the backend cannot lower ("node 'x' (op): why"), and for what the graph
// needs that it lacks (symbolic dims, control flow); empty when it lowers them all.
std::vector<std::string> unsupported(const ir::Graph& graph);

struct LlvmModel {
  passes::MemoryPlan plan;
  std::string weights;  // the weights' bytes (embedded in the object unless external)
  size_t nodes = 0;     // nodes with a kernel call
};

// Lowers `graph` (unsupported() empty) and writes NAME.o, the model's code, weights and C API, to
// `object`. Fails (kiln::Error) naming the node or the target.
LlvmModel write_object(const ir::Graph& graph, const LlvmOptions& options, const std::filesystem::path& object);

// An object with `int main(argc, argv)` that runs the model of write_object's object through
// the runtime's command line (kiln/rt/exe_main.h).
void write_main_object(const LlvmOptions& options, const std::filesystem::path& object);

}  // namespace kiln::codegen::llvm_ir
