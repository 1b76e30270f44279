#include "kiln/rt/conv.h"

#include <cstdlib>
#include <cstring>

#include "kiln/rt/conv_direct.h"
#include "kiln/rt/depthwise.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/kernel_log.h"
#include "kiln/rt/thread_buffer.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/transpose8.h"
#include "kiln/rt/x86_dispatch.h"

namespace kiln::rt {
namespace {

bool is_depthwise(const Conv2dParams& p) { return p.group == p.C && p.group == p.M && p.group > 1; }

// Convolutions that read x and their weights as they are (conv_direct.h): no column matrix, no
// packing, no scratch.
bool is_direct(const Conv2dParams& p) { return conv3x3_direct_applicable(p) || conv1x1_direct_applicable(p); }

bool is_pointwise(const Conv2dParams& p) {
  return p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         p.OH == p.H && p.OW == p.W;
}

// Output positions o in [0, n_out) whose input index o*stride + offset lies in
// [0, n_in): returns [lo, hi).
void valid_range(int64_t n_out, int64_t n_in, int64_t stride, int64_t offset, int64_t& lo, int64_t& hi) {
  // o*stride + offset >= 0  <=>  o >= ceil(-offset / stride)
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // o*stride + offset <= n_in - 1  <=>  o <= floor((n_in - 1 - offset) / stride)
  const int64_t last = n_in - 1 - offset;
  hi = last < 0 ? 0 : last / stride + 1;
  if (hi > n_out) hi = n_out;
  if (lo > hi) lo = hi;
}

// The column matrix of one image and group: row (c, kh, kw) holds, for each output position
// (row-major over OH x OW), the input value it multiplies (0 in padding). It is written straight
// in the GEMM's packed layout (gemm.h), so that the GEMM reads it as it is: as B (kg x nb, the
// positions along N, panels of kGemmF32PanelB) for the plain product, as A (its transpose, the
// positions along M, panels of kGemmF32PanelA) for the transposed one. Built in a plain layout,
// the GEMM copied it a second time into its panels (the stem: 7% of its time; on two threads
// each thread packed all of it when the product was split by rows).
// A 1x1 strided conv's column matrix (its input subsampled: ResNet's downsampling convs) is
// still built plain, row by row, and packed by the GEMM: each row is then a long strided
// run of one channel, and written in panels its reads went to 256 channels per panel (1x1
// stride 2, 256 -> 512 at 56 x 56: 4-15% slower in the model, the input coming from L3).
enum class ColLayout { kPlain, kPackedB, kPackedA };

ColLayout col_layout(const Conv2dParams& p, bool transposed) {
  if (p.KH * p.KW == 1) return ColLayout::kPlain;
  return transposed ? ColLayout::kPackedA : ColLayout::kPackedB;
}

// ColLayout::kPlain: columns [j0, j0 + nb) (output positions, row-major over OH x OW) of the
// column matrix for one image and group, as a kg x nb matrix: row (c, kh, kw) holds, for each of those output
// positions, the input value it multiplies (0 in padding). Rows [r0, r1) only.
void im2col_rows(const Conv2dParams& p, const float* x, float* col, int64_t j0, int64_t nb, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t kw = r % p.KW, kh = (r / p.KW) % p.KH, c = r / (p.KW * p.KH);
    const float* xc = x + c * p.H * p.W;
    float* out = col + r * nb;
    const int64_t off_w = kw * p.dil_w - p.pad_left;  // input column of ow: ow * stride_w + off_w
    int64_t w_lo, w_hi;
    valid_range(p.OW, p.W, p.stride_w, off_w, w_lo, w_hi);
    for (int64_t j = j0; j < j0 + nb;) {
      // The part of output row oh in this chunk: columns [ow0, ow1), at out[j - j0 ...].
      const int64_t oh = j / p.OW, ow0 = j % p.OW;
      const int64_t ow1 = p.OW - ow0 < j0 + nb - j ? p.OW : ow0 + (j0 + nb - j);
      float* o = out + (j - j0);  // o[i] is column ow0 + i
      const int64_t n = ow1 - ow0;
      j += n;
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) {
        std::memset(o, 0, sizeof(float) * n);
        continue;
      }
      const float* xr = xc + ih * p.W;
      const int64_t lo = w_lo < ow0 ? ow0 : (w_lo > ow1 ? ow1 : w_lo);
      const int64_t hi = w_hi > ow1 ? ow1 : (w_hi < lo ? lo : w_hi);
      for (int64_t ow = ow0; ow < lo; ++ow) o[ow - ow0] = 0.f;
      if (p.stride_w == 1) {
        if (hi > lo) std::memcpy(o + (lo - ow0), xr + (lo + off_w), sizeof(float) * (hi - lo));
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) o[ow - ow0] = xr[ow * p.stride_w + off_w];
      }
      for (int64_t ow = hi; ow < ow1; ++ow) o[ow - ow0] = 0.f;
    }
  }
}


// d[i] = xr[i * S] for i < W, reading xr[0 .. (W - 1) * S] only.
template <int64_t W, int64_t S>
inline void gather_panel_row(const float* xr, int64_t sw, float* d) {
#if defined(__GNUC__) || defined(__clang__)
  if constexpr (W == 16 && S == 2) {
    // Four loads and two shuffles instead of sixteen scalar moves (the stem's and the stride-2
    // convolutions' column matrices); the last load starts at xr[23] so as to end at xr[30].
    typedef float v8 __attribute__((vector_size(8 * sizeof(float))));
    v8 l0, l1, l2, l3;
    std::memcpy(&l0, xr, sizeof l0);
    std::memcpy(&l1, xr + 8, sizeof l1);
    std::memcpy(&l2, xr + 16, sizeof l2);
    std::memcpy(&l3, xr + 23, sizeof l3);
    const v8 o0 = __builtin_shufflevector(l0, l1, 0, 2, 4, 6, 8, 10, 12, 14);
    const v8 o1 = __builtin_shufflevector(l2, l3, 0, 2, 4, 6, 9, 11, 13, 15);
    std::memcpy(d, &o0, sizeof o0);  // two stores (as one array, GCC went through the stack)
    std::memcpy(d + 8, &o1, sizeof o1);
    return;
  }
#endif
  for (int64_t i = 0; i < W; ++i) d[i] = xr[i * sw];
}

// Kernel column kw of a convolution with horizontal stride sw: the input column of output
// column ow is ow * sw + off, inside the input row for ow in [lo, hi).
struct Tap {
  int64_t off, lo, hi;
};

Tap tap_of(const Conv2dParams& p, int64_t sw, int64_t kw) {
  Tap t{kw * p.dil_w - p.pad_left, 0, 0};
  valid_range(p.OW, p.W, sw, t.off, t.lo, t.hi);
  return t;
}

// The positions of one panel of a column matrix (at most W, `lanes` of them) cut into runs that
// each lie in one output row: run u covers lanes [lane, lane + n), output row oh, columns
// [ow, ow + n).
template <int64_t W>
struct PanelRuns {
  struct Run {
    int64_t lane, oh, ow, n;
  };
  Run runs[W];
  int64_t nruns, lanes;
};

