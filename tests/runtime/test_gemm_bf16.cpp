// The native bf16 GEMM (kiln/rt/gemm_bf16.h) against a double-precision reference on the
// same inputs rounded to bf16, and its fallback (the stored B widened into gemm_f32's layout).
// The kernel itself runs only on CPUs with AVX512_BF16; elsewhere those cases say so and
// check that gemm_f32_ex takes the widened fp32 B instead.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kiln/rt/dtype.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/gemm_bf16.h"
#include "kiln/rt/thread_pool.h"
#include "test_util.h"

using namespace kiln::rt;
using kiln_test::max_rel_diff;
using kiln_test::random_floats;

namespace {

// What the kernel reads for x: the nearest bf16, ties to even, with fp32 denormals as zero
// (vcvtne2ps2bf16 and vdpbf16ps treat denormal inputs as zero).
float bf16_of(float x) {
  const float r = bf16_bits_to_f32(f32_to_bf16_bits(x));
  return std::fpclassify(r) == FP_SUBNORMAL ? std::copysign(0.f, r) : r;
}

// C = alpha * op(A) B + beta * C with both operands rounded to bf16, summed in double.
void ref_bf16(bool ta, int64_t M, int64_t N, int64_t K, float alpha, const std::vector<float>& A, int64_t lda,
              const std::vector<float>& B, float beta, std::vector<float>& C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(bf16_of(ta ? A[k * lda + i] : A[i * lda + k])) * double(bf16_of(B[k * N + j]));
      float& c = C[i * ldc + j];
      c = beta == 0.f ? float(alpha * s) : float(alpha * s + beta * double(c));
    }
}

std::vector<uint16_t> pack_bf16(const std::vector<float>& B, int64_t K, int64_t N) {
  std::vector<uint16_t> packed(gemm_bf16_packed_b_halves(K, N));
  gemm_bf16_pack_b(false, K, N, B.data(), N, packed.data());
  return packed;
}

double tolerance(int64_t K) { return 1e-5 * std::sqrt(double(K) + 1); }

}  // namespace

TEST_CASE("gemm_bf16_widen_b is gemm_f32_pack_b of B rounded to bf16, for both layouts of B") {
  for (bool tb : {false, true})
    for (int64_t K : {1, 2, 7, 512, 513, 1030})
      for (int64_t N : {1, 16, 31, 33, 70}) {
        const auto B = random_floats(K * N, 7);
        std::vector<float> rounded(B.size());
        for (size_t i = 0; i < B.size(); ++i) rounded[i] = bf16_bits_to_f32(f32_to_bf16_bits(B[i]));
        std::vector<uint16_t> halves(gemm_bf16_packed_b_halves(K, N));
        gemm_bf16_pack_b(tb, K, N, B.data(), tb ? K : N, halves.data());
        std::vector<float> widened(gemm_f32_packed_b_floats(K, N), -1.f), want(widened.size(), -2.f);
        REQUIRE(gemm_bf16_widen_b(K, N, halves.data(), widened.data()));
        gemm_f32_pack_b(tb, K, N, rounded.data(), tb ? K : N, want.data());
        INFO("trans_b=" << tb << " K=" << K << " N=" << N);
        CHECK(std::memcmp(widened.data(), want.data(), widened.size() * sizeof(float)) == 0);
      }
}

TEST_CASE("gemm_f32_ex with a bf16 B: native bf16 where the CPU has it, the widened fp32 B elsewhere") {
  const int64_t M = 9, N = 40, K = 100;
  const auto A = random_floats(M * K, 1), B = random_floats(K * N, 2);
  const auto halves = pack_bf16(B, K, N);
  std::vector<float> widened(gemm_f32_packed_b_floats(K, N));
  REQUIRE(gemm_bf16_widen_b(K, N, halves.data(), widened.data()));
  std::vector<float> C(M * N), ref(M * N);
  ref_bf16(false, M, N, K, 1.f, A, K, B, 0.f, ref, N);
  if (gemm_bf16_native()) {
    // The fp32 B is not needed (a bf16 model's context leaves it null here) ...
    gemm_f32_ex(M, N, K, 1.f, GemmOperand{A.data(), K, false, false},
                GemmOperand{nullptr, 0, false, true, halves.data()}, 0.f, C.data(), N, nullptr, Epilogue{}, 0, nullptr);
    CHECK(max_rel_diff(C, ref) < tolerance(K));
  } else {
    MESSAGE("no AVX512_BF16 here (or KILN_NATIVE_BF16=0): the native bf16 kernel is not run; checking the fallback");
  }
  // ... and with it, the result is the fp32 GEMM's on the widened B (A in fp32) or the
  // native one's, whichever this CPU runs.
  gemm_f32_ex(M, N, K, 1.f, GemmOperand{A.data(), K, false, false},
              GemmOperand{widened.data(), 0, false, true, halves.data()}, 0.f, C.data(), N, nullptr, Epilogue{}, 0,
              nullptr);
  std::vector<float> f32(M * N);
  gemm_f32_ex(M, N, K, 1.f, GemmOperand{A.data(), K, false, false}, GemmOperand{widened.data(), 0, false, true}, 0.f,
              f32.data(), N, nullptr, Epilogue{}, 0, nullptr);
  if (gemm_bf16_native())
    CHECK(max_rel_diff(C, ref) < tolerance(K));
  else
    CHECK(C == f32);
}

