// kiln_abi_erf_f32 (kiln/rt/kernel_abi.h) in a file of its own: kiln::rt::erf's polynomial
// evaluated without contraction into FMAs, as the generated C++ evaluates it (built with
// -ffp-contract=off), whatever -march the runtime is built with, so that the LLVM backend's
// Gelu gives the C++ backend's bits on every CPU. Before the include: the pragmas apply to the
// code that follows them, the header's template included.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "kiln/rt/erf.h"
#include "kiln/rt/kernel_abi.h"

extern "C" float kiln_abi_erf_f32(float x) { return kiln::rt::erf(x); }
