// The CUDA backend's fixed kernels (codegen/cuda): included by a model's generated model.cu,
// which compiles only the templates it instantiates, for the GPU architectures it was built for.
// GEMMs (convolutions' included) go to cuBLAS; the generated code launches these kernels around
// them and its own for elementwise work and fused epilogues. Every kernel reads and writes
// dense row-major tensors; extents are int64_t, so no tensor is limited to 2^31 elements.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace kiln_cuda {

constexpr int kThreads = 256;

// Blocks for one thread per element, capped: the kernels loop over the rest (grid-stride).
inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

#define KILN_CUDA_FOR(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <class Out>
__device__ inline Out from_float(float v) {
  return static_cast<Out>(v);
}
template <>
__device__ inline __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// The convolution's column matrix for all images: col[n][c * KH * KW + kh * KW + kw][oh * OW + ow]
// (zero where the tap falls in the padding). Group g's K x P block starts at row g * C/group * KH * KW.
struct Im2col {
  int64_t N, C, H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
};
template <class Out>
__global__ void im2col(Im2col p, const float* __restrict__ x, Out* __restrict__ col) {
  const int64_t P = p.OH * p.OW, taps = p.KH * p.KW, n_total = p.N * p.C * taps * P;
  KILN_CUDA_FOR(i, n_total) {
    const int64_t pos = i % P, row = (i / P) % (p.C * taps), n = i / (P * p.C * taps);
    const int64_t c = row / taps, kh = (row % taps) / p.KW, kw = row % p.KW;
    const int64_t oh = pos / p.OW, ow = pos % p.OW;
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h, iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
    float v = 0.f;
    if (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W) v = x[((n * p.C + c) * p.H + ih) * p.W + iw];
    col[i] = from_float<Out>(v);
  }
}

// fp32 to fp16 or bf16, rounded to nearest (an operand of a half-precision GEMM).
template <class Out>
__global__ void narrow(const float* __restrict__ x, Out* __restrict__ y, int64_t n) {
  KILN_CUDA_FOR(i, n) y[i] = from_float<Out>(x[i]);
}

// Depthwise convolution (group == C == M, one filter per channel), any window: one thread per
// output element, no bias (the epilogue adds it).
template <class Unused = void>
__global__ void depthwise(Im2col p, const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  const int64_t n_total = p.N * p.C * p.OH * p.OW;
  KILN_CUDA_FOR(i, n_total) {
    const int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH), c = nc % p.C;
    const float* xp = x + nc * p.H * p.W;
    const float* wp = w + c * p.KH * p.KW;
    float acc = 0.f;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) continue;
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
        if (iw >= 0 && iw < p.W) acc += xp[ih * p.W + iw] * wp[kh * p.KW + kw];
      }
    }
    y[i] = acc;
  }
}

// MaxPool and AveragePool over NCHW (kiln::rt::Pool2dParams' fields): padding never wins a max;
// the average divides by the window's elements inside the input, or with count_include_pad
// inside the explicitly padded input, as ONNX does.
struct Pool2d {
  int64_t N, C, H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, pad_bottom, pad_right;
};
template <bool kMax>
__global__ void pool2d(Pool2d p, bool count_include_pad, const float* __restrict__ x, float* __restrict__ y) {
  const int64_t n_total = p.N * p.C * p.OH * p.OW;
  KILN_CUDA_FOR(i, n_total) {
    const int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH);
    const float* xp = x + nc * p.H * p.W;
    float acc = kMax ? -__int_as_float(0x7f800000) : 0.f;
    int64_t count = 0;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
        const bool inside = ih >= 0 && ih < p.H && iw >= 0 && iw < p.W;
        if (kMax) {
          if (inside) acc = fmaxf(acc, xp[ih * p.W + iw]);
        } else {
          if (inside) acc += xp[ih * p.W + iw];
          if (inside || (count_include_pad && ih >= -p.pad_top && ih < p.H + p.pad_bottom && iw >= -p.pad_left &&
                         iw < p.W + p.pad_right))
            ++count;
        }
      }
    }
    y[i] = kMax ? acc : (count > 0 ? acc / static_cast<float>(count) : 0.f);
  }
}