// Panel q of a column matrix for positions [j0, j0 + nb).
template <int64_t W>
void panel_runs(const Conv2dParams& p, int64_t j0, int64_t nb, int64_t q, PanelRuns<W>& pr) {
  const int64_t t0 = q * W;
  pr.lanes = nb - t0 < W ? nb - t0 : W;
  pr.nruns = 0;
  for (int64_t lane = 0, oh = (j0 + t0) / p.OW, ow = (j0 + t0) % p.OW; lane < pr.lanes;) {
    const int64_t n = p.OW - ow < pr.lanes - lane ? p.OW - ow : pr.lanes - lane;
    pr.runs[pr.nruns++] = typename PanelRuns<W>::Run{lane, oh, ow, n};
    lane += n;
    ow = 0;
    ++oh;
  }
}

// One row of a panel (the W values at o) for kernel position (kh, kw) of a channel whose input
// plane is xc (ih_off: the input row of output row oh is oh * stride_h + ih_off), run by run,
// with zeros where the window leaves the input and past the panel's lanes.
template <int64_t W>
void fill_panel_row(const Conv2dParams& p, int64_t sw, const PanelRuns<W>& pr, float* o, const float* xc,
                    int64_t ih_off, const Tap& tap) {
  for (int64_t u = 0; u < pr.nruns; ++u) {
    const auto& run = pr.runs[u];
    float* d = o + run.lane;  // d[i - run.ow] is output column i's value
    const int64_t ih = run.oh * p.stride_h + ih_off, end = run.ow + run.n;
    const int64_t lo = ih < 0 || ih >= p.H ? end : (tap.lo < run.ow ? run.ow : (tap.lo > end ? end : tap.lo));
    const int64_t hi = tap.hi > end ? end : (tap.hi < lo ? lo : tap.hi);
    for (int64_t i = run.ow; i < lo; ++i) d[i - run.ow] = 0.f;
    if (hi > lo) {
      const float* xr = xc + ih * p.W + (lo * sw + tap.off);
      for (int64_t i = lo; i < hi; ++i) d[i - run.ow] = xr[(i - lo) * sw];
    }
    for (int64_t i = hi; i < end; ++i) d[i - run.ow] = 0.f;
  }
  for (int64_t i = pr.lanes; i < W; ++i) o[i] = 0.f;
}

// Panels [q0, q1) (positions j0 + q * W ..., at most nb in all) of the column matrix, every row,
// in the packed layout of panels W wide (W = kGemmF32PanelB or kGemmF32PanelA) of a kg x nb
// operand; S is the horizontal stride (0: p.stride_w). A panel of one run whose inputs lie
// inside one input row is copied without bounds checks (gather_panel_row); others run by run.
//
// Panels go in groups of kGroup, each group row by row: the writes of a row go to kGroup
// panels, and its reads are runs of kGroup * W positions of one input row. Panel by panel
// (each panel every row), a 1x1 stride-2 conv read 2 cache lines from each of 256 channels
// per panel, and its column matrix took half as long again as a plain one built row by row;
// row by row over all panels, each row's writes went to as many cache lines, kc * W floats
// apart. Measured on Zen 4 (ResNet-50's stem, stride-2 3x3s and 1x1s): 4 to 32 alike.
template <int64_t W, int64_t S>
void im2col_packed_panels(const Conv2dParams& params, const float* x, float* col, int64_t j0, int64_t nb, int64_t q0,
                          int64_t q1) {
  const Conv2dParams p = params;  // a copy the float stores cannot alias: kept in registers
  const int64_t kg = p.C / p.group * p.KH * p.KW, cols = (nb + W - 1) / W * W;
  const int64_t sw = S == 0 ? p.stride_w : S;
  constexpr int64_t kMaxTaps = 64, kGroup = 8;
  Tap taps[kMaxTaps];  // every kw's, when KW <= kMaxTaps; else worked out per row
  const bool taps_cached = p.KW <= kMaxTaps;
  for (int64_t kw = 0; taps_cached && kw < p.KW; ++kw) taps[kw] = tap_of(p, sw, kw);
  PanelRuns<W> panels[kGroup];
  bool inside[kGroup][kMaxTaps];  // panel g is one run whose inputs for kw lie inside the row
  const float* xrow[kGroup];      // panel g's input row for this (c, kh) if inside it, at its first column
  for (int64_t g0 = q0; g0 < q1; g0 += kGroup) {
    const int64_t gn = q1 - g0 < kGroup ? q1 - g0 : kGroup;
    for (int64_t g = 0; g < gn; ++g) {
      panel_runs<W>(p, j0, nb, g0 + g, panels[g]);
      const bool one_run = taps_cached && panels[g].nruns == 1 && panels[g].runs[0].n == W;
      const int64_t ow = panels[g].runs[0].ow;
      for (int64_t kw = 0; taps_cached && kw < p.KW; ++kw)
        inside[g][kw] = one_run && taps[kw].lo <= ow && ow + W <= taps[kw].hi;
    }
    for (int64_t pc = 0; pc < kg; pc += kGemmF32BlockK) {
      const int64_t kc = kg - pc < kGemmF32BlockK ? kg - pc : kGemmF32BlockK;
      // Row r's W values of panel g0 + g: at o + g * kc * W, o = col + pc * cols + g0 * kc * W + (r - pc) * W.
      float* o = col + pc * cols + g0 * kc * W;
      int64_t kw = pc % p.KW, kh = (pc / p.KW) % p.KH, c = pc / (p.KW * p.KH);
      for (int64_t r = pc; r < pc + kc;) {
        // Rows (c, kh, kw ...) of this block: one input row per output row.
        const float* xc = x + c * p.H * p.W;
        const int64_t ih_off = kh * p.dil_h - p.pad_top;
        for (int64_t g = 0; g < gn; ++g) {
          const int64_t ih = panels[g].runs[0].oh * p.stride_h + ih_off;
          xrow[g] = ih >= 0 && ih < p.H ? xc + ih * p.W + panels[g].runs[0].ow * sw : nullptr;
        }
        const int64_t kw_end = p.KW - kw < pc + kc - r ? p.KW : kw + (pc + kc - r);
        for (; kw < kw_end; ++kw, ++r, o += W) {
          const Tap tap = taps_cached ? taps[kw] : tap_of(p, sw, kw);
          for (int64_t g = 0; g < gn; ++g) {
            if (taps_cached && xrow[g] != nullptr && inside[g][kw])
              gather_panel_row<W, S>(xrow[g] + tap.off, sw, o + g * kc * W);
            else
              fill_panel_row<W>(p, sw, panels[g], o + g * kc * W, xc, ih_off, tap);
          }
        }
        if (kw == p.KW) {
          kw = 0;
          if (++kh == p.KH) {
            kh = 0;
            ++c;
          }
        }
      }
    }
  }
}

// A zero-padded copy of one image and group's input, its columns split by phase (column
// modulo the horizontal stride), so that the values a row (c, kh, kw) of the column matrix takes
// along one output row are one contiguous run: element (c, padded row ih, padded column pw) at
//   ((c * Sw + pw % Sw) * Hp + ih) * Wq + pw / Sw,
// Hp x (Sw * Wq) covering every padded position the window reaches. Panels are then filled by
// whole-vector copies with no bounds checks (panels_from_padded): reading x itself, panels that
// straddle output rows or reach into the padding went value by value (ResNet-50's stem and
// stride-2 3 x 3s: their column matrices took 10-22% of those layers).
struct PaddedInput {
  const float* p = nullptr;  // nullptr: none (the column matrix is gathered from x)
  int64_t Sw = 1, Hp = 0, Wq = 0;
};

