// Kernels compiled for AVX2+FMA whatever the build's flags (functions marked KILN_AVX2_FMA) and
// chosen at run time when the CPU has them: `kiln compile --cpu generic`, the default, thus
// runs fast on AVX2 machines and correctly everywhere. For the runtime's own sources.
#pragma once

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define KILN_X86_KERNELS 1
#define KILN_AVX2_FMA __attribute__((target("avx2,fma")))
#define KILN_AVX512F __attribute__((target("avx512f,avx2,fma")))
#else
#define KILN_X86_KERNELS 0
#define KILN_AVX2_FMA
#define KILN_AVX512F
#endif

namespace kiln::rt {

// True when functions marked KILN_AVX2_FMA can run here: an x86-64 CPU with AVX2 and FMA.
// Asked once per process.
inline bool cpu_has_avx2_fma() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

// True when functions marked KILN_AVX512F can run here (the CPU and the OS support AVX-512F).
inline bool cpu_has_avx512f() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && cpu_has_avx2_fma();
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace kiln::rt
