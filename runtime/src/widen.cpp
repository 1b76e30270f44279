#include "kiln/rt/widen.h"

#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "kiln/rt/dtype.h"
#include "kiln/rt/x86_dispatch.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define KILN_WIDEN_F16C 1
#else
#define KILN_WIDEN_F16C 0
#endif

namespace kiln::rt {
namespace {

void widen_f16_portable(const uint16_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) dst[i] = f16_bits_to_f32(src[i]);
}

#if KILN_WIDEN_F16C
// Eight halves at a time (vcvtph2ps); exact, as the portable loop is.
__attribute__((target("avx,f16c"))) void widen_f16_f16c(const uint16_t* src, float* dst, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  widen_f16_portable(src + i, dst + i, count - i);
}
#endif

using WidenFn = void (*)(const uint16_t*, float*, size_t);

WidenFn choose_f16() {
#if KILN_WIDEN_F16C
  if (cpu_has_f16c()) return widen_f16_f16c;
#endif
  return widen_f16_portable;
}

}  // namespace

bool cpu_has_f16c() noexcept {
#if KILN_WIDEN_F16C
  static const bool has = [] {
    if (isa_cap() == IsaCap::portable) return false;
    __builtin_cpu_init();
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  }();
  return has;
#else
  return false;
#endif
}

void widen_f16(const uint16_t* src, float* dst, size_t count) {
  static const WidenFn fn = choose_f16();
  fn(src, dst, count);
}

void release_pages(const void* data, size_t bytes) {
#if defined(__linux__)
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return;
  const uintptr_t p = static_cast<uintptr_t>(page), start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (start + p - 1) / p * p, end = (start + bytes) / p * p;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
  (void)data;
  (void)bytes;
#endif
}

void widen_bf16(const uint16_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(dst + i, &bits, 4);
  }
}

}  // namespace kiln::rt
