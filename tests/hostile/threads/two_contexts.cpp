// The threading contract of a compiled model (see the generated header): one context is used
// by one thread at a time; several contexts may run at once. Built with -fsanitize=thread
// together with the model and runtime, so that any data race is reported.
//   1. two contexts (each with a 2-thread pool) run concurrently from two threads;
//   2. one context used from two threads one after the other (handed over by a join).
// Every run's outputs must equal the single-threaded first run's, byte for byte.
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tm.h"

namespace {

struct Buffers {
  std::vector<std::vector<unsigned char>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
};

size_t bytes_of(int dtype, int rank, const int64_t* dims) {
  size_t n = 1;
  for (int d = 0; d < rank; ++d) n *= static_cast<size_t>(dims[d]);
  return n * (dtype == KILN_DTYPE_F64 || dtype == KILN_DTYPE_I64 ? 8
              : dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_I32 ? 4
              : dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16 || dtype == KILN_DTYPE_I16 ? 2
                                                                                               : 1);
}

Buffers make_buffers() {
  Buffers b;
  for (size_t i = 0; i < tm_num_inputs(); ++i) {
    std::vector<unsigned char> v(bytes_of(tm_input_dtype(i), tm_input_rank(i), tm_input_dims(i)));
    for (size_t k = 0; k < v.size() / 4; ++k) {  // small floats, deterministic
      float f = static_cast<float>((k * 37 + i) % 17) / 17.0f - 0.5f;
      std::memcpy(&v[4 * k], &f, 4);
    }
    b.in.push_back(std::move(v));
  }
  for (size_t i = 0; i < tm_num_outputs(); ++i)
    b.out.emplace_back(bytes_of(tm_output_dtype(i), tm_output_rank(i), tm_output_dims(i)));
  for (auto& v : b.in) b.in_ptrs.push_back(v.data());
  for (auto& v : b.out) b.out_ptrs.push_back(v.data());
  return b;
}

bool run(tm_context* ctx, Buffers& b, const Buffers& want, const char* what) {
  if (tm_run(ctx, b.in_ptrs.data(), b.out_ptrs.data()) != 0) {
    std::fprintf(stderr, "%s: run failed: %s\n", what, tm_error(ctx));
    return false;
  }
  if (&b != &want && b.out != want.out) {
    std::fprintf(stderr, "%s: outputs differ from the single-threaded run\n", what);
    return false;
  }
  return true;
}

}  // namespace

int main() {
  tm_options one = {};
  one.threads = 1;
  tm_context* reference = tm_create(&one);
  Buffers want = make_buffers();
  if (!reference || tm_error(reference) || !run(reference, want, want, "reference")) return 1;
  tm_destroy(reference);

  tm_options two = {};
  two.threads = 2;
  bool ok[2] = {true, true};
  {  // 1. two contexts at once
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        tm_context* ctx = tm_create(&two);
        Buffers b = make_buffers();
        for (int r = 0; r < 3 && ok[t]; ++r) ok[t] = run(ctx, b, want, t ? "context 1" : "context 0");
        tm_destroy(ctx);
      });
    for (auto& t : threads) t.join();
  }
  bool shared_ok[2] = {true, true};
  {  // 2. one context, two threads in turn
    tm_context* ctx = tm_create(&two);
    for (int t = 0; t < 2; ++t) {
      std::thread th([&, t] {
        Buffers b = make_buffers();
        shared_ok[t] = run(ctx, b, want, "shared context");
      });
      th.join();
    }
    tm_destroy(ctx);
  }
  if (!(ok[0] && ok[1] && shared_ok[0] && shared_ok[1])) return 1;
  std::printf("ok: two contexts concurrently and one context from two threads in turn\n");
  return 0;
}
