#include "codegen/cuda/cuda_backend.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp/control_flow.h"
#include "codegen/cpp/emit_context.h"
#include "codegen/cpp/emitter.h"
#include "codegen/cpp/graph_plan.h"
#include "codegen/cpp/weight_blob.h"
#include "codegen/cuda/cuda_emitter.h"
#include "ir/error.h"

namespace kiln::codegen::cuda {

namespace fs = std::filesystem;

const std::vector<std::string>& cpu_only_passes() {
  // The channel-blocked and channels-last layouts are for the CPU kernels, and so are the
  // depthwise fusions and the NHWC global pool, which only run in those layouts.
  static const std::vector<std::string> p = {"layout_nchwc", "layout_nhwc", "fuse_nhwc_global_pool",
                                             "fuse_expand_depthwise"};
  return p;
}

namespace {

// Why node `n` runs on the host, or "" when it runs on the GPU.
std::string host_reason(const ir::Node& n, passes::Precision precision) {
  if (cpp::is_control_flow(n)) return "control flow runs on the host";
  const CudaEmitter* e = find_cuda_emitter(n.op());
  if (!e) return "no CUDA code";
  if (!all_static(n)) return "symbolic shapes";
  try {
    if (e->unsupported) return e->unsupported(n, precision);
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

// Where a value's bytes are valid while run_graph runs: on the host (the C++ code's pointers)
// and on the device (the mirror). Keyed by location: views and in-place results share it.
struct Residency {
  bool host = false, device = false;
};
using Key = std::tuple<int, size_t, size_t>;

class CudaLowering final : public cpp::DeviceLowering {
 public:
  CudaLowering(const ir::Graph& graph, const CudaOptions& options, std::string name)
      : options_(options), name_(std::move(name)), model_(graph) {}

  bool on_device(const ir::Node& n) const override {
    auto it = decided_.find(&n);
    if (it != decided_.end()) return it->second;
    const bool d = host_reason(n, options_.precision).empty();
    decided_[&n] = d;
    return d;
  }
  size_t scratch_bytes(const ir::Node& n) const override {
    const CudaEmitter* e = find_cuda_emitter(n.op());
    return e && e->scratch_bytes ? e->scratch_bytes(n, options_.precision) : 0;
  }
  bool reads_weight(const ir::Node& n, size_t i) const override {
    const CudaEmitter* e = find_cuda_emitter(n.op());
    return !e || !e->reads_weight || e->reads_weight(n, i, options_.precision);
  }

  void begin(cpp::EmitContext&, const cpp::Plan& plan, cpp::WeightBlob& weights) override {
    plan_ = &plan;
    weights_ = &weights;
    graph_ = nullptr;
    for (const auto& [v, loc] : plan.locations)
      if (loc.kind == cpp::Location::Input) state_[key(v)] = {false, true};  // the inputs start on the device
  }

  void emit(cpp::EmitContext& ctx, const ir::Node& n) override {
    graph_ = n.graph();
    ++device_nodes_;
    for (const ir::Value* v : n.inputs())
      if (v) to_device(ctx, v);
    NodeCode code(ctx, *plan_, *weights_, options_.precision, kernels_, kernel_names_, messages_, launched_);
    find_cuda_emitter(n.op())->emit(code, n);
    ctx.line("if (prof) KILN_CUDA(cudaStreamSynchronize(S), \"synchronizing for the profile\");");
    for (const ir::Value* v : n.outputs())
      if (v) state_[key(v)] = {false, true};
  }

  void before_host(cpp::EmitContext& ctx, const ir::Node& n) override {
    graph_ = n.graph();
    ++host_nodes_;
    bool copied = false;
    for (const ir::Value* v : n.inputs())
      if (v) copied = to_host(ctx, v) || copied;
    if (copied) ctx.line("KILN_CUDA(cudaStreamSynchronize(S), \"copying to the host\");");
  }

  void after_host(cpp::EmitContext&, const ir::Node& n) override {
    for (const ir::Value* v : n.outputs())
      if (v && plan_->locations.count(v)) state_[key(v)] = {true, false};
  }

  void end(cpp::EmitContext& ctx, const std::vector<std::pair<size_t, const ir::Value*>>& final_copies) override {
    // Outputs a host node wrote go to the device outputs; then the final copies.
    std::vector<const ir::Value*> outputs;
    for (const auto& [v, loc] : plan_->locations)
      if (loc.kind == cpp::Location::Output && v->producer()) outputs.push_back(v);
    std::sort(outputs.begin(), outputs.end(), [&](const ir::Value* a, const ir::Value* b) {
      return plan_->locations.at(a).index < plan_->locations.at(b).index;
    });
    ctx.line("{  // the outputs, on the device");
    for (const ir::Value* v : outputs) to_device(ctx, v);
    for (const auto& [j, v] : final_copies) {
      to_device(ctx, v);
      ctx.line(fmt::format("KILN_CUDA(cudaMemcpyAsync(DO[{}], {}, {}, cudaMemcpyDeviceToDevice, S), \"copying output {}\");", j,
                           device_ptr(v), ctx.run_bytes(v), j));
    }
    ctx.line("}");
  }

  cpp::DeviceCode code() const override;

  size_t device_nodes() const { return device_nodes_; }
  size_t host_nodes() const { return host_nodes_; }

 private:
  Key key(const ir::Value* v) const {
    const cpp::Location& l = plan_->locations.at(v);
    return {static_cast<int>(l.kind), l.index, l.offset};
  }
  bool is_weight(const ir::Value* v) const {
    const cpp::Location::Kind k = plan_->locations.at(v).kind;
    return k == cpp::Location::Weight || k == cpp::Location::Widened;
  }
  std::string device_ptr(const ir::Value* v) const {
    const cpp::Location& l = plan_->locations.at(v);
    switch (l.kind) {
      case cpp::Location::Input: return fmt::format("DI[{}]", l.index);
      case cpp::Location::Output: return fmt::format("DO[{}]", l.index);
      case cpp::Location::Weight: return fmt::format("(DW + {})", l.offset);
      case cpp::Location::Arena: return fmt::format("(DA + {})", l.offset);
      case cpp::Location::Widened: break;
    }
    fail("internal: '{}' is a widened weight", v->name());
  }
  // The host's copy, writable (the host inputs and outputs are the context's staging buffers).
  std::string host_ptr(const ir::Value* v) const {
    const cpp::Location& l = plan_->locations.at(v);
    switch (l.kind) {
      case cpp::Location::Input: return fmt::format("const_cast<void*>(in[{}])", l.index);
      case cpp::Location::Output: return fmt::format("out[{}]", l.index);
      case cpp::Location::Arena: return fmt::format("(A + {})", l.offset);
      default: break;
    }
    fail("internal: '{}' has no host copy to write", v->name());
  }
  void to_device(cpp::EmitContext& ctx, const ir::Value* v) {
    if (!plan_->locations.count(v) || is_weight(v)) return;
    Residency& r = state_[key(v)];
    if (r.device) return;
    if (!r.host) fail("internal: '{}' is read before it is written", v->name());
    ctx.line(fmt::format("KILN_CUDA(cudaMemcpyAsync({}, {}, {}, cudaMemcpyHostToDevice, S), \"copying '{}' to the device\");",
                         device_ptr(v), host_ptr(v), ctx.run_bytes(v), cpp::comment_text(v->name())));
    r.device = true;
  }
  bool to_host(cpp::EmitContext& ctx, const ir::Value* v) {
    if (!plan_->locations.count(v) || is_weight(v)) return false;
    Residency& r = state_[key(v)];
    if (r.host) return false;
    if (!r.device) fail("internal: '{}' is read before it is written", v->name());
    ctx.line(fmt::format("KILN_CUDA(cudaMemcpyAsync({}, {}, {}, cudaMemcpyDeviceToHost, S), \"copying '{}' to the host\");",
                         host_ptr(v), device_ptr(v), ctx.run_bytes(v), cpp::comment_text(v->name())));
    r.host = true;
    return true;
  }

  CudaOptions options_;
  std::string name_;
  const ir::Graph& model_;
  mutable std::map<const ir::Node*, bool> decided_;
  const cpp::Plan* plan_ = nullptr;
  cpp::WeightBlob* weights_ = nullptr;
  const ir::Graph* graph_ = nullptr;
  std::map<Key, Residency> state_;
  std::string kernels_;
  std::map<std::string, std::string> kernel_names_;
  std::map<int, std::string> messages_;
  std::set<std::string> launched_;
  size_t device_nodes_ = 0, host_nodes_ = 0;
};

cpp::DeviceCode CudaLowering::code() const {
  cpp::DeviceCode c;
  const std::string& N = name_;
  c.file_name = "model.cu";
  // The device passes see only the kernels: the fixed ones, the generated ones, and a table of
  // every kernel launched, which makes them instantiate the templates the host's launches use.
  std::string refs;
  for (const std::string& k : launched_) refs += fmt::format("    reinterpret_cast<const void*>(&{}),\n", k);
  c.device_prelude = fmt::format(R"cpp(// The kernels (compiled for the host and for each GPU architecture).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include <cuda_runtime.h>

#include "kiln/rt/cuda_kernels.cuh"
#include "kiln/rt/erf.h"         // the registry's scalar expressions call these (KILN_HD)
#include "kiln/rt/scalar_ops.h"

namespace kiln_dev {{
{kernels}
// Every kernel the run launches.
[[maybe_unused]] const void* const kKernels[] = {{
{refs}    nullptr}};
}}  // namespace kiln_dev
)cpp",
                                 fmt::arg("kernels", kernels_),
                                 fmt::arg("refs", refs));
  c.includes = "#include <cublas_v2.h>\n";
  c.context_members = R"cpp(  // The GPU side (codegen/cuda): a mirror of the arena, the weights uploaded once, the inputs'
  // and outputs' device buffers and the host staging buffers of the nodes that run on the host.
  struct Device {
    bool ready = false;
    cudaStream_t stream = nullptr;
    cudaEvent_t caller_done = nullptr;  // NAME_run_device: orders the run after the caller's stream
    cublasHandle_t cublas = nullptr;
    void* cublas_workspace = nullptr;
    unsigned char* arena = nullptr;
    unsigned char* weights = nullptr;
    int* flag = nullptr;       // a device check's error code (0: none)
    int* host_flag = nullptr;  // pinned copy, read after each run
    void* in[kiln_max_io] = {};
    void* out[kiln_max_io] = {};
    void* host_in[kiln_max_io] = {};
    void* host_out[kiln_max_io] = {};
    cudaGraphExec_t graph = nullptr;  // the whole run, captured on the first run
  } dev;
)cpp";
  std::string messages;
  for (const auto& [code, text] : messages_) messages += fmt::format("    case {}: return {};\n", code, cpp::string_literal(text));
  const bool graphable = host_nodes_ == 0 && model_.dim_ranges().empty();
  std::vector<size_t> in_elem, out_elem;
  for (const ir::Value* v : model_.inputs()) in_elem.push_back(ir::dtype_size(v->dtype()));
  for (const ir::Value* v : model_.outputs()) out_elem.push_back(ir::dtype_size(v->dtype()));
  in_elem.push_back(0);
  out_elem.push_back(0);
  c.functions = fmt::format(R"cpp(// Checked CUDA and cuBLAS calls in run_graph: a failure returns its message through fail().
#define KILN_CUDA(call, what)                                                                      \
  do {{                                                                                             \
    const cudaError_t kiln_e = (call);                                                             \
    if (kiln_e != cudaSuccess) return fail(ctx, (std::string(what) + ": " + cudaGetErrorString(kiln_e)).c_str()); \
  }} while (0)
#define KILN_CUDA_LAUNCHED(what) KILN_CUDA(cudaPeekAtLastError(), what)
#define KILN_CUBLAS(call, what)                                                                    \
  do {{                                                                                             \
    const cublasStatus_t kiln_s = (call);                                                          \
    if (kiln_s != CUBLAS_STATUS_SUCCESS)                                                           \
      return fail(ctx, (std::string(what) + ": " + cublasGetStatusString(kiln_s)).c_str());       \
  }} while (0)

// The message of a device check's error code.
const char* device_error(int code) {{
  switch (code) {{
{messages}    default: return "a device check failed";
  }}
}}

// Bytes of input i and output j in this run.
const size_t kInElementBytes[] = {{{in_elem}}};
const size_t kOutElementBytes[] = {{{out_elem}}};
size_t input_bytes(const {N}_context* ctx, size_t i) {{
  size_t n = 1;
  for (size_t a = kInAt[i]; a < kInAt[i + 1]; ++a) n *= static_cast<size_t>(ctx->in_shape[a]);
  return n * kInElementBytes[i];
}}
size_t output_bytes(const int64_t* shape, size_t j) {{
  size_t n = 1;
  for (size_t a = kOutAt[j]; a < kOutAt[j + 1]; ++a) n *= static_cast<size_t>(shape[a]);
  return n * kOutElementBytes[j];
}}

int run_graph({N}_context* ctx, const void* const* in, void* const* out);

// True when every node runs on the GPU and the shapes are fixed: the run is captured as one
// CUDA Graph on first use and replayed.
constexpr bool kGraphable = {graphable};

// One run on the context's stream: `inputs` and `outputs` are host pointers, or device
// pointers when `device` (then ordered after the caller's `stream` and before its later work).
int cuda_run({N}_context* ctx, const void* const* inputs, void* const* outputs, bool device, cudaStream_t stream) {{
  auto& d = ctx->dev;
  if (device && stream) {{  // the event is the context's, made once at creation
    KILN_CUDA(cudaEventRecord(d.caller_done, stream), "ordering after the caller's stream");
    KILN_CUDA(cudaStreamWaitEvent(d.stream, d.caller_done, 0), "ordering after the caller's stream");
  }}
  const cudaMemcpyKind in_kind = device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  const cudaMemcpyKind out_kind = device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  for (size_t i = 0; i < {N}_num_inputs(); ++i)
    KILN_CUDA(cudaMemcpyAsync(d.in[i], inputs[i], input_bytes(ctx, i), in_kind, d.stream), "copying the inputs to the GPU");
  int rc = 0;
  if (kGraphable && !ctx->profiling) {{
    if (!d.graph) {{
      cudaGraph_t graph = nullptr;
      KILN_CUDA(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal), "capturing the CUDA Graph");
      rc = run_graph(ctx, d.host_in, d.host_out);
      const cudaError_t ended = cudaStreamEndCapture(d.stream, &graph);
      if (rc != 0) {{
        if (graph) cudaGraphDestroy(graph);
        return rc;
      }}
      KILN_CUDA(ended, "capturing the CUDA Graph");
      const cudaError_t made = cudaGraphInstantiate(&d.graph, graph, 0);
      cudaGraphDestroy(graph);
      KILN_CUDA(made, "instantiating the CUDA Graph");
    }}
    KILN_CUDA(cudaGraphLaunch(d.graph, d.stream), "launching the CUDA Graph");
  }} else {{
    rc = run_graph(ctx, d.host_in, d.host_out);
    if (rc != 0) {{
      cudaStreamSynchronize(d.stream);
      return rc;
    }}
  }}
  int64_t shapes[kOutDims];
  output_shapes(ctx->dims, shapes);
  for (size_t j = 0; j < {N}_num_outputs(); ++j)
    KILN_CUDA(cudaMemcpyAsync(outputs[j], d.out[j], output_bytes(shapes, j), out_kind, d.stream), "copying the outputs from the GPU");
  KILN_CUDA(cudaMemcpyAsync(d.host_flag, d.flag, sizeof(int), cudaMemcpyDeviceToHost, d.stream), "reading the device checks");
  KILN_CUDA(cudaStreamSynchronize(d.stream), "running the model on the GPU");
  if (*d.host_flag != 0) {{
    const int code = *d.host_flag;
    KILN_CUDA(cudaMemsetAsync(d.flag, 0, sizeof(int), d.stream), "clearing the device checks");
    return fail(ctx, device_error(code));
  }}
  return 0;
}}

)cpp",
                            fmt::arg("messages", messages), fmt::arg("N", N),
                            fmt::arg("graphable", graphable ? "true" : "false"),
                            fmt::arg("in_elem", fmt::join(in_elem, ", ")), fmt::arg("out_elem", fmt::join(out_elem, ", ")));
  c.run_prologue = R"cpp(  unsigned char* const DA = ctx->dev.arena;        // the device mirror of the arena
  const unsigned char* const DW = ctx->dev.weights;  // the weights on the device
  void* const* const DI = ctx->dev.in;               // the inputs on the device
  void* const* const DO = ctx->dev.out;              // the outputs on the device
  int* const DF = ctx->dev.flag;                     // device checks' error code
  const cudaStream_t S = ctx->dev.stream;
  const cublasHandle_t H = ctx->dev.cublas;
  (void)DA;
  (void)DW;
  (void)DI;
  (void)DO;
  (void)DF;
  (void)H;
)cpp";
  c.create = fmt::format(R"cpp(  if (ctx->error.empty()) {{
    // The GPU: the current device of the calling thread.
    auto& d = ctx->dev;
    auto failed = [&](cudaError_t e, const char* what) {{
      if (e == cudaSuccess) return false;
      ctx->error = std::string(what) + ": " + cudaGetErrorString(e);
      return true;
    }};
    int devices = 0;
    const cudaError_t counted = cudaGetDeviceCount(&devices);
    if (counted != cudaSuccess || devices == 0) {{
      ctx->error = std::string("no CUDA device: ") + (counted != cudaSuccess ? cudaGetErrorString(counted) : "none found");
      return ctx;
    }}
    if (failed(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "creating the CUDA stream")) return ctx;
    if (failed(cudaEventCreateWithFlags(&d.caller_done, cudaEventDisableTiming), "creating a CUDA event")) return ctx;
    if (cublasCreate(&d.cublas) != CUBLAS_STATUS_SUCCESS) {{
      ctx->error = "cuBLAS could not be initialized";
      return ctx;
    }}
    // A workspace of its own, so that cuBLAS allocates nothing while a run is captured.
    constexpr size_t kCublasWorkspace = size_t(32) << 20;
    if (failed(cudaMalloc(&d.cublas_workspace, kCublasWorkspace), "allocating cuBLAS's workspace")) return ctx;
    cublasSetStream(d.cublas, d.stream);
    cublasSetWorkspace(d.cublas, d.cublas_workspace, kCublasWorkspace);
    if (failed(cudaMalloc(&d.arena, kArenaBytes + 256), "allocating the GPU arena")) return ctx;
    if (failed(cudaMalloc(&d.weights, kWeightsBytes + 256), "allocating the GPU weights")) return ctx;
    if (failed(cudaMemcpy(d.weights, ctx->weights, kWeightsBytes, cudaMemcpyHostToDevice), "uploading the weights")) return ctx;
    if (failed(cudaMalloc(&d.flag, sizeof(int)), "allocating the device checks")) return ctx;
    if (failed(cudaMemset(d.flag, 0, sizeof(int)), "clearing the device checks")) return ctx;
    if (failed(cudaMallocHost(&d.host_flag, sizeof(int)), "allocating the device checks")) return ctx;
    if (bind_shapes(ctx) != 0) return ctx;  // the inputs at their maxima: the buffers' sizes
    const int64_t* const capacity = ctx->out_capacity;
    for (size_t i = 0; i < {N}_num_inputs(); ++i) {{
      const size_t bytes = input_bytes(ctx, i) + 64;
      if (failed(cudaMalloc(&d.in[i], bytes), "allocating the GPU inputs")) return ctx;
      d.host_in[i] = std::malloc(bytes);
      if (!d.host_in[i]) {{
        ctx->error = "out of memory allocating the host inputs";
        return ctx;
      }}
    }}
    for (size_t j = 0; j < {N}_num_outputs(); ++j) {{
      const size_t bytes = output_bytes(capacity, j) + 64;
      if (failed(cudaMalloc(&d.out[j], bytes), "allocating the GPU outputs")) return ctx;
      d.host_out[j] = std::malloc(bytes);
      if (!d.host_out[j]) {{
        ctx->error = "out of memory allocating the host outputs";
        return ctx;
      }}
    }}
    d.ready = true;
  }}
)cpp",
                         fmt::arg("N", N));
  c.check = " || !ctx->dev.ready";
  c.run_call = "cuda_run(ctx, inputs, outputs, false, nullptr)";
  c.destroy = fmt::format(R"cpp(  {{
    auto& d = ctx->dev;
    if (d.graph) cudaGraphExecDestroy(d.graph);
    for (size_t i = 0; i < kiln_max_io; ++i) {{
      if (d.in[i]) cudaFree(d.in[i]);
      if (d.out[i]) cudaFree(d.out[i]);
      std::free(d.host_in[i]);
      std::free(d.host_out[i]);
    }}
    if (d.flag) cudaFree(d.flag);
    if (d.host_flag) cudaFreeHost(d.host_flag);
    if (d.arena) cudaFree(d.arena);
    if (d.weights) cudaFree(d.weights);
    if (d.cublas) cublasDestroy(d.cublas);
    if (d.cublas_workspace) cudaFree(d.cublas_workspace);
    if (d.caller_done) cudaEventDestroy(d.caller_done);
    if (d.stream) cudaStreamDestroy(d.stream);
  }}
)cpp");
  c.api = fmt::format(R"cpp(
int {N}_run_device({N}_context* ctx, const void* const* inputs, void* const* outputs, void* stream) {{
  if (!ctx) return 1;
  if (!ctx->arena || !ctx->weights || !ctx->dev.ready) return 1;  // creation failed: see {N}_error
  if (!inputs || !outputs) return fail(ctx, "inputs and outputs must not be null");
  ctx->error.clear();
  if (bind_shapes(ctx) != 0) return 1;
  try {{
    const int rc = cuda_run(ctx, inputs, outputs, true, static_cast<cudaStream_t>(stream));
    ctx->profiled = rc == 0 && ctx->profiling;
    return rc;
  }} catch (...) {{
    return fail(ctx, "unexpected failure while running the model");
  }}
}}
)cpp",
                      fmt::arg("N", N));
  return c;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

