// Winograd F(m x m, 3 x 3) convolution (see winograd.h). Per chunk of tiles (sized so that its
// transformed input and products stay in L2):
//   1. input transform: for each channel and tile, B^T d B into V[xi][c][tile] (xi: the
//      (m + 2)^2 positions of a tile), a tile row at a time: first down the columns of the
//      tile row's m + 2 input rows (contiguous, vectorized along the row), then across them;
//   2. one GEMM per xi, U[xi] (M x C, transformed and packed at compile time) times V[xi]
//      (C x tiles) into P[xi][k][tile], through the packed GEMM of gemm.cpp;
//   3. output transform: for each output channel and tile, A^T p A plus the bias into the
//      output rows (edge tiles clipped), then the epilogue on each finished row segment.
// Tiles are numbered over (image, tile row, tile column), so a chunk may span rows and images.
#include "kiln/rt/winograd.h"

#include "kiln/rt/kernel_log.h"

#include <cstring>
#include <vector>

#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

// F(TM x TM, 3 x 3) with interpolation points 0, 1, -1 (, 2, -2) and infinity (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks"): the weight transform G, and the 1-D
// input (B^T) and output (A^T) transforms written out with their common terms, for a V of one
// float or a vector of tiles.
template <int TM>
struct Transforms;

template <>
struct Transforms<4> {
  static constexpr int kA = 6;
  static constexpr double G[6][3] = {{1.0 / 4, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                     {0, 0, 1}};
  // B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
  template <typename V>
  static void input(const V* d, V* o) {
    const V t1 = d[4] - 4.f * d[2], t2 = d[3] - 4.f * d[1], t3 = d[4] - d[2], t4 = 2.f * (d[3] - d[1]);
    o[0] = 4.f * d[0] - 5.f * d[2] + d[4];
    o[1] = t1 + t2;
    o[2] = t1 - t2;
    o[3] = t3 + t4;
    o[4] = t3 - t4;
    o[5] = 4.f * d[1] - 5.f * d[3] + d[5];
  }
  // A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
  template <typename V>
  static void output(const V* m, V* y) {
    const V a = m[1] + m[2], b = m[1] - m[2], c = m[3] + m[4], d = m[3] - m[4];
    y[0] = m[0] + a + c;
    y[1] = b + 2.f * d;
    y[2] = a + 4.f * c;
    y[3] = b + 8.f * d + m[5];
  }
};

template <>
struct Transforms<2> {
  static constexpr int kA = 4;
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  // B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
  template <typename V>
  static void input(const V* d, V* o) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
  }
  // A^T = [1 1 1 0; 0 1 -1 -1]
  template <typename V>
  static void output(const V* m, V* y) {
    y[0] = m[0] + m[1] + m[2];
    y[1] = m[1] - m[2] - m[3];
  }
};

// Tiles of one tile row handled at once (their input rows are copied into a stack buffer).
constexpr int64_t kSegTiles = 64;
// The transformed input and the products of a chunk: about this many floats (1 MiB, Zen 4's
// L2; measured on ResNet-50's layers, larger chunks ran faster than ones half the L2), in
// whole tile rows where a row fits, else in whole GEMM register-tile widths (16 tiles).
constexpr int64_t kChunkFloats = 256 * 1024;
constexpr int64_t kTileCols = 16;
// Chunks running at once (each in its own part of the scratch): more threads than this split
// each chunk's stages instead.
constexpr int64_t kMaxParts = 4;

struct Geometry {
  int64_t a;       // input tile side, tile + 2
  int64_t th, tw;  // tile rows and columns per image
  int64_t tiles;   // N * th * tw
  int64_t nt;      // tiles per chunk
  int64_t chunks;
  int64_t chunk_floats;  // V and P of one chunk
  int64_t parts;         // chunks of scratch
};

