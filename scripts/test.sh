#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up (PyTorch included, for the resnet18
# check), build, and run every test with CTest, two at a time.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# Each phase's time, on stderr at the end: CI has 90 minutes and the suite should stay under 60.
phase_start=$SECONDS
phases=()
phase_done() { phases+=("$1 $((SECONDS - phase_start)) s"); phase_start=$SECONDS; }
report_phases() { [[ ${#phases[@]} -eq 0 ]] || echo "test.sh: ${phases[*]}; total ${SECONDS} s" >&2; }
trap report_phases EXIT
bash scripts/setup.sh --with-torch
phase_done setup
bash scripts/build.sh
phase_done build
# Compiled runtimes are cached per build tree, so the suite never depends on $HOME.
export KILN_CACHE_DIR="$repo/build/kiln-cache"
cd build
ctest -j "${KILN_TEST_JOBS:-2}" --output-on-failure --timeout 1800 "$@"
phase_done tests
# The Clang build under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test_sanitized.sh):
# unit, end-to-end (not resnet18) and hostile-input tests and 10 s of each fuzz target;
# KILN_SANITIZED_TESTS=REGEX runs fewer, KILN_SKIP_SANITIZED=1 skips it.
if [[ ${KILN_SKIP_SANITIZED:-0} != 1 ]]; then
  KILN_ASAN_BUILD="$repo/build-asan" bash "$repo/scripts/test_sanitized.sh"
  phase_done sanitized
fi
