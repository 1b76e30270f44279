// The model C API from a table (kiln/rt/model_host.h). Shapes are static: an input's extents
// are its dims, and the outputs' are theirs.
#include "kiln/rt/model_host.h"

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "kiln/rt/exe_main.h"
#include "kiln/rt/mapped_file.h"
#include "kiln/rt/profile.h"
#include "kiln/rt/thread_pool.h"

struct kiln_host_context {
  explicit kiln_host_context(int threads) : pool(threads < 1 ? kiln::rt::physical_core_count() : threads) {}
  kiln::rt::ThreadPool pool;
  unsigned char* arena = nullptr;
  bool owns_arena = false;
  const unsigned char* weights = nullptr;
  kiln::rt::MappedFile mapped;
  std::string error;
  kiln::rt::NodeTime* times = nullptr;  // per-node timings, while profiling
  bool profiling = false;
  bool profiled = false;  // times hold a complete run
};

namespace {

int fail(kiln_host_context* ctx, const char* message) {
  ctx->error = message;
  return 1;
}

// Value i: inputs first, then outputs.
const int64_t* dims_of(const kiln_model_desc* d, size_t i) { return d->io_dims + d->io_at[i]; }
int rank_of(const kiln_model_desc* d, size_t i) { return static_cast<int>(d->io_at[i + 1] - d->io_at[i]); }

int check_input_shape(const kiln_model_desc* d, kiln_host_context* ctx, size_t i, int rank, const int64_t* dims) {
  if (i >= d->num_inputs) return fail(ctx, "no such input");
  const int n = rank_of(d, i);
  if (rank < 0 || rank != n || (rank > 0 && !dims)) {
    ctx->error = std::string("input '") + d->io_names[i] + "': rank " + std::to_string(rank) + ", the model's is " +
                 std::to_string(n);
    return 1;
  }
  for (int a = 0; a < n; ++a)
    if (dims[a] != dims_of(d, i)[a]) {
      ctx->error = std::string("input '") + d->io_names[i] + "': dim " + std::to_string(a) + " is " +
                   std::to_string(dims[a]) + ", the model's is " + std::to_string(dims_of(d, i)[a]);
      return 1;
    }
  return 0;
}

}  // namespace