// The padded copy's floats for p (one image and group), with kPaddedSlack zeros before and after
// it: a panel row is copied as whole runs of kGemmF32PanelB floats, which may start up to 15
// floats before a run's first value and end past the last row.
constexpr int64_t kPaddedSlack = kGemmF32PanelB;

PaddedInput padded_geometry(const Conv2dParams& p) {
  PaddedInput g;
  g.Sw = p.stride_w;
  g.Hp = (p.OH - 1) * p.stride_h + (p.KH - 1) * p.dil_h + 1;
  const int64_t wp = (p.OW - 1) * p.stride_w + (p.KW - 1) * p.dil_w + 1;
  g.Wq = (wp + g.Sw - 1) / g.Sw;
  return g;
}

int64_t padded_input_floats(const PaddedInput& g, int64_t channels) {
  return channels * g.Sw * g.Hp * g.Wq + 2 * kPaddedSlack;
}

// Convolutions whose column matrix (in panels) is filled from a padded copy: every conv with a
// column matrix in panels, strides of at most 4, the copy at most 16 MiB.
bool use_padded(const Conv2dParams& p) {
  if (p.KH * p.KW == 1 || p.stride_w < 1 || p.stride_w > 4 || p.stride_h < 1 || p.dil_h < 1 || p.dil_w < 1 ||
      p.pad_top < 0 || p.pad_left < 0)
    return false;
  return padded_input_floats(padded_geometry(p), p.C / p.group) <= 4 * 1024 * 1024;
}

#if defined(__GNUC__) || defined(__clang__)
typedef float vec8f __attribute__((vector_size(8 * sizeof(float))));
typedef int vec8i __attribute__((vector_size(8 * sizeof(int))));
constexpr vec8i kLane8 = {0, 1, 2, 3, 4, 5, 6, 7};
#endif

// Channels [c0, c1) of the padded copy of xg (one image and group's input) into g.p.
void build_padded(const Conv2dParams& p, const PaddedInput& g, const float* xg, float* out, int64_t c0, int64_t c1) {
  const int64_t Sw = g.Sw;
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t ph = 0; ph < Sw; ++ph) {
      // Padded column q * Sw + ph is input column q * Sw + (ph - pad_left), inside for q in [lo, hi).
      int64_t lo, hi;
      valid_range(g.Wq, p.W, Sw, ph - p.pad_left, lo, hi);
      for (int64_t ih = 0; ih < g.Hp; ++ih) {
        float* __restrict d = out + ((c * Sw + ph) * g.Hp + ih) * g.Wq;
        const int64_t ix = ih - p.pad_top;
        if (ix < 0 || ix >= p.H || lo >= hi) {
          std::memset(d, 0, sizeof(float) * g.Wq);
          continue;
        }
        // s[i] is padded column (lo + i) * Sw + ph: input column (lo + i) * Sw + ph - pad_left.
        const float* __restrict s = xg + (c * p.H + ix) * p.W + (lo * Sw + ph - p.pad_left);
        const int64_t n = hi - lo;
        float* __restrict e = d + lo;
        for (int64_t q = 0; q < lo; ++q) d[q] = 0.f;
        if (Sw == 1) {
          std::memcpy(e, s, sizeof(float) * n);
        } else {  // explicit shuffles for Sw == 2 measured no faster than GCC's code for this
          for (int64_t i = 0; i < n; ++i) e[i] = s[i * Sw];
        }
        for (int64_t q = hi; q < g.Wq; ++q) d[q] = 0.f;
      }
    }
  }
}

// Panels [q0, q1) of the column matrix (as im2col_packed_panels writes them) from the padded
// copy: each panel row is one copy of W floats when the panel's positions lie in one output row,
// else one vector load per run, merged lane by lane (portable code: copies into a row buffer,
// later runs overwriting the tail of earlier ones). Same values as im2col_packed_panels.
template <int64_t W>
void panels_from_padded(const Conv2dParams& params, const PaddedInput& xp, float* col, int64_t j0, int64_t nb,
                        int64_t q0, int64_t q1) {
  const Conv2dParams p = params;
  const int64_t kg = p.C / p.group * p.KH * p.KW, cols = (nb + W - 1) / W * W;
  const int64_t Sw = xp.Sw, Hp = xp.Hp, Wq = xp.Wq;
  constexpr int64_t kGroup = 8;
  PanelRuns<W> panels[kGroup];
  int64_t pos[kGroup][W];  // run u of panel g starts at xp.p + row offset + pos[g][u]
  for (int64_t g0 = q0; g0 < q1; g0 += kGroup) {
    const int64_t gn = q1 - g0 < kGroup ? q1 - g0 : kGroup;
    for (int64_t g = 0; g < gn; ++g) {
      panel_runs<W>(p, j0, nb, g0 + g, panels[g]);
      for (int64_t u = 0; u < panels[g].nruns; ++u)
        pos[g][u] = panels[g].runs[u].oh * p.stride_h * Wq + panels[g].runs[u].ow;
    }
    for (int64_t pc = 0; pc < kg; pc += kGemmF32BlockK) {
      const int64_t kc = kg - pc < kGemmF32BlockK ? kg - pc : kGemmF32BlockK;
      float* o = col + pc * cols + g0 * kc * W;
      int64_t kw = pc % p.KW, kh = (pc / p.KW) % p.KH, c = pc / (p.KW * p.KH);
      for (int64_t r = pc; r < pc + kc; ++r, o += W) {
        const int64_t cw = kw * p.dil_w;
        const float* src = xp.p + ((c * Sw + cw % Sw) * Hp + kh * p.dil_h) * Wq + cw / Sw;
        for (int64_t g = 0; g < gn; ++g) {
          const PanelRuns<W>& pr = panels[g];
          float* d = o + g * kc * W;
          if (pr.nruns == 1 && pr.lanes == W) {
            std::memcpy(d, src + pos[g][0], sizeof(float) * W);
            continue;
          }
#if defined(__GNUC__) || defined(__clang__)
          {
            // Lane i takes run u's value for the last run starting at or before it: a load from
            // where run u's values would lie for lanes 0 to W - 1 (src + pos - lane: up to 15
            // floats before the row, into the slack before the copy), selected per lane.
            // Through a row buffer instead, each row's load waited for the runs' stores.
            constexpr int kHalves = (W + 7) / 8;
            for (int h = 0; h < kHalves; ++h) {
              vec8f v;
              std::memcpy(&v, src + pos[g][0] + 8 * h, sizeof v);
              for (int64_t u = 1; u < pr.nruns; ++u) {
                vec8f w;
                std::memcpy(&w, src + pos[g][u] - pr.runs[u].lane + 8 * h, sizeof w);
                v = kLane8 + 8 * h >= static_cast<int>(pr.runs[u].lane) ? w : v;
              }
              v = kLane8 + 8 * h < static_cast<int>(pr.lanes) ? v : vec8f{};
              std::memcpy(d + 8 * h, &v, sizeof(float) * (W - 8 * h < 8 ? W - 8 * h : 8));
            }
          }
#else
          float t[2 * W];
          for (int64_t u = 0; u < pr.nruns; ++u) std::memcpy(t + pr.runs[u].lane, src + pos[g][u], sizeof(float) * W);
          for (int64_t i = pr.lanes; i < W; ++i) t[i] = 0.f;
          std::memcpy(d, t, sizeof(float) * W);
#endif
        }
        if (++kw == p.KW) {
          kw = 0;
          if (++kh == p.KH) {
            kh = 0;
            ++c;
          }
        }
      }
    }
  }
}

