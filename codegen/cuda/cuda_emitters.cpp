// The CUDA backend's per-op device code. GEMMs and convolutions go through cuBLAS (a
// convolution as one im2col kernel and a strided-batched GEMM per group; 1x1 stride-1
// convolutions read their input directly), their bias, residual and activation applied by
// one generated epilogue kernel; elementwise ops and kiln.Elementwise chains are generated
// kernels from the registry's scalar expressions; pools, softmax, normalizations and the
// data movement ops use the fixed kernels of kiln/rt/cuda_kernels.cuh.
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/emitters/fused.h"
#include "codegen/cpp/emitters/pool.h"
#include "codegen/cuda/cuda_emitter.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/attention.h"
#include "ir/ops/elementwise.h"
#include "ir/ops/fused.h"
#include "ir/ops/reduce.h"
#include "ir/ops/slice_pad.h"

namespace kiln::codegen::cuda {

namespace {

using cpp::cpp_compute_type;
using cpp::cpp_type;

// ---- shared checks and index arithmetic ----

// Types the device code stores: no 16-bit or narrower floats, no strings.
bool device_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::F32: case ir::DType::F64: case ir::DType::I8: case ir::DType::U8: case ir::DType::I16:
    case ir::DType::U16: case ir::DType::I32: case ir::DType::U32: case ir::DType::I64: case ir::DType::U64:
    case ir::DType::Bool:
      return true;
    default:
      return false;
  }
}

std::string require_f32(const ir::Node& n) {
  for (const ir::Value* v : n.inputs())
    if (v && v->dtype() != ir::DType::F32) return "f32 only";
  for (const ir::Value* v : n.outputs())
    if (v && v->dtype() != ir::DType::F32) return "f32 only";
  return "";
}

std::vector<int64_t> dims_of(const ir::Value* v) { return v->shape().values(); }
int64_t numel(const ir::Value* v) { return v->shape().numel(); }

// The flat index of `in` (numpy-broadcast against `out`'s dims) as an expression of the output
// index `i`; "i" when the shapes are equal, "0" for one element.
std::string broadcast_index(const ir::Value* in, const std::vector<int64_t>& out) {
  std::vector<int64_t> d = dims_of(in);
  if (d == out) return "i";
  if (numel(in) == 1) return "0";
  const size_t R = out.size(), r = d.size();
  std::vector<std::string> terms;
  int64_t inner = 1, stride = 1;
  for (size_t k = R; k-- > 0;) {
    const int64_t extent = out[k];
    const bool present = k + r >= R && d[k + r - R] != 1;
    if (present && extent > 1) {
      std::string idx = inner == 1 ? "i" : fmt::format("(i / {})", inner);
      if (k > 0) idx = fmt::format("({} % {})", idx, extent);
      terms.push_back(stride == 1 ? idx : fmt::format("{} * {}", idx, stride));
    }
    if (k + r >= R) stride *= d[k + r - R];
    inner *= extent;
  }
  return terms.empty() ? "0" : fmt::format("({})", fmt::join(terms, " + "));
}

std::string str_i64(int64_t v) { return fmt::format("static_cast<int64_t>({})", v); }

// ---- elementwise ops: one generated kernel per distinct node code ----

std::string unsupported_elementwise(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  for (const ir::Value* v : n.inputs())
    if (v && !device_dtype(v->dtype())) return fmt::format("dtype {}", ir::dtype_name(v->dtype()));
  for (const ir::Value* v : n.outputs())
    if (!device_dtype(v->dtype())) return fmt::format("dtype {}", ir::dtype_name(v->dtype()));
  if (n.def().scalar_expr.empty()) return "no scalar expression";
  if (n.num_inputs() > 3 || n.num_outputs() != 1) return "arity";
  return "";
}

void emit_elementwise(NodeCode& code, const ir::Node& n) {
  const ir::Value* y = n.output(0);
  const std::vector<int64_t> out = dims_of(y);
  const ir::DType to = y->dtype();
  static const char* const unary[] = {"x"};
  static const char* const binary[] = {"a", "b"};
  static const char* const ternary[] = {"c", "a", "b"};
  const char* const* names = n.num_inputs() == 1 ? unary : n.num_inputs() == 2 ? binary : ternary;
  static const char* const types[] = {"T", "U", "V"};
  std::string params, reads;
  for (size_t k = 0; k < n.num_inputs(); ++k) {
    const ir::DType t = n.input(k)->dtype();
    params += fmt::format("const {}* __restrict__ in{}, ", cpp_type(t), k);
    const bool cond = n.num_inputs() == 3 && k == 0;
    if (cond) {
      reads += fmt::format("const bool c = in0[{}]; ", broadcast_index(n.input(k), out));
    } else {
      const char* type = n.num_inputs() == 3 ? "T" : types[k];
      reads += fmt::format("using {0} = {1}; const {0} {2} = static_cast<{0}>(in{3}[{4}]); ", types[k], cpp_compute_type(t),
                           names[k], k, broadcast_index(n.input(k), out));
      (void)type;
    }
  }
  if (n.num_inputs() == 3) reads += fmt::format("using T = {}; ", cpp_compute_type(to));
  const std::string kernel = code.kernel(fmt::format(
      "__global__ void @NAME@({}{}* __restrict__ y) {{  // {}\n  KILN_CUDA_FOR(i, {}) {{ {}{}y[i] = static_cast<{}>(static_cast<{}>({})); }}\n}}\n",
      params, cpp_type(to), n.op(), str_i64(numel(y)), reads, cpp::attr_constants(n.def(), n.attrs()), cpp_type(to),
      cpp_compute_type(to), n.def().scalar_expr));
  std::vector<std::string> args;
  for (size_t k = 0; k < n.num_inputs(); ++k) args.push_back(code.in(n, k));
  args.push_back(code.out(n, 0));
  code.launch(n, kernel, std::to_string(numel(y)), fmt::format("{}", fmt::join(args, ", ")));
}

// kiln.Elementwise: the chain's steps in one kernel (inputs the output's shape or one element).
std::string unsupported_chain(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (!device_dtype(n.output(0)->dtype())) return fmt::format("dtype {}", ir::dtype_name(n.output(0)->dtype()));
  return "";
}

