#include "kiln/rt/conv_transpose.h"

#include <cstring>

#include "kiln/rt/gemm.h"
#include "kiln/rt/thread_pool.h"

namespace kiln::rt {
namespace {

struct Sizes {
  int64_t in_plane = 1, out_plane = 1, kernel = 1;
};

Sizes sizes_of(const ConvTransposeParams& p) {
  Sizes s;
  for (int64_t d = 0; d < p.rank; ++d) {
    s.in_plane *= p.in[d];
    s.out_plane *= p.out[d];
    s.kernel *= p.kernel[d];
  }
  return s;
}

}  // namespace

size_t conv_transpose_scratch_floats(const ConvTransposeParams& p) noexcept {
  const Sizes s = sizes_of(p);
  return static_cast<size_t>(p.M / p.group * s.kernel * s.in_plane);
}

size_t conv_transpose_scratch_elements(const ConvTransposeParams& p) noexcept {
  const Sizes s = sizes_of(p);
  return conv_transpose_scratch_floats(p) + static_cast<size_t>(p.M / p.group * s.out_plane);
}

void conv_transpose_f32(const ConvTransposeParams& p, const float* x, const float* w, const float* bias, float* y,
                        float* scratch, ThreadPool* pool) noexcept {
  const Sizes s = sizes_of(p);
  const int64_t cg = p.C / p.group, mg = p.M / p.group, rows = mg * s.kernel;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      // cols (rows x in_plane) = W_g^T (W_g is cg x rows) times X_g (cg x in_plane).
      gemm_f32(true, false, rows, s.in_plane, cg, 1.0f, w + g * cg * rows, rows,
               x + (n * p.C + g * cg) * s.in_plane, s.in_plane, 0.0f, scratch, s.in_plane, pool);
      float* yg = y + (n * p.M + g * mg) * s.out_plane;
      // Output channels are independent: split them over the pool.
      parallel_for(pool, mg, [&](int64_t begin, int64_t end) {
        for (int64_t m = begin; m < end; ++m) {
          float* ym = yg + m * s.out_plane;
          const float b = bias ? bias[g * mg + m] : 0.0f;
          for (int64_t o = 0; o < s.out_plane; ++o) ym[o] = b;
          col2im_add<float, float>(p, 1, scratch + m * s.kernel * s.in_plane, ym);
        }
      });
    }
}

}  // namespace kiln::rt