// The padded copy of xg (one image and group's input) when use_padded(p), its channels split
// across the pool, in a buffer kept per calling thread and grown when needed (as the GEMM's
// packing buffers); a PaddedInput with p == nullptr otherwise, or if the buffer cannot grow.
PaddedInput prepare_padded(const Conv2dParams& p, const float* xg, ThreadPool* pool) {
  if (!use_padded(p)) return PaddedInput{};
  PaddedInput g = padded_geometry(p);
  const int64_t cg = p.C / p.group, floats = padded_input_floats(g, cg);
  auto* buf =
      static_cast<float*>(thread_buffer(ThreadBuffer::conv_padded, static_cast<size_t>(floats) * sizeof(float)));
  if (buf == nullptr) return PaddedInput{};
  float* out = buf + kPaddedSlack;
  std::memset(buf, 0, sizeof(float) * kPaddedSlack);
  std::memset(buf + floats - kPaddedSlack, 0, sizeof(float) * kPaddedSlack);
  struct Args {
    const Conv2dParams* p;
    const PaddedInput* g;
    const float* xg;
    float* out;
  } args{&p, &g, xg, out};
  parallel_for(pool, cg, [a = &args](int64_t c0, int64_t c1) { build_padded(*a->p, *a->g, a->xg, a->out, c0, c1); });
  g.p = out;
  return g;
}

// Panels [q0, q1) of the column matrix in `layout`.
void im2col_panels(const Conv2dParams& p, ColLayout layout, const float* x, float* col, int64_t j0, int64_t nb,
                   int64_t q0, int64_t q1) {
  const bool b = layout == ColLayout::kPackedB;
  if (p.stride_w == 1)
    (b ? im2col_packed_panels<kGemmF32PanelB, 1> : im2col_packed_panels<kGemmF32PanelA, 1>)(p, x, col, j0, nb, q0, q1);
  else if (p.stride_w == 2)
    (b ? im2col_packed_panels<kGemmF32PanelB, 2> : im2col_packed_panels<kGemmF32PanelA, 2>)(p, x, col, j0, nb, q0, q1);
  else
    (b ? im2col_packed_panels<kGemmF32PanelB, 0> : im2col_packed_panels<kGemmF32PanelA, 0>)(p, x, col, j0, nb, q0, q1);
}

// Floats of a column matrix for nb positions (a plain one as much as in B's panels: a
// multiple of 16).
int64_t packed_col_floats(int64_t kg, int64_t nb, ColLayout layout) {
  const int64_t w = layout == ColLayout::kPackedA ? kGemmF32PanelA : kGemmF32PanelB;
  return kg * ((nb + w - 1) / w * w);
}

// Rows (plain) or panels [i0, i1) of the column matrix in `layout`.
void im2col_part(const Conv2dParams& p, ColLayout layout, const float* x, const PaddedInput& xp, float* col,
                 int64_t j0, int64_t nb, int64_t i0, int64_t i1) {
  if (layout == ColLayout::kPlain)
    im2col_rows(p, x, col, j0, nb, i0, i1);
  else if (xp.p != nullptr && layout == ColLayout::kPackedB)
    panels_from_padded<kGemmF32PanelB>(p, xp, col, j0, nb, i0, i1);
  else if (xp.p != nullptr)
    panels_from_padded<kGemmF32PanelA>(p, xp, col, j0, nb, i0, i1);
  else
    im2col_panels(p, layout, x, col, j0, nb, i0, i1);
}

// The whole column matrix for positions [j0, j0 + nb), its rows or panels split across the pool
// (nullptr: serial). A one-chunk layer (ResNet's stride-2 3 x 3 convs: 2304 x 196 floats) built
// its column matrix on one thread while the other waited for the GEMM: the layer ran no faster
// on two threads than on one.
void im2col_cols(const Conv2dParams& p, ColLayout layout, const float* x, const PaddedInput& xp, float* col,
                 int64_t j0, int64_t nb, ThreadPool* pool) {
  const int64_t kg = p.C / p.group * p.KH * p.KW;
  const int64_t w = layout == ColLayout::kPackedA ? kGemmF32PanelA : kGemmF32PanelB;
  const int64_t parts = layout == ColLayout::kPlain ? kg : (nb + w - 1) / w;
  if (pool == nullptr || pool->size() == 1 || kg * nb < 16384) {
    im2col_part(p, layout, x, xp, col, j0, nb, 0, parts);
    return;
  }
  struct Args {
    const Conv2dParams* p;
    ColLayout layout;
    const float* x;
    const PaddedInput* xp;
    float* col;
    int64_t j0, nb;
  } args{&p, layout, x, &xp, col, j0, nb};
  parallel_for(pool, parts, [a = &args](int64_t i0, int64_t i1) {
    im2col_part(*a->p, a->layout, a->x, *a->xp, a->col, a->j0, a->nb, i0, i1);
  });
}

// The GEMM of an image and group runs on chunks of output columns, so that its B operand (the
// chunk of the column matrix, or of the input for a 1x1 convolution) stays in L2 between
// being written and being read: the whole column matrix of a large layer (ResNet's first
// stage: 576 x 3136 floats) went out to memory and back. Small problems are one chunk.
constexpr int64_t kWholeFloats = 512 * 1024;  // B up to 2 MiB: one chunk
constexpr int64_t kChunkFloats = 96 * 1024;   // else chunks of about 384 KiB

// A column matrix (not a pointwise conv's input) is at most kGemmF32BlockN positions wide,
// as its packed layout requires.
int64_t chunk_cols(int64_t kg, int64_t ohw, bool pointwise) {
  int64_t nb = ohw;
  if (kg * ohw > kWholeFloats) {
    nb = kChunkFloats / kg / 16 * 16;
    if (nb < 16) nb = 16;
  }
  if (!pointwise && nb > kGemmF32BlockN) nb = kGemmF32BlockN;
  return nb < ohw ? nb : ohw;
}

// Few output positions (ResNet's and MobileNet's 7 x 7 and 14 x 14 stages): the GEMM's
// 16-wide register tiles along the positions waste most of a tile (49 columns run as 64),
// so the product runs transposed instead, Y^T = col^T W^T, with the positions along the
// 6-row side (49 as 54) and the output channels along the 16-wide one, into scratch; the
// result is then transposed into y with the bias and epilogue. Only for one-chunk problems.
bool use_transposed(const Conv2dParams& p) {
  if (p.group <= 0 || is_depthwise(p) || p.OH <= 0 || p.OW <= 0) return false;
  const int64_t kg = p.C / p.group * p.KH * p.KW, mg = p.M / p.group, ohw = p.OH * p.OW;
  if (chunk_cols(kg, ohw, is_pointwise(p)) != ohw) return false;
  auto up = [](int64_t v, int64_t m) { return static_cast<double>((v + m - 1) / m * m) / static_cast<double>(v); };
  // The transposed product pays a transpose and its epilogue apart: measured on Zen 4, it
  // wins at 49 positions (64 / 49 against 54 / 49) and loses at 196 (208 / 196 against
  // 198 / 196) now that the plain GEMM applies bias and clamp in its kernel.
  return up(ohw, 6) * up(mg, 16) * 1.15 < up(ohw, 16);
}