void emit_chain(NodeCode& code, const ir::Node& n) {
  const ir::Value* y = n.output(0);
  const ir::DType t = y->dtype();
  const std::string s = cpp_type(t), c = cpp_compute_type(t);
  std::string params, reads;
  for (size_t k = 0; k < n.num_inputs(); ++k) {
    params += fmt::format("const {}* __restrict__ in{}, ", s, k);
    reads += fmt::format("const T x{0} = static_cast<T>(in{0}[{1}]); ", k, numel(n.input(k)) == 1 ? "0" : "i");
  }
  const cpp::ChainCode chain = cpp::elementwise_chain_code(n);
  std::string lambdas;
  for (const std::string& l : chain.lambdas) lambdas += "    " + l + "\n";
  const std::string kernel = code.kernel(fmt::format(
      "__global__ void @NAME@({}{}* __restrict__ y) {{  // kiln.Elementwise\n  using T = {};\n{}  KILN_CUDA_FOR(i, {}) {{ {}{}y[i] = static_cast<{}>(t{}); }}\n}}\n",
      params, s, c, lambdas, str_i64(numel(y)), reads, chain.body, s, chain.count - 1));
  std::vector<std::string> args;
  for (size_t j = 0; j < n.num_inputs(); ++j) args.push_back(code.in(n, j));
  args.push_back(code.out(n, 0));
  code.launch(n, kernel, std::to_string(numel(y)), fmt::format("{}", fmt::join(args, ", ")));
}

// ---- GEMMs through cuBLAS ----

const char* lowp_type(const NodeCode& code) { return code.precision() == passes::Precision::BF16 ? "__nv_bfloat16" : "__half"; }
const char* lowp_enum(const NodeCode& code) { return code.precision() == passes::Precision::BF16 ? "CUDA_R_16BF" : "CUDA_R_16F"; }

// A GEMM operand as the call reads it: a device pointer expression (fp32, or the low
// precision type when half).
struct Operand {
  std::string ptr;
  int64_t ld = 0, stride = 0;
  bool trans = false;
};

// Row-major Y[b] (M x N, row stride ldy, batch stride sy) = alpha * op(A[b]) op(B[b]) + beta * Y[b].
void gemm_call(NodeCode& code, const ir::Node& n, int64_t M, int64_t N, int64_t K, float alpha, const Operand& A,
               const Operand& B, float beta, const std::string& y, int64_t ldy, int64_t sy, int64_t batch, bool half) {
  code.ctx().line(fmt::format("{{ const float alpha = {}, beta = {};", cpp::float_literal(alpha, ir::DType::F32),
                              cpp::float_literal(beta, ir::DType::F32)));
  if (half)
    code.cublas(n,
                fmt::format("cublasGemmStridedBatchedEx(H, {}, {}, {}, {}, {}, &alpha, {}, {}, {}, {}, {}, {}, {}, {}, &beta, {}, "
                            "CUDA_R_32F, {}, {}, {}, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)",
                            B.trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N", A.trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N", N, M, K,
                            B.ptr, lowp_enum(code), B.ld, B.stride, A.ptr, lowp_enum(code), A.ld, A.stride, y, ldy, sy,
                            batch),
                "cublasGemmStridedBatchedEx");
  else
    code.cublas(n,
                fmt::format("cublasSgemmStridedBatched(H, {}, {}, {}, {}, {}, &alpha, {}, {}, {}, {}, {}, {}, &beta, {}, {}, {}, {})",
                            B.trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N", A.trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N", N, M, K,
                            B.ptr, B.ld, B.stride, A.ptr, A.ld, A.stride, y, ldy, sy, batch),
                "cublasSgemmStridedBatched");
  code.ctx().line("}");
}

// The epilogue of a fused node or a Gemm's C: y = act(y + bias + z), one generated kernel;
// nothing when there is nothing to apply. `bias` is a value broadcast against y (nullptr: none),
// scaled by `bias_scale`.
void emit_epilogue(NodeCode& code, const ir::Node& n, const ir::Value* bias, float bias_scale, const std::string& bias_ptr,
                   const ir::Value* z, const std::string& z_ptr, bool fused) {
  const std::string act = fused ? cpp::activation_expr(n) : "x";
  if (!bias && !z && act == "x") return;
  const ir::Value* y = n.output(0);
  const std::vector<int64_t> out = dims_of(y);
  std::string sum;
  if (bias)
    sum += bias_scale == 1.f ? fmt::format(" + bias[{}]", broadcast_index(bias, out))
                             : fmt::format(" + {} * bias[{}]", cpp::float_literal(bias_scale, ir::DType::F32),
                                           broadcast_index(bias, out));
  if (z) sum += fmt::format(" + z[{}]", broadcast_index(z, out));
  const std::string kernel = code.kernel(fmt::format(
      "__global__ void @NAME@(float* __restrict__ y, const float* __restrict__ bias, const float* __restrict__ z) {{  // epilogue\n"
      "  using T = float;\n  KILN_CUDA_FOR(i, {}) {{ const T x = y[i]{}; y[i] = {}; }}\n}}\n",
      str_i64(numel(y)), sum, act));
  code.launch(n, kernel, std::to_string(numel(y)),
              fmt::format("{}, {}, {}", code.out(n, 0), bias ? bias_ptr : "nullptr", z ? z_ptr : "nullptr"));
}

bool is_fused(const ir::Node& n) { return n.op().rfind("kiln.Fused", 0) == 0; }

// A GEMM operand made low precision: a constant from the weights, else narrowed into scratch at
// `offset` (bytes), which grows.
std::string narrowed(NodeCode& code, const ir::Node& n, size_t input, size_t& offset) {
  const ir::Value* v = n.input(input);
  if (v->is_constant()) return code.half_weight(v);
  const std::string dst = fmt::format("reinterpret_cast<{}*>({})", lowp_type(code), code.scratch(n, offset));
  code.launch(n, fmt::format("kiln_cuda::narrow<{}>", lowp_type(code)), std::to_string(numel(v)),
              fmt::format("{}, {}, {}", code.in(n, input), dst, numel(v)));
  offset += (static_cast<size_t>(numel(v)) * 2 + 255) / 256 * 256;
  return dst;
}

