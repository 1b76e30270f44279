// The C++ backend: lowers a graph with static shapes to C++ source that calls the runtime,
// with a C API header, a main() for the standalone executable, and a weights blob.
#pragma once

#include <map>
#include <string>

#include "codegen/cpp/device_lowering.h"
#include "codegen/cpp/emit_options.h"
#include "ir/graph.h"
#include "passes/plan_memory.h"
#include "passes/precision.h"

namespace kiln::codegen::cpp {

// Deliberate faults for kiln's own tests (set by the CLI from KILN_TEST_* variables; see
// docs/guide/debugging.md): a compiled model that is genuinely wrong or slow in one named node.
struct TestHooks {
  std::string perturb_node;  // add perturb_delta to every element of this node's first output
  double perturb_delta = 0.5;
  std::string delay_node;    // busy-wait delay_ms in this node on every run
  double delay_ms = 0;
};

struct CppOptions {
  std::string name;          // a C identifier: prefix of every exported symbol
  std::string source_model;  // named in the generated files' header comment
  bool external_weights = false;  // weights in NAME.weights, memory-mapped at run time
  // fp16, bf16: float weights stored in half precision and widened to fp32 when the model's
  // context is created. Other values leave the weights as they are (int8 is a graph rewrite).
  passes::Precision precision = passes::Precision::FP32;
  EmitOptions emit;  // how nodes become code (--conv-algo)
  TestHooks test_hooks;
  // What else decides the binaries (kiln's version and commit, the target, --cpu): hashed with
  // the generated code and the weights into NAME.h's KILN_MODEL_<NAME>_HASH.
  std::string build_identity;
  // A device that runs some of the main graph's nodes (codegen/cuda); null: the host runs all.
  DeviceLowering* device = nullptr;
  // Libraries the model needs besides kiln's runtime and the C++ one, for NAME.pc's static link
  // line (CUDA: "-L.../lib64 -lcublas -lcudart").
  std::string link_libs;
};

struct GeneratedModel {
  std::string name;
  std::map<std::string, std::string> files;  // relative path -> text
  std::string weights;                       // bytes of NAME.weights
  size_t widened_weights = 0;  // --precision fp16|bf16: weights stored halved ...
  size_t widened_bytes = 0;    // ... and the fp32 memory they are widened into at run time
  // --precision bf16: MatMul/Gemm Bs stored packed for the native bf16 GEMM, their bytes, and
  // the fp32 memory they are widened into on CPUs without AVX512_BF16.
  size_t bf16_gemm_weights = 0, bf16_gemm_bytes = 0, bf16_gemm_widened_bytes = 0;
  passes::MemoryPlan plan;
};

// Fails with one message listing every node the backend cannot compile (no emitter, or an
// unsupported dtype or form) and every value whose shape is not static.
void check_compilable(const ir::Graph& graph);

GeneratedModel generate_cpp(const ir::Graph& graph, const CppOptions& options);

// The memory plan the backend would make for `graph` (which must compile) under `options`, for
// reports.
struct PlanReport {
  passes::MemoryPlan memory;
  std::vector<passes::BufferRequest> requests;  // what was planned: memory.offsets[i] is requests[i]'s
  size_t values = 0;    // intermediate values in the arena
  size_t in_place = 0;  // results written over an input that dies there
  size_t views = 0;     // results sharing their input's bytes (Reshape and friends)
  std::vector<std::pair<std::string, size_t>> largest;  // biggest arena values, name and bytes
};
PlanReport plan_report(const ir::Graph& graph, const EmitOptions& options, size_t largest = 5);

// A C identifier made from a model name: other characters become '_', a leading digit is
// prefixed with 'm'.
std::string c_identifier(const std::string& name);

// Whether a C identifier cannot name a model: a C or C++ keyword, or a macro of the C
// headers, which would break NAME.h's C++ wrapper (class kiln_models::NAME).
bool is_reserved_name(const std::string& id);

}  // namespace kiln::codegen::cpp