// A block's sum or maximum of one value per thread (blockDim.x a multiple of 32, at most 1024).
template <bool kMax>
__device__ inline float block_reduce(float v) {
#ifdef KILN_CUDA_EMULATION
  return v;  // the CPU emulation's blocks have one thread (tests/cuda_emu)
#else
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  __syncthreads();  // partial[] may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < warps ? partial[lane] : (kMax ? -__int_as_float(0x7f800000) : 0.f);
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  return v;
#endif
}

// GlobalAveragePool and GlobalMaxPool: one block per (n, c) plane.
template <bool kMax>
__global__ void global_pool(const float* __restrict__ x, float* __restrict__ y, int64_t planes, int64_t size) {
  for (int64_t plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const float* xp = x + plane * size;
    float acc = kMax ? -__int_as_float(0x7f800000) : 0.f;
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) acc = kMax ? fmaxf(acc, xp[i]) : acc + xp[i];
    acc = block_reduce<kMax>(acc);
    if (threadIdx.x == 0) y[plane] = kMax ? acc : acc / static_cast<float>(size);
  }
}

// Softmax (or LogSoftmax) of each row of `cols` values: one block per row, the maximum
// subtracted first.
template <bool kLog>
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -__int_as_float(0x7f800000);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, xr[i]);
    m = block_reduce<true>(m);
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += __expf(xr[i] - m);
    s = block_reduce<false>(s);
    if (kLog) {
      const float ls = __logf(s);
      for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) yr[i] = xr[i] - m - ls;
    } else {
      const float inv = 1.f / s;
      for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) yr[i] = __expf(xr[i] - m) * inv;
    }
  }
}

// The softmax of attention scores in place (kiln::rt::AttentionParams' semantics): each row
// (b, h, i) of kv_len scores is scaled, the additive mask read through its strides, keys at or
// beyond `keys` of a given mask and keys after i + causal_offset (causal) masked; a row with
// every key masked becomes zeros.
struct AttentionSoftmax {
  int64_t heads, q_len, kv_len;
  float scale;
  const float* bias;
  int64_t stride[4];
  int64_t keys;
  bool causal;
  int64_t causal_offset;
};
template <class Unused = void>
__global__ void attention_softmax(AttentionSoftmax p, float* __restrict__ s, int64_t rows) {
  const float neg_inf = -__int_as_float(0x7f800000);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % p.q_len, h = (r / p.q_len) % p.heads, b = r / (p.q_len * p.heads);
    float* sr = s + r * p.kv_len;
    float m = neg_inf;
    for (int64_t j = threadIdx.x; j < p.kv_len; j += blockDim.x) {
      float v = sr[j] * p.scale;
      if (p.bias) {
        if (j >= p.keys) v = neg_inf;
        else v += p.bias[b * p.stride[0] + h * p.stride[1] + i * p.stride[2] + j * p.stride[3]];
      }
      if (p.causal && j > i + p.causal_offset) v = neg_inf;
      sr[j] = v;
      m = fmaxf(m, v);
    }
    m = block_reduce<true>(m);
    float sum = 0.f;
    for (int64_t j = threadIdx.x; j < p.kv_len; j += blockDim.x) {
      const float e = m == neg_inf ? 0.f : __expf(sr[j] - m);
      sr[j] = e;
      sum += e;
    }
    sum = block_reduce<false>(sum);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (int64_t j = threadIdx.x; j < p.kv_len; j += blockDim.x) sr[j] *= inv;
  }
}

// LayerNormalization (or RMSNormalization, kRms) over rows of `cols` values, with scale and
// (optional) bias of `cols` values: two passes over the row for a stable variance.
template <bool kRms>
__global__ void norm_rows(const float* __restrict__ x, const float* __restrict__ scale, const float* __restrict__ bias,
                          float* __restrict__ y, int64_t rows, int64_t cols, float epsilon) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mean = 0.f;
    if (!kRms) {
      float s = 0.f;
      for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += xr[i];
      mean = block_reduce<false>(s) / static_cast<float>(cols);
    }
    float q = 0.f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const float d = xr[i] - mean;
      q += d * d;
    }
    const float inv = rsqrtf(block_reduce<false>(q) / static_cast<float>(cols) + epsilon);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
      yr[i] = (xr[i] - mean) * inv * scale[i] + (bias ? bias[i] : 0.f);
  }
}

