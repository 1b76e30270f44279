// The command line of a standalone compiled model. Generated code supplies a
// ModelApi table and calls exe_main from main().
#pragma once

#include <cstdint>
#include <cstdio>

#include "kiln/rt/dtype.h"

namespace kiln::rt {

struct TensorInfo {
  const char* name;
  kiln_dtype dtype;
  int rank;
  const int64_t* dims;              // the maxima where a dim is symbolic
  const int64_t* min_dims = nullptr;  // inputs with symbolic dims: the minima (else null)
  const int64_t* steps = nullptr;     // and the steps (1 but for MIN..MAX:STEP dims)
};

struct ModelApi {
  const char* model_name;
  int n_inputs;
  const TensorInfo* inputs;
  int n_outputs;
  const TensorInfo* outputs;
  void* (*create)(int threads);  // returns a context or nullptr
  int (*run)(void* ctx, const void* const* inputs, void* const* outputs);  // 0 = ok
  const char* (*error)(void* ctx);
  void (*destroy)(void* ctx);
  // Profiling (kiln/rt/profile.h); null in a table that does not offer it.
  int (*set_profiling)(void* ctx, int on) = nullptr;  // 0 = ok
  int n_nodes = 0;                                     // nodes with a kernel call, in run order
  const char* (*node_name)(int i) = nullptr;
  const char* (*node_op)(int i) = nullptr;
  int (*node_time)(void* ctx, int i, uint64_t* start_ns, uint64_t* duration_ns) = nullptr;  // 0 = ok
  // Models with symbolic dims (kiln compile --dim NAME=MIN..MAX): sets an input's extents
  // (0 = ok) and gives an output's for them (null on failure); null in a table without them.
  int (*set_input_shape)(void* ctx, int i, int rank, const int64_t* dims) = nullptr;
  const int64_t* (*output_shape)(void* ctx, int i) = nullptr;
  // How the model was compiled, printed by --version: "compiled by kiln 0.1.0 from m.onnx,
  // precision int8, weights embedded" (`kiln bench --compiled` reads the precision there).
  const char* build_info = nullptr;
};

// Prints "NAME: shape [d0,d1] dtype T", then "  values: " with the first (up
// to 10) values and "  argmax: " with the flat index of the first maximum
// (NaNs skipped). data holds the tensor's elements, dense row-major. Used by
// exe_main and by `kiln run`, so that both print outputs the same way.
void print_tensor_summary(std::FILE* out, const TensorInfo& t, const void* data) noexcept;

// PROG [-i NAME=FILE]... [FILE]... [-o DIR] [--repeat N] [--threads N] [--profile FILE.json]
//      [--bench-worker] [--version] [-h]
// Inputs are .npy files, given by name or positionally in the model's input
// order. Each is checked against the table (dtype, shape) before running.
// With -o DIR, writes DIR/<sanitized output name>.npy for each output;
// otherwise prints each output's name, shape, dtype, first values and argmax.
// --profile writes every run's per-node timings as a Chrome trace (kiln/rt/trace.h);
// --bench-worker answers `kiln bench` requests on stdin (kiln/rt/bench_worker.h).
// Returns the process exit code: 0 on success, 1 on any error (one line
// "error: ..." on stderr). Never throws.
int exe_main(int argc, char** argv, const ModelApi& api) noexcept;

// Same, printing to out and err instead of stdout and stderr (for tests).
int exe_main(int argc, char** argv, const ModelApi& api, std::FILE* out, std::FILE* err) noexcept;

}  // namespace kiln::rt