TEST_CASE("gemm_bf16 matches the bf16-rounded reference for every tile shape, alpha, beta and transpose") {
  if (!gemm_bf16_native()) {
    MESSAGE("no AVX512_BF16 here (or KILN_NATIVE_BF16=0): gemm_bf16 is not run");
    return;
  }
  // M 1 to 13: the whole 6-row tile and every edge (1 and 2 rows keep 4 and 2 sums); N 1 to 70:
  // masked column tails of both halves of the 32-column panel; K odd (a zero pair half), one
  // pair, and past the 512-row block (C accumulated across blocks).
  ThreadPool pool2(2);
  uint32_t seed = 10;
  for (int64_t M : {1, 2, 3, 5, 6, 7, 13, 80})
    for (int64_t N : {1, 15, 16, 17, 32, 40, 70})
      for (int64_t K : {1, 2, 63, 600, 1025})
        for (bool ta : {false, true}) {
          const float alpha = M % 2 ? 1.f : 0.5f, beta = N == 17 ? 0.7f : (N == 40 ? 1.f : 0.f);
          const int64_t lda = (ta ? M : K) + 3, ldc = N + 5;
          const auto A = random_floats(static_cast<size_t>((ta ? K : M) * lda), ++seed);
          const auto B = random_floats(static_cast<size_t>(K * N), ++seed);
          auto C0 = random_floats(static_cast<size_t>(M * ldc), ++seed);
          if (beta == 0.f) C0.assign(C0.size(), std::numeric_limits<float>::quiet_NaN());  // must not be read
          auto ref = C0;
          ref_bf16(ta, M, N, K, alpha, A, lda, B, beta, ref, ldc);
          const auto halves = pack_bf16(B, K, N);
          std::vector<float> one = C0, two = C0;
          gemm_bf16(M, N, K, alpha, A.data(), lda, ta, halves.data(), beta, one.data(), ldc, nullptr, Epilogue{}, 0,
                    nullptr);
          gemm_bf16(M, N, K, alpha, A.data(), lda, ta, halves.data(), beta, two.data(), ldc, nullptr, Epilogue{}, 0,
                    &pool2);
          INFO("M=" << M << " N=" << N << " K=" << K << " trans_a=" << ta << " alpha=" << alpha << " beta=" << beta);
          std::vector<float> got, want;
          bool padding_kept = true;
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              const float g = one[i * ldc + j], c0 = C0[i * ldc + j];
              if (j >= N) {
                padding_kept &= g == c0 || (std::isnan(g) && std::isnan(c0));
              } else {
                got.push_back(g);
                want.push_back(ref[i * ldc + j]);
              }
            }
          CHECK(padding_kept);
          CHECK(max_rel_diff(got, want) < tolerance(K));
          CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);  // thread count
        }
}

namespace {

template <bool kRelu>
void residual_then(const void* ctx, float* y, int64_t offset, int64_t n) {
  const float* z = static_cast<const float*>(ctx) + offset;
  for (int64_t i = 0; i < n; ++i) {
    const float v = y[i] + z[i];
    y[i] = kRelu ? relu_of(v) : clamp_to(v, -0.5f, 0.5f);
  }
}

// An epilogue the kernel cannot apply itself (no promises): called on row segments.
void tanh_of(const void*, float* y, int64_t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
}

}  // namespace