Geometry geometry(const Conv2dParams& p, int tile) {
  Geometry g{};
  g.a = tile + 2;
  g.th = (p.OH + tile - 1) / tile;
  g.tw = (p.OW + tile - 1) / tile;
  g.tiles = p.N * g.th * g.tw;
  const int64_t per_tile = g.a * g.a * (p.C + p.M);
  int64_t nt = kChunkFloats / per_tile;
  if (nt >= g.tw)
    nt = nt / g.tw * g.tw;
  else
    nt = nt / kTileCols * kTileCols;
  if (nt < kTileCols) nt = kTileCols;
  g.nt = nt < g.tiles ? nt : g.tiles;
  g.chunks = g.nt > 0 ? (g.tiles + g.nt - 1) / g.nt : 0;
  g.chunk_floats = per_tile * g.nt;
  g.parts = g.chunks < kMaxParts ? g.chunks : kMaxParts;
  return g;
}

// A run of tiles in one tile row: image n, tile row r, tile columns [c0, c0 + len), the
// first at index `local` of its chunk, `avail` tiles of the chunk from there on (vectors of
// eight tiles may run past the segment into the next one while they stay in the chunk).
struct Segment {
  int64_t n, r, c0, len, local, avail;
};

// Calls fn(segment) for the tiles [t0, t1), split at tile rows and kSegTiles.
template <typename Fn>
void for_segments(const Geometry& g, int64_t t0, int64_t t1, Fn&& fn) {
  for (int64_t t = t0; t < t1;) {
    const int64_t per_image = g.th * g.tw;
    const int64_t n = t / per_image, rem = t % per_image, r = rem / g.tw, c0 = rem % g.tw;
    int64_t len = g.tw - c0;
    if (len > t1 - t) len = t1 - t;
    if (len > kSegTiles) len = kSegTiles;
    fn(Segment{n, r, c0, len, t - t0, t1 - t});
    t += len;
  }
}

// Eight tiles side by side, one per lane: the transforms run on eight tiles at once.
#if defined(__GNUC__) || defined(__clang__)
// The vectors stay inside this file (no ABI to keep): GCC's note that passing them without AVX
// differs from passing them with it does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float vec8 __attribute__((vector_size(8 * sizeof(float))));
inline vec8 splat8(float f) { return vec8{} + f; }

// out[c] lane j = src[j * TM + c] for c < TM: eight tiles' TM consecutive floats each.
template <int TM>
void deinterleave(const float* src, vec8* out);
template <>
inline void deinterleave<4>(const float* src, vec8* out) {
  vec8 l0, l1, l2, l3;
  std::memcpy(&l0, src, sizeof l0);
  std::memcpy(&l1, src + 8, sizeof l1);
  std::memcpy(&l2, src + 16, sizeof l2);
  std::memcpy(&l3, src + 24, sizeof l3);
  const vec8 a = __builtin_shufflevector(l0, l1, 0, 4, 8, 12, 1, 5, 9, 13);  // columns 0, 1 of tiles 0-3
  const vec8 b = __builtin_shufflevector(l0, l1, 2, 6, 10, 14, 3, 7, 11, 15);
  const vec8 c = __builtin_shufflevector(l2, l3, 0, 4, 8, 12, 1, 5, 9, 13);  // tiles 4-7
  const vec8 d = __builtin_shufflevector(l2, l3, 2, 6, 10, 14, 3, 7, 11, 15);
  out[0] = __builtin_shufflevector(a, c, 0, 1, 2, 3, 8, 9, 10, 11);
  out[1] = __builtin_shufflevector(a, c, 4, 5, 6, 7, 12, 13, 14, 15);
  out[2] = __builtin_shufflevector(b, d, 0, 1, 2, 3, 8, 9, 10, 11);
  out[3] = __builtin_shufflevector(b, d, 4, 5, 6, 7, 12, 13, 14, 15);
}
template <>
inline void deinterleave<2>(const float* src, vec8* out) {
  vec8 l0, l1;
  std::memcpy(&l0, src, sizeof l0);
  std::memcpy(&l1, src + 8, sizeof l1);
  out[0] = __builtin_shufflevector(l0, l1, 0, 2, 4, 6, 8, 10, 12, 14);
  out[1] = __builtin_shufflevector(l0, l1, 1, 3, 5, 7, 9, 11, 13, 15);
}

