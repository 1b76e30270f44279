// KILN_LOG_KERNELS=1: the runtime's convolution entry points print one line per call to stderr
// naming the kernel family and instruction set they took, and the shape, e.g.
//   kiln: kernel conv_nchwc isa=neon C=64 H=56 W=56 M=256 k=1x1 stride=1
// so that a run (under qemu too, where time says nothing) shows which kernel each layer ran.
// Read once per process; off, each entry point pays one test of a static.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln::rt {

inline bool kernel_log_enabled() noexcept {
  static const bool on = [] {
    const char* env = std::getenv("KILN_LOG_KERNELS");
    return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  }();
  return on;
}

// One line: the family, the instruction set of its inner kernel, and a convolution's shape.
inline void log_conv_kernel(const char* family, const char* isa, int64_t C, int64_t H, int64_t W, int64_t M,
                            int64_t KH, int64_t KW, int64_t stride) noexcept {
  std::fprintf(stderr, "kiln: kernel %s isa=%s C=%lld H=%lld W=%lld M=%lld k=%lldx%lld stride=%lld\n", family, isa,
               static_cast<long long>(C), static_cast<long long>(H), static_cast<long long>(W),
               static_cast<long long>(M), static_cast<long long>(KH), static_cast<long long>(KW),
               static_cast<long long>(stride));
}

}  // namespace kiln::rt