// A one-chunk pointwise GEMM with packed weights that gemm_f32_ex would split across the
// threads by output channels (more row tiles of 6 than column tiles of 16): each thread would
// then pack the whole input (kg x ohw) for its half of the channels. Split by positions
// instead, each thread packs only its columns and reads all of the weights (mg x kg), which
// pays when the weights are at most half the input and there are enough column tiles to
// share evenly (MobileNetV2's 14 x 14 projects, 576 -> 96 and 384 -> 96: 196 positions, 13
// tiles; the 7 x 7 layers' 4 tiles would split unevenly, ResNet's weights are larger).
bool split_by_positions(int64_t mg, int64_t ohw, int threads) {
  const int64_t m_tiles = (mg + kGemmF32PanelA - 1) / kGemmF32PanelA;
  const int64_t n_tiles = (ohw + kGemmF32PanelB - 1) / kGemmF32PanelB;
  return threads > 1 && m_tiles > n_tiles && 2 * mg <= ohw && n_tiles >= 6 * threads;
}

// One image and group of a GEMM-path convolution.
struct ConvGemm {
  const Conv2dParams* p;
  const float* xg;  // this image and group's input channels
  GemmOperand wa;
  const float* bias;
  float* y;    // this image and group's output channels
  int64_t y0;  // y's offset in the whole output (for the epilogue)
  float* scratch;
  const Epilogue* epilogue;
  int64_t mg, kg, nb, ohw;
  bool pointwise;
  PaddedInput xp = {};  // xg's padded copy, if any (prepare_padded)
};

// Output columns [j0, j0 + n) as one chunk, its column matrix at `col` (kg x n floats).
void run_chunk(const ConvGemm& a, int64_t j0, int64_t n, float* col, ThreadPool* gemm_pool) {
  GemmOperand b{a.xg + j0, a.ohw, false, false};
  if (!a.pointwise) {
    const ColLayout layout = col_layout(*a.p, false);
    im2col_cols(*a.p, layout, a.xg, a.xp, col, j0, n, gemm_pool);
    b = layout == ColLayout::kPlain ? GemmOperand{col, n, false, false} : GemmOperand{col, 0, false, true};
  }
  // Bias and epilogue are applied per register tile inside the GEMM, while it is in cache.
  gemm_f32_ex(a.mg, n, a.kg, 1.f, a.wa, b, 0.f, a.y + j0, a.ohw, a.bias, *a.epilogue, a.y0 + j0, gemm_pool);
}

// Columns [c0, c1) as near-equal chunks of at most a.nb columns (whole register tiles of 16
// but the last), one after the other through run_chunk, each column matrix at `col` (so it
// stays in L2 from one chunk to the next). Equal chunks leave no narrow last chunk (ResNet's
// 56 x 56 layers: 3136 columns ran as 8 x 384 + 64).
void run_chunks(const ConvGemm& a, int64_t c0, int64_t c1, float* col, ThreadPool* gemm_pool) {
  const int64_t len = c1 - c0, pieces = (len + a.nb - 1) / a.nb;
  if (pieces <= 0) return;
  int64_t step = ((len + pieces - 1) / pieces + 15) / 16 * 16;
  if (step > a.nb) step = a.nb;
  for (int64_t j = c0; j < c1; j += step) run_chunk(a, j, c1 - j < step ? c1 - j : step, col, gemm_pool);
}

struct TransposeArgs {
  const ConvGemm* a;
  const float* t;  // Y^T, ohw x mg
};

// Channels are transposed back in blocks of 16: each row of Y^T gives a contiguous run of 16.
constexpr int64_t kTransposeBlock = 16;

#if KILN_X86_KERNELS
// store_transposed's channels [m0, m0 + 8k) for the largest 8k <= mb, 8 x 8 blocks transposed
// in registers (the last positions, ohw % 8, one at a time); returns 8k. The values are those
// of the plain loop (one add, then the clamp).
KILN_AVX2_FMA int64_t store_transposed_avx2(const ConvGemm& c, const float* t, int64_t m0, int64_t mb,
                                            const float* bv, bool clamp, float lo, float hi) {
  const int64_t blocks = mb / 8 * 8, ohw = c.ohw, full = ohw / 8 * 8;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (int64_t i0 = 0; i0 < blocks; i0 += 8) {
    const __m256 b = _mm256_loadu_ps(bv + i0);
    float* y = c.y + (m0 + i0) * ohw;
    for (int64_t j0 = 0; j0 < full; j0 += 8) {
      __m256 r[8];
      for (int64_t k = 0; k < 8; ++k) {
        r[k] = _mm256_add_ps(_mm256_loadu_ps(t + (j0 + k) * c.mg + m0 + i0), b);
        // As clamp_to: a NaN stays NaN and -0 stays -0 (max and min return their second
        // operand when either is NaN or both are equal).
        if (clamp) r[k] = _mm256_min_ps(vhi, _mm256_max_ps(vlo, r[k]));
      }
      transpose8(r);
      for (int64_t i = 0; i < 8; ++i) _mm256_storeu_ps(y + i * ohw + j0, r[i]);
    }
    for (int64_t j = full; j < ohw; ++j)
      for (int64_t i = 0; i < 8; ++i) {
        const float v = t[j * c.mg + m0 + i0 + i] + bv[i0 + i];
        y[i * ohw + j] = clamp ? clamp_to(v, lo, hi) : v;
      }
  }
  return blocks;
}
#endif

// y's channels [m0, m0 + mb) (mb <= kTransposeBlock) from t = Y^T, the bias added and the
// epilogue applied: a clamp as each value is stored, anything else by fn after.
void store_transposed(const ConvGemm& c, const float* t, int64_t m0, int64_t mb) {
  float bv[kTransposeBlock];
  for (int64_t i = 0; i < mb; ++i) bv[i] = c.bias ? c.bias[m0 + i] : 0.f;
  const Epilogue& ep = *c.epilogue;
  const bool clamp = epilogue_is_clamp(ep);  // then applied here, not by fn
  const float lo = clamp ? ep.clamp_lo : 0.f, hi = clamp ? ep.clamp_hi : 0.f;
  int64_t i0 = 0;
#if KILN_X86_KERNELS
  if (cpu_has_avx2_fma()) i0 = store_transposed_avx2(c, t, m0, mb, bv, clamp, lo, hi);
#endif
  for (int64_t j = 0; j < c.ohw; ++j) {
    const float* tr = t + j * c.mg + m0;
    for (int64_t i = i0; i < mb; ++i) {
      const float v = tr[i] + bv[i];
      c.y[(m0 + i) * c.ohw + j] = clamp ? clamp_to(v, lo, hi) : v;
    }
  }
  if (ep.fn && !clamp)
    for (int64_t i = 0; i < mb; ++i) ep.fn(ep.ctx, c.y + (m0 + i) * c.ohw, c.y0 + (m0 + i) * c.ohw, c.ohw);
}