// dst[j * TM + c] = in[c] lane j: the inverse of deinterleave.
template <int TM>
void interleave(const vec8* in, float* dst);
template <>
inline void interleave<4>(const vec8* in, float* dst) {
  const vec8 p0 = __builtin_shufflevector(in[0], in[1], 0, 8, 1, 9, 2, 10, 3, 11);
  const vec8 q0 = __builtin_shufflevector(in[2], in[3], 0, 8, 1, 9, 2, 10, 3, 11);
  const vec8 p1 = __builtin_shufflevector(in[0], in[1], 4, 12, 5, 13, 6, 14, 7, 15);
  const vec8 q1 = __builtin_shufflevector(in[2], in[3], 4, 12, 5, 13, 6, 14, 7, 15);
  const vec8 o[4] = {__builtin_shufflevector(p0, q0, 0, 1, 8, 9, 2, 3, 10, 11),
                     __builtin_shufflevector(p0, q0, 4, 5, 12, 13, 6, 7, 14, 15),
                     __builtin_shufflevector(p1, q1, 0, 1, 8, 9, 2, 3, 10, 11),
                     __builtin_shufflevector(p1, q1, 4, 5, 12, 13, 6, 7, 14, 15)};
  std::memcpy(dst, o, sizeof o);
}
template <>
inline void interleave<2>(const vec8* in, float* dst) {
  const vec8 o[2] = {__builtin_shufflevector(in[0], in[1], 0, 8, 1, 9, 2, 10, 3, 11),
                     __builtin_shufflevector(in[0], in[1], 4, 12, 5, 13, 6, 14, 7, 15)};
  std::memcpy(dst, o, sizeof o);
}
#else
// Portable lanes: plain loops over eight floats.
struct vec8 {
  float v[8];
  friend vec8 operator+(vec8 a, const vec8& b) {
    for (int i = 0; i < 8; ++i) a.v[i] += b.v[i];
    return a;
  }
  friend vec8 operator-(vec8 a, const vec8& b) {
    for (int i = 0; i < 8; ++i) a.v[i] -= b.v[i];
    return a;
  }
  friend vec8 operator*(float s, vec8 a) {
    for (int i = 0; i < 8; ++i) a.v[i] *= s;
    return a;
  }
};
inline vec8 splat8(float f) {
  vec8 r;
  for (int i = 0; i < 8; ++i) r.v[i] = f;
  return r;
}
template <int TM>
void deinterleave(const float* src, vec8* out) {
  for (int c = 0; c < TM; ++c)
    for (int j = 0; j < 8; ++j) out[c].v[j] = src[j * TM + c];
}
template <int TM>
void interleave(const vec8* in, float* dst) {
  for (int c = 0; c < TM; ++c)
    for (int j = 0; j < 8; ++j) dst[j * TM + c] = in[c].v[j];
}
#endif