// y[i] = x[offset + sum_d idx_d(i) * stride[d]] over the output's dims: Transpose, Slice, Expand
// and the copy of any strided view, up to 8 dims.
struct Strided {
  int64_t dims[8];
  int64_t strides[8];
  int64_t offset;
  int rank;
};
template <class T>
__global__ void strided_copy(Strided s, const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  KILN_CUDA_FOR(i, n) {
    int64_t rest = i, at = s.offset;
    for (int d = s.rank - 1; d >= 0; --d) {
      at += (rest % s.dims[d]) * s.strides[d];
      rest /= s.dims[d];
    }
    y[i] = x[at];
  }
}

// Gather along an axis: y[o][j][i] = x[o][idx[j]][i] (negative indices count from the end;
// an index out of range gives 0 and sets *bad to `code`, which the run reports afterwards).
template <class T, class I>
__global__ void gather(const T* __restrict__ x, const I* __restrict__ idx, T* __restrict__ y, int64_t outer,
                       int64_t axis_len, int64_t n_idx, int64_t inner, int* bad, int code) {
  const int64_t n = outer * n_idx * inner;
  KILN_CUDA_FOR(i, n) {
    const int64_t in = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += axis_len;
    if (k < 0 || k >= axis_len) {
      *bad = code;
      y[i] = T(0);
    } else {
      y[i] = x[(o * axis_len + k) * inner + in];
    }
  }
}

// Reductions (kiln/rt/reduce.h's semantics, one thread per output element): the output's dims and
// their input strides, and the reduced dims and theirs, up to 8 of each.
enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };
struct ReduceShape {
  int64_t out_dims[8], out_strides[8], red_dims[8], red_strides[8];
  int out_rank, red_rank;
};
template <Reduce K, class T, class Acc>
__global__ void reduce(ReduceShape s, const T* __restrict__ x, T* __restrict__ y, int64_t n_out) {
  int64_t count = 1;
  for (int d = 0; d < s.red_rank; ++d) count *= s.red_dims[d];
  KILN_CUDA_FOR(o, n_out) {
    int64_t base = 0, rest = o;
    for (int d = s.out_rank - 1; d >= 0; --d) {
      base += (rest % s.out_dims[d]) * s.out_strides[d];
      rest /= s.out_dims[d];
    }
    Acc acc = 0, peak = 0;
    if (K == Reduce::Prod) acc = 1;
    if (K == Reduce::Max || K == Reduce::Min) {
      if (std::is_floating_point<Acc>::value)
        acc = K == Reduce::Max ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
      else
        acc = K == Reduce::Max ? static_cast<Acc>(std::numeric_limits<T>::lowest())
                               : static_cast<Acc>(std::numeric_limits<T>::max());
    }
    for (int pass = K == Reduce::LogSumExp ? 0 : 1; pass < 2; ++pass) {
      const Acc inf = std::numeric_limits<Acc>::infinity();
      if (pass == 1 && K == Reduce::LogSumExp && count > 0 && (peak == inf || peak == -inf)) peak = 0;
      if (pass == 0) peak = -std::numeric_limits<Acc>::infinity();
      for (int64_t r = 0; r < count; ++r) {
        int64_t at = base, q = r;
        for (int d = s.red_rank - 1; d >= 0; --d) {
          at += (q % s.red_dims[d]) * s.red_strides[d];
          q /= s.red_dims[d];
        }
        const Acc v = static_cast<Acc>(x[at]);
        if (pass == 0) {
          if (v > peak) peak = v;
          continue;
        }
        if (K == Reduce::Sum || K == Reduce::Mean || K == Reduce::LogSum) acc += v;
        else if (K == Reduce::Max) acc = v > acc ? v : acc;
        else if (K == Reduce::Min) acc = v < acc ? v : acc;
        else if (K == Reduce::Prod) acc *= v;
        else if (K == Reduce::L1) acc += v < 0 ? -v : v;
        else if (K == Reduce::L2 || K == Reduce::SumSquare) acc += v * v;
        else acc += static_cast<Acc>(exp(static_cast<double>(v - peak)));
      }
    }
    if (K == Reduce::Mean) acc = static_cast<Acc>(acc / static_cast<Acc>(count));
    if (K == Reduce::L2) acc = static_cast<Acc>(sqrt(static_cast<double>(acc)));
    if (K == Reduce::LogSum) acc = static_cast<Acc>(log(static_cast<double>(acc)));
    if (K == Reduce::LogSumExp) acc = static_cast<Acc>(peak + log(static_cast<double>(acc)));
    y[o] = static_cast<T>(acc);
  }
}