size_t narrowed_bytes(const ir::Node& n, const std::vector<size_t>& inputs) {
  size_t b = 0;
  for (size_t i : inputs)
    if (!n.input(i)->is_constant()) b += (static_cast<size_t>(numel(n.input(i))) * 2 + 255) / 256 * 256;
  return b;
}

// Gemm and kiln.FusedGemm: Y = alpha * A' B' + beta * C (+ Z, activation).
std::string unsupported_gemm(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  if (dims_of(n.input(0)).size() != 2 || dims_of(n.input(1)).size() != 2) return "rank";
  return "";
}

bool half_weights_only(const ir::Node& n, size_t i, passes::Precision p) {
  // Low precision: constant GEMM operands (A, B) are stored converted; the rest as they are.
  return p == passes::Precision::FP32 || i > 1 || !n.input(i)->is_constant();
}

size_t gemm_scratch(const ir::Node& n, passes::Precision p) {
  return p == passes::Precision::FP32 ? 0 : narrowed_bytes(n, {0, 1});
}

void emit_gemm(NodeCode& code, const ir::Node& n) {
  const bool ta = n.i("transA") != 0, tb = n.i("transB") != 0;
  const std::vector<int64_t> a = dims_of(n.input(0)), b = dims_of(n.input(1));
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1], N = tb ? b[0] : b[1];
  const bool half = code.half();
  size_t offset = 0;
  Operand A{half ? narrowed(code, n, 0, offset) : code.in(n, 0), a[1], 0, ta};
  Operand B{half ? narrowed(code, n, 1, offset) : code.in(n, 1), b[1], 0, tb};
  gemm_call(code, n, M, N, K, n.f("alpha"), A, B, 0.f, code.out(n, 0), N, 0, 1, half);
  const ir::Value* c = n.has_input(2) ? n.input(2) : nullptr;
  const ir::Value* z = is_fused(n) && n.has_input(3) ? n.input(3) : nullptr;
  emit_epilogue(code, n, c, n.f("beta"), c ? code.in(n, 2) : "", z, z ? code.in(n, 3) : "", is_fused(n));
}

// MatMul and kiln.FusedMatMul ([..., M, K] x [..., K, N]): one GEMM when B is a matrix (A's
// batch folded into M), else strided-batched where the batch dims are equal or one side has none.
struct MatMulShape {
  int64_t M = 0, N = 0, K = 0, batch = 1, sa = 0, sb = 0;
  bool fold = false;  // A's batch folded into M
};
std::optional<MatMulShape> matmul_shape(const ir::Node& n) {
  const std::vector<int64_t> a = dims_of(n.input(0)), b = dims_of(n.input(1));
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  MatMulShape s;
  s.M = a[a.size() - 2];
  s.K = a.back();
  s.N = b.back();
  int64_t ba = 1, bb = 1;
  for (size_t i = 0; i + 2 < a.size(); ++i) ba *= a[i];
  for (size_t i = 0; i + 2 < b.size(); ++i) bb *= b[i];
  if (bb == 1) {
    s.M *= ba;
    s.fold = true;
    return s;
  }
  const std::vector<int64_t> a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  if (ba == 1) {
    s.batch = bb;
    s.sb = s.K * s.N;
    return s;
  }
  if (a_batch != b_batch) return std::nullopt;
  s.batch = ba;
  s.sa = s.M * s.K;
  s.sb = s.K * s.N;
  return s;
}

std::string unsupported_matmul(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  if (!matmul_shape(n)) return "batch dims broadcast partially, or an operand of rank 1";
  return "";
}

void emit_matmul(NodeCode& code, const ir::Node& n) {
  const MatMulShape s = *matmul_shape(n);
  const bool half = code.half();
  size_t offset = 0;
  Operand A{half ? narrowed(code, n, 0, offset) : code.in(n, 0), s.K, s.sa, false};
  Operand B{half ? narrowed(code, n, 1, offset) : code.in(n, 1), s.N, s.sb, false};
  gemm_call(code, n, s.M, s.N, s.K, 1.f, A, B, 0.f, code.out(n, 0), s.N, s.M * s.N, s.batch, half);
  if (is_fused(n)) {
    const ir::Value* c = n.has_input(2) ? n.input(2) : nullptr;
    const ir::Value* z = n.has_input(3) ? n.input(3) : nullptr;
    emit_epilogue(code, n, c, 1.f, c ? code.in(n, 2) : "", z, z ? code.in(n, 3) : "", true);
  }
}

// ---- convolutions ----

std::string unsupported_conv(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  const size_t rank = dims_of(n.input(0)).size();
  if (rank != 3 && rank != 4) return "only 1-D and 2-D convolutions";
  return cpp::unsupported_conv2d(n);
}

bool is_depthwise(const kiln::rt::Conv2dParams& p) { return p.group > 1 && p.group == p.C && p.group == p.M; }
bool is_pointwise(const kiln::rt::Conv2dParams& p) {
  return p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         p.H == p.OH && p.W == p.OW;
}

size_t conv_scratch(const ir::Node& n, passes::Precision precision) {
  const kiln::rt::Conv2dParams p = cpp::conv2d_params(n);
  if (is_depthwise(p)) return 0;
  const bool half = precision != passes::Precision::FP32;
  if (is_pointwise(p)) return half ? static_cast<size_t>(p.N * p.C * p.H * p.W) * 2 : 0;
  return static_cast<size_t>(p.N * p.C * p.KH * p.KW * p.OH * p.OW) * (half ? 2 : 4);
}

bool conv_reads_weight(const ir::Node& n, size_t i, passes::Precision precision) {
  if (i != 1 || precision == passes::Precision::FP32) return true;
  return is_depthwise(cpp::conv2d_params(n)) || !n.input(1)->is_constant();
}