extern "C" {

kiln_host_context* kiln_host_create(const kiln_model_desc* d, const kiln_host_options* options) {
  const int threads = options && options->threads > 0 ? options->threads : 1;
  kiln_host_context* ctx = new (std::nothrow) kiln_host_context(threads);
  if (!ctx) return nullptr;
  if (d->abi != KILN_MODEL_DESC_ABI) {
    ctx->error = std::string("model ") + d->name + " was compiled for another version of kiln's runtime";
    return ctx;
  }
  if (d->weights) {
    ctx->weights = d->weights;
  } else {
    const std::string path = options && options->weights_path ? options->weights_path : std::string(d->name) + ".weights";
    if (!ctx->mapped.open(path, ctx->error)) return ctx;
    if (ctx->mapped.size() != d->weights_bytes) {
      ctx->error = path + ": weights file has " + std::to_string(ctx->mapped.size()) + " bytes, model " + d->name +
                   " needs " + std::to_string(d->weights_bytes);
      return ctx;
    }
    ctx->weights = ctx->mapped.data();
  }
  if (options && options->arena) {
    if (options->arena_size < d->arena_bytes || reinterpret_cast<uintptr_t>(options->arena) % 64 != 0) {
      ctx->error = "the caller's arena must be 64-byte aligned and hold " + std::to_string(d->arena_bytes) + " bytes";
      return ctx;
    }
    ctx->arena = static_cast<unsigned char*>(options->arena);
  } else {
    ctx->arena = static_cast<unsigned char*>(std::aligned_alloc(64, (d->arena_bytes + 63) / 64 * 64 + 64));
    ctx->owns_arena = true;
    if (!ctx->arena) ctx->error = "out of memory allocating the arena";
  }
  return ctx;
}

int kiln_host_run(const kiln_model_desc* d, kiln_host_context* ctx, const void* const* inputs, void* const* outputs) {
  if (!ctx) return 1;
  if (!ctx->arena || !ctx->weights) return 1;  // creation failed: see NAME_error
  if (!inputs || !outputs) return fail(ctx, "inputs and outputs must not be null");
  for (size_t i = 0; i < d->num_inputs; ++i)
    if (!inputs[i]) return fail(ctx, "an input pointer is null");
  for (size_t i = 0; i < d->num_outputs; ++i)
    if (!outputs[i]) return fail(ctx, "an output pointer is null");
  ctx->error.clear();
  try {
    kiln::rt::NodeTime* prof = ctx->profiling ? ctx->times : nullptr;
    const char* error = nullptr;
    const int rc = d->run(ctx->arena, ctx->weights, inputs, outputs, &ctx->pool, prof, &error);
    if (rc != 0) return fail(ctx, error ? error : "the model failed while running");
    ctx->profiled = ctx->profiling;
    return 0;
  } catch (...) {
    return fail(ctx, "unexpected failure while running the model");
  }
}

int kiln_host_run_checked(const kiln_model_desc* d, kiln_host_context* ctx, const kiln_host_tensor* inputs,
                          size_t n_inputs, const kiln_host_tensor* outputs, size_t n_outputs) {
  if (!ctx) return 1;
  if (n_inputs != d->num_inputs || n_outputs != d->num_outputs) {
    ctx->error = std::string("model ") + d->name + " takes " + std::to_string(d->num_inputs) + " inputs and " +
                 std::to_string(d->num_outputs) + " outputs, got " + std::to_string(n_inputs) + " and " +
                 std::to_string(n_outputs);
    return 1;
  }
  std::vector<const void*> in(n_inputs);
  std::vector<void*> out(n_outputs);
  for (size_t k = 0; k < n_inputs + n_outputs; ++k) {
    const bool is_in = k < n_inputs;
    const kiln_host_tensor& t = is_in ? inputs[k] : outputs[k - n_inputs];
    const int rank = rank_of(d, k);
    bool same = t.data && t.dtype == d->io_dtypes[k] && t.rank == rank && (rank == 0 || t.dims);
    for (int a = 0; same && a < rank; ++a) same = t.dims[a] == dims_of(d, k)[a];
    if (!same) {
      ctx->error = std::string(is_in ? "input '" : "output '") + d->io_names[k] + "': " +
                   (t.data ? "dtype or shape does not match the model's" : "data pointer is null");
      return 1;
    }
    if (is_in) in[k] = t.data; else out[k - n_inputs] = t.data;
  }
  return kiln_host_run(d, ctx, in.data(), out.data());
}

int kiln_host_set_input_shape(const kiln_model_desc* d, kiln_host_context* ctx, size_t i, int rank,
                              const int64_t* dims) {
  if (!ctx) return 1;
  return check_input_shape(d, ctx, i, rank, dims);
}

const int64_t* kiln_host_input_shape(const kiln_model_desc* d, const kiln_host_context* ctx, size_t i) {
  return ctx && i < d->num_inputs ? dims_of(d, i) : nullptr;
}

const int64_t* kiln_host_output_shape(const kiln_model_desc* d, kiln_host_context* ctx, size_t i) {
  return ctx && i < d->num_outputs ? dims_of(d, d->num_inputs + i) : nullptr;
}

const char* kiln_host_error(const kiln_model_desc*, const kiln_host_context* ctx) {
  if (!ctx) return "no context (out of memory)";
  return ctx->error.empty() ? nullptr : ctx->error.c_str();
}

void kiln_host_destroy(const kiln_model_desc*, kiln_host_context* ctx) {
  if (!ctx) return;
  if (ctx->owns_arena) std::free(ctx->arena);
  delete[] ctx->times;
  delete ctx;
}

size_t kiln_host_num_inputs(const kiln_model_desc* d) { return d->num_inputs; }
size_t kiln_host_num_outputs(const kiln_model_desc* d) { return d->num_outputs; }
const char* kiln_host_input_name(const kiln_model_desc* d, size_t i) { return i < d->num_inputs ? d->io_names[i] : nullptr; }
int kiln_host_input_dtype(const kiln_model_desc* d, size_t i) {
  return i < d->num_inputs ? static_cast<int>(d->io_dtypes[i]) : 0;
}
int kiln_host_input_rank(const kiln_model_desc* d, size_t i) { return i < d->num_inputs ? rank_of(d, i) : -1; }
const int64_t* kiln_host_input_dims(const kiln_model_desc* d, size_t i) {
  return i < d->num_inputs ? dims_of(d, i) : nullptr;
}
// Static shapes: the minima are the dims.
const int64_t* kiln_host_input_min_dims(const kiln_model_desc* d, size_t i) { return kiln_host_input_dims(d, i); }
const int64_t* kiln_host_input_dim_steps(const kiln_model_desc* d, size_t i) {
  return i < d->num_inputs ? d->io_steps + d->io_at[i] : nullptr;
}
const char* kiln_host_output_name(const kiln_model_desc* d, size_t i) {
  return i < d->num_outputs ? d->io_names[d->num_inputs + i] : nullptr;
}
int kiln_host_output_dtype(const kiln_model_desc* d, size_t i) {
  return i < d->num_outputs ? static_cast<int>(d->io_dtypes[d->num_inputs + i]) : 0;
}
int kiln_host_output_rank(const kiln_model_desc* d, size_t i) {
  return i < d->num_outputs ? rank_of(d, d->num_inputs + i) : -1;
}
const int64_t* kiln_host_output_dims(const kiln_model_desc* d, size_t i) {
  return i < d->num_outputs ? dims_of(d, d->num_inputs + i) : nullptr;
}
size_t kiln_host_arena_size(const kiln_model_desc* d) { return d->arena_bytes; }

int kiln_host_set_profiling(const kiln_model_desc* d, kiln_host_context* ctx, int on) {
  if (!ctx) return 1;
  if (on && !ctx->times) {
    ctx->times = new (std::nothrow) kiln::rt::NodeTime[d->num_nodes + 1]();
    if (!ctx->times) return fail(ctx, "out of memory allocating the profile");
  }
  ctx->profiling = on != 0;
  ctx->profiled = false;
  return 0;
}

size_t kiln_host_num_nodes(const kiln_model_desc* d) { return d->num_nodes; }
const char* kiln_host_node_name(const kiln_model_desc* d, size_t i) { return i < d->num_nodes ? d->node_names[i] : nullptr; }
const char* kiln_host_node_op(const kiln_model_desc* d, size_t i) { return i < d->num_nodes ? d->node_ops[i] : nullptr; }

int kiln_host_node_time(const kiln_model_desc* d, const kiln_host_context* ctx, size_t i, uint64_t* start_ns,
                        uint64_t* duration_ns) {
  if (!ctx || !ctx->profiled || i >= d->num_nodes || !start_ns || !duration_ns) return 1;
  *start_ns = ctx->times[i].start_ns;
  *duration_ns = ctx->times[i].duration_ns;
  return 0;
}

}  // extern "C"

