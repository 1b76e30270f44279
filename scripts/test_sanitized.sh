#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer: kiln, its libraries and
# tests built by Clang with -DKILN_SANITIZE=address,undefined into build-asan/, and the code kiln
# compiles built with the same sanitizers (KILN_EXTRA_CXXFLAGS). Runs the unit, end-to-end,
# hostile-input and fuzz-smoke tests; any sanitizer report fails the test it occurs in.
#
#   bash scripts/test_sanitized.sh [CTEST ARGS]     (after scripts/setup.sh)
#
# Environment: KILN_ASAN_BUILD (default <repo>/build-asan), KILN_TEST_JOBS (default 2),
# KILN_SANITIZED_EXCLUDE (a ctest -E regex; default: resnet18, torch_big, errors, silero_vad, ppocr, reproducible, packaging and conformance, which take long
# under the sanitizers and exercise no code path the other tests miss, and the aarch64 builds),
# KILN_SANITIZED_TESTS (a ctest -R regex; default: all the rest).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_ASAN_BUILD:-$repo/build-asan}"
sanitizers=address,undefined

# Line tables are all the sanitizers' reports need (file:line in each frame); full debug info
# made the build about a fifth slower. -O1, AddressSanitizer's usual level, compiles a fifth
# faster than -O2 (the runtime's kernels keep -O2: runtime/CMakeLists.txt).
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DKILN_SANITIZE="$sanitizers" >/dev/null
ninja -C "$build" -j "${KILN_BUILD_JOBS:-2}"

export CXX=clang++
# vptr and function checks need the C++ UBSan runtime, which the C programs of the e2e tests do not link.
export KILN_EXTRA_CXXFLAGS="-fsanitize=$sanitizers -fno-sanitize=vptr,function -fno-sanitize-recover=all -fno-omit-frame-pointer"
export CC="clang -fsanitize=$sanitizers"
export KILN_CACHE_DIR="$build/kiln-cache"
# Leaks are findings too; a report makes the process exit non-zero.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# AddressSanitizer reserves terabytes of address space: the hostile suite's ulimit -v cannot apply.
export KILN_HOSTILE_NO_MEMLIMIT=1
cd "$build"
# runtime.isa_portable: the plain loops are C++ the unsanitized run checks; under ASan it took
# 150 s of CI time (the AVX2 kernels' run, runtime.isa_avx2, stays). The aarch64 tests (label
# cross) build with the cross compiler, which has no sanitizer runtimes here.
# e2e.torch_big compiles torchvision-sized models the unsanitized run checks; e2e.torch_models
# runs its archives through the sanitized frontend and interpreter only (the compiled path is
# the same C++ backend the other e2e tests sanitize).
export KILN_TORCH_MODELS_NO_COMPILE=1
# e2e.control_flow compiles its fixtures sanitized too: the generated bodies and their arena
# offsets are what AddressSanitizer is there to check (about 30 s).
# e2e.errors checks the command line's messages, mostly by compiling models, which under the
# sanitizers took 390 s of CI time; the hostile-input suites run kiln's error paths sanitized.
# e2e.silero_vad and e2e.ppocr_* compile downloaded models the unsanitized run checks; e2e.reproducible and
# packaging.* check build plumbing (byte-identical outputs, install trees, rebuild rules), and
# the first would build the sanitized runtime twice more.
exclude="${KILN_SANITIZED_EXCLUDE:-e2e\.resnet18|e2e\.torch_big|e2e\.errors|e2e\.silero_vad|e2e\.ppocr_|e2e\.reproducible|packaging|conformance|runtime\.isa_portable|aarch64}"
ctest -j "${KILN_TEST_JOBS:-2}" --output-on-failure --timeout 1800 -E "$exclude" \
  ${KILN_SANITIZED_TESTS:+-R "$KILN_SANITIZED_TESTS"} "$@"