void emit_conv(NodeCode& code, const ir::Node& n) {
  const kiln::rt::Conv2dParams p = cpp::conv2d_params(n);
  const std::string im = fmt::format("kiln_cuda::Im2col{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}}", p.N, p.C,
                                     p.H, p.W, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
                                     p.dil_h, p.dil_w);
  const int64_t P = p.OH * p.OW;
  if (is_depthwise(p)) {
    code.launch(n, "kiln_cuda::depthwise<>", std::to_string(p.N * p.C * P),
                fmt::format("{}, {}, {}, {}", im, code.in(n, 0), code.in(n, 1), code.out(n, 0)));
  } else {
    // Half precision where the weights are constants (converted at compile time).
    const bool half = code.half() && n.input(1)->is_constant();
    const int64_t Cg = p.C / p.group, Mg = p.M / p.group, K = Cg * p.KH * p.KW;
    std::string col;
    if (is_pointwise(p) && !half) {
      col = code.in(n, 0);
    } else if (is_pointwise(p)) {
      col = fmt::format("reinterpret_cast<const {}*>({})", lowp_type(code), code.scratch(n));
      code.launch(n, fmt::format("kiln_cuda::narrow<{}>", lowp_type(code)), std::to_string(p.N * p.C * p.H * p.W),
                  fmt::format("{}, reinterpret_cast<{}*>({}), {}", code.in(n, 0), lowp_type(code), code.scratch(n),
                              p.N * p.C * p.H * p.W));
    } else {
      const std::string type = half ? lowp_type(code) : "float";
      col = fmt::format("reinterpret_cast<const {}*>({})", type, code.scratch(n));
      code.launch(n, fmt::format("kiln_cuda::im2col<{}>", type), std::to_string(p.N * p.C * p.KH * p.KW * P),
                  fmt::format("{}, {}, reinterpret_cast<{}*>({})", im, code.in(n, 0), type, code.scratch(n)));
    }
    const std::string w = half ? fmt::format("reinterpret_cast<const {}*>({})", lowp_type(code), code.half_weight(n.input(1)))
                               : code.in(n, 1);
    // Per group g: Y[n][g] (Mg x P) = W[g] (Mg x K) * col[n][g] (K x P), batched over images.
    for (int64_t g = 0; g < p.group; ++g) {
      Operand A{fmt::format("{} + {}", w, g * Mg * K), K, 0, false};
      Operand B{fmt::format("{} + {}", col, g * K * P), P, p.C * p.KH * p.KW * P, false};
      gemm_call(code, n, Mg, P, K, 1.f, A, B, 0.f, fmt::format("{} + {}", code.out(n, 0), g * Mg * P), P, p.M * P, p.N,
                half);
    }
  }
  // Bias per output channel: a [M, 1, 1] view of B against [N, M, OH, OW].
  const ir::Value* y = n.output(0);
  const std::vector<int64_t> out = dims_of(y);
  const bool has_bias = n.has_input(2);
  const ir::Value* z = is_fused(n) && n.has_input(3) ? n.input(3) : nullptr;
  const std::string act = is_fused(n) ? cpp::activation_expr(n) : "x";
  if (!has_bias && !z && act == "x") return;
  std::string sum;
  if (has_bias) sum += fmt::format(" + bias[(i / {}) % {}]", P, p.M);
  if (z) sum += fmt::format(" + z[{}]", broadcast_index(z, out));
  const std::string kernel = code.kernel(fmt::format(
      "__global__ void @NAME@(float* __restrict__ y, const float* __restrict__ bias, const float* __restrict__ z) {{  // conv epilogue\n"
      "  using T = float;\n  KILN_CUDA_FOR(i, {}) {{ const T x = y[i]{}; y[i] = {}; }}\n}}\n",
      str_i64(numel(y)), sum, act));
  code.launch(n, kernel, std::to_string(numel(y)),
              fmt::format("{}, {}, {}", code.out(n, 0), has_bias ? code.in(n, 2) : "nullptr", z ? code.in(n, 3) : "nullptr"));
}

// ---- pools ----

std::string unsupported_pool(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  if (n.num_outputs() > 1 && n.output(1)) return "MaxPool's indices";
  if (!cpp::pool2d_fields(n)) return "only 2-D pools";
  return "";
}

void emit_pool(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> f = *cpp::pool2d_fields(n);
  const bool max = n.op() == "MaxPool";
  const bool include_pad = !max && n.i("count_include_pad") != 0;
  code.launch(n, max ? "kiln_cuda::pool2d<true>" : "kiln_cuda::pool2d<false>", std::to_string(numel(n.output(0))),
              fmt::format("kiln_cuda::Pool2d{{{}}}, {}, {}, {}", fmt::join(f, ", "), include_pad ? "true" : "false",
                          code.in(n, 0), code.out(n, 0)));
}

std::string unsupported_global_pool(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  if (dims_of(n.input(0)).size() < 3) return "rank";
  return "";
}

void emit_global_pool(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> d = dims_of(n.input(0));
  const int64_t planes = d[0] * d[1], size = numel(n.input(0)) / planes;
  code.launch_grid(n, n.op() == "GlobalMaxPool" ? "kiln_cuda::global_pool<true>" : "kiln_cuda::global_pool<false>",
                   fmt::format("kiln_cuda::blocks_for({} * kiln_cuda::kThreads)", planes), "kiln_cuda::kThreads",
                   fmt::format("{}, {}, {}, {}", code.in(n, 0), code.out(n, 0), planes, size));
}

// ---- rows: softmax and normalizations over the last axis ----

size_t last_axis_of(const ir::Node& n, int64_t fallback) {
  const int64_t rank = static_cast<int64_t>(dims_of(n.input(0)).size());
  int64_t axis = n.attrs().count("axis") ? n.i("axis") : fallback;
  if (axis < 0) axis += rank;
  return static_cast<size_t>(axis);
}

std::string unsupported_softmax(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  if (last_axis_of(n, -1) + 1 != dims_of(n.input(0)).size()) return "only the last axis";
  return "";
}

void emit_softmax(NodeCode& code, const ir::Node& n) {
  const int64_t cols = dims_of(n.input(0)).back(), rows = numel(n.input(0)) / std::max<int64_t>(cols, 1);
  code.launch_grid(n, n.op() == "LogSoftmax" ? "kiln_cuda::softmax_rows<true>" : "kiln_cuda::softmax_rows<false>",
                   fmt::format("kiln_cuda::blocks_for({} * kiln_cuda::kThreads)", rows), "kiln_cuda::kThreads",
                   fmt::format("{}, {}, {}, {}", code.in(n, 0), code.out(n, 0), rows, cols));
}