inline vec8 load8(const float* p) {
  vec8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The first n (1 to 8) lanes from p, the others 0: no read past a chunk's last tile.
inline vec8 load8(const float* p, int64_t n) {
  float t[8] = {};
  std::memcpy(t, p, sizeof(float) * static_cast<size_t>(n));
  return load8(t);
}

// The first n (1 to 8) lanes of v to p.
inline void store8(float* p, const vec8& v, int64_t n) {
  if (n == 8) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  float t[8];
  std::memcpy(t, &v, sizeof v);
  std::memcpy(p, t, sizeof(float) * static_cast<size_t>(n));
}

// B^T d B for channel c's tiles of segment s, into v[xi * C * nt + c * nt + local + j], eight
// tiles at a time. The tile row's input rows are copied (zeros outside the image) and
// transformed down the columns first, a vector of columns at a time; then across, with the
// tiles' columns gathered into lanes.
template <int TM>
__attribute__((always_inline)) inline void input_segment(const Conv2dParams& p, const Geometry& g, const float* xc, int64_t c, const Segment& s, float* v) {
  using T = Transforms<TM>;
  constexpr int kA = T::kA;
  constexpr int64_t kMaxCols = kSegTiles * TM + 8;
  const int64_t groups = (s.len + 7) / 8;
  // Columns read: every group's 8 * TM, and TM more for the last tile's last two columns.
  const int64_t cols = ((groups * 8 + 1) * TM + 7) / 8 * 8;
  const int64_t iw0 = s.c0 * TM - p.pad_left;
  alignas(64) float rows[kA][kMaxCols];
  alignas(64) float tv[kA][kMaxCols];
  int64_t lo = -iw0 > 0 ? -iw0 : 0;  // columns [lo, hi) are inside the image
  int64_t hi = p.W - iw0 < cols ? p.W - iw0 : cols;
  if (lo > cols) lo = cols;
  if (hi < lo) hi = lo;
  for (int r = 0; r < kA; ++r) {
    const int64_t ih = s.r * TM - p.pad_top + r;
    float* d = rows[r];
    if (ih < 0 || ih >= p.H) {
      std::memset(d, 0, sizeof(float) * cols);
      continue;
    }
    for (int64_t q = 0; q < lo; ++q) d[q] = 0.f;
    if (hi > lo) std::memcpy(d + lo, xc + ih * p.W + iw0 + lo, sizeof(float) * (hi - lo));
    for (int64_t q = hi; q < cols; ++q) d[q] = 0.f;
  }
  for (int64_t q = 0; q < cols; q += 8) {
    vec8 d[kA], o[kA];
    for (int r = 0; r < kA; ++r) d[r] = load8(rows[r] + q);
    T::input(d, o);
    for (int i = 0; i < kA; ++i) std::memcpy(tv[i] + q, &o[i], sizeof o[i]);
  }
  const int64_t stride = p.C * g.nt;  // between xi planes of v
  float* base = v + c * g.nt + s.local;
  for (int64_t j0 = 0; j0 < s.len; j0 += 8) {
    // Lanes past the segment hold the next segment's tiles (it overwrites them) up to the
    // chunk's end, and nothing past it.
    const int64_t n = s.avail - j0 < 8 ? s.avail - j0 : 8;
    for (int i = 0; i < kA; ++i) {
      vec8 d[kA + 2], o[kA];  // d: columns 0 to TM + 1 of the eight tiles (TM + 2 of them used)
      deinterleave<TM>(tv[i] + j0 * TM, d);
      deinterleave<TM>(tv[i] + j0 * TM + TM, d + TM);
      T::input(d, o);
      for (int jj = 0; jj < kA; ++jj) store8(base + (i * kA + jj) * stride + j0, o[jj], n);
    }
  }
}

// A^T p A + bias for output channel k's tiles of segment s (p at pk[xi * M * nt + local + j]),
// eight tiles at a time, into the output rows, then the epilogue on each row segment.
template <int TM>
__attribute__((always_inline)) inline void output_segment(const Conv2dParams& p, const Geometry& g, const float* pk, int64_t k, float bias, const Segment& s,
                    float* y, const Epilogue& ep) {
  using T = Transforms<TM>;
  constexpr int kA = T::kA;
  alignas(64) float orow[TM][kSegTiles * TM];
  const int64_t stride = p.M * g.nt;
  const float* base = pk + s.local;
  const vec8 b = splat8(bias);
  for (int64_t j0 = 0; j0 < s.len; j0 += 8) {
    const int64_t n = s.avail - j0 < 8 ? s.avail - j0 : 8;  // lanes past the segment unused
    vec8 h[TM][kA];  // h[jj][i]: row i of p, times A
    for (int i = 0; i < kA; ++i) {
      vec8 m[kA], o[TM];
      for (int q = 0; q < kA; ++q) {
        const float* src = base + (i * kA + q) * stride + j0;
        m[q] = n == 8 ? load8(src) : load8(src, n);
      }
      T::output(m, o);
      for (int jj = 0; jj < TM; ++jj) h[jj][i] = o[jj];
    }
    vec8 out[TM][TM];  // out[ii][jj]
    for (int jj = 0; jj < TM; ++jj) {
      vec8 o[TM];
      T::output(h[jj], o);
      for (int ii = 0; ii < TM; ++ii) out[ii][jj] = o[ii] + b;
    }
    for (int ii = 0; ii < TM; ++ii) interleave<TM>(out[ii], orow[ii] + j0 * TM);
  }
  const int64_t ow0 = s.c0 * TM;
  const int64_t width = p.OW - ow0 < s.len * TM ? p.OW - ow0 : s.len * TM;
  // An epilogue that is a residual, a clamp or a Relu (its promises) is applied as the rows
  // are copied out (ResNet-50's Relu: one call of fn per row segment otherwise); another
  // through fn.
  const bool own = ep.fn && (ep.fn_is_clamp || ep.fn_is_relu || ep.residual);
  const bool clamp = ep.fn_is_clamp, relu = ep.fn_is_relu;
  const float lo = ep.clamp_lo, hi = ep.clamp_hi;
  for (int ii = 0; ii < TM; ++ii) {
    const int64_t oh = s.r * TM + ii;
    if (oh >= p.OH) break;
    const int64_t offset = ((s.n * p.M + k) * p.OH + oh) * p.OW + ow0;
    float* out = y + offset;
    if (!own) {
      std::memcpy(out, orow[ii], sizeof(float) * width);
      if (ep.fn) ep.fn(ep.ctx, out, offset, width);
      continue;
    }
    const float* z = ep.residual ? ep.residual + offset : nullptr;
    for (int64_t i = 0; i < width; ++i) {
      float v = orow[ii][i];
      if (z) v += z[i];
      if (clamp)
        v = v < lo ? lo : (v > hi ? hi : v);
      else if (relu)
        v = relu_of(v);
      out[i] = v;
    }
  }
}

struct Run {
  const Conv2dParams* p;
  Geometry g;
  const float* x;
  const float* w;  // packed U, one GEMM A operand per xi
  size_t w_per_xi;
  const float* bias;
  float* y;
  float* scratch;
  const Epilogue* ep;
  bool avx2;  // the transforms' AVX2+FMA build can run here
};

// The transforms of channels [c0, c1) of tiles [t0, t1) (into v), and of output channels [m0, m1)
// (from prod), each written once and compiled twice: for the build's baseline and, chosen at run
// time, for AVX2+FMA (everything inlined into the stage, so that the vec8 operations are
// compiled for it). Built for the baseline alone (x86-64's SSE2: a vec8 as two halves, moved
// through the stack), the transforms took 12% of ResNet-50's time at one thread, 4.4x what
// they take as AVX2.
template <int TM>
__attribute__((always_inline)) inline void input_stage(const Run& r, int64_t t0, int64_t t1, float* v, int64_t c0,
                                                       int64_t c1) {
  for (int64_t c = c0; c < c1; ++c)
    for_segments(r.g, t0, t1, [&](const Segment& s) {
      const float* xc = r.x + (s.n * r.p->C + c) * r.p->H * r.p->W;
      input_segment<TM>(*r.p, r.g, xc, c, s, v);
    });
}

template <int TM>
__attribute__((always_inline)) inline void output_stage(const Run& r, int64_t t0, int64_t t1, const float* prod,
                                                        int64_t m0, int64_t m1) {
  for (int64_t m = m0; m < m1; ++m) {
    const float b = r.bias ? r.bias[m] : 0.f;
    for_segments(r.g, t0, t1,
                 [&](const Segment& s) { output_segment<TM>(*r.p, r.g, prod + m * r.g.nt, m, b, s, r.y, *r.ep); });
  }
}

template <int TM>
__attribute__((flatten)) void input_stage_baseline(const Run& r, int64_t t0, int64_t t1, float* v, int64_t c0,
                                                   int64_t c1) {
  input_stage<TM>(r, t0, t1, v, c0, c1);
}

template <int TM>
__attribute__((flatten)) void output_stage_baseline(const Run& r, int64_t t0, int64_t t1, const float* prod,
                                                    int64_t m0, int64_t m1) {
  output_stage<TM>(r, t0, t1, prod, m0, m1);
}

#if KILN_X86_KERNELS
template <int TM>
KILN_AVX2_FMA __attribute__((flatten)) void input_stage_avx2(const Run& r, int64_t t0, int64_t t1, float* v,
                                                             int64_t c0, int64_t c1) {
  input_stage<TM>(r, t0, t1, v, c0, c1);
}

template <int TM>
KILN_AVX2_FMA __attribute__((flatten)) void output_stage_avx2(const Run& r, int64_t t0, int64_t t1, const float* prod,
                                                              int64_t m0, int64_t m1) {
  output_stage<TM>(r, t0, t1, prod, m0, m1);
}
#endif

template <int TM>
void run_input_stage(const Run& r, int64_t t0, int64_t t1, float* v, int64_t c0, int64_t c1) {
#if KILN_X86_KERNELS
  if (r.avx2) return input_stage_avx2<TM>(r, t0, t1, v, c0, c1);
#endif
  input_stage_baseline<TM>(r, t0, t1, v, c0, c1);
}

template <int TM>
void run_output_stage(const Run& r, int64_t t0, int64_t t1, const float* prod, int64_t m0, int64_t m1) {
#if KILN_X86_KERNELS
  if (r.avx2) return output_stage_avx2<TM>(r, t0, t1, prod, m0, m1);
#endif
  output_stage_baseline<TM>(r, t0, t1, prod, m0, m1);
}

// The three stages of tiles [t0, t1) (at most g.nt) in scratch part `part`, each split across
// `pool` (nullptr: serial).
template <int TM>
void run_chunk(const Run& run, int64_t t0, int64_t t1, int64_t part, ThreadPool* pool) {
  struct Chunk {
    const Run* run;
    int64_t t0, t1;
    float* v;
    float* prod;
  };
  const Conv2dParams& p = *run.p;
  const Geometry& g = run.g;
  float* v = run.scratch + part * g.chunk_floats;
  Chunk ch{&run, t0, t1, v, v + g.a * g.a * p.C * g.nt};
  parallel_for(pool, p.C, [q = &ch](int64_t c0, int64_t c1) {
    run_input_stage<TM>(*q->run, q->t0, q->t1, q->v, c0, c1);
  });
  parallel_for(pool, g.a * g.a, [q = &ch](int64_t x0, int64_t x1) {
    const Run& r = *q->run;
    const Conv2dParams& cp = *r.p;
    const int64_t nt = r.g.nt, n = q->t1 - q->t0;
    for (int64_t xi = x0; xi < x1; ++xi)
      gemm_f32_ex(cp.M, n, cp.C, 1.f, GemmOperand{r.w + xi * r.w_per_xi, 0, false, true},
                  GemmOperand{q->v + xi * cp.C * nt, nt, false, false}, 0.f, q->prod + xi * cp.M * nt, nt, nullptr,
                  Epilogue{}, 0, nullptr);
  });
  parallel_for(pool, p.M, [q = &ch](int64_t m0, int64_t m1) {
    run_output_stage<TM>(*q->run, q->t0, q->t1, q->prod, m0, m1);
  });
}

template <int TM>
void run_all(const Run& run, ThreadPool* pool) {
  const int64_t threads = pool ? pool->size() : 1;
  if (threads > 1 && threads <= run.g.parts && run.g.chunks >= 2 * threads && run.g.nt >= kTileCols) {
    // Enough chunks to share: the tiles in units of 16 (a GEMM register tile) are shared
    // equally and balanced (a thread slowed down has the end of its share taken), each range
    // claimed a chunk at a time (at most g.nt, in the claiming slot's scratch part), every
    // stage serial.
    // Whole chunks dealt out in turn left one thread more work (ResNet's 56 x 56 layers: 4
    // chunks of 56, 56, 56 and 28 tiles, 112 against 84: 1.75x faster on 2 threads). Chunks are
    // whole units, so every tile but the last few sits in a full register tile of the GEMM
    // wherever the ranges fall, and the output does not depend on which thread took what.
    const int64_t units = (run.g.tiles + kTileCols - 1) / kTileCols;
    parallel_for_balanced_slots(
        pool, units,
        [r = &run](int64_t u0, int64_t u1, int slot) {
          const int64_t t1 = u1 * kTileCols < r->g.tiles ? u1 * kTileCols : r->g.tiles;
          run_chunk<TM>(*r, u0 * kTileCols, t1, slot, nullptr);
        },
        run.g.nt / kTileCols);
  } else {
    for (int64_t t = 0; t < run.g.tiles; t += run.g.nt)
      run_chunk<TM>(run, t, t + run.g.nt < run.g.tiles ? t + run.g.nt : run.g.tiles, 0, pool);
  }
}

template <int TM>
void pack_weights(const Conv2dParams& p, const float* w, float* packed) {
  using T = Transforms<TM>;
  constexpr int kA = T::kA;
  const size_t per_xi = gemm_f32_packed_a_floats(p.M, p.C);
  std::vector<float> u(static_cast<size_t>(kA * kA) * p.M * p.C);  // U[xi][m][c]
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t c = 0; c < p.C; ++c) {
      const float* gw = w + (m * p.C + c) * 9;
      double t[kA][3];  // G g
      for (int i = 0; i < kA; ++i)
        for (int j = 0; j < 3; ++j) {
          double s = 0;
          for (int q = 0; q < 3; ++q) s += T::G[i][q] * gw[q * 3 + j];
          t[i][j] = s;
        }
      for (int i = 0; i < kA; ++i)
        for (int j = 0; j < kA; ++j) {
          double s = 0;
          for (int q = 0; q < 3; ++q) s += t[i][q] * T::G[j][q];
          u[((i * kA + j) * p.M + m) * p.C + c] = static_cast<float>(s);
        }
    }
  for (int xi = 0; xi < kA * kA; ++xi)
    gemm_f32_pack_a(false, p.M, p.C, u.data() + xi * p.M * p.C, p.C, packed + xi * per_xi);
}

}  // namespace

