// The CUDA backend's plan for small graphs, read from the generated model.cu: device nodes,
// host nodes and the copies between them, the CUDA Graph, final copies, fp16 GEMM operands.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>

#include "codegen/cuda/cuda_backend.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace {

using kiln::codegen::cuda::CudaOptions;

std::unique_ptr<kiln::ir::Graph> graph(const std::string& text) {
  auto g = kiln::ir::parse_graph(text);
  kiln::passes::infer_shapes(*g);
  return g;
}

std::string model_cu(const kiln::ir::Graph& g, CudaOptions cuda = {}) {
  kiln::codegen::cpp::CppOptions options;
  options.name = "t";
  return kiln::codegen::cuda::generate_cuda(g, options, cuda).files.at("model.cu");
}

// The text of run_graph, where the nodes' code is.
std::string run_graph(const std::string& src) {
  const size_t at = src.find("int run_graph(t_context* ctx, const void* const* in, void* const* out) {");
  REQUIRE(at != std::string::npos);
  return src.substr(at, src.find("\n}\n", at) - at);
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

const char* const kMixed = R"(graph t(%x: f32[2,2]) -> (%y) {
  %w = constant f32[2,2] [1, 2, 3, 4]
  %axis = constant i64[] [1]
  %a = MatMul(%x, %w) @mm
  %b = CumSum(%a, %axis) @cs
  %y = Relu(%b) @relu
})";

}  // namespace

TEST_CASE("a node without device code runs on the host, its input copied down and its output up") {
  auto g = graph(kMixed);
  const kiln::codegen::cuda::Placement p = kiln::codegen::cuda::placement(*g, {});
  CHECK(p.device == 2);
  CHECK(p.host == 1);
  const std::string body = run_graph(model_cu(*g));
  const size_t mm = body.find("node 'mm'"), cs = body.find("node 'cs'"), relu = body.find("node 'relu'");
  REQUIRE(mm < cs);
  REQUIRE(cs < relu);
  // MatMul on the GPU; its result copied to the host (and the stream synchronized) before CumSum.
  CHECK(body.find("cublasSgemmStridedBatched", mm) < cs);
  const size_t down = body.find("cudaMemcpyDeviceToHost, S), \"copying 'a' to the host\"", cs);
  CHECK(down < body.find("kiln::rt::scan<", cs));
  CHECK(body.find("cudaStreamSynchronize(S), \"copying to the host\"", down) < relu);
  // CumSum's result goes back up before Relu's kernel; nothing else crosses.
  CHECK(body.find("cudaMemcpyHostToDevice, S), \"copying 'b' to the device\"", relu) != std::string::npos);
  CHECK(count(body, "cudaMemcpyDeviceToHost") == 1);
  CHECK(count(body, "cudaMemcpyHostToDevice") == 1);
  // A host node in the run: no CUDA Graph.
  CHECK(model_cu(*g).find("constexpr bool kGraphable = false;") != std::string::npos);
}

TEST_CASE("a model wholly on the GPU is captured as a CUDA Graph and copies nothing in between") {
  auto g = graph(R"(graph t(%x: f32[2,2]) -> (%y) {
  %w = constant f32[2,2] [1, 2, 3, 4]
  %a = MatMul(%x, %w) @mm
  %y = Relu(%a) @relu
})");
  const std::string src = model_cu(*g);
  CHECK(src.find("constexpr bool kGraphable = true;") != std::string::npos);
  const std::string body = run_graph(src);
  CHECK(count(body, "cudaMemcpyDeviceToHost") == 0);
  CHECK(count(body, "cudaMemcpyHostToDevice") == 0);
  // Relu writes the graph output on the device, DO[0].
  CHECK(body.find("static_cast<float*>(DO[0])", body.find("node 'relu'")) != std::string::npos);
  // The device passes instantiate what the run launches.
  CHECK(src.find("const void* const kKernels[]") < src.find("#if !defined(__CUDA_ARCH__)"));
}

TEST_CASE("an output that is a graph input is copied on the device") {
  auto g = graph(R"(graph t(%x: f32[3]) -> (%x, %y) {
  %y = Neg(%x) @neg
})");
  const std::string body = run_graph(model_cu(*g));
  CHECK(body.find("cudaMemcpyAsync(DO[0], DI[0], 12, cudaMemcpyDeviceToDevice, S)") != std::string::npos);
}

TEST_CASE("fp16: constant GEMM weights stored as halves, activations narrowed, fp32 accumulation") {
  auto g = graph(R"(graph t(%x: f32[2,2]) -> (%y) {
  %w = constant f32[2,2] [1, 2, 3, 4]
  %y = MatMul(%x, %w) @mm
})");
  CudaOptions cuda;
  cuda.precision = kiln::passes::Precision::FP16;
  const std::string body = run_graph(model_cu(*g, cuda));
  CHECK(body.find("kiln_cuda::narrow<__half>") != std::string::npos);
  CHECK(body.find("cublasGemmStridedBatchedEx") != std::string::npos);
  CHECK(count(body, "CUDA_R_16F") == 2);
  CHECK(body.find("CUBLAS_COMPUTE_32F") != std::string::npos);
}

TEST_CASE("symbolic dims keep nodes on the host") {
  auto g = graph(R"(graph t(%x: f32[N,4]) -> (%y) {
  %y = Relu(%x) @relu
})");
  g->dim_ranges()["N"] = {1, 8, 8};
  const kiln::codegen::cuda::Placement p = kiln::codegen::cuda::placement(*g, {});
  CHECK(p.device == 0);
  CHECK(p.host == 1);
  REQUIRE(p.lines.size() == 1);
  CHECK(p.lines[0] == "Relu: 1 on the host (symbolic shapes)");
}