Placement placement(const ir::Graph& graph, const CudaOptions& cuda) {
  Placement p;
  std::map<std::string, std::pair<size_t, size_t>> by_op;
  std::map<std::string, std::string> reasons;
  for (const auto& n : graph.nodes()) {
    const cpp::Emitter* e = cpp::emitters().find(n->op());
    if (e && e->alias_input >= 0) continue;  // views: no code (or a copy)
    const std::string why = host_reason(*n, cuda.precision);
    auto& [d, h] = by_op[n->op()];
    if (why.empty()) {
      ++d;
      ++p.device;
    } else {
      ++h;
      ++p.host;
      reasons[n->op()] = why;
    }
  }
  for (const auto& [op, c] : by_op) {
    std::string line = op + ":";
    if (c.first) line += fmt::format(" {} on the GPU", c.first);
    if (c.second) line += fmt::format("{} {} on the host ({})", c.first ? "," : "", c.second, reasons[op]);
    p.lines.push_back(line);
  }
  return p;
}

cpp::GeneratedModel generate_cuda(const ir::Graph& graph, cpp::CppOptions options, const CudaOptions& cuda) {
  CudaLowering lowering(graph, cuda, options.name);
  options.device = &lowering;
  options.precision = passes::Precision::FP32;  // the host's weights stay fp32; the GPU's GEMMs narrow theirs
  if (!options.test_hooks.perturb_node.empty() || !options.test_hooks.delay_node.empty())
    fail("the KILN_TEST_* hooks need a CPU target");
  cpp::GeneratedModel m = cpp::generate_cpp(graph, options);
  const std::string& N = options.name;
  // The context's input and output arrays are sized by the model.
  const size_t io = std::max<size_t>({graph.inputs().size(), graph.outputs().size(), 1});
  std::string& src = m.files.at("model.cu");
  src = replace_all(src, "kiln_max_io", std::to_string(io));
  // The C API's CUDA part.
  std::string& header = m.files.at(N + ".h");
  const std::string anchor = fmt::format("size_t {}_arena_size(void);\n", N);
  const size_t at = header.find(anchor);
  if (at == std::string::npos) fail("internal: no place for the CUDA API in {}.h", N);
  header.insert(at + anchor.size(), fmt::format(R"(
/* CUDA target: the model runs on the GPU that is current when {N}_create is called, which
 * fails ({N}_error says why) without one. {N}_run takes host pointers; {N}_run_device takes
 * device pointers, orders its work after the work already queued on `stream` (a cudaStream_t;
 * NULL: none) and returns once the outputs are written. Both return 0 on success and, on a
 * CUDA error, 1 with the message in {N}_error. */
int {N}_run_device({N}_context* ctx, const void* const* inputs, void* const* outputs, void* stream);
)",
                                                fmt::arg("N", N)));
  std::string& map = m.files.at(N + ".map");
  const std::string global = "  global:\n";
  map.insert(map.find(global) + global.size(), fmt::format("    {}_run_device;\n", N));
  // The source tree builds with CMake's CUDA language and the toolkit's cuBLAS.
  std::string& cmake = m.files.at("CMakeLists.txt");
  cmake = replace_all(cmake, fmt::format("project({} LANGUAGES CXX)", N),
                      fmt::format("project({} LANGUAGES CXX CUDA)\nif(NOT CMAKE_CUDA_ARCHITECTURES)\n  set(CMAKE_CUDA_ARCHITECTURES 80 90)\n"
                                  "endif()\nfind_package(CUDAToolkit REQUIRED)\nset(CMAKE_CUDA_STANDARD 17)",
                                  N));
  cmake = replace_all(cmake, "OBJECT model.cpp", "OBJECT model.cu");
  cmake = replace_all(cmake, "set_source_files_properties(model.cpp PROPERTIES COMPILE_OPTIONS $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-ffp-contract=off>)",
                      "set_source_files_properties(model.cu PROPERTIES COMPILE_OPTIONS \"--expt-relaxed-constexpr\")");
  cmake = replace_all(cmake, "target_link_libraries({N} PUBLIC Threads::Threads)",
                      "target_link_libraries({N} PUBLIC Threads::Threads CUDA::cublas CUDA::cudart)");
  cmake = replace_all(cmake, fmt::format("target_link_libraries({} PUBLIC Threads::Threads)", N),
                      fmt::format("target_link_libraries({} PUBLIC Threads::Threads CUDA::cublas CUDA::cudart)", N));
  cmake = replace_all(cmake, fmt::format("target_link_libraries({}_shared PUBLIC Threads::Threads)", N),
                      fmt::format("target_link_libraries({}_shared PUBLIC Threads::Threads CUDA::cublas CUDA::cudart)", N));
  cmake = replace_all(cmake, fmt::format("target_link_libraries({}_objects", N), fmt::format("target_link_libraries({}_objects", N));
  cmake += fmt::format("target_link_libraries({}_objects PUBLIC CUDA::cublas CUDA::cudart)\n", N);
  return m;
}