bool winograd_applicable(const Conv2dParams& p) noexcept {
  return p.KH == 3 && p.KW == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dil_h == 1 && p.dil_w == 1 &&
         p.group == 1 && p.pad_top >= 0 && p.pad_left >= 0 && p.N > 0 && p.C > 0 && p.M > 0 && p.OH > 0 &&
         p.OW > 0;
}

int winograd_choose_tile(const Conv2dParams& p) noexcept {
  if (!winograd_applicable(p) || p.C < 32 || p.M < 32) return 0;
  // Multiply-adds of the GEMMs (tiles rounded up to the kernel's 16-wide register tiles), plus
  // the transforms (about 8 per transformed value, at a fraction of the GEMM's speed), against
  // im2col's GEMM.
  auto up = [](int64_t v, int64_t m) { return static_cast<double>((v + m - 1) / m * m); };
  auto cost = [&](int tile) {
    const Geometry g = geometry(p, tile);
    const double a2 = static_cast<double>(g.a * g.a);
    return a2 * up(g.tiles, kTileCols) * static_cast<double>(p.M * p.C) +
           a2 * static_cast<double>(g.tiles) * static_cast<double>(p.C + p.M) * 8.0;
  };
  const double direct = 9.0 * up(p.N * p.OH * p.OW, kTileCols) * static_cast<double>(p.M * p.C);
  const double c4 = cost(4), c2 = cost(2);
  const double best = c4 < c2 ? c4 : c2;
  if (best * 1.25 > direct) return 0;
  return c4 <= c2 ? 4 : 2;
}