TEST_CASE("gemm_bf16 applies the row bias, a residual with a clamp or ReLU, and other epilogues") {
  if (!gemm_bf16_native()) {
    MESSAGE("no AVX512_BF16 here (or KILN_NATIVE_BF16=0): gemm_bf16 is not run");
    return;
  }
  ThreadPool pool2(2);
  for (int kind = 0; kind < 3; ++kind)  // 0: residual + clamp, 1: residual + ReLU, 2: tanh
    for (int64_t M : {1, 2, 7, 13})
      for (int64_t K : {63, 600}) {
        const int64_t N = 300;  // past kFinishCols (128), with a partial last panel
        const auto A = random_floats(M * K, 31), B = random_floats(K * N, 32), bias = random_floats(M, 33);
        const auto res = random_floats(M * N, 34);
        std::vector<float> ref(M * N);
        ref_bf16(false, M, N, K, 1.f, A, K, B, 0.f, ref, N);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) ref[i * N + j] += bias[i];
        Epilogue ep;
        if (kind < 2) {
          ep.fn = kind == 1 ? residual_then<true> : residual_then<false>;
          ep.ctx = res.data();
          ep.fn_is_clamp = kind == 0;
          ep.fn_is_relu = kind == 1;
          ep.clamp_lo = kind == 1 ? 0.f : -0.5f;
          ep.clamp_hi = kind == 1 ? 0.f : 0.5f;
          ep.residual = res.data();
        } else {
          ep.fn = tanh_of;
        }
        ep.fn(ep.ctx, ref.data(), 0, M * N);
        const auto halves = pack_bf16(B, K, N);
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
          std::vector<float> C(M * N, std::numeric_limits<float>::quiet_NaN());
          gemm_bf16(M, N, K, 1.f, A.data(), K, false, halves.data(), 0.f, C.data(), N, bias.data(), ep, 0, pool);
          INFO("kind=" << kind << " M=" << M << " K=" << K << " threads=" << (pool ? 2 : 1));
          CHECK(max_rel_diff(C, ref) < tolerance(K));
        }
      }
}

TEST_CASE("gemm_bf16 keeps NaN through a clamp and makes it 0 through a ReLU, as the fp32 kernels do") {
  if (!gemm_bf16_native()) {
    MESSAGE("no AVX512_BF16 here (or KILN_NATIVE_BF16=0): gemm_bf16 is not run");
    return;
  }
  const int64_t M = 2, N = 3, K = 2;
  const std::vector<float> A = {NAN, 1.f, 1.f, 1.f}, B(K * N, 1.f);
  const auto halves = pack_bf16(B, K, N);
  for (bool relu : {false, true}) {
    Epilogue ep;
    ep.fn = tanh_of;  // never called: the promises below are applied in the store
    ep.fn_is_clamp = !relu;
    ep.fn_is_relu = relu;
    ep.clamp_lo = relu ? 0.f : -1.f;
    ep.clamp_hi = relu ? 0.f : 1.f;
    std::vector<float> C(M * N);
    gemm_bf16(M, N, K, 1.f, A.data(), K, false, halves.data(), 0.f, C.data(), N, nullptr, ep, 0, nullptr);
    CHECK(relu ? C[0] == 0.f : std::isnan(C[0]));
    CHECK(C[N] == (relu ? 2.f : 1.f));  // 1 + 1, clamped to 1 or kept by the ReLU
  }
}

TEST_CASE("gemm_bf16 speed against gemm_f32 with packed B (informational)") {
  if (!gemm_bf16_native()) {
    MESSAGE("no AVX512_BF16 here: nothing to time");
    return;
  }
  for (int64_t M : {1, 128}) {
    const int64_t N = 768, K = 768;
    const auto A = random_floats(M * K, 1), B = random_floats(K * N, 2);
    const auto halves = pack_bf16(B, K, N);
    std::vector<float> packed(gemm_f32_packed_b_floats(K, N)), C(M * N);
    gemm_f32_pack_b(false, K, N, B.data(), N, packed.data());
    const auto time_of = [&](auto&& fn) {
      fn();
      const int reps = M == 1 ? 200 : 20;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) fn();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    };
    const double bf = time_of([&] {
      gemm_bf16(M, N, K, 1.f, A.data(), K, false, halves.data(), 0.f, C.data(), N, nullptr, Epilogue{}, 0, nullptr);
    });
    const double f32 = time_of([&] {
      gemm_f32_ex(M, N, K, 1.f, GemmOperand{A.data(), K, false, false}, GemmOperand{packed.data(), 0, false, true},
                  0.f, C.data(), N, nullptr, Epilogue{}, 0, nullptr);
    });
    MESSAGE("M=" << M << " N=768 K=768, one thread: bf16 " << bf * 1e6 << " us, fp32 " << f32 * 1e6 << " us ("
                 << f32 / bf << "x)");
  }
}

namespace {

// x [N, C, HW] in NCHW16c from plain values, as the kernels read it.
std::vector<float> blocked(const std::vector<float>& plain, int64_t N, int64_t C, int64_t HW) {
  std::vector<float> out(plain.size());
  nchw_to_nchwc_f32(N, C, HW, plain.data(), out.data(), nullptr);
  return out;
}

}  // namespace