// use_transposed's path for every image and group: Y^T = col^T W^T into scratch (after the
// column matrix, if any), then y = (Y^T)^T + bias, the epilogue on each output row.
void conv_transposed(ConvGemm ga, const float* x, const float* w, bool w_packed, const float* bias, float* y,
                     ThreadPool* pool) {
  const Conv2dParams& p = *ga.p;
  const int64_t cg = p.C / p.group;
  float* col = ga.pointwise ? nullptr : gemm_f32_align(ga.scratch);
  float* t = ga.pointwise ? ga.scratch : col + packed_col_floats(ga.kg, ga.ohw, col_layout(p, true));
  for (int64_t n = 0; n < p.N; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      ga.xg = x + (n * p.C + g * cg) * p.H * p.W;
      ga.y0 = (n * p.M + g * ga.mg) * ga.ohw;
      ga.y = y + ga.y0;
      ga.bias = bias ? bias + g * ga.mg : nullptr;
      GemmOperand a{ga.xg, ga.ohw, true, false};
      if (!ga.pointwise) {
        const ColLayout layout = col_layout(p, true);
        ga.xp = prepare_padded(p, ga.xg, pool);
        im2col_cols(p, layout, ga.xg, ga.xp, col, 0, ga.ohw, pool);
        a = layout == ColLayout::kPlain ? GemmOperand{col, ga.ohw, true, false} : GemmOperand{col, 0, false, true};
      }
      const GemmOperand wb = w_packed ? GemmOperand{w + g * static_cast<int64_t>(gemm_f32_packed_b_floats(ga.kg, ga.mg)),
                                                    0, false, true}
                                      : GemmOperand{w + g * ga.mg * ga.kg, ga.kg, true, false};
      gemm_f32_ex(ga.ohw, ga.mg, ga.kg, 1.f, a, wb, 0.f, t, ga.mg, nullptr, Epilogue{}, 0, pool);
      TransposeArgs ta{&ga, t};
      parallel_for(pool, (ga.mg + kTransposeBlock - 1) / kTransposeBlock, [q = &ta](int64_t b0, int64_t b1) {
        const ConvGemm& c = *q->a;
        for (int64_t m0 = b0 * kTransposeBlock; m0 < b1 * kTransposeBlock && m0 < c.mg; m0 += kTransposeBlock)
          store_transposed(c, q->t, m0, c.mg - m0 < kTransposeBlock ? c.mg - m0 : kTransposeBlock);
      });
    }
  }
}

// One output plane of a depthwise convolution (channel c of image n). Row by row: each output
// row stays in L1 while every tap adds into it (vectorized along the row), instead of one pass
// over the whole plane per tap.
void depthwise_plane(const Conv2dParams& p, const float* x, const float* w, float b, float* y) {
  constexpr int64_t kMaxTaps = 64;  // KW up to this keeps the column ranges on the stack
  int64_t lo_buf[kMaxTaps], hi_buf[kMaxTaps];
  const bool stack = p.KW <= kMaxTaps;
  for (int64_t kw = 0; stack && kw < p.KW; ++kw)
    valid_range(p.OW, p.W, p.stride_w, kw * p.dil_w - p.pad_left, lo_buf[kw], hi_buf[kw]);
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    float* yr = y + oh * p.OW;
    for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow] = b;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      if (ih < 0 || ih >= p.H) continue;
      const float* xr = x + ih * p.W;
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t off_w = kw * p.dil_w - p.pad_left;
        int64_t w_lo, w_hi;
        if (stack) {
          w_lo = lo_buf[kw];
          w_hi = hi_buf[kw];
        } else {
          valid_range(p.OW, p.W, p.stride_w, off_w, w_lo, w_hi);
        }
        if (w_lo >= w_hi) continue;
        const float wv = w[kh * p.KW + kw];
        if (p.stride_w == 1) {
          const float* xs = xr + (w_lo + off_w);  // in bounds: w_lo + off_w >= 0
          float* ys = yr + w_lo;
          const int64_t n = w_hi - w_lo;
          for (int64_t i = 0; i < n; ++i) ys[i] += wv * xs[i];
        } else {
          for (int64_t ow = w_lo; ow < w_hi; ++ow) yr[ow] += wv * xr[ow * p.stride_w + off_w];
        }
      }
    }
  }
}

// Longest input row depthwise3x3_plane handles (its out-of-range rows read a zero row).
constexpr int64_t kZeroRow = 4096;
const float kZeros[kZeroRow] = {};

bool is_depthwise3x3(const Conv2dParams& p) {
  return p.KH == 3 && p.KW == 3 && p.dil_h == 1 && p.dil_w == 1 && p.stride_h == p.stride_w &&
         (p.stride_w == 1 || p.stride_w == 2) && p.pad_left >= 0 && p.pad_top >= 0 && p.W <= kZeroRow;
}

// One output of a 3x3 window at column iw0 (may reach outside [0, W)) of rows r0, r1, r2.
inline float dw3x3_edge(const float* r0, const float* r1, const float* r2, const float* w, float b, int64_t iw0,
                        int64_t W) {
  float s = b;
  const float* rows[3] = {r0, r1, r2};
  for (int kh = 0; kh < 3; ++kh)
    for (int kw = 0; kw < 3; ++kw) {
      const int64_t iw = iw0 + kw;
      if (iw >= 0 && iw < W) s += w[kh * 3 + kw] * rows[kh][iw];
    }
  return s;
}

// Depthwise 3x3, stride S (1 or 2), dilation 1, any padding: the MobileNet case. Each output
// row is one pass: the 9 taps of the columns whose window lies inside the row are summed in
// registers (the compiler vectorizes over the row, de-interleaving for S = 2); only the few
// edge columns check bounds. Rows above or below the input read a row of zeros. The epilogue
// runs on each row right after it is computed, while it is in L1.
template <int64_t S>
void depthwise3x3_plane(const Conv2dParams& p, const float* x, const float* wt, float b, float* y,
                        const Epilogue& ep, int64_t offset) {
  const float w0 = wt[0], w1 = wt[1], w2 = wt[2], w3 = wt[3], w4 = wt[4], w5 = wt[5], w6 = wt[6], w7 = wt[7],
              w8 = wt[8];
  // Interior columns [lo, hi): ow * S - pad_left >= 0 and ow * S - pad_left + 2 <= W - 1.
  int64_t lo = (p.pad_left + S - 1) / S, hi = p.W - 3 + p.pad_left >= 0 ? (p.W - 3 + p.pad_left) / S + 1 : 0;
  if (hi > p.OW) hi = p.OW;
  if (lo > hi) lo = hi;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    const float* rows[3];
    for (int64_t kh = 0; kh < 3; ++kh) {
      const int64_t ih = oh * S - p.pad_top + kh;
      rows[kh] = ih >= 0 && ih < p.H ? x + ih * p.W : kZeros;
    }
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];
    float* yr = y + oh * p.OW;
    for (int64_t ow = 0; ow < lo; ++ow) yr[ow] = dw3x3_edge(r0, r1, r2, wt, b, ow * S - p.pad_left, p.W);
    // Shifted so that column ow's window starts at a[ow * S]: in bounds for ow in [lo, hi).
    const float* a0 = r0 - p.pad_left;
    const float* a1 = r1 - p.pad_left;
    const float* a2 = r2 - p.pad_left;
    for (int64_t ow = lo; ow < hi; ++ow) {
      const int64_t i = ow * S;
      float s = b;
      s += w0 * a0[i];
      s += w1 * a0[i + 1];
      s += w2 * a0[i + 2];
      s += w3 * a1[i];
      s += w4 * a1[i + 1];
      s += w5 * a1[i + 2];
      s += w6 * a2[i];
      s += w7 * a2[i + 1];
      s += w8 * a2[i + 2];
      yr[ow] = s;
    }
    for (int64_t ow = hi; ow < p.OW; ++ow) yr[ow] = dw3x3_edge(r0, r1, r2, wt, b, ow * S - p.pad_left, p.W);
    if (ep.fn) ep.fn(ep.ctx, yr, offset + oh * p.OW, p.OW);
  }
}

// Floats of the stack buffer depthwise3x3_padded works in: the zero-padded plane, and for
// stride 1 the flat output; enough for 112 x 112 planes at stride 1.
constexpr int64_t kPaddedFloats = 32 * 1024;

