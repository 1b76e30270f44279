#!/usr/bin/env bash
# The runtime's unit tests (test_runtime) built for another architecture by its GNU cross
# compiler and run under qemu-user: the kernels an ARM64 machine runs (NEON where the runtime has
# them, the portable loops, both where a test iterates over the kernel families; x86-64's vector
# kernels are compiled out), checked against the same references.
#
#   cross_test.sh TRIPLE BUILD_DIR DOCTEST_INCLUDE_DIR [TEST_RUNTIME ARGS]
#
# Configures tests/runtime/cross into BUILD_DIR (incremental), builds test_runtime with
# TRIPLE-g++ and runs it with qemu-ARCH -L /usr/TRIPLE. Both come from scripts/setup.sh.
set -euo pipefail
triple=$1
build=$2
doctest_include=$3
shift 3
arch=${triple%%-*}
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for tool in "$triple-g++" "qemu-$arch"; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL: $tool is not installed; run: bash scripts/setup.sh"
    exit 1
  fi
done

mkdir -p "$build"
start=$SECONDS
# -O2 without NDEBUG: the runtime's own checks stay on, and it compiles faster than -O3.
if ! cmake -S "$repo/tests/runtime/cross" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O2 \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$arch" -DCMAKE_CXX_COMPILER="$triple-g++" \
    -DKILN_SOURCE_DIR="$repo" -DKILN_DOCTEST_INCLUDE_DIR="$doctest_include" >"$build/configure.log" 2>&1; then
  cat "$build/configure.log"
  echo "FAIL: configuring the $triple runtime tests"
  exit 1
fi
cmake --build "$build" --target test_runtime -j "${KILN_CROSS_JOBS:-2}"
echo "built test_runtime for $triple in $((SECONDS - start)) s"
start=$SECONDS
status=0
# KILN_TEST_EMULATED: the sweeps skip their largest cases (tests/runtime/test_util.h).
KILN_TEST_EMULATED=1 qemu-"$arch" -L "/usr/$triple" "$build/tests/test_runtime" "$@" || status=$?
echo "ran test_runtime under qemu-$arch in $((SECONDS - start)) s"
exit $status