TEST_CASE("conv_nchwc_bf16_widen_weights is conv_nchwc_pack_weights of the weights rounded to bf16") {
  for (int64_t C : {16, 48, 528})
    for (int64_t M : {16, 48, 64}) {
      const ConvNchwcParams p{1, C, 3, 3, M, 1, 1, 3, 3, 1, 1, 0, 0};
      const auto w = random_floats(M * C, 51);
      std::vector<float> rounded(w.size());
      for (size_t i = 0; i < w.size(); ++i) rounded[i] = bf16_bits_to_f32(f32_to_bf16_bits(w[i]));
      std::vector<uint16_t> halves(conv_nchwc_bf16_packed_halves(p));
      conv_nchwc_bf16_pack_weights(p, w.data(), halves.data());
      std::vector<float> widened(conv_nchwc_packed_floats(p), -1.f), want(widened.size(), -2.f);
      REQUIRE(conv_nchwc_bf16_widen_weights(p, halves.data(), widened.data()));
      conv_nchwc_pack_weights(p, rounded.data(), want.data());
      INFO("C=" << C << " M=" << M);
      CHECK(std::memcmp(widened.data(), want.data(), widened.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("conv_nchwc_f32 with bf16 weights: a 1x1 on the bf16 kernel matches the fp32 kernel on rounded inputs") {
  // The fp32 kernel on x and w rounded to bf16 is the reference (products exact in both; the
  // sums differ in order only). C 528 is two K blocks; M 48 ends in half a 32-column panel; HW
  // 1 to 100 covers 1-5 row edges; bias, residual and each activation. Where the CPU lacks
  // native bf16, conv_nchwc_f32 must take the widened fp32 weights: checked to be the fp32 result.
  ThreadPool pool2(2);
  const bool native = gemm_bf16_native();
  if (!native) MESSAGE("no AVX512_BF16 here (or KILN_NATIVE_BF16=0): checking the widened fp32 path only");
  uint32_t seed = 60;
  for (int64_t C : {16, 48, 528})
    for (int64_t M : {16, 48, 64})
      for (int64_t HW : {1, 7, 100})
        for (int act_kind = 0; act_kind < 3; ++act_kind) {
          const int64_t N = 2;
          const ConvNchwcParams p{N, C, 1, HW, M, 1, 1, 1, HW, 1, 1, 0, 0};
          REQUIRE(conv_nchwc_bf16_applicable(p));
          const auto x = random_floats(N * C * HW, ++seed), w = random_floats(M * C, ++seed);
          const auto bias = random_floats(M, ++seed), zp = random_floats(N * M * HW, ++seed);
          std::vector<float> xr(x.size()), wr(w.size());
          for (size_t i = 0; i < x.size(); ++i) xr[i] = bf16_of(x[i]);
          for (size_t i = 0; i < w.size(); ++i) wr[i] = bf16_of(w[i]);
          const auto xb = blocked(x, N, C, HW), xrb = blocked(xr, N, C, HW), z = blocked(zp, N, M, HW);
          StoreActivation act;
          if (act_kind == 1) act.kind = StoreActivation::kRelu;
          if (act_kind == 2) act = StoreActivation{StoreActivation::kClamp, -0.5f, 0.5f};
          const float* zz = act_kind == 0 ? nullptr : z.data();
          std::vector<float> packed_r(conv_nchwc_packed_floats(p)), widened(packed_r.size());
          conv_nchwc_pack_weights(p, wr.data(), packed_r.data());
          std::vector<uint16_t> halves(conv_nchwc_bf16_packed_halves(p));
          conv_nchwc_bf16_pack_weights(p, w.data(), halves.data());
          REQUIRE(conv_nchwc_bf16_widen_weights(p, halves.data(), widened.data()));
          std::vector<float> ref(N * M * HW), one(ref.size(), NAN), two(ref.size(), NAN);
          conv_nchwc_f32(p, native ? xrb.data() : xb.data(), packed_r.data(), bias.data(), zz, act, ref.data(),
                         nullptr);
          conv_nchwc_f32(p, xb.data(), native ? nullptr : widened.data(), bias.data(), zz, act, one.data(), nullptr,
                         NchwcIsa::automatic, halves.data());
          conv_nchwc_f32(p, xb.data(), native ? nullptr : widened.data(), bias.data(), zz, act, two.data(), &pool2,
                         NchwcIsa::automatic, halves.data());
          INFO("C=" << C << " M=" << M << " HW=" << HW << " act=" << act_kind);
          CHECK(max_rel_diff(one, ref) < tolerance(C));
          CHECK(one == two);
        }
}
