// Kernels compiled for AVX2+FMA or AVX-512 whatever the build's flags (functions marked
// KILN_AVX2_FMA / KILN_AVX512F, or with their own target attributes) and chosen at run time when
// the CPU has them: `kiln compile --cpu generic`, the default, thus runs fast on AVX2 and AVX-512
// machines and correctly everywhere. Every such choice in the runtime asks the functions below,
// so that one switch caps them all (KILN_CPU_ISA, below). For the runtime's own sources.
//
// On ARM64 the same switch picks between the NEON kernels (KILN_NEON_KERNELS; NEON is part of
// ARMv8-A, so nothing is detected at run time) and the plain loops (KILN_CPU_ISA=portable).
#pragma once

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define KILN_X86_KERNELS 1
#define KILN_AVX2_FMA __attribute__((target("avx2,fma")))
#define KILN_AVX512F __attribute__((target("avx512f,avx2,fma")))
#else
#define KILN_X86_KERNELS 0
#define KILN_AVX2_FMA
#define KILN_AVX512F
#endif

#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define KILN_NEON_KERNELS 1
#else
#define KILN_NEON_KERNELS 0
#endif

// On a NEON register tile that keeps 24 or more accumulators: GCC's first scheduling pass hoists
// the unrolled loop's loads ahead of their FMAs and then spills accumulators to the stack (about
// 400 stack accesses in conv_nchwc's tile_neon<6, false> at -O2 and -O3; none without the pass).
#if KILN_NEON_KERNELS && defined(__GNUC__) && !defined(__clang__)
#define KILN_NEON_NO_SCHEDULE __attribute__((optimize("no-schedule-insns")))
#else
#define KILN_NEON_NO_SCHEDULE
#endif

// On a kernel's register tile: no UndefinedBehaviorSanitizer pointer-overflow checks. Clang
// puts one on every address the unrolled taps compute, and for conv_nchwc.cpp's 60 tile
// instantiations that made the sanitized build of that one file take 6 minutes instead of one.
// AddressSanitizer still checks every load and store; the tile's offsets are bounded by its
// caller's loops.
#if defined(__clang__)
#define KILN_TILE_NO_POINTER_CHECKS __attribute__((no_sanitize("pointer-overflow")))
#else
#define KILN_TILE_NO_POINTER_CHECKS
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln::rt {

// The widest kernels the runtime may choose. `native` is whatever the CPU has. The environment
// variable KILN_CPU_ISA lowers it: `avx2` keeps to AVX2, FMA and F16C, as on a CPU without
// AVX-512 (Zen 1-3, Haswell to Alder Lake); `portable` to the plain C++ loops. It exists to
// measure and test the narrower kernels on a wider CPU; instructions that the C++ compiler put
// into generated code itself (`kiln compile --cpu native`) are not affected. Read once per process.
enum class IsaCap { portable, avx2, native };

inline IsaCap isa_cap() noexcept {
  static const IsaCap cap = [] {
    const char* env = std::getenv("KILN_CPU_ISA");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "native") == 0) return IsaCap::native;
    if (std::strcmp(env, "avx2") == 0) return IsaCap::avx2;
    if (std::strcmp(env, "portable") == 0) return IsaCap::portable;
    std::fprintf(stderr, "kiln: KILN_CPU_ISA=%s is not one of native, avx2, portable; ignored\n", env);
    return IsaCap::native;
  }();
  return cap;
}

// True when functions marked KILN_AVX2_FMA can run here: an x86-64 CPU with AVX2 and FMA.
inline bool cpu_has_avx2_fma() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] {
    __builtin_cpu_init();
    return isa_cap() != IsaCap::portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

// True when the NEON kernels (KILN_NEON_KERNELS) may run: an ARM64 build, not capped to portable.
inline bool cpu_has_neon() noexcept {
#if KILN_NEON_KERNELS
  return isa_cap() != IsaCap::portable;
#else
  return false;
#endif
}

// True when AVX and F16C's half-precision conversions can run here. F16C comes from CPUID leaf 1
// (Clang's __builtin_cpu_supports does not know "f16c"); AVX, which also needs the OS to save the
// ymm registers, from the builtin.
bool cpu_has_f16c() noexcept;

// True when functions marked KILN_AVX512F can run here (the CPU and the OS support AVX-512F).
inline bool cpu_has_avx512f() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] {
    __builtin_cpu_init();
    return isa_cap() == IsaCap::native && __builtin_cpu_supports("avx512f") && cpu_has_avx2_fma();
  }();
  return has;
#else
  return false;
#endif
}

// AVX-512F with the byte/word and 128/256-bit forms (BW, VL): the integer kernels' base.
inline bool cpu_has_avx512_bw_vl() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] {
    __builtin_cpu_init();
    return cpu_has_avx512f() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  }();
  return has;
#else
  return false;
#endif
}

// AVX-VNNI: vpdpbusd on ymm registers in its VEX encoding, without AVX-512 (Intel client cores
// since Alder Lake, Sierra Forest; Zen 2 and 3 lack it). From CPUID leaf 7 sub-leaf 1, EAX bit 4
// (GCC 12's __builtin_cpu_supports does not know it). Native only: KILN_CPU_ISA=avx2 stands for
// an x86-64-v3 CPU, which has no AVX-VNNI.
inline bool cpu_has_avx_vnni() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return isa_cap() == IsaCap::native && cpu_has_avx2_fma() && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) &&
           (eax & (1u << 4)) != 0;
  }();
  return has;
#else
  return false;
#endif
}

// AVX-512 VNNI (vpdpbusd: u8 x s8 products summed into int32) on top of F/BW/VL.
inline bool cpu_has_avx512_vnni() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] { return cpu_has_avx512_bw_vl() && __builtin_cpu_supports("avx512vnni"); }();
  return has;
#else
  return false;
#endif
}

// AVX-512 VBMI (vpermb, vpermt2b: byte permutes) on top of F/BW/VL.
inline bool cpu_has_avx512_vbmi() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] { return cpu_has_avx512_bw_vl() && __builtin_cpu_supports("avx512vbmi"); }();
  return has;
#else
  return false;
#endif
}

// AVX-512 BF16 (vdpbf16ps, vcvtne2ps2bf16) on top of F/BW/VL.
inline bool cpu_has_avx512_bf16() noexcept {
#if KILN_X86_KERNELS
  static const bool has = [] { return cpu_has_avx512_bw_vl() && __builtin_cpu_supports("avx512bf16"); }();
  return has;
#else
  return false;
#endif
}

}  // namespace kiln::rt