std::string cuda_home() {
  if (const char* h = std::getenv("KILN_CUDA_HOME"); h && *h) {
    if (!fs::exists(fs::path(h) / "bin" / "nvcc")) fail("$KILN_CUDA_HOME is {}, which has no bin/nvcc", h);
    return h;
  }
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const fs::path nvcc = fs::path(dir) / "nvcc";
      if (!dir.empty() && access(nvcc.c_str(), X_OK) == 0) {
        std::error_code ec;
        const fs::path real = fs::canonical(nvcc, ec);
        return (ec ? nvcc : real).parent_path().parent_path().string();
      }
    }
  }
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda";
  fail("--target cuda needs the CUDA toolkit (nvcc, cuBLAS): none on PATH or in /usr/local/cuda; set $KILN_CUDA_HOME");
}

std::vector<std::string> parse_cuda_archs(const std::string& text) {
  std::vector<std::string> archs;
  std::istringstream in(text);
  for (std::string a; std::getline(in, a, ',');) {
    if (a.rfind("sm_", 0) == 0) a = a.substr(3);
    bool digits = !a.empty() && a.size() <= 3;
    for (char ch : a) digits = digits && std::isdigit(static_cast<unsigned char>(ch));
    if (!digits || std::stoi(a) < 50)
      fail("--cuda-arch {}: expected compute capabilities such as 80,90 (sm_80, sm_90), 50 or above", text);
    archs.push_back(a);
  }
  if (archs.empty()) fail("--cuda-arch: no architecture given");
  return archs;
}

}  // namespace kiln::codegen::cuda