int64_t padded_floats(const Conv2dParams& p) {
  const int64_t hp = (p.OH - 1) * p.stride_h + 3, wp = (p.OW - 1) * p.stride_w + 3;
  return hp * wp + (p.stride_w == 1 ? p.OH * wp : 0);
}

// Depthwise 3x3 (is_depthwise3x3) on a zero-padded copy of the plane: no bounds checks and no
// edge columns left. At stride 1 the output is computed as one flat run over the padded width
// (two junk columns per row, dropped when copied out), so small planes (MobileNet's 14 x 14
// and 7 x 7) vectorize as well as large ones. buf holds padded_floats(p) floats.
template <int64_t S>
void depthwise3x3_padded(const Conv2dParams& p, const float* x, const float* wt, float b, float* y,
                         const Epilogue& ep, int64_t offset, float* buf) {
  const int64_t hp = (p.OH - 1) * S + 3, wp = (p.OW - 1) * S + 3;
  for (int64_t r = 0; r < hp; ++r) {
    float* d = buf + r * wp;
    const int64_t ih = r - p.pad_top;
    const int64_t left = p.pad_left < wp ? p.pad_left : wp;
    int64_t n = ih >= 0 && ih < p.H ? (p.W < wp - left ? p.W : wp - left) : 0;
    for (int64_t c = 0; c < left; ++c) d[c] = 0.f;
    if (n > 0) std::memcpy(d + left, x + ih * p.W, sizeof(float) * n);
    for (int64_t c = left + n; c < wp; ++c) d[c] = 0.f;
  }
  const float w0 = wt[0], w1 = wt[1], w2 = wt[2], w3 = wt[3], w4 = wt[4], w5 = wt[5], w6 = wt[6], w7 = wt[7],
              w8 = wt[8];
  if (S == 1) {
    float* __restrict t = buf + hp * wp;
    const float* __restrict a = buf;
    const int64_t total = (p.OH - 1) * wp + p.OW;  // the flat output, padded width
    for (int64_t i = 0; i < total; ++i) {
      float s = b;
      s += w0 * a[i];
      s += w1 * a[i + 1];
      s += w2 * a[i + 2];
      s += w3 * a[i + wp];
      s += w4 * a[i + wp + 1];
      s += w5 * a[i + wp + 2];
      s += w6 * a[i + 2 * wp];
      s += w7 * a[i + 2 * wp + 1];
      s += w8 * a[i + 2 * wp + 2];
      t[i] = s;
    }
    for (int64_t oh = 0; oh < p.OH; ++oh) std::memcpy(y + oh * p.OW, t + oh * wp, sizeof(float) * p.OW);
  } else {
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const float* __restrict a0 = buf + oh * S * wp;
      const float* __restrict a1 = a0 + wp;
      const float* __restrict a2 = a1 + wp;
      float* __restrict yr = y + oh * p.OW;
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        const int64_t i = ow * S;
        float s = b;
        s += w0 * a0[i];
        s += w1 * a0[i + 1];
        s += w2 * a0[i + 2];
        s += w3 * a1[i];
        s += w4 * a1[i + 1];
        s += w5 * a1[i + 2];
        s += w6 * a2[i];
        s += w7 * a2[i + 1];
        s += w8 * a2[i + 2];
        yr[ow] = s;
      }
    }
  }
  if (ep.fn) ep.fn(ep.ctx, y, offset, p.OH * p.OW);
}

struct ConvArgs {
  const Conv2dParams* p;
  const float* x;
  const float* w;
  const float* bias;
  float* y;
  float* col;
  const Epilogue* epilogue;
};

// Output planes of at least this many positions (56 x 56) are split across threads by rows.
constexpr int64_t kRowSplitPositions = 56 * 56;

// Plane i (image i / C, channel i % C) of a depthwise convolution, with the best kernel
// for one plane; buf holds kPaddedFloats floats.
void depthwise_plane_any(const ConvArgs& a, int64_t i, float* buf) {
  const Conv2dParams& q = *a.p;
  const bool padded = is_depthwise3x3(q) && padded_floats(q) <= kPaddedFloats;
  const int64_t c = i % q.C;
  float* plane = a.y + i * q.OH * q.OW;
  const float* xp = a.x + i * q.H * q.W;
  const float* wp = a.w + c * q.KH * q.KW;
  const float b = a.bias ? a.bias[c] : 0.f;
  if (padded && q.stride_w == 1) {
    depthwise3x3_padded<1>(q, xp, wp, b, plane, *a.epilogue, i * q.OH * q.OW, buf);
  } else if (padded) {
    depthwise3x3_padded<2>(q, xp, wp, b, plane, *a.epilogue, i * q.OH * q.OW, buf);
  } else if (is_depthwise3x3(q) && q.stride_w == 1) {
    depthwise3x3_plane<1>(q, xp, wp, b, plane, *a.epilogue, i * q.OH * q.OW);
  } else if (is_depthwise3x3(q)) {
    depthwise3x3_plane<2>(q, xp, wp, b, plane, *a.epilogue, i * q.OH * q.OW);
  } else {
    depthwise_plane(q, xp, wp, b, plane);
    if (a.epilogue->fn) a.epilogue->fn(a.epilogue->ctx, plane, i * q.OH * q.OW, q.OH * q.OW);
  }
}

}  // namespace

// A column matrix starts at a 64-byte boundary of the scratch (gemm_f32_align; the scratch is
// kGemmF32AlignFloats longer for it): the GEMM reads its panels in place, and on the 16-byte
// alignment of a plain allocation half of the kernel's 32-byte loads of B crossed a cache line
// (the stem ran 4% slower than with the GEMM's own aligned packing buffer).
size_t conv2d_scratch_floats(const Conv2dParams& p) noexcept {
  if (is_direct(p)) return 0;
  if (use_transposed(p)) {  // the column matrix (unless 1x1), then Y^T
    const int64_t kg = p.C / p.group * p.KH * p.KW, ohw = p.OH * p.OW;
    const int64_t col = is_pointwise(p) ? 0 : kGemmF32AlignFloats + packed_col_floats(kg, ohw, col_layout(p, true));
    return static_cast<size_t>(col + ohw * (p.M / p.group));
  }
  if (p.group <= 0 || is_depthwise(p) || is_pointwise(p) || p.OH <= 0 || p.OW <= 0) return 0;
  const int64_t kg = p.C / p.group * p.KH * p.KW, ohw = p.OH * p.OW, nb = chunk_cols(kg, ohw, false);
  // Every chunk its own part (64-byte aligned, see gemm_f32_align).
  const int64_t part = packed_col_floats(kg, nb, col_layout(p, false));
  return static_cast<size_t>(kGemmF32AlignFloats + part * ((ohw + nb - 1) / nb));
}

void conv2d_f32(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y, float* scratch,
                ThreadPool* pool) noexcept {
  conv2d_f32_epilogue(p, x, w, bias, y, scratch, Epilogue{}, pool);
}

size_t conv2d_packed_weight_floats(const Conv2dParams& p) noexcept {
  if (p.group <= 0 || is_depthwise(p) || is_direct(p)) return 0;
  const int64_t mg = p.M / p.group, kg = p.C / p.group * p.KH * p.KW;
  // Transposed, the weights are the GEMM's B operand (W^T, kg x mg).
  return static_cast<size_t>(p.group) *
         (use_transposed(p) ? gemm_f32_packed_b_floats(kg, mg) : gemm_f32_packed_a_floats(mg, kg));
}