namespace {

// exe_main's table takes plain functions: the one model of the executable.
const kiln_model_desc* g_model = nullptr;

void* exe_create(int threads) {
  kiln_host_options options = {};
  options.threads = threads;
  return kiln_host_create(g_model, &options);
}
int exe_run(void* ctx, const void* const* in, void* const* out) {
  return kiln_host_run(g_model, static_cast<kiln_host_context*>(ctx), in, out);
}
const char* exe_error(void* ctx) {
  const char* e = kiln_host_error(g_model, static_cast<kiln_host_context*>(ctx));
  return e ? e : "unknown error";
}
void exe_destroy(void* ctx) { kiln_host_destroy(g_model, static_cast<kiln_host_context*>(ctx)); }
int exe_set_profiling(void* ctx, int on) {
  return kiln_host_set_profiling(g_model, static_cast<kiln_host_context*>(ctx), on);
}
const char* exe_node_name(int i) { return kiln_host_node_name(g_model, static_cast<size_t>(i)); }
const char* exe_node_op(int i) { return kiln_host_node_op(g_model, static_cast<size_t>(i)); }
int exe_node_time(void* ctx, int i, uint64_t* start_ns, uint64_t* duration_ns) {
  return kiln_host_node_time(g_model, static_cast<kiln_host_context*>(ctx), static_cast<size_t>(i), start_ns,
                             duration_ns);
}

}  // namespace

extern "C" int kiln_host_exe_main(const kiln_model_desc* d, int argc, char** argv) {
  g_model = d;
  std::vector<kiln::rt::TensorInfo> inputs, outputs;
  for (size_t i = 0; i < d->num_inputs + d->num_outputs; ++i)
    (i < d->num_inputs ? inputs : outputs)
        .push_back({d->io_names[i], static_cast<kiln_dtype>(d->io_dtypes[i]), rank_of(d, i), dims_of(d, i)});
  kiln::rt::ModelApi api{d->name, static_cast<int>(inputs.size()), inputs.data(), static_cast<int>(outputs.size()),
                         outputs.data(), exe_create, exe_run, exe_error, exe_destroy};
  api.set_profiling = exe_set_profiling;
  api.n_nodes = static_cast<int>(d->num_nodes);
  api.node_name = exe_node_name;
  api.node_op = exe_node_op;
  api.node_time = exe_node_time;
  api.build_info = d->build_info;
  return kiln::rt::exe_main(argc, argv, api);
}
