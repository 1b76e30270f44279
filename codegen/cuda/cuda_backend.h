// The CUDA backend (kiln compile --target cuda): the model as CUDA C++ (model.cu) for NVIDIA
// GPUs, over cuBLAS. The C++ backend writes the model as usual (C API, shapes, weights, control
// flow); this backend takes every node it has device code for (device_lowering.h) and keeps the
// device memory as a mirror of the planned arena. Nodes it does not take run on the host, their
// inputs copied back from the GPU first; models whose nodes all run on the GPU are captured as
// one CUDA Graph on their first run and replayed.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp/cpp_backend.h"
#include "ir/graph.h"
#include "passes/precision.h"

namespace kiln::codegen::cuda {

struct CudaOptions {
  // fp32, or fp16 / bf16: GEMMs and convolutions on tensor cores with half-precision operands
  // (weights converted at compile time) and fp32 accumulation and results.
  passes::Precision precision = passes::Precision::FP32;
};

// The optimizer's passes that make layouts and fusions for the CPU kernels only; the CUDA target
// runs the pipeline without them.
const std::vector<std::string>& cpu_only_passes();

// Generates the model for the GPU: the C++ backend's files with model.cu in place of model.cpp,
// the CUDA part of the API in NAME.h (NAME_run_device) and a CMakeLists.txt that builds with
// CUDA. `options.device` is set by this function.
cpp::GeneratedModel generate_cuda(const ir::Graph& graph, cpp::CppOptions options, const CudaOptions& cuda);

// Per op of the graph: how many of its nodes run on the GPU and how many on the host, as
// "Conv 53 gpu, Gather 1 host" (kiln compile -v), and the host nodes' reasons.
struct Placement {
  size_t device = 0, host = 0;
  std::vector<std::string> lines;  // "Conv: 53 on the GPU", "Loop: 1 on the host (no CUDA code)"
};
Placement placement(const ir::Graph& graph, const CudaOptions& cuda);

// The CUDA toolkit kiln builds with: $KILN_CUDA_HOME, else the folder above nvcc on PATH, else
// /usr/local/cuda; nvcc is ROOT/bin/nvcc. Fails naming what is missing.
std::string cuda_home();

// --cuda-arch's default and its parsing: "80,90" -> {"80", "90"}; fails on a value that is not
// a compute capability nvcc knows.
std::vector<std::string> parse_cuda_archs(const std::string& text);
inline constexpr const char* kDefaultCudaArchs = "80,90";

}  // namespace kiln::codegen::cuda
