/* Runs a model compiled by kiln (`kiln compile ... --name net --emit lib`) on a fixed input
 * and prints the top class of each image in the batch; built with the flags of net.pc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "net.h"

static size_t elements(int rank, const int64_t* dims) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= (size_t)dims[i];
  return n;
}

int main(void) {
  if (net_num_inputs() != 1 || net_num_outputs() != 1 || net_input_dtype(0) != KILN_DTYPE_F32 ||
      net_output_dtype(0) != KILN_DTYPE_F32 || net_output_rank(0) != 2) {
    fprintf(stderr, "classify: expected one float input and one [batch, classes] float output\n");
    return 1;
  }
  /* The same values as examples/cpp_classifier: a pattern that needs no data files. */
  size_t n = elements(net_input_rank(0), net_input_dims(0));
  int64_t batch = net_output_dims(0)[0], classes = net_output_dims(0)[1];
  float* image = malloc(n * sizeof *image);
  float* scores = malloc((size_t)(batch * classes) * sizeof *scores);
  if (!image || !scores) return 1;
  for (size_t i = 0; i < n; ++i) image[i] = (float)((i * 7919) % 239) / 238.0f - 0.5f;

  net_context* ctx = net_create(NULL);
  if (!ctx || net_error(ctx)) {
    fprintf(stderr, "classify: %s\n", ctx ? net_error(ctx) : "out of memory");
    return 1;
  }
  const void* inputs[] = {image};
  void* outputs[] = {scores};
  if (net_run(ctx, inputs, outputs) != 0) {
    fprintf(stderr, "classify: %s\n", net_error(ctx));
    return 1;
  }
  for (int64_t b = 0; b < batch; ++b) {
    const float* row = scores + b * classes;
    int64_t top = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[top]) top = c;
    printf("image %lld: class %lld (score %.4f)\n", (long long)b, (long long)top, row[top]);
  }
  net_destroy(ctx);
  free(image);
  free(scores);
  return 0;
}
