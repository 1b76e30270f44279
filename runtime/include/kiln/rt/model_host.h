// The C API of a compiled model, written once in the runtime for generated code that
// describes its model by a table: the LLVM backend (codegen/llvm) emits the table, the run
// function and NAME_* functions that forward to kiln_host_* with the table. Same behaviour
// and messages as the C++ backend's generated API (codegen/cpp/cpp_backend.cpp), for
// models whose shapes are static.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

// Raised when the table's layout changes: an object built against another layout is refused
// at NAME_create rather than misread.
#define KILN_MODEL_DESC_ABI 1

// Runs the model's nodes: 0, or non-zero after a node failed, with `*error` set to a message
// naming it. `pool` is a kiln::rt::ThreadPool, `prof` the per-node timings (kiln::rt::NodeTime)
// or null.
typedef int32_t (*kiln_model_run_fn)(unsigned char* arena, const unsigned char* weights, const void* const* in,
                                     void* const* out, void* pool, void* prof, const char** error);

// Every field is 8 bytes (an integer or a pointer) so that generated code lays the table out as
// an array of such fields, in this order, on any 64-bit target.
struct kiln_model_desc {
  uint64_t abi;                    // KILN_MODEL_DESC_ABI
  const char* name;                // the model's C identifier
  uint64_t arena_bytes;
  uint64_t weights_bytes;
  const unsigned char* weights;    // embedded weights; null: read from a NAME.weights file
  uint64_t num_nodes;              // nodes with a kernel call, in run order
  const char* const* node_names;
  const char* const* node_ops;
  uint64_t num_inputs;
  uint64_t num_outputs;
  const char* const* io_names;     // the inputs', then the outputs'
  const int64_t* io_dtypes;        // ONNX dtype numbers
  const int64_t* io_at;            // value i's dims: io_dims[io_at[i] .. io_at[i + 1])
  const int64_t* io_dims;
  const int64_t* io_steps;         // as many 1s as io_dims has entries (NAME_input_dim_steps)
  kiln_model_run_fn run;
  const char* build_info;          // the executable's --version line
};

// The layouts of NAME_options and NAME_tensor (NAME.h).
struct kiln_host_options {
  int threads;
  const char* weights_path;
  void* arena;
  size_t arena_size;
};
struct kiln_host_tensor {
  void* data;
  int dtype;
  int rank;
  const int64_t* dims;
};

struct kiln_host_context;

kiln_host_context* kiln_host_create(const kiln_model_desc* d, const kiln_host_options* options);
int kiln_host_run(const kiln_model_desc* d, kiln_host_context* ctx, const void* const* inputs, void* const* outputs);
int kiln_host_run_checked(const kiln_model_desc* d, kiln_host_context* ctx, const kiln_host_tensor* inputs,
                          size_t n_inputs, const kiln_host_tensor* outputs, size_t n_outputs);
int kiln_host_set_input_shape(const kiln_model_desc* d, kiln_host_context* ctx, size_t i, int rank,
                              const int64_t* dims);
const int64_t* kiln_host_input_shape(const kiln_model_desc* d, const kiln_host_context* ctx, size_t i);
const int64_t* kiln_host_output_shape(const kiln_model_desc* d, kiln_host_context* ctx, size_t i);
const char* kiln_host_error(const kiln_model_desc* d, const kiln_host_context* ctx);
void kiln_host_destroy(const kiln_model_desc* d, kiln_host_context* ctx);
size_t kiln_host_num_inputs(const kiln_model_desc* d);
size_t kiln_host_num_outputs(const kiln_model_desc* d);
const char* kiln_host_input_name(const kiln_model_desc* d, size_t i);
int kiln_host_input_dtype(const kiln_model_desc* d, size_t i);
int kiln_host_input_rank(const kiln_model_desc* d, size_t i);
const int64_t* kiln_host_input_dims(const kiln_model_desc* d, size_t i);
const int64_t* kiln_host_input_min_dims(const kiln_model_desc* d, size_t i);
const int64_t* kiln_host_input_dim_steps(const kiln_model_desc* d, size_t i);
const char* kiln_host_output_name(const kiln_model_desc* d, size_t i);
int kiln_host_output_dtype(const kiln_model_desc* d, size_t i);
int kiln_host_output_rank(const kiln_model_desc* d, size_t i);
const int64_t* kiln_host_output_dims(const kiln_model_desc* d, size_t i);
size_t kiln_host_arena_size(const kiln_model_desc* d);
int kiln_host_set_profiling(const kiln_model_desc* d, kiln_host_context* ctx, int on);
size_t kiln_host_num_nodes(const kiln_model_desc* d);
const char* kiln_host_node_name(const kiln_model_desc* d, size_t i);
const char* kiln_host_node_op(const kiln_model_desc* d, size_t i);
int kiln_host_node_time(const kiln_model_desc* d, const kiln_host_context* ctx, size_t i, uint64_t* start_ns,
                        uint64_t* duration_ns);
// The standalone executable's main (kiln/rt/exe_main.h) for the model `d`.
int kiln_host_exe_main(const kiln_model_desc* d, int argc, char** argv);

}  // extern "C"
