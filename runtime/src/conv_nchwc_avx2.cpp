// conv_nchwc_f32's register tile for AVX2 + FMA (x86-64 without AVX-512, and any x86 CPU under
// KILN_CPU_ISA=avx2): one output block (F = 1) of 16 channels is two ymm halves, so P = 6
// positions keep 12 accumulators, the 2 weight registers of an input channel and two broadcast
// registers in the 16 (the 6 x 16 register tile of BLIS's Haswell SGEMM). Per input channel: 2
// weight loads and 6 broadcasts for 12 FMAs.
//
// The inner loops are inline assembly. Written with intrinsics, GCC 12 made three different
// messes of the same loop depending on the instantiation: a lea per broadcast (26 instructions
// where 20 do), weights folded into every FMA as memory operands (18 loads for 12 FMAs, which
// makes the loop load-bound), and the 12 accumulators spilled to the stack and reloaded at each
// block of 16 channels; ResNet-50's 1x1 layers ran at 64-78% of the 256-bit FMA peak. Here the
// accumulators stay in ymm0-ymm11 for a whole tap (all its input channels), loaded from and
// stored to the tile's float buffer around it.
//
// Sums are in the same order as vector_tile and portable_tile (conv_nchwc.cpp): taps (kh, kw) in
// order, input channels ascending within a tap, one FMA per channel: the results are bitwise
// those of the other families.
#include <cstring>

#include "kiln/rt/conv_nchwc_tile.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt::nchwc {

