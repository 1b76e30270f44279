#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "kiln/rt/exe_main.h"
#include "kiln/rt/npy.h"

using namespace kiln::rt;
namespace fs = std::filesystem;

namespace {

// A fake compiled model: y = x + 1 (f32 [2,3]), idx = argmax over rows of x (i64 [2]).
const int64_t kXDims[2] = {2, 3};
const int64_t kBDims[1] = {1};
const int64_t kIdxDims[1] = {2};
const TensorInfo kInputs[2] = {{"x", KILN_F32, 2, kXDims}, {"bias", KILN_F32, 1, kBDims}};
const TensorInfo kOutputs[2] = {{"y/out:0", KILN_F32, 2, kXDims}, {"idx", KILN_I64, 1, kIdxDims}};

struct FakeCtx {
  int threads;
  int runs = 0;
  std::string error;
};

void* fake_create(int threads) {
  auto* c = new FakeCtx;
  c->threads = threads;
  return c;
}
int fake_run(void* c, const void* const* in, void* const* out) {
  auto* ctx = static_cast<FakeCtx*>(c);
  ++ctx->runs;
  const float* x = static_cast<const float*>(in[0]);
  const float b = *static_cast<const float*>(in[1]);
  if (b < 0) {
    ctx->error = "node 'add' (Add): bias is negative";
    return 3;
  }
  float* y = static_cast<float*>(out[0]);
  int64_t* idx = static_cast<int64_t*>(out[1]);
  for (int i = 0; i < 6; ++i) y[i] = x[i] + b;
  for (int r = 0; r < 2; ++r) {
    int best = 0;
    for (int j = 1; j < 3; ++j)
      if (x[r * 3 + j] > x[r * 3 + best]) best = j;
    idx[r] = best;
  }
  return 0;
}
const char* fake_error(void* c) { return static_cast<FakeCtx*>(c)->error.c_str(); }
void fake_destroy(void* c) { delete static_cast<FakeCtx*>(c); }

const ModelApi kApi = {"fake", 2, kInputs, 2, kOutputs, fake_create, fake_run, fake_error, fake_destroy};

struct Captured {
  int rc;
  std::string out, err;
};

std::string slurp(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

Captured run(std::vector<std::string> args) {
  args.insert(args.begin(), "fake_model");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  Captured c;
  c.rc = exe_main(int(args.size()), argv.data(), kApi, out, err);
  c.out = slurp(out);
  c.err = slurp(err);
  return c;
}

struct Files {
  fs::path dir;
  std::string x, bias, neg_bias, bad_shape, bad_dtype;
  Files() {
    dir = fs::temp_directory_path() / ("kiln_rt_exe_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    x = write("x.npy", KILN_F32, {2, 3}, {1, 5, 2, 9, 0, 3});
    bias = write("b.npy", KILN_F32, {1}, {1});
    neg_bias = write("nb.npy", KILN_F32, {1}, {-1});
    bad_shape = write("bs.npy", KILN_F32, {3, 2}, {1, 2, 3, 4, 5, 6});
    HostTensor d;
    d.dtype = KILN_F64;
    d.shape = {2, 3};
    d.data.resize(48);
    std::string e;
    bad_dtype = (dir / "bd.npy").string();
    REQUIRE(write_npy(bad_dtype, d, e));
  }
  ~Files() { fs::remove_all(dir); }
  std::string write(const char* name, kiln_dtype t, std::vector<int64_t> shape, std::vector<float> v) {
    HostTensor h;
    h.dtype = t;
    h.shape = std::move(shape);
    h.data.resize(v.size() * 4);
    std::memcpy(h.data.data(), v.data(), h.data.size());
    std::string e;
    const std::string p = (dir / name).string();
    REQUIRE(write_npy(p, h, e));
    return p;
  }
};

}  // namespace

TEST_CASE("exe_main runs with positional and named inputs and prints outputs") {
  Files f;
  auto c = run({f.x, f.bias});
  CHECK(c.rc == 0);
  CHECK(c.err == "");
  CHECK(c.out.find("y/out:0: shape [2,3] dtype f32") != std::string::npos);
  CHECK(c.out.find("values: 2 6 3 10 1 4") != std::string::npos);
  CHECK(c.out.find("argmax: 3") != std::string::npos);
  CHECK(c.out.find("idx: shape [2] dtype i64") != std::string::npos);
  CHECK(c.out.find("values: 1 0") != std::string::npos);
  c = run({"-i", "bias=" + f.bias, "--input=x=" + f.x, "--threads", "2"});
  CHECK(c.rc == 0);
  c = run({f.x, "-i", "bias=" + f.bias});
  CHECK(c.rc == 0);
}

TEST_CASE("exe_main writes outputs with -o and sanitized names") {
  Files f;
  const fs::path out = f.dir / "deep" / "out";
  auto c = run({f.x, f.bias, "-o", out.string(), "--repeat", "3"});
  REQUIRE_MESSAGE(c.rc == 0, c.err);
  CHECK(c.err.find("latency over 3 runs: median") != std::string::npos);
  CHECK(c.err.find("cpu time mean") != std::string::npos);  // bench.py parses it
  CHECK(c.err.find("(runs 2-3)") != std::string::npos);     // the first run left out of the CPU time
  c = run({f.x, f.bias, "--repeat", "2", "--warmup", "2"});
  REQUIRE_MESSAGE(c.rc == 0, c.err);
  CHECK(c.err.find("latency over 2 runs: median") != std::string::npos);
  CHECK(c.err.find("(runs 1-2) after 2 warm-up runs") != std::string::npos);
  HostTensor y, idx;
  std::string e;
  REQUIRE_MESSAGE(read_npy((out / "y_out_0.npy").string(), y, e), e);
  REQUIRE_MESSAGE(read_npy((out / "idx.npy").string(), idx, e), e);
  CHECK(y.shape == std::vector<int64_t>{2, 3});
  float yv[6];
  std::memcpy(yv, y.data.data(), 24);
  CHECK(yv[3] == 10.f);
  CHECK(idx.dtype == KILN_I64);
  int64_t iv[2];
  std::memcpy(iv, idx.data.data(), 16);
  CHECK(iv[0] == 1);
  CHECK(iv[1] == 0);
  CHECK(!fs::exists(out / "idx.npy.tmp"));
}

TEST_CASE("exe_main help lists inputs and outputs") {
  auto c = run({"--help"});
  CHECK(c.rc == 0);
  CHECK(c.out.find("usage: fake_model") != std::string::npos);
  CHECK(c.out.find("x  f32 [2,3]") != std::string::npos);
  CHECK(c.out.find("bias  f32 [1]") != std::string::npos);
  CHECK(c.out.find("idx  i64 [2]") != std::string::npos);
}

TEST_CASE("exe_main --version says how the model was compiled") {
  ModelApi api = kApi;
  api.build_info = "compiled by kiln 0.1.0 from fake.onnx, precision int8, weights embedded";
  std::string prog = "fake_model", flag = "--version";
  char* argv[] = {prog.data(), flag.data(), nullptr};
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  CHECK(exe_main(2, argv, api, out, err) == 0);
  CHECK(slurp(out) == "fake: compiled by kiln 0.1.0 from fake.onnx, precision int8, weights embedded\n");
  CHECK(slurp(err).empty());
  CHECK(run({"--version"}).out == "fake: compiled by kiln\n");  // a table without build_info
}

TEST_CASE("exe_main fails with one clear line") {
  Files f;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{f.bad_shape, f.bias}, "error: input 'x': shape [3,2] does not match the model's [2,3]"},
      {{f.bad_dtype, f.bias}, "error: input 'x': dtype f64 does not match the model's f32"},
      {{f.x}, "error: input 'bias' is missing"},
      {{f.x, f.bias, f.bias}, "error: too many inputs"},
      {{f.x, "-i", "nope=" + f.bias}, "error: unknown input 'nope' (the model's inputs: x, bias)"},
      {{f.x, f.bias, "-i", "x=" + f.x}, "error: input 'x' is given twice"},
      {{(f.dir / "absent.npy").string(), f.bias}, "error: input 'x': "},
      {{f.x, f.bias, "--repeat", "0"}, "error: option --repeat expects a positive integer, got '0'"},
      {{f.x, f.bias, "--warmup", "-1"}, "error: option --warmup expects a non-negative integer, got '-1'"},
      {{f.x, f.bias, "--frobnicate"}, "error: unknown option '--frobnicate'"},
      {{f.x, f.bias, "-o"}, "error: option -o expects a value"},
      {{f.x, "-i", "bias"}, "error: option -i expects NAME=FILE, got 'bias'"},
      {{f.x, f.neg_bias}, "error: run failed: node 'add' (Add): bias is negative"},
  };
  for (const auto& c : cases) {
    const auto r = run(c.args);
    INFO("stderr: " << r.err);
    CHECK(r.rc == 1);
    CHECK(r.err.rfind(c.message, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("print_tensor_summary for several dtypes") {
  auto capture = [](const TensorInfo& t, const void* data) {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    print_tensor_summary(f, t, data);
    return slurp(f);
  };
  const int64_t d12[1] = {12};
  float v[12];
  for (int i = 0; i < 12; ++i) v[i] = float(i % 5) * 0.5f;
  v[7] = NAN;
  const std::string s = capture({"probs", KILN_F32, 1, d12}, v);
  CHECK(s == "probs: shape [12] dtype f32\n  values: 0 0.5 1 1.5 2 0 0.5 nan 1.5 2 ...\n  argmax: 4\n");
  const uint8_t b[3] = {0, 1, 1};
  const int64_t d3[1] = {3};
  CHECK(capture({"mask", KILN_BOOL, 1, d3}, b) == "mask: shape [3] dtype bool\n  values: false true true\n  argmax: 1\n");
  const uint16_t h[1] = {0x3C00};
  CHECK(capture({"s", KILN_F16, 0, nullptr}, h) == "s: shape [] dtype f16\n  values: 1\n  argmax: 0\n");
  const int64_t d0[2] = {2, 0};
  CHECK(capture({"e", KILN_I32, 2, d0}, nullptr) ==
        "e: shape [2,0] dtype i32\n  values: (none)\n  argmax: none (empty tensor)\n");
}
