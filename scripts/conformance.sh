#!/usr/bin/env bash
# Runs the conformance suite alone (what the CTest test `conformance` runs, with a filter):
# fetches ONNX's backend test data if needed, builds kiln_conformance, runs it.
#
#   bash scripts/conformance.sh [FILTER] [RUNNER OPTIONS...]
#
# FILTER keeps the cases whose SUITE/NAME contains it (e.g. node/test_conv, _expanded,
# pytorch-converted/); "" or nothing runs all. Further options go to kiln_conformance
# (--no-compiled, --jobs N, --batch-size N, --opt -O1, ...; see --help).
# The report goes to BUILD/conformance/report.md and report.json; after a full run,
# python3 scripts/gen_ops_table.py regenerates docs/reference/ops.md's ops table and the supported-ops list.
#
# Environment: KILN_BUILD_DIR (default <repo>/build), KILN_ONNX_TESTDATA (default
# <repo>/build/onnx-testdata), KILN_JOBS (build jobs, default 2), KILN_CONFORMANCE_JOBS (default 2).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$repo/build}"
data="${KILN_ONNX_TESTDATA:-$repo/build/onnx-testdata}"
filter=""
if (($#)) && [[ $1 != -* ]]; then filter="$1"; shift; fi

bash "$repo/scripts/fetch_onnx_testdata.sh" "$data"
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${KILN_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
fi
cmake --build "$build" --target kiln_conformance -j "${KILN_JOBS:-2}"
args=(--data "$data" --out "$build/conformance" --supported-ops "$repo/tests/conformance/supported_ops.txt"
      --jobs "${KILN_CONFORMANCE_JOBS:-2}")
[[ -n $filter ]] && args+=(--filter "$filter")
exec "$build/bin/kiln_conformance" "${args[@]}" "$@"