std::string unsupported_norm(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty()) return r;
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (n.output(i)) return "mean and inverse deviation outputs";
  const std::vector<int64_t> x = dims_of(n.input(0));
  const size_t axis = last_axis_of(n, -1);
  int64_t cols = 1;
  for (size_t k = axis; k < x.size(); ++k) cols *= x[k];
  for (size_t i = 1; i < n.num_inputs(); ++i)
    if (n.has_input(i) && numel(n.input(i)) != cols) return "scale or bias broadcast over normalized axes";
  return "";
}

void emit_norm(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> x = dims_of(n.input(0));
  const size_t axis = last_axis_of(n, -1);
  int64_t cols = 1;
  for (size_t k = axis; k < x.size(); ++k) cols *= x[k];
  const int64_t rows = numel(n.input(0)) / std::max<int64_t>(cols, 1);
  const bool rms = n.op() == "RMSNormalization";
  code.launch_grid(n, rms ? "kiln_cuda::norm_rows<true>" : "kiln_cuda::norm_rows<false>",
                   fmt::format("kiln_cuda::blocks_for({} * kiln_cuda::kThreads)", rows), "kiln_cuda::kThreads",
                   fmt::format("{}, {}, {}, {}, {}, {}, {}", code.in(n, 0), code.in(n, 1),
                               !rms && n.has_input(2) ? code.in(n, 2) : "nullptr", code.out(n, 0), rows, cols,
                               cpp::float_literal(n.f("epsilon"), ir::DType::F32)));
}

// ---- data movement ----

std::string unsupported_movement(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (!device_dtype(n.output(0)->dtype())) return fmt::format("dtype {}", ir::dtype_name(n.output(0)->dtype()));
  if (dims_of(n.output(0)).size() > 8) return "rank above 8";
  return "";
}

// A strided read of input 0 into output 0 (element strides per output dim, and an offset).
void strided(NodeCode& code, const ir::Node& n, const std::vector<int64_t>& strides, int64_t offset) {
  const std::vector<int64_t> out = dims_of(n.output(0));
  std::vector<int64_t> d = out, s = strides;
  if (d.empty()) d = {1}, s = {0};
  d.resize(8, 1);
  s.resize(8, 0);
  code.launch(n, fmt::format("kiln_cuda::strided_copy<{}>", cpp_type(n.output(0)->dtype())),
              std::to_string(numel(n.output(0))),
              fmt::format("kiln_cuda::Strided{{{{{}}}, {{{}}}, {}, {}}}, {}, {}, {}", fmt::join(d, ", "), fmt::join(s, ", "),
                          offset, std::max<size_t>(out.size(), 1), code.in(n, 0), code.out(n, 0), numel(n.output(0))));
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t k = d.size(); k-- > 1;) s[k - 1] = s[k] * d[k];
  return s;
}

void emit_transpose(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> in = dims_of(n.input(0));
  std::vector<int64_t> perm;
  if (n.attrs().count("perm")) perm = n.attr("perm").ints();
  else
    for (size_t k = in.size(); k-- > 0;) perm.push_back(static_cast<int64_t>(k));
  const std::vector<int64_t> cs = contiguous_strides(in);
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(cs[static_cast<size_t>(p < 0 ? p + static_cast<int64_t>(in.size()) : p)]);
  strided(code, n, strides, 0);
}

// Expand: a broadcast read.
void emit_expand(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> in = dims_of(n.input(0)), out = dims_of(n.output(0));
  const std::vector<int64_t> cs = contiguous_strides(in);
  std::vector<int64_t> strides(out.size(), 0);
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t o = k + out.size() - in.size();
    strides[o] = in[k] == 1 ? 0 : cs[k];
  }
  strided(code, n, strides, 0);
}

// Concat: one 2-D copy per input (rows: the product of the dims before the axis).
std::string unsupported_concat(const ir::Node& n, passes::Precision p) {
  for (const ir::Value* v : n.inputs())
    if (!v) return "an omitted input";
  return unsupported_movement(n, p);
}

void emit_concat(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> out = dims_of(n.output(0));
  int64_t axis = n.i("axis");
  if (axis < 0) axis += static_cast<int64_t>(out.size());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= out[static_cast<size_t>(k)];
  for (size_t k = static_cast<size_t>(axis) + 1; k < out.size(); ++k) inner *= out[k];
  const size_t es = ir::dtype_size(n.output(0)->dtype());
  const int64_t row = out[static_cast<size_t>(axis)] * inner * static_cast<int64_t>(es);
  int64_t at = 0;
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    const int64_t width = dims_of(n.input(i))[static_cast<size_t>(axis)] * inner * static_cast<int64_t>(es);
    if (width > 0 && outer > 0)
      code.cuda(n,
                fmt::format("cudaMemcpy2DAsync(reinterpret_cast<unsigned char*>({}) + {}, {}, {}, {}, {}, {}, "
                            "cudaMemcpyDeviceToDevice, S)",
                            code.out(n, 0), at, row, code.in(n, i), width, width, outer),
                "cudaMemcpy2DAsync");
    at += width;
  }
}

// Slice with constant starts, ends, axes and steps.
std::string unsupported_slice(const ir::Node& n, passes::Precision p) {
  for (size_t i = 1; i < n.num_inputs(); ++i)
    if (n.has_input(i) && !n.input(i)->is_constant()) return "starts, ends, axes or steps not constant";
  return unsupported_movement(n, p);
}

void emit_slice(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> in = dims_of(n.input(0));
  const int64_t rank = static_cast<int64_t>(in.size());
  auto ints = [&](size_t i) {
    std::vector<int64_t> v;
    if (n.has_input(i))
      for (int64_t k = 0; k < n.input(i)->constant().numel(); ++k) v.push_back(n.input(i)->constant().as_int64(k));
    return v;
  };
  const std::vector<int64_t> starts = ints(1), ends = ints(2);
  std::vector<int64_t> axes = ints(3), steps = ints(4);
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  const std::vector<int64_t> cs = contiguous_strides(in);
  std::vector<int64_t> strides = cs;
  int64_t offset = 0;
  for (size_t j = 0; j < starts.size(); ++j) {
    const int64_t a = axes[j] < 0 ? axes[j] + rank : axes[j], dim = in[static_cast<size_t>(a)], step = steps[j];
    int64_t s = starts[j] < 0 ? starts[j] + dim : starts[j];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    offset += s * cs[static_cast<size_t>(a)];
    strides[static_cast<size_t>(a)] = cs[static_cast<size_t>(a)] * step;
  }
  strided(code, n, strides, offset);
}

