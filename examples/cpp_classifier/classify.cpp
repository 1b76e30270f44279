// Runs the embedded classifier (net.h, from kiln_add_model) on a fixed input and prints the
// top class of each image in the batch.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include "net.h"

namespace {

size_t elements(int rank, const int64_t* dims) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= static_cast<size_t>(dims[i]);
  return n;
}

}  // namespace

int main() try {
  if (net_num_inputs() != 1 || net_num_outputs() != 1 || net_input_dtype(0) != KILN_DTYPE_F32 ||
      net_output_dtype(0) != KILN_DTYPE_F32 || net_output_rank(0) != 2) {
    std::fprintf(stderr, "classify: expected one float input and one [batch, classes] float output\n");
    return 1;
  }
  // The same values as examples/c_pkgconfig: a pattern that needs no data files.
  std::vector<float> image(elements(net_input_rank(0), net_input_dims(0)));
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>((i * 7919) % 239) / 238.0f - 0.5f;
  const int64_t batch = net_output_dims(0)[0], classes = net_output_dims(0)[1];
  std::vector<float> scores(static_cast<size_t>(batch * classes));

  kiln_models::net model;  // throws std::runtime_error on failure
  const void* inputs[] = {image.data()};
  void* outputs[] = {scores.data()};
  model.run(inputs, outputs);

  for (int64_t b = 0; b < batch; ++b) {
    const float* row = &scores[static_cast<size_t>(b * classes)];
    int64_t top = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[top]) top = c;
    std::printf("image %lld: class %lld (score %.4f)\n", static_cast<long long>(b), static_cast<long long>(top),
                row[top]);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "classify: %s\n", e.what());
  return 1;
}