// ArgMax and ArgMin along an axis (x viewed as [outer, len, inner]): the first index of the best
// value, or the last with `last`.
template <bool kMax, class T, class C>
__global__ void arg_reduce(const T* __restrict__ x, int64_t* __restrict__ y, int64_t outer, int64_t len, int64_t inner,
                           bool last) {
  KILN_CUDA_FOR(i, outer * inner) {
    const int64_t o = i / inner, in = i % inner;
    const T* p = x + o * len * inner + in;
    int64_t best = 0;
    C bv = static_cast<C>(p[0]);
    for (int64_t k = 1; k < len; ++k) {
      const C v = static_cast<C>(p[k * inner]);
      const bool better = kMax ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
      if (better) {
        best = k;
        bv = v;
      }
    }
    y[i] = best;
  }
}

// Clip as numpy.clip (kiln::rt::clip): raised to lo, then lowered to hi; bounds from one-element
// tensors, or the type's extremes where omitted.
template <class T>
__global__ void clip(const T* __restrict__ x, const T* lo, const T* hi, T* __restrict__ y, int64_t n) {
  const T l = lo ? *lo : std::numeric_limits<T>::lowest(), h = hi ? *hi : std::numeric_limits<T>::max();
  KILN_CUDA_FOR(i, n) {
    const T up = x[i] < l ? l : x[i];
    y[i] = up > h ? h : up;
  }
}

// Cast (kiln::rt::cast's rules): to bool, "not zero"; float to integer truncates toward zero,
// saturating, NaN giving 0; otherwise a plain conversion.
template <class O, class I>
__device__ inline O cast_value(I x) {
  if (std::is_same<O, bool>::value) return x != I(0);
  if (std::is_integral<O>::value && std::is_floating_point<I>::value) {
    if (x != x) return O(0);
    if (x <= static_cast<I>(std::numeric_limits<O>::lowest())) return std::numeric_limits<O>::lowest();
    if (x >= static_cast<I>(std::numeric_limits<O>::max())) return std::numeric_limits<O>::max();
  }
  return static_cast<O>(x);
}
template <class O, class I>
__global__ void cast(const I* __restrict__ x, O* __restrict__ y, int64_t n) {
  KILN_CUDA_FOR(i, n) y[i] = cast_value<O, I>(x[i]);
}

// A copy through per-dim tables (Pad in every mode, CenterCropPad: ir/ops/slice_pad.h): output
// index k of dim d reads input offset tables[at[d] + k], summed over the dims; -1 anywhere takes
// the fill value (one element, or zero when null). Up to 8 dims.
struct TableShape {
  int64_t dims[8], at[8];
  int rank;
};
template <class T>
__global__ void table_copy(TableShape s, const int64_t* __restrict__ tables, const T* __restrict__ x, const T* fill,
                           T* __restrict__ y, int64_t n) {
  const T v = fill ? *fill : T(0);
  KILN_CUDA_FOR(i, n) {
    int64_t rest = i, at = 0;
    bool inside = true;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t off = tables[s.at[d] + rest % s.dims[d]];
      rest /= s.dims[d];
      inside = inside && off >= 0;
      at += off;
    }
    y[i] = inside ? x[at] : v;
  }
}

}  // namespace kiln_cuda
