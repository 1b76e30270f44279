// Weights stored in half precision (`kiln compile --precision fp16|bf16`), widened to fp32
// once, when a model's context is created: the file holds half the bytes, the kernels read
// fp32 as usual. fp16 uses F16C where the CPU has it (chosen at run time), bf16 is a shift.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

// One stored weight: `count` halves at byte `from` of the weights, widened to floats at byte
// `to` of the widened buffer.
struct WidenRange {
  size_t from, to, count;
};

void widen_f16(const uint16_t* src, float* dst, size_t count);
void widen_bf16(const uint16_t* src, float* dst, size_t count);

// Tells the OS that the whole pages within [data, data + bytes) will not be read again: pages
// of a file mapping (the weights linked into the binary, NAME.weights mapped) leave resident
// memory and are read back from the file if they ever are; other memory would read as zeros
// (Linux; elsewhere nothing). Only for bytes nothing reads afterwards, such as the halves once
// widened (a second context maps or reads the weights afresh).
void release_pages(const void* data, size_t bytes);

// Widens every range from `weights` into `widened` (64-byte aligned) with `fn`, then releases
// the halves' pages, so that a running model holds about as much memory as in fp32.
inline void widen_weights(const unsigned char* weights, unsigned char* widened, const WidenRange* ranges,
                          size_t n, void (*fn)(const uint16_t*, float*, size_t)) {
  for (size_t i = 0; i < n; ++i) {
    fn(reinterpret_cast<const uint16_t*>(weights + ranges[i].from), reinterpret_cast<float*>(widened + ranges[i].to),
       ranges[i].count);
    release_pages(weights + ranges[i].from, ranges[i].count * sizeof(uint16_t));
  }
}

}  // namespace kiln::rt
