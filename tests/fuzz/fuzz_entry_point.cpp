// libFuzzer target: the generated C entry point of a small compiled model (Gather of x[4,2] by
// i[2], compiled by kiln with the sanitizers) given fuzzed tensors: dtypes, ranks, dims, data
// and index values. fz_run_checked must return 0 or an error with text, never crash.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fz_context* ctx = fz_create(nullptr);
  if (!ctx) std::abort();
  FuzzedDataProvider in(data, size);
  static const int kDtypes[] = {KILN_DTYPE_F32, KILN_DTYPE_I64, KILN_DTYPE_I32, KILN_DTYPE_U8, 0, 99};
  auto tensor = [&](size_t k, std::vector<int64_t>& dims, std::vector<uint8_t>& bytes) {
    fz_tensor t{};
    bool declared = in.ConsumeBool();  // mostly the declared dtype and shape, to get past checks
    t.dtype = declared ? fz_input_dtype(k) : kDtypes[in.ConsumeIntegralInRange<size_t>(0, 5)];
    t.rank = declared ? fz_input_rank(k) : in.ConsumeIntegralInRange<int>(-1, 5);
    dims.clear();
    for (int d = 0; d < std::max(t.rank, 0); ++d)
      dims.push_back(declared ? fz_input_dims(k)[d] : in.ConsumeIntegralInRange<int64_t>(-2, 9));
    t.dims = in.ConsumeBool() || dims.empty() ? dims.data() : nullptr;
    // Exactly as many bytes as the declared shape needs, filled from the input.
    size_t n = 1;
    for (int d = 0; d < fz_input_rank(k); ++d) n *= static_cast<size_t>(fz_input_dims(k)[d]);
    bytes.assign(n * 8, 0);
    std::vector<uint8_t> chunk = in.ConsumeBytes<uint8_t>(bytes.size());
    if (!chunk.empty()) std::memcpy(bytes.data(), chunk.data(), chunk.size());
    t.data = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : bytes.data();
    return t;
  };
  std::vector<int64_t> dims[2];
  std::vector<uint8_t> bytes[2];
  fz_tensor inputs[2] = {tensor(0, dims[0], bytes[0]), tensor(1, dims[1], bytes[1])};
  std::vector<float> out_data(4);
  int64_t out_dims[2] = {2, 2};
  fz_tensor output{out_data.data(), KILN_DTYPE_F32, 2, out_dims};
  size_t n_in = in.ConsumeIntegralInRange<size_t>(0, 2);
  if (fz_run_checked(ctx, inputs, n_in, &output, 1) != 0) {
    const char* why = fz_error(ctx);
    if (!why || !*why) std::abort();  // an error must say why
  }
  return 0;
}