#if KILN_X86_KERNELS
namespace {

constexpr int64_t kB = kNchwcBlock;

// The assembly's pieces. Position p's accumulators are ymm(2p) and ymm(2p + 1); a position at or
// past %[P] is skipped when assembled (.if), so one text serves every P. The two weight halves
// of the current input channel are in ymm12 and ymm13; broadcasts alternate ymm14 and ymm15.
#define KILN_AVX2_LOAD_ACC(p, a0, a1) \
  ".if " #p " < %c[P]\n\t"            \
  "vmovups " #p "*64(%[acc]), %%ymm" #a0 "\n\t" \
  "vmovups " #p "*64+32(%[acc]), %%ymm" #a1 "\n\t" \
  ".endif\n\t"
#define KILN_AVX2_STORE_ACC(p, a0, a1) \
  ".if " #p " < %c[P]\n\t"             \
  "vmovups %%ymm" #a0 ", " #p "*64(%[acc])\n\t" \
  "vmovups %%ymm" #a1 ", " #p "*64+32(%[acc])\n\t" \
  ".endif\n\t"
// Position p's value at `mem` (an address built around %[xp]) times the two weight halves.
#define KILN_AVX2_FMA_POS(p, a0, a1, b, pre, post) \
  ".if " #p " < %c[P]\n\t"                         \
  "vbroadcastss " pre "%[x" #p "]" post ", %%ymm" #b "\n\t" \
  "vfmadd231ps %%ymm12, %%ymm" #b ", %%ymm" #a0 "\n\t" \
  "vfmadd231ps %%ymm13, %%ymm" #b ", %%ymm" #a1 "\n\t" \
  ".endif\n\t"
#define KILN_AVX2_FMA_ALL(pre, post)                \
  KILN_AVX2_FMA_POS(0, 0, 1, 14, pre, post)         \
  KILN_AVX2_FMA_POS(1, 2, 3, 15, pre, post)         \
  KILN_AVX2_FMA_POS(2, 4, 5, 14, pre, post)         \
  KILN_AVX2_FMA_POS(3, 6, 7, 15, pre, post)         \
  KILN_AVX2_FMA_POS(4, 8, 9, 14, pre, post)         \
  KILN_AVX2_FMA_POS(5, 10, 11, 15, pre, post)
#define KILN_AVX2_WEIGHTS(off)                   \
  "vmovups " off "(%[w]), %%ymm12\n\t"           \
  "vmovups " off "+32(%[w]), %%ymm13\n\t"
#define KILN_AVX2_ADVANCE(p, by) ".if " #p " < %c[P]\n\tadd " by ", %[x" #p "]\n\t.endif\n\t"
#define KILN_AVX2_ADVANCE_ALL(by)                                                            \
  KILN_AVX2_ADVANCE(0, by) KILN_AVX2_ADVANCE(1, by) KILN_AVX2_ADVANCE(2, by) KILN_AVX2_ADVANCE(3, by) \
  KILN_AVX2_ADVANCE(4, by) KILN_AVX2_ADVANCE(5, by)
#define KILN_AVX2_ACC_IN                                                                     \
  KILN_AVX2_LOAD_ACC(0, 0, 1) KILN_AVX2_LOAD_ACC(1, 2, 3) KILN_AVX2_LOAD_ACC(2, 4, 5)       \
  KILN_AVX2_LOAD_ACC(3, 6, 7) KILN_AVX2_LOAD_ACC(4, 8, 9) KILN_AVX2_LOAD_ACC(5, 10, 11)
#define KILN_AVX2_ACC_OUT                                                                    \
  KILN_AVX2_STORE_ACC(0, 0, 1) KILN_AVX2_STORE_ACC(1, 2, 3) KILN_AVX2_STORE_ACC(2, 4, 5)    \
  KILN_AVX2_STORE_ACC(3, 6, 7) KILN_AVX2_STORE_ACC(4, 8, 9) KILN_AVX2_STORE_ACC(5, 10, 11)
// The six position pointers as in-out operands %[x0] .. %[x5].
#define KILN_AVX2_POSITION_OPERANDS(x)                                                                  \
  [x0] "+r"(x.x[0]), [x1] "+r"(x.x[1]), [x2] "+r"(x.x[2]), [x3] "+r"(x.x[3]), [x4] "+r"(x.x[4]), \
      [x5] "+r"(x.x[5])
#define KILN_AVX2_CLOBBERS                                                                    \
  "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
      "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

// Position pointers for the assembly: x[p] for the P positions, the first one's for the rest
// (named as operands, never read).
template <int P>
struct Positions {
  const char* x[6];
  explicit Positions(const float* const* xp) {
    for (int p = 0; p < 6; ++p) x[p] = reinterpret_cast<const char*>(xp[p < P ? p : 0]);
  }
};

// Blocked input: nb blocks of 16 input channels, position p's 16 values of a block at x[p]
// (the next block x_block_bytes further), the block's weights 16 x 16 floats from w on.
#define KILN_AVX2_PREFETCH            \
  "cmp %[pf_end], %[pf]\n\t"       \
  "jae 3f\n\t"                     \
  "prefetcht1 (%[pf])\n\t"         \
  "prefetcht1 64(%[pf])\n\t"       \
  "add $128, %[pf]\n\t"            \
  "3:\n\t"

// [pf, pf_end): bytes to fetch into L2 meanwhile (two lines every 16 channels, while any are
// left; see fetch_ahead).
template <int P>
KILN_AVX2_FMA void blocks_avx2(const float* const* xp, int64_t nb, int64_t x_block_bytes, const float* w, float* acc,
                               const char* pf, const char* pf_end) {
  Positions<P> x(xp);
  asm volatile(
      KILN_AVX2_ACC_IN
      "1:\n\t"
      ".irp k,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
      KILN_AVX2_WEIGHTS("\\k*64")
      KILN_AVX2_FMA_ALL("\\k*4(", ")")
      ".endr\n\t"
      "add $1024, %[w]\n\t"
      KILN_AVX2_ADVANCE_ALL("%[xs]")
      KILN_AVX2_PREFETCH
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      KILN_AVX2_ACC_OUT
      : KILN_AVX2_POSITION_OPERANDS(x), [w] "+r"(w), [n] "+r"(nb), [pf] "+r"(pf)
      : [xs] "r"(x_block_bytes), [acc] "r"(acc), [P] "i"(P), [pf_end] "m"(pf_end)
      : KILN_AVX2_CLOBBERS);
}

// Plain (NCHW) input, one tap: n input channels, position p's value of channel c at
// x[p] + c * plane_bytes, channel c's 16 weights at w + 16 c.
template <int P>
KILN_AVX2_FMA void channels_avx2(const float* const* xp, int64_t n, int64_t plane_bytes, const float* w, float* acc) {
  Positions<P> x(xp);
  int64_t i = 0;
  asm volatile(
      KILN_AVX2_ACC_IN
      "1:\n\t"
      KILN_AVX2_WEIGHTS("0")
      KILN_AVX2_FMA_ALL("(", ",%[i],1)")
      "add $64, %[w]\n\t"
      "add %[cs], %[i]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      KILN_AVX2_ACC_OUT
      : KILN_AVX2_POSITION_OPERANDS(x), [w] "+r"(w), [n] "+r"(n), [i] "+r"(i)
      : [cs] "r"(plane_bytes), [acc] "r"(acc), [P] "i"(P)
      : KILN_AVX2_CLOBBERS);
}

// Plain input with three channels (a stem's colour planes), rows x n taps: tap (r, j)'s value of
// position p and channel c at x[p] + r * row_bytes + 4 j + c * plane_bytes, its weights 3 x 16
// floats from w + (r * kw + j) * 48 on (kw: the kernel's width; n of its taps are taken a row).
// A tap alone is only 36 FMAs: a tile's taps run in one loop, not a call each.
template <int P>
KILN_AVX2_FMA void rgb_taps_avx2(const float* const* xp, int64_t rows, int64_t n, int64_t kw, int64_t row_bytes,
                                 int64_t plane_bytes, const float* w, float* acc) {
  Positions<P> x(xp);
  const int64_t x_skip = row_bytes - 4 * n, w_skip = (kw - n) * 48 * 4;  // from a row's end to the next's start
  int64_t left;
  asm volatile(
      KILN_AVX2_ACC_IN
      "2:\n\t"
      "mov %[n], %[left]\n\t"
      "1:\n\t"
      KILN_AVX2_WEIGHTS("0")
      KILN_AVX2_FMA_ALL("(", ")")
      KILN_AVX2_WEIGHTS("64")
      KILN_AVX2_FMA_ALL("(", ",%[cs],1)")
      KILN_AVX2_WEIGHTS("128")
      KILN_AVX2_FMA_ALL("(", ",%[cs],2)")
      "add $192, %[w]\n\t"
      KILN_AVX2_ADVANCE_ALL("$4")
      "dec %[left]\n\t"
      "jnz 1b\n\t"
      KILN_AVX2_ADVANCE_ALL("%[x_skip]")
      "add %[w_skip], %[w]\n\t"
      "dec %[rows]\n\t"
      "jnz 2b\n\t"
      KILN_AVX2_ACC_OUT
      : KILN_AVX2_POSITION_OPERANDS(x), [w] "+r"(w), [rows] "+r"(rows), [left] "=&r"(left)
      : [n] "r"(n), [cs] "r"(plane_bytes), [x_skip] "m"(x_skip), [w_skip] "m"(w_skip), [acc] "r"(acc), [P] "i"(P)
      : KILN_AVX2_CLOBBERS);
}

// rgb_taps_avx2 where the positions are a fixed SW floats apart (a stem's stride: 1, 2 or 4),
// which they always are within a tap: one pointer, position p's value at SW * 4 * p bytes from
// it as the broadcast's displacement. A tap then advances one register, not six: the six adds
// shared the FMA ports (ResNet-50's stem alone: 3.11 -> 2.97 ms, 81% -> 84% of the AVX2 peak).
#define KILN_AVX2_FMA_DISP(p, a0, a1, b, post)                        \
  ".if " #p " < %c[P]\n\t"                                             \
  "vbroadcastss " #p "*%c[sb](%[x]" post ", %%ymm" #b "\n\t"         \
  "vfmadd231ps %%ymm12, %%ymm" #b ", %%ymm" #a0 "\n\t"               \
  "vfmadd231ps %%ymm13, %%ymm" #b ", %%ymm" #a1 "\n\t"               \
  ".endif\n\t"
#define KILN_AVX2_FMA_DISP_ALL(post)                                                                    \
  KILN_AVX2_FMA_DISP(0, 0, 1, 14, post) KILN_AVX2_FMA_DISP(1, 2, 3, 15, post)                           \
  KILN_AVX2_FMA_DISP(2, 4, 5, 14, post) KILN_AVX2_FMA_DISP(3, 6, 7, 15, post)                           \
  KILN_AVX2_FMA_DISP(4, 8, 9, 14, post) KILN_AVX2_FMA_DISP(5, 10, 11, 15, post)

template <int P, int SW>
KILN_AVX2_FMA void rgb_taps_strided_avx2(const float* x0, int64_t rows, int64_t n, int64_t kw, int64_t row_bytes,
                                         int64_t plane_bytes, const float* w, float* acc) {
  const char* x = reinterpret_cast<const char*>(x0);
  const int64_t x_skip = row_bytes - 4 * n, w_skip = (kw - n) * 48 * 4;
  int64_t left;
  asm volatile(
      KILN_AVX2_ACC_IN
      "2:\n\t"
      "mov %[n], %[left]\n\t"
      "1:\n\t"
      KILN_AVX2_WEIGHTS("0")
      KILN_AVX2_FMA_DISP_ALL(")")
      KILN_AVX2_WEIGHTS("64")
      KILN_AVX2_FMA_DISP_ALL(",%[cs],1)")
      KILN_AVX2_WEIGHTS("128")
      KILN_AVX2_FMA_DISP_ALL(",%[cs],2)")
      "add $192, %[w]\n\t"
      "add $4, %[x]\n\t"
      "dec %[left]\n\t"
      "jnz 1b\n\t"
      "add %[x_skip], %[x]\n\t"
      "add %[w_skip], %[w]\n\t"
      "dec %[rows]\n\t"
      "jnz 2b\n\t"
      KILN_AVX2_ACC_OUT
      : [x] "+r"(x), [w] "+r"(w), [rows] "+r"(rows), [left] "=&r"(left)
      : [n] "r"(n), [cs] "r"(plane_bytes), [x_skip] "m"(x_skip), [w_skip] "m"(w_skip), [acc] "r"(acc), [P] "i"(P),
        [sb] "i"(SW * 4)
      : KILN_AVX2_CLOBBERS);
}

using Run = void (*)(const float* const* xp, int64_t n, int64_t stride_bytes, const float* w, float* acc);

// The runs for 1 to 6 positions: a tap whose leftmost or rightmost positions fall in the
// padding runs its valid ones, [lo, hi), as a narrower tile on their accumulators.
using BlocksRun = void (*)(const float* const* xp, int64_t nb, int64_t x_block_bytes, const float* w, float* acc,
                          const char* pf, const char* pf_end);
constexpr BlocksRun blocks_avx2_runs[kMaxP] = {blocks_avx2<1>, blocks_avx2<2>, blocks_avx2<3>,
                                               blocks_avx2<4>, blocks_avx2<5>, blocks_avx2<6>};

// Fetching ahead. Where a layer's weights outgrow L2 (ResNet-50's layer 4: 4 MB for a 1x1, 9 MB
// for the 3x3/2), an output block's positions run one after another (conv_nchwc.cpp's
// UnitOrder) and the next block's weights then came from memory at the pace of its first tile:
// the 7 x 7 layers ran at 71% of the FMA peak in the network against 88% alone. So each tile
// fetches, while it computes, its positions' share of the next output block's weights for the
// same tap (bytes [from, from + bytes) of this block's, moved one block on).
struct Ahead {
  const char* begin;
  const char* end;
};
inline Ahead fetch_ahead(const Tile& t, const float* w, int64_t bytes, int64_t positions) {
  const char* next = reinterpret_cast<const char*>(w + t.w_block);
  return {next + t.plane_pos * bytes / t.plane_size, next + (t.plane_pos + positions) * bytes / t.plane_size + 64};
}

constexpr Run channels_avx2_runs[kMaxP] = {channels_avx2<1>, channels_avx2<2>, channels_avx2<3>,
                                           channels_avx2<4>, channels_avx2<5>, channels_avx2<6>};
using RgbRun = void (*)(const float* const* xp, int64_t rows, int64_t n, int64_t kw, int64_t row_bytes,
                       int64_t plane_bytes, const float* w, float* acc);
constexpr RgbRun rgb_taps_avx2_runs[kMaxP] = {rgb_taps_avx2<1>, rgb_taps_avx2<2>, rgb_taps_avx2<3>,
                                               rgb_taps_avx2<4>, rgb_taps_avx2<5>, rgb_taps_avx2<6>};
using RgbStridedRun = void (*)(const float* x0, int64_t rows, int64_t n, int64_t kw, int64_t row_bytes,
                               int64_t plane_bytes, const float* w, float* acc);
template <int SW>
constexpr RgbStridedRun rgb_taps_strided_runs[kMaxP] = {
    rgb_taps_strided_avx2<1, SW>, rgb_taps_strided_avx2<2, SW>, rgb_taps_strided_avx2<3, SW>,
    rgb_taps_strided_avx2<4, SW>, rgb_taps_strided_avx2<5, SW>, rgb_taps_strided_avx2<6, SW>};

// The strided runs for the stem's stride, or nullptr.
inline const RgbStridedRun* rgb_strided_runs(int64_t sw) {
  return sw == 2 ? rgb_taps_strided_runs<2> : sw == 1 ? rgb_taps_strided_runs<1> : sw == 4 ? rgb_taps_strided_runs<4>
                                                                                             : nullptr;
}

// A stem's taps (plain input, three channels): the kernel's columns in runs whose valid
// positions are the same, each run over all the rows inside the image in one call.
template <int P>
KILN_AVX2_FMA void rgb_tile_avx2(const Tile& t, float* acc) {
  const int64_t kh0 = t.ih0 < 0 ? -t.ih0 : 0, kh1 = t.H - t.ih0 < t.KH ? t.H - t.ih0 : t.KH;
  if (kh0 >= kh1) return;
  const float* row = t.x + (t.ih0 + kh0) * t.W;
  for (int64_t kw = 0; kw < t.KW;) {
    int lo, hi;
    valid_positions(t.iw0 + kw, t.sw, t.W, P, lo, hi);
    int64_t run = 1;
    for (int l, h; kw + run < t.KW; ++run) {
      valid_positions(t.iw0 + kw + run, t.sw, t.W, P, l, h);
      if (l != lo || h != hi) break;
    }
    if (lo < hi) {
      const float* wt = t.w + (kh0 * t.KW + kw) * 3 * kB;
      if (const RgbStridedRun* runs = rgb_strided_runs(t.sw)) {
        runs[hi - lo - 1](row + t.iw0 + kw + lo * t.sw, kh1 - kh0, run, t.KW, t.W * 4, t.x_block * 4, wt, acc + lo * kB);
      } else {
        const float* xp[kMaxP];
        for (int p = lo; p < hi; ++p) xp[p - lo] = row + t.iw0 + kw + p * t.sw;
        rgb_taps_avx2_runs[hi - lo - 1](xp, kh1 - kh0, run, t.KW, t.W * 4, t.x_block * 4, wt, acc + lo * kB);
      }
    }
    kw += run;
  }
}

// A stride-1 1x1's plane (positions 16 floats apart), all its input channels at once: `tiles`
// tiles of 6 positions in one loop, each from zero through the epilogue (+ bias, + z, then
// Relu or the clamp, as the tiles above) to its 6 x 16 outputs. A 64-channel layer's tile is
// only 768 FMAs, and staging its accumulators through memory, a call per tile and the epilogue
// in C++ cost ResNet-50's 64 -> 256 layers a fifth of their time.
#define KILN_AVX2_ZERO(a) "vxorps %%ymm" #a ", %%ymm" #a ", %%ymm" #a "\n\t"
#define KILN_AVX2_PLANE_FMA(p, a0, a1, b) \
  "vbroadcastss \\k*4+" #p "*64(%[xc]), %%ymm" #b "\n\t" \
  "vfmadd231ps %%ymm12, %%ymm" #b ", %%ymm" #a0 "\n\t" \
  "vfmadd231ps %%ymm13, %%ymm" #b ", %%ymm" #a1 "\n\t"
// Epilogue steps on position p's two halves: `op mem, acc, acc` or `op reg, acc, acc` (AT&T
// order: the source operand second to last is the intrinsic's first operand).
#define KILN_AVX2_EPI(op, p, a0, a1, mem0, mem1) \
  op " " mem0 ", %%ymm" #a0 ", %%ymm" #a0 "\n\t" op " " mem1 ", %%ymm" #a1 ", %%ymm" #a1 "\n\t"
#define KILN_AVX2_EPI_ALL(op, mem0, mem1)                                                         \
  KILN_AVX2_EPI(op, 0, 0, 1, mem0, mem1) KILN_AVX2_EPI(op, 1, 2, 3, mem0, mem1)                \
  KILN_AVX2_EPI(op, 2, 4, 5, mem0, mem1) KILN_AVX2_EPI(op, 3, 6, 7, mem0, mem1)                \
  KILN_AVX2_EPI(op, 4, 8, 9, mem0, mem1) KILN_AVX2_EPI(op, 5, 10, 11, mem0, mem1)
#define KILN_AVX2_EPI_POS(op, p, a0, a1, base) \
  op " " #p "*64(" base "), %%ymm" #a0 ", %%ymm" #a0 "\n\t" op " " #p "*64+32(" base "), %%ymm" #a1 ", %%ymm" #a1 "\n\t"
// A clamp, min(hi, max(lo, v)): max's second source is v, so that NaN stays NaN (as the
// intrinsics' _mm256_max_ps(lo, v)), then min's is max's result.
#define KILN_AVX2_CLAMP(a) "vmaxps %%ymm" #a ", %%ymm12, %%ymm" #a "\n\tvminps %%ymm" #a ", %%ymm13, %%ymm" #a "\n\t"

template <bool kBias, bool kZ, int kAct>
KILN_AVX2_FMA void plane_tiles_avx2(const Tile& t, const float* x, float* y, const float* z, int64_t tiles,
                                    const char* pf, const char* pf_end) {
  const float* w = t.w;
  const float* const w0 = t.w;
  const int64_t blocks = t.K / kB, xs = t.x_block * 4;
  const float* bias = t.bias;
  const float lo = t.act.lo, hi = t.act.hi;
  const char* xt = reinterpret_cast<const char*>(x);
  const char* xc;
  int64_t n;
  asm volatile(
      "1:\n\t"
      KILN_AVX2_ZERO(0) KILN_AVX2_ZERO(1) KILN_AVX2_ZERO(2) KILN_AVX2_ZERO(3) KILN_AVX2_ZERO(4)
      KILN_AVX2_ZERO(5) KILN_AVX2_ZERO(6) KILN_AVX2_ZERO(7) KILN_AVX2_ZERO(8) KILN_AVX2_ZERO(9)
      KILN_AVX2_ZERO(10) KILN_AVX2_ZERO(11)
      "mov %[xt], %[xc]\n\t"
      "mov %[w0], %[w]\n\t"
      "mov %[blocks], %[n]\n\t"
      "2:\n\t"
      ".irp k,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
      "vmovups \\k*64(%[w]), %%ymm12\n\t"
      "vmovups \\k*64+32(%[w]), %%ymm13\n\t"
      KILN_AVX2_PLANE_FMA(0, 0, 1, 14) KILN_AVX2_PLANE_FMA(1, 2, 3, 15) KILN_AVX2_PLANE_FMA(2, 4, 5, 14)
      KILN_AVX2_PLANE_FMA(3, 6, 7, 15) KILN_AVX2_PLANE_FMA(4, 8, 9, 14) KILN_AVX2_PLANE_FMA(5, 10, 11, 15)
      ".endr\n\t"
      "add $1024, %[w]\n\t"
      "add %[xs], %[xc]\n\t"
      KILN_AVX2_PREFETCH
      "dec %[n]\n\t"
      "jnz 2b\n\t"
      ".if %c[bias]\n\t"
      KILN_AVX2_EPI_ALL("vaddps", "(%[b])", "32(%[b])")
      ".endif\n\t"
      ".if %c[res]\n\t"
      KILN_AVX2_EPI_POS("vaddps", 0, 0, 1, "%[z]") KILN_AVX2_EPI_POS("vaddps", 1, 2, 3, "%[z]")
      KILN_AVX2_EPI_POS("vaddps", 2, 4, 5, "%[z]") KILN_AVX2_EPI_POS("vaddps", 3, 6, 7, "%[z]")
      KILN_AVX2_EPI_POS("vaddps", 4, 8, 9, "%[z]") KILN_AVX2_EPI_POS("vaddps", 5, 10, 11, "%[z]")
      "add $384, %[z]\n\t"
      ".endif\n\t"
      ".if %c[act] == 1\n\t"  // Relu: max(v, 0), NaN becomes 0
      "vxorps %%ymm12, %%ymm12, %%ymm12\n\t"
      KILN_AVX2_EPI_ALL("vmaxps", "%%ymm12", "%%ymm12")
      ".endif\n\t"
      ".if %c[act] == 2\n\t"
      "vbroadcastss %[lo], %%ymm12\n\t"
      "vbroadcastss %[hi], %%ymm13\n\t"
      KILN_AVX2_CLAMP(0) KILN_AVX2_CLAMP(1) KILN_AVX2_CLAMP(2) KILN_AVX2_CLAMP(3) KILN_AVX2_CLAMP(4)
      KILN_AVX2_CLAMP(5) KILN_AVX2_CLAMP(6) KILN_AVX2_CLAMP(7) KILN_AVX2_CLAMP(8) KILN_AVX2_CLAMP(9)
      KILN_AVX2_CLAMP(10) KILN_AVX2_CLAMP(11)
      ".endif\n\t"
      KILN_AVX2_STORE_ACC(0, 0, 1) KILN_AVX2_STORE_ACC(1, 2, 3) KILN_AVX2_STORE_ACC(2, 4, 5)
      KILN_AVX2_STORE_ACC(3, 6, 7) KILN_AVX2_STORE_ACC(4, 8, 9) KILN_AVX2_STORE_ACC(5, 10, 11)
      "add $384, %[acc]\n\t"
      "add $384, %[xt]\n\t"
      "dec %[tiles]\n\t"
      "jnz 1b\n\t"
      : [xt] "+r"(xt), [xc] "=&r"(xc), [w] "+r"(w), [n] "=&r"(n), [tiles] "+r"(tiles), [acc] "+r"(y), [z] "+r"(z),
        [pf] "+r"(pf)
      : [pf_end] "m"(pf_end), [w0] "m"(w0), [blocks] "m"(blocks), [xs] "r"(xs), [b] "r"(bias), [lo] "m"(lo), [hi] "m"(hi),
        [P] "i"(6), [bias] "i"(kBias ? 1 : 0), [res] "i"(kZ ? 1 : 0), [act] "i"(kAct)
      : KILN_AVX2_CLOBBERS);
}

using PlaneTilesFn = void (*)(const Tile& t, const float* x, float* y, const float* z, int64_t tiles,
                              const char* pf, const char* pf_end);

template <bool kBias, bool kZ>
constexpr PlaneTilesFn plane_tiles_for(int act) {
  return act == StoreActivation::kRelu    ? plane_tiles_avx2<kBias, kZ, StoreActivation::kRelu>
         : act == StoreActivation::kClamp ? plane_tiles_avx2<kBias, kZ, StoreActivation::kClamp>
                                          : plane_tiles_avx2<kBias, kZ, StoreActivation::kNone>;
}

// Positions [q, q + len) of a stride-1 1x1's plane (Tile::iw0 = q, t.y and t.z at position q),
// all input channels: whole tiles of 6 in plane_tiles_avx2, the last 7 to 9 positions as two
// near-equal tiles (a 1- to 3-position tile keeps too few accumulator chains).
KILN_AVX2_FMA void plane_run_avx2(const Tile& t0, int64_t len, const TileFn* fns) {
  int64_t tiles = len / kMaxP, rest = len % kMaxP;
  if (rest > 0 && rest < 4 && tiles > 0) {
    --tiles;
    rest += kMaxP;
  }
  if (tiles > 0) {
    const PlaneTilesFn run = t0.bias ? (t0.z ? plane_tiles_for<true, true>(t0.act.kind) : plane_tiles_for<true, false>(t0.act.kind))
                                     : (t0.z ? plane_tiles_for<false, true>(t0.act.kind) : plane_tiles_for<false, false>(t0.act.kind));
    const Ahead a = fetch_ahead(t0, t0.w, t0.K * kB * 4, len);  // the run's share of the next block's weights
    run(t0, t0.x + t0.iw0 * kB, t0.y, t0.z, tiles, a.begin, a.end);
  }
  Tile t = t0;
  for (int64_t q = tiles * kMaxP, left = rest; left > 0;) {
    const int64_t P = left > kMaxP ? (left + 1) / 2 : left;
    t.iw0 = t0.iw0 + q;
    t.y = t0.y + q * kB;
    t.z = t0.z ? t0.z + q * kB : nullptr;
    fns[P - 1](t);
    q += P;
    left -= P;
  }
}

// Blocked input, the tile's positions along the whole output plane (Tile::flat_ow): each tap's
// positions inside the image, in runs of neighbours, each run on its accumulators.
template <int P>
KILN_AVX2_FMA KILN_TILE_NO_POINTER_CHECKS void flat_tile_avx2(const Tile& t, float* acc) {
  int64_t ih[P], iw[P];
  for (int p = 0; p < P; ++p) {
    const int64_t q = t.plane_pos + p;
    ih[p] = q / t.flat_ow * t.sh - t.pad_top;
    iw[p] = q % t.flat_ow * t.sw - t.pad_left;
  }
  const float* x = t.x + t.k0 / kB * t.x_block;
  const int64_t blocks = (t.k1 - t.k0) / kB;
  for (int64_t kh = 0; kh < t.KH; ++kh)
    for (int64_t kw = 0; kw < t.KW; ++kw) {
      const float* w = t.w + (kh * t.KW + kw) * t.K * kB + t.k0 * kB;
      for (int p = 0; p < P;) {
        const float* xp[kMaxP];
        int n = 0;
        const int start = p;
        for (; p < P; ++p) {
          const int64_t r = ih[p] + kh, c = iw[p] + kw;
          if (r < 0 || r >= t.H || c < 0 || c >= t.W) break;
          xp[n++] = x + (r * t.W + c) * kB;
        }
        if (n > 0) {
          const Ahead a = fetch_ahead(t, w, blocks * kB * kB * 4, P);
          blocks_avx2_runs[n - 1](xp, blocks, t.x_block * 4, w, acc + start * kB, a.begin, a.end);
        }
        if (n == 0) ++p;  // past the position outside the image
      }
    }
}

template <int P, bool kPlain>
KILN_AVX2_FMA KILN_TILE_NO_POINTER_CHECKS void tile_avx2(const Tile& t) {
  alignas(32) float acc[P * kB];
  if (t.first)
    std::memset(acc, 0, sizeof acc);
  else
    std::memcpy(acc, t.y, sizeof acc);  // the tile's positions are contiguous in y
  const int64_t scale = kPlain ? 1 : kB;
  const int64_t k_count = t.k1 - t.k0;
  if (kPlain && t.K == 3 && k_count == 3) {
    rgb_tile_avx2<P>(t, acc);
  } else if (!kPlain && t.flat_ow > 0) {
    flat_tile_avx2<P>(t, acc);
  } else {
    for (int64_t kh = 0; kh < t.KH; ++kh) {
      const int64_t ih = t.ih0 + kh;
      if (ih < 0 || ih >= t.H) continue;
      const float* row = t.x + ih * t.W * scale + t.k0 / scale * t.x_block;
      const float* taps = t.w + kh * t.KW * t.K * kB + t.k0 * kB;
      for (int64_t kw = 0; kw < t.KW; ++kw) {
        int lo, hi;
        valid_positions(t.iw0 + kw, t.sw, t.W, P, lo, hi);
        if (lo >= hi) continue;
        const float* xp[kMaxP];
        for (int p = lo; p < hi; ++p) xp[p - lo] = row + (t.iw0 + kw + p * t.sw) * scale;
        const float* w = taps + kw * t.K * kB;
        if (kPlain)
          channels_avx2_runs[hi - lo - 1](xp, k_count, t.x_block * 4, w, acc + lo * kB);
        else {
          const Ahead a = fetch_ahead(t, w, k_count * kB * 4, P);
          blocks_avx2_runs[hi - lo - 1](xp, k_count / kB, t.x_block * 4, w, acc + lo * kB, a.begin, a.end);
        }
      }
    }
  }
  if (!t.last) {
    std::memcpy(t.y, acc, sizeof acc);
    return;
  }
  const __m256 zero = _mm256_setzero_ps(), lo = _mm256_set1_ps(t.act.lo), hi = _mm256_set1_ps(t.act.hi);
  for (int h = 0; h < 2; ++h) {
    const __m256 bv = t.bias ? _mm256_loadu_ps(t.bias + h * 8) : zero;
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p) {
      __m256 v = _mm256_load_ps(acc + p * kB + h * 8);
      if (t.bias) v = _mm256_add_ps(v, bv);  // act(conv + bias + z), in kiln.FusedConv's order
      if (t.z) v = _mm256_add_ps(v, _mm256_loadu_ps(t.z + p * kB + h * 8));
      // max/min return their second operand when either is NaN: a clamp keeps NaN, Relu makes it 0.
      if (t.act.kind == StoreActivation::kClamp) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
      else if (t.act.kind == StoreActivation::kRelu) v = _mm256_max_ps(v, zero);
      _mm256_storeu_ps(t.y + p * kB + h * 8, v);
    }
  }
}

template <bool kPlain>
void fill_plain_or_blocked(Kernels& k) {
  TileFn* fns = k.fns[kPlain][0];
  fns[0] = tile_avx2<1, kPlain>;
  fns[1] = tile_avx2<2, kPlain>;
  fns[2] = tile_avx2<3, kPlain>;
  fns[3] = tile_avx2<4, kPlain>;
  fns[4] = tile_avx2<5, kPlain>;
  fns[5] = tile_avx2<6, kPlain>;
}

}  // namespace

void fill_avx2(Kernels& k) {
  fill_plain_or_blocked<false>(k);
  fill_plain_or_blocked<true>(k);
  k.max_f = 1;
  k.flat = true;
  k.plane_run = plane_run_avx2;
}
#else
void fill_avx2(Kernels&) {}
#endif

}  // namespace kiln::rt::nchwc