// Gather along an axis, indices int32 or int64 (checked on the device).
std::string unsupported_gather(const ir::Node& n, passes::Precision p) {
  const ir::DType ti = n.input(1)->dtype();
  if (ti != ir::DType::I64 && ti != ir::DType::I32) return "indices neither int32 nor int64";
  return unsupported_movement(n, p);
}

void emit_gather(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> x = dims_of(n.input(0));
  int64_t axis = n.i("axis");
  if (axis < 0) axis += static_cast<int64_t>(x.size());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x[static_cast<size_t>(k)];
  for (size_t k = static_cast<size_t>(axis) + 1; k < x.size(); ++k) inner *= x[k];
  const int err = code.error_code(n, "an index is out of range");
  code.launch(n,
              fmt::format("kiln_cuda::gather<{}, {}>", cpp_type(n.output(0)->dtype()), cpp_type(n.input(1)->dtype())),
              std::to_string(numel(n.output(0))),
              fmt::format("{}, {}, {}, {}, {}, {}, {}, DF, {}", code.in(n, 0), code.in(n, 1), code.out(n, 0), outer,
                          x[static_cast<size_t>(axis)], numel(n.input(1)), inner, err));
}

// Reshape and the other views, where the output must be a copy (a graph output).
std::string unsupported_copy(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  return "";
}

void emit_copy(NodeCode& code, const ir::Node& n) {
  code.cuda(n,
            fmt::format("cudaMemcpyAsync({}, {}, {}, cudaMemcpyDeviceToDevice, S)", code.out(n, 0), code.in(n, 0),
                        numel(n.output(0)) * static_cast<int64_t>(ir::dtype_size(n.output(0)->dtype()))),
            "cudaMemcpyAsync");
}

// ---- reductions, variadic ops, Clip, Cast, Pad ----

std::string reduce_acc(ir::DType t) {
  if (ir::is_float(t)) return t == ir::DType::F64 ? "double" : "float";
  return "int64_t";
}

std::string unsupported_reduce(const ir::Node& n, passes::Precision p) {
  if (std::string r = unsupported_movement(n, p); !r.empty()) return r;
  const size_t rank = dims_of(n.input(0)).size();
  if (rank > 8) return "rank above 8";
  if (!ir::reduced_dims(n, static_cast<int64_t>(rank))) return "axes not constant";
  if (n.input(0)->dtype() == ir::DType::Bool) return "dtype bool";
  return "";
}

void emit_reduce(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> x = dims_of(n.input(0));
  const std::vector<bool> red = *ir::reduced_dims(n, static_cast<int64_t>(x.size()));
  const std::vector<int64_t> st = contiguous_strides(x);
  std::vector<int64_t> od, os, rd, rs;
  for (size_t d = 0; d < x.size(); ++d) {
    (red[d] ? rd : od).push_back(x[d]);
    (red[d] ? rs : os).push_back(st[d]);
  }
  const ir::DType t = n.input(0)->dtype();
  const int64_t out_n = numel(n.output(0));
  if (od.empty()) od = {1}, os = {0};
  if (rd.empty()) rd = {1}, rs = {0};
  const size_t orank = od.size(), rrank = rd.size();
  od.resize(8, 1), os.resize(8, 0), rd.resize(8, 1), rs.resize(8, 0);
  code.launch(n,
              fmt::format("kiln_cuda::reduce<kiln_cuda::Reduce::{}, {}, {}>", n.op().substr(6), cpp_type(t), reduce_acc(t)),
              std::to_string(out_n),
              fmt::format("kiln_cuda::ReduceShape{{{{{}}}, {{{}}}, {{{}}}, {{{}}}, {}, {}}}, {}, {}, {}", fmt::join(od, ", "),
                          fmt::join(os, ", "), fmt::join(rd, ", "), fmt::join(rs, ", "), orank, rrank, code.in(n, 0),
                          code.out(n, 0), out_n));
}

std::string unsupported_arg(const ir::Node& n, passes::Precision p) {
  if (std::string r = unsupported_movement(n, p); !r.empty()) return r;
  if (!device_dtype(n.input(0)->dtype()) || n.input(0)->dtype() == ir::DType::Bool) return "dtype";
  return "";
}

