// Deliberate faults for kiln's own tests, read from the environment by `kiln compile` and
// `kiln bench` (docs/guide/debugging.md, "Test hooks"). Never set them outside tests:
//   KILN_TEST_PERTURB_NODE=NAME[:DELTA]  node NAME's first output gets DELTA (0.5) added
//   KILN_TEST_DELAY_NODE=NAME:MS         node NAME busy-waits MS milliseconds on every run
#pragma once

#include "codegen/cpp/cpp_backend.h"

namespace kiln::cli {

// The hooks the environment asks for; prints a warning to stderr for each one set.
codegen::cpp::TestHooks test_hooks_from_env();

}  // namespace kiln::cli
