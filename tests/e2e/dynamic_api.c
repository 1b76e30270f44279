/* The C API of a model compiled with a bounded symbolic dim (tests/e2e/dynamic_dims.py):
 * bounds reported, extents set and checked, outputs' extents computed, run_checked at a
 * length within the bounds. Reads raw f32 files (input x, input mask) made by the test and
 * writes the output's raw f32 values.
 *
 *   dynamic_api SEQ X.f32 MASK.f32 OUT.f32
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "m.h"

static int expect(int ok, const char* what) {
  if (!ok) fprintf(stderr, "FAIL: %s\n", what);
  return ok ? 0 : 1;
}

static float* read_f32(const char* path, size_t n) {
  FILE* f = fopen(path, "rb");
  float* p = malloc(n * sizeof(float));
  if (!f || !p || fread(p, sizeof(float), n, f) != n) {
    fprintf(stderr, "cannot read %zu floats from %s\n", n, path);
    exit(2);
  }
  fclose(f);
  return p;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const int64_t seq = atoll(argv[1]);
  int failed = 0;
  m_context* ctx = m_create(NULL);
  if (!ctx || m_error(ctx)) return 2;

  /* Bounds: x is [1, seq, 32] with seq in 1..256. */
  failed += expect(m_input_min_dims(0)[1] == 1 && m_input_dims(0)[1] == 256, "x's bounds are 1..256");
  failed += expect(m_output_dims(0)[1] == 256, "y's maximum extent is 256");

  /* Out of bounds: refused, naming the input, the dim and the bounds. */
  const int64_t too_long[3] = {1, 257, 32};
  failed += expect(m_set_input_shape(ctx, 0, 3, too_long) != 0, "seq 257 is refused");
  failed += expect(m_error(ctx) && strstr(m_error(ctx), "input 'x': dim 1 is 257, outside the bounds of 'seq', 1..256"),
                   "the error names the input, the dim and the bounds");
  const int64_t wrong_width[3] = {1, 16, 31};
  failed += expect(m_set_input_shape(ctx, 0, 3, wrong_width) != 0, "a fixed dim must match");

  /* Inputs disagreeing on seq: no output shape, and the error says which. */
  const int64_t x16[3] = {1, 16, 32}, mask17[2] = {1, 17};
  failed += expect(m_set_input_shape(ctx, 0, 3, x16) == 0 && m_set_input_shape(ctx, 1, 2, mask17) == 0, "set shapes");
  failed += expect(m_output_shape(ctx, 0) == NULL && strstr(m_error(ctx), "disagree on the symbolic dim 'seq'"),
                   "disagreeing inputs are refused");

  /* run_checked at the test's length. */
  const int64_t x_dims[3] = {1, seq, 32}, mask_dims[2] = {1, seq}, y_dims[3] = {1, seq, 32};
  float* x = read_f32(argv[2], (size_t)seq * 32);
  float* mask = read_f32(argv[3], (size_t)seq);
  float* y = calloc((size_t)seq * 32, sizeof(float));
  m_tensor in[2] = {{x, KILN_DTYPE_F32, 3, x_dims}, {mask, KILN_DTYPE_F32, 2, mask_dims}};
  const int64_t y_wrong[3] = {1, seq + 1 <= 256 ? seq + 1 : seq - 1, 32};
  m_tensor out_wrong = {y, KILN_DTYPE_F32, 3, y_wrong};
  failed += expect(m_run_checked(ctx, in, 2, &out_wrong, 1) != 0, "an output of the wrong extent is refused");
  m_tensor out = {y, KILN_DTYPE_F32, 3, y_dims};
  if (m_run_checked(ctx, in, 2, &out, 1) != 0) {
    fprintf(stderr, "FAIL: run_checked: %s\n", m_error(ctx));
    return 1;
  }
  const int64_t* shape = m_output_shape(ctx, 0);
  failed += expect(shape && shape[0] == 1 && shape[1] == seq && shape[2] == 32, "the output's extents follow seq");
  FILE* f = fopen(argv[4], "wb");
  if (!f || fwrite(y, sizeof(float), (size_t)seq * 32, f) != (size_t)seq * 32) return 2;
  fclose(f);
  m_destroy(ctx);
  free(x);
  free(mask);
  free(y);
  return failed ? 1 : 0;
}