void emit_arg(NodeCode& code, const ir::Node& n) {
  const std::vector<int64_t> x = dims_of(n.input(0));
  const int64_t axis = ir::reduce_axis(n, static_cast<int64_t>(x.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) inner *= x[d];
  const ir::DType t = n.input(0)->dtype();
  code.launch(n,
              fmt::format("kiln_cuda::arg_reduce<{}, {}, {}>", n.op() == "ArgMax" ? "true" : "false", cpp_type(t),
                          cpp_compute_type(t)),
              std::to_string(outer * inner),
              fmt::format("{}, {}, {}, {}, {}, {}", code.in(n, 0), code.out(n, 0), outer, x[static_cast<size_t>(axis)],
                          inner, n.i("select_last_index") != 0 ? "true" : "false"));
}

// Sum, Mean, Min, Max over any number of broadcast inputs: the registry's combine and finish
// expressions in one generated kernel.
std::string unsupported_variadic(const ir::Node& n, passes::Precision p) {
  if (!all_static(n)) return "symbolic shapes";
  if (!device_dtype(n.output(0)->dtype())) return fmt::format("dtype {}", ir::dtype_name(n.output(0)->dtype()));
  for (const ir::Value* v : n.inputs())
    if (!v || v->dtype() != n.output(0)->dtype()) return "inputs of another dtype";
  (void)p;
  return "";
}

void emit_variadic(NodeCode& code, const ir::Node& n) {
  const ir::VariadicExprs* e = ir::variadic_exprs(n.op());
  const ir::Value* y = n.output(0);
  const std::vector<int64_t> out = dims_of(y);
  const std::string s = cpp_type(y->dtype());
  std::string params, body;
  for (size_t k = 0; k < n.num_inputs(); ++k) {
    params += fmt::format("const {}* __restrict__ in{}, ", s, k);
    body += k == 0 ? fmt::format("T acc = in0[{}]; ", broadcast_index(n.input(0), out))
                   : fmt::format("{{ const T a = acc, b = in{}[{}]; acc = static_cast<T>({}); }} ", k,
                                 broadcast_index(n.input(k), out), e->combine);
  }
  const std::string kernel = code.kernel(fmt::format(
      "__global__ void @NAME@({}{}* __restrict__ y) {{  // {}\n  using T = {};\n  constexpr int64_t n = {};\n"
      "  KILN_CUDA_FOR(i, {}) {{ {}const T x = acc; y[i] = static_cast<T>({}); }}\n}}\n",
      params, s, n.op(), s, n.num_inputs(), str_i64(numel(y)), body, e->finish));
  std::vector<std::string> args;
  for (size_t k = 0; k < n.num_inputs(); ++k) args.push_back(code.in(n, k));
  args.push_back(code.out(n, 0));
  code.launch(n, kernel, std::to_string(numel(y)), fmt::format("{}", fmt::join(args, ", ")));
}

std::string unsupported_clip(const ir::Node& n, passes::Precision p) {
  if (std::string r = unsupported_movement(n, p); !r.empty()) return r;
  for (size_t i = 1; i < n.num_inputs(); ++i)
    if (n.has_input(i) && (numel(n.input(i)) != 1 || n.input(i)->dtype() != n.input(0)->dtype())) return "bounds";
  if (n.input(0)->dtype() == ir::DType::Bool) return "dtype bool";
  return "";
}

void emit_clip(NodeCode& code, const ir::Node& n) {
  code.launch(n, fmt::format("kiln_cuda::clip<{}>", cpp_type(n.output(0)->dtype())), std::to_string(numel(n.output(0))),
              fmt::format("{}, {}, {}, {}, {}", code.in(n, 0), code.in(n, 1), code.in(n, 2), code.out(n, 0),
                          numel(n.output(0))));
}

std::string unsupported_cast(const ir::Node& n, passes::Precision p) {
  if (std::string r = unsupported_movement(n, p); !r.empty()) return r;
  if (!device_dtype(n.input(0)->dtype())) return fmt::format("dtype {}", ir::dtype_name(n.input(0)->dtype()));
  return "";
}

void emit_cast(NodeCode& code, const ir::Node& n) {
  code.launch(n,
              fmt::format("kiln_cuda::cast<{}, {}>", cpp_type(n.output(0)->dtype()), cpp_type(n.input(0)->dtype())),
              std::to_string(numel(n.output(0))),
              fmt::format("{}, {}, {}", code.in(n, 0), code.out(n, 0), numel(n.output(0))));
}

std::optional<std::vector<std::vector<int64_t>>> table_of(const ir::Node& n) {
  const std::vector<int64_t> x = dims_of(n.input(0));
  return n.op() == "Pad" ? ir::pad_tables(n, x) : ir::center_crop_pad_tables(n, x);
}

std::string unsupported_table(const ir::Node& n, passes::Precision p) {
  if (std::string r = unsupported_movement(n, p); !r.empty()) return r;
  if (dims_of(n.input(0)).empty()) return "a scalar";
  if (n.op() == "Pad" && n.has_input(2) && n.input(2)->dtype() != n.input(0)->dtype()) return "value's dtype";
  try {
    if (!table_of(n)) return "pads not constant";
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void emit_table(NodeCode& code, const ir::Node& n) {
  const std::vector<std::vector<int64_t>> tables = *table_of(n);
  std::vector<int64_t> flat, dims, at;
  for (const auto& t : tables) {
    at.push_back(static_cast<int64_t>(flat.size()));
    dims.push_back(static_cast<int64_t>(t.size()));
    flat.insert(flat.end(), t.begin(), t.end());
  }
  const size_t rank = dims.size();
  dims.resize(8, 1);
  at.resize(8, 0);
  const std::string t = code.weight_bytes(flat.data(), flat.size() * sizeof(int64_t));
  const std::string fill = n.op() == "Pad" && n.has_input(2) ? code.in(n, 2) : "nullptr";
  code.launch(n, fmt::format("kiln_cuda::table_copy<{}>", cpp_type(n.output(0)->dtype())), std::to_string(numel(n.output(0))),
              fmt::format("kiln_cuda::TableShape{{{{{}}}, {{{}}}, {}}}, reinterpret_cast<const int64_t*>({}), {}, {}, {}, {}",
                          fmt::join(dims, ", "), fmt::join(at, ", "), rank, t, code.in(n, 0), fill, code.out(n, 0),
                          numel(n.output(0))));
}

// ---- attention: Q K^T and P V through cuBLAS, the masked softmax between ----

std::optional<kiln::rt::AttentionParams> attention_params(const ir::Node& n) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < n.num_inputs(); ++i) dims.push_back(n.has_input(i) ? dims_of(n.input(i)) : std::vector<int64_t>{});
  return ir::attention_params(n, dims, false);
}

std::string unsupported_attention(const ir::Node& n, passes::Precision) {
  if (!all_static(n)) return "symbolic shapes";
  if (std::string r = require_f32(n); !r.empty() && !(n.has_input(ir::kAttnMask) && n.input(ir::kAttnMask)->dtype() != ir::DType::F32))
    return r;
  if (n.has_input(ir::kAttnMask) && n.input(ir::kAttnMask)->dtype() != ir::DType::F32) return "a boolean mask";
  if (n.has_input(ir::kAttnPastKey) || n.has_input(ir::kAttnPastValue) || n.has_input(ir::kAttnNonpad))
    return "past key/value or nonpad_kv_seqlen";
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (n.output(i)) return "present key/value or score outputs";
  try {
    const kiln::rt::AttentionParams p = *attention_params(n);
    if (p.q_heads != p.kv_heads) return "grouped-query heads";
    if (p.softcap > 0) return "softcap";
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

size_t attention_scratch(const ir::Node& n, passes::Precision) {
  const kiln::rt::AttentionParams p = *attention_params(n);
  return static_cast<size_t>(p.batch * p.q_heads * p.q_len * p.kv_len) * sizeof(float);
}

void emit_attention(NodeCode& code, const ir::Node& n) {
  const kiln::rt::AttentionParams p = *attention_params(n);
  const std::string scores = fmt::format("reinterpret_cast<float*>({})", code.scratch(n));
  const int64_t per_head = p.q_len * p.kv_len;
  // Per batch item: S[h] = Q[h] K[h]^T (q_len x kv_len), batched over heads.
  for (int64_t b = 0; b < p.batch; ++b) {
    Operand Q{fmt::format("{} + {}", code.in(n, ir::kAttnQ), b * p.q.batch), p.q.seq, p.q.head, false};
    Operand K{fmt::format("{} + {}", code.in(n, ir::kAttnK), b * p.k.batch), p.k.seq, p.k.head, true};
    gemm_call(code, n, p.q_len, p.kv_len, p.head_dim, 1.f, Q, K, 0.f, fmt::format("{} + {}", scores, b * p.q_heads * per_head),
              p.kv_len, per_head, p.q_heads, false);
  }
  const kiln::rt::AttentionMask& m = p.mask;
  code.launch_grid(
      n, "kiln_cuda::attention_softmax<>",
      fmt::format("kiln_cuda::blocks_for({} * kiln_cuda::kThreads)", p.batch * p.q_heads * p.q_len), "kiln_cuda::kThreads",
      fmt::format("kiln_cuda::AttentionSoftmax{{{}, {}, {}, {}, {}, {{{}, {}, {}, {}}}, {}, {}, {}}}, {}, {}", p.q_heads, p.q_len,
                  p.kv_len, cpp::float_literal(p.scale, ir::DType::F32),
                  m.bias ? code.in(n, ir::kAttnMask) : (n.has_input(ir::kAttnMask) ? code.in(n, ir::kAttnMask) : "nullptr"),
                  m.stride[0], m.stride[1], m.stride[2], m.stride[3], m.keys, m.causal ? "true" : "false",
                  m.causal_offset, scores, p.batch * p.q_heads * p.q_len));
  // Y[h] = P[h] V[h] (q_len x v_head_dim), batched over heads.
  for (int64_t b = 0; b < p.batch; ++b) {
    Operand P{fmt::format("{} + {}", scores, b * p.q_heads * per_head), p.kv_len, per_head, false};
    Operand V{fmt::format("{} + {}", code.in(n, ir::kAttnV), b * p.v.batch), p.v.seq, p.v.head, false};
    gemm_call(code, n, p.q_len, p.v_head_dim, p.kv_len, 1.f, P, V, 0.f, fmt::format("{} + {}", code.out(n, 0), b * p.y.batch),
              p.y.seq, p.y.head, p.q_heads, false);
  }
}

const std::map<std::string, CudaEmitter, std::less<>>& table() {
  static const std::map<std::string, CudaEmitter, std::less<>> t = [] {
    std::map<std::string, CudaEmitter, std::less<>> m;
    m["kiln.Elementwise"] = {emit_chain, unsupported_chain};
    m["Conv"] = m["kiln.FusedConv"] = {emit_conv, unsupported_conv, conv_scratch, conv_reads_weight};
    m["Gemm"] = m["kiln.FusedGemm"] = {emit_gemm, unsupported_gemm, gemm_scratch, half_weights_only};
    m["MatMul"] = m["kiln.FusedMatMul"] = {emit_matmul, unsupported_matmul, gemm_scratch, half_weights_only};
    m["MaxPool"] = m["AveragePool"] = {emit_pool, unsupported_pool};
    m["GlobalAveragePool"] = m["GlobalMaxPool"] = {emit_global_pool, unsupported_global_pool};
    m["Softmax"] = m["LogSoftmax"] = {emit_softmax, unsupported_softmax};
    m["LayerNormalization"] = m["RMSNormalization"] = {emit_norm, unsupported_norm};
    m["Transpose"] = {emit_transpose, unsupported_movement};
    m["Expand"] = {emit_expand, unsupported_movement};
    m["Concat"] = {emit_concat, unsupported_concat};
    m["Slice"] = {emit_slice, unsupported_slice};
    m["Gather"] = {emit_gather, unsupported_gather};
    m["Attention"] = {emit_attention, unsupported_attention, attention_scratch};
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
      m[op] = {emit_reduce, unsupported_reduce};
    m["ArgMax"] = m["ArgMin"] = {emit_arg, unsupported_arg};
    for (const char* op : {"Sum", "Mean", "Min", "Max"}) m[op] = {emit_variadic, unsupported_variadic};
    m["Clip"] = {emit_clip, unsupported_clip};
    m["Cast"] = {emit_cast, unsupported_cast};
    m["Pad"] = m["CenterCropPad"] = {emit_table, unsupported_table};
    return m;
  }();
  return t;
}

}  // namespace

bool all_static(const ir::Node& n) {
  for (const ir::Value* v : n.inputs())
    if (v && (!v->has_type() || !v->shape().is_static())) return false;
  for (const ir::Value* v : n.outputs())
    if (v && (!v->has_type() || !v->shape().is_static())) return false;
  return true;
}

const CudaEmitter* find_cuda_emitter(std::string_view op) {
  auto it = table().find(op);
  if (it != table().end()) return &it->second;
  // Every op with a scalar expression (unary, binary, Where).
  const ir::OpDef* def = ir::registry().find(std::string(op));
  static const CudaEmitter elementwise{emit_elementwise, unsupported_elementwise};
  if (def && !def->scalar_expr.empty()) return &elementwise;
  // Views (Reshape, Flatten, Squeeze, ...) that must be copies.
  static const CudaEmitter copy{emit_copy, unsupported_copy};
  const cpp::Emitter* e = cpp::emitters().find(op);
  if (e && e->alias_input >= 0) return &copy;
  return nullptr;
}

}  // namespace kiln::codegen::cuda
