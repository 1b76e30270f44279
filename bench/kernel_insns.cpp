// One call of a runtime kernel on constant data, for counting its instructions under qemu
// (bench/qemu_insn_count.c): subtract the count of the `none` run (setup only) from a kernel's.
// Built against a cross-built runtime (tests/runtime/cross_test.sh leaves BUILD/runtime/libkiln_rt.a):
//
//   aarch64-linux-gnu-g++ -std=c++17 -O2 -Iruntime/include bench/kernel_insns.cpp
//       BUILD/runtime/libkiln_rt.a -lpthread -o kernel_insns    (one command line)
//   qemu-aarch64 -plugin ./libinsn_count.so -L /usr/aarch64-linux-gnu ./kernel_insns conv neon 64 56 56 256 1 1 0
//
//   kernel_insns conv ISA C H W M K STRIDE PLAIN   conv_nchwc_f32 (ISA neon, portable or none), batch 1,
//                                                  pads K / 2, bias and Relu; PLAIN 1: NCHW input (a stem)
//   kernel_insns gemm RUN M N K                     gemm_f32 (RUN none: setup only; the kernel is the
//                                                  process's, KILN_CPU_ISA=portable for the plain loops)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kiln/rt/conv_nchwc.h"
#include "kiln/rt/gemm.h"

using namespace kiln::rt;

namespace {

int conv(char** argv) {
  const char* isa = argv[0];
  const int64_t C = atoll(argv[1]), H = atoll(argv[2]), W = atoll(argv[3]), M = atoll(argv[4]), k = atoll(argv[5]),
                s = atoll(argv[6]);
  const int64_t pad = k / 2, OH = (H + 2 * pad - k) / s + 1, OW = (W + 2 * pad - k) / s + 1;
  const ConvNchwcParams p{1, C, H, W, M, k, k, OH, OW, s, s, pad, pad, atoi(argv[7]) != 0};
  if (!conv_nchwc_applicable(p)) return std::fprintf(stderr, "kernel_insns: not a conv_nchwc shape\n"), 2;
  std::vector<float> x(C * H * W, 0.5f), w(M * C * k * k, 0.25f), b(M, 0.1f), y(M * OH * OW);
  std::vector<float> packed(conv_nchwc_packed_floats(p));
  conv_nchwc_pack_weights(p, w.data(), packed.data());
  if (std::strcmp(isa, "none") != 0)
    conv_nchwc_f32(p, x.data(), packed.data(), b.data(), nullptr, StoreActivation{StoreActivation::kRelu}, y.data(),
                   nullptr, std::strcmp(isa, "neon") == 0 ? NchwcIsa::neon : NchwcIsa::portable);
  std::printf("%g\n", y[y.size() / 2]);
  return 0;
}

int gemm(char** argv) {
  const int64_t M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  std::vector<float> a(M * K, 0.5f), b(K * N, 0.25f), c(M * N);
  if (std::strcmp(argv[0], "none") != 0)
    gemm_f32(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), N, nullptr);
  std::printf("%g\n", c[c.size() / 2]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 10 && std::strcmp(argv[1], "conv") == 0) return conv(argv + 2);
  if (argc == 6 && std::strcmp(argv[1], "gemm") == 0) return gemm(argv + 2);
  std::fprintf(stderr, "usage: kernel_insns conv ISA C H W M K STRIDE PLAIN | gemm RUN M N K\n");
  return 2;
}
