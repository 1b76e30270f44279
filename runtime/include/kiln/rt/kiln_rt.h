// The kiln runtime: everything generated code may call.
#pragma once

#include "kiln/rt/conv.h"
#include "kiln/rt/dtype.h"
#include "kiln/rt/elementwise.h"
#include "kiln/rt/epilogue.h"
#include "kiln/rt/exe_main.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/index_copy.h"
#include "kiln/rt/layout.h"
#include "kiln/rt/mapped_file.h"
#include "kiln/rt/norm.h"
#include "kiln/rt/npy.h"
#include "kiln/rt/pool.h"
#include "kiln/rt/reduce.h"
#include "kiln/rt/sanitize.h"
#include "kiln/rt/scatter.h"
#include "kiln/rt/thread_pool.h"
