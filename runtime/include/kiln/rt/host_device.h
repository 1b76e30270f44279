// KILN_HD marks the runtime's scalar functions that the CUDA backend's kernels call too
// (kiln/rt/erf.h, kiln/rt/scalar_ops.h: the semantics of elementwise ops, written once): host
// and device functions under nvcc, plain functions for every other compiler.
#pragma once

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__
#else
#define KILN_HD
#endif