size_t winograd_packed_weight_floats(const Conv2dParams& p, int tile) noexcept {
  const int64_t a = tile + 2;
  return static_cast<size_t>(a * a) * gemm_f32_packed_a_floats(p.M, p.C);
}

void winograd_pack_weights(const Conv2dParams& p, int tile, const float* w, float* packed) noexcept {
  if (tile == 4)
    pack_weights<4>(p, w, packed);
  else
    pack_weights<2>(p, w, packed);
}

size_t winograd_scratch_floats(const Conv2dParams& p, int tile) noexcept {
  const Geometry g = geometry(p, tile);
  return static_cast<size_t>(g.parts * g.chunk_floats);
}

void winograd_conv2d_f32(const Conv2dParams& p, int tile, const float* x, const float* w_packed, const float* bias,
                         float* y, float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept {
  if (!winograd_applicable(p)) return;
  if (kernel_log_enabled())
    log_conv_kernel(tile == 4 ? "winograd_f4x4_3x3+gemm" : "winograd_f2x2_3x3+gemm", gemm_f32_isa_name(), p.C, p.H,
                    p.W, p.M, p.KH, p.KW, p.stride_w);
  const Run run{&p,      geometry(p, tile), x, w_packed, gemm_f32_packed_a_floats(p.M, p.C), bias, y, scratch,
                &epilogue, cpu_has_avx2_fma()};
  if (tile == 4)
    run_all<4>(run, pool);
  else
    run_all<2>(run, pool);
}

}  // namespace kiln::rt