void conv2d_pack_weights(const Conv2dParams& p, const float* w, float* packed) noexcept {
  if (p.group <= 0 || is_depthwise(p) || is_direct(p)) return;
  const int64_t mg = p.M / p.group, kg = p.C / p.group * p.KH * p.KW;
  if (use_transposed(p)) {
    const size_t per_group = gemm_f32_packed_b_floats(kg, mg);
    for (int64_t g = 0; g < p.group; ++g) gemm_f32_pack_b(true, kg, mg, w + g * mg * kg, kg, packed + g * per_group);
    return;
  }
  const size_t per_group = gemm_f32_packed_a_floats(mg, kg);
  for (int64_t g = 0; g < p.group; ++g) gemm_f32_pack_a(false, mg, kg, w + g * mg * kg, kg, packed + g * per_group);
}

void conv2d_f32_epilogue(const Conv2dParams& p, const float* x, const float* w, const float* bias, float* y,
                         float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept {
  conv2d_f32_prepacked(p, x, w, false, bias, y, scratch, epilogue, pool);
}

void conv2d_f32_prepacked(const Conv2dParams& p, const float* x, const float* w, bool w_packed, const float* bias,
                          float* y, float* scratch, const Epilogue& epilogue, ThreadPool* pool) noexcept {
  if (p.N <= 0 || p.M <= 0 || p.OH <= 0 || p.OW <= 0 || p.group <= 0) return;
  const int64_t ohw = p.OH * p.OW;
  ConvArgs args{&p, x, w, bias, y, scratch, &epilogue};

  if (is_depthwise(p)) {
    // Work units per image: groups of 8 channels for depthwise3x3_c8, then single planes. On
    // large planes each group is split into one part of the rows per thread (units part-major),
    // so that a thread's share holds the rows its share of the 1x1 convolutions around it
    // (split by positions) wrote and will read. Split by channels, half of every plane moved
    // between the threads' caches: expensive when the two cores share no cache. Smaller
    // planes keep whole channels (split into rows, they were slower).
    const int64_t groups = depthwise3x3_c8_supported(p) ? p.C / 8 : 0;
    const int64_t threads = pool ? pool->size() : 1;
    const int64_t parts = groups > 0 && p.OH * p.OW >= kRowSplitPositions && p.OH >= threads ? threads : 1;
    const int64_t units = parts * groups + (p.C - groups * 8);
    parallel_for(pool, p.N * units, [a = &args, groups, parts, units](int64_t i0, int64_t i1) {
      const Conv2dParams& q = *a->p;
      float buf[kPaddedFloats];
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t n = i / units, u = i % units;
        if (u < parts * groups) {
          const int64_t part = u / groups, oh0 = q.OH * part / parts, oh1 = q.OH * (part + 1) / parts;
          depthwise3x3_c8_rows(q, n, u % groups * 8, oh0, oh1, a->x, a->w, a->bias, a->y, *a->epilogue);
        } else {
          depthwise_plane_any(*a, n * q.C + groups * 8 + (u - parts * groups), buf);
        }
      }
    });
    return;
  }

  // The direct kernels are vectorized for AVX2 + FMA only, the rest runs the GEMM.
  const char* direct_isa = cpu_has_avx2_fma() ? "avx2" : "portable";
  if (!w_packed && conv3x3_direct_applicable(p)) {  // a stem: no column matrix to build
    if (kernel_log_enabled()) log_conv_kernel("conv3x3_direct", direct_isa, p.C, p.H, p.W, p.M, p.KH, p.KW, p.stride_w);
    conv3x3_direct(p, x, w, bias, y, epilogue, pool);
    return;
  }
  if (!w_packed && conv1x1_direct_applicable(p)) {  // few input channels: no packing
    if (kernel_log_enabled()) log_conv_kernel("conv1x1_direct", direct_isa, p.C, p.H, p.W, p.M, p.KH, p.KW, p.stride_w);
    conv1x1_direct(p, x, w, bias, y, epilogue, pool);
    return;
  }

  const int64_t cg = p.C / p.group, mg = p.M / p.group, kg = cg * p.KH * p.KW;
  const int64_t nb = chunk_cols(kg, ohw, is_pointwise(p)), chunks = (ohw + nb - 1) / nb;
  ConvGemm ga{&p, nullptr, {}, nullptr, nullptr, 0, scratch, &epilogue, mg, kg, nb, ohw, is_pointwise(p)};
  if (kernel_log_enabled())
    log_conv_kernel(use_transposed(p) ? "conv_gemm_transposed" : ga.pointwise ? "conv1x1_gemm" : "conv_im2col_gemm",
                    gemm_f32_isa_name(), p.C, p.H, p.W, p.M, p.KH, p.KW, p.stride_w);
  if (use_transposed(p)) {
    conv_transposed(ga, x, w, w_packed, bias, y, pool);
    return;
  }
  const int threads = pool ? pool->size() : 1;
  for (int64_t n = 0; n < p.N; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      ga.xg = x + (n * p.C + g * cg) * p.H * p.W;
      ga.y0 = (n * p.M + g * mg) * ohw;
      ga.y = y + ga.y0;
      ga.bias = bias ? bias + g * mg : nullptr;
      if (!ga.pointwise) ga.xp = prepare_padded(p, ga.xg, pool);
      ga.wa = GemmOperand{w_packed ? w + g * static_cast<int64_t>(gemm_f32_packed_a_floats(mg, kg)) : w + g * mg * kg,
                          kg, false, w_packed};
      const bool by_positions = chunks == 1 && ga.pointwise && w_packed && split_by_positions(mg, ohw, threads);
      if ((chunks >= 2 * threads && threads > 1) || by_positions) {
        // Enough chunks to share (or one, split by positions): each thread takes an equal share of the columns (in register
        // tiles of 16) as its own chunks, each GEMM serial, its column matrices in its slot's
        // kg x nb part of the scratch. Whole chunks dealt out left one thread a chunk more
        // (ResNet's 56 x 56 1x1 convs: 9 chunks, 5 against 4: 1.67x faster on 2 threads). The
        // shares are balanced, claimed a chunk at a time (a share's near-equal chunks, as
        // run_chunks would cut it; a third of it when it is one chunk), so a thread slowed down
        // has the end of its share taken.
        const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
        const int64_t tiles = ceil_div(ohw, 16), share = ceil_div(tiles, threads), chunk_tiles = nb / 16;
        const int64_t piece = by_positions || chunk_tiles < 1 ? 0 : ceil_div(share, ceil_div(share, chunk_tiles));
        parallel_for_balanced_slots(
            pool, tiles,
            [a = &ga](int64_t t0, int64_t t1, int slot) {
              const int64_t c0 = t0 * 16, c1 = t1 * 16 < a->ohw ? t1 * 16 : a->ohw;
              // Parts of a multiple of 16 floats: each 64-byte aligned.
              const int64_t part = packed_col_floats(a->kg, a->nb, col_layout(*a->p, false));
              float* col = a->pointwise ? nullptr : gemm_f32_align(a->scratch) + slot * part;
              run_chunks(*a, c0, c1, col, nullptr);
            },
            piece);
      } else {
        run_chunks(ga, 0, ohw, ga.pointwise ? nullptr : gemm_f32_align(scratch), pool);
      }
    }
  }
}

}  // namespace kiln::rt
