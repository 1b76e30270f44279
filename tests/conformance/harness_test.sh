#!/usr/bin/env bash
# Tests the conformance runner itself on a few cases: a case that crashes, one that hangs and
# one whose generated code does not compile (KILN_CONFORMANCE_SELFTEST) must each be recorded
# as that case's failure, the other cases must still run, and the run must finish.
#   harness_test.sh KILN_CONFORMANCE DATA_DIR OUT_DIR
set -euo pipefail
runner="$1" data="$2" out="$3"
rm -rf "$out"
KILN_CONFORMANCE_SELFTEST="crash:test_abs hang:test_acos badcode:test_add_bcast" \
  "$runner" --data "$data" --out "$out" --filter node/test_abs,node/test_acos,node/test_add \
  --case-timeout 5 --jobs 2 >"$out.log" 2>&1 || { cat "$out.log"; echo "harness_test: the runner failed" >&2; exit 1; }
report="$out/report.md"
expect() {
  if ! grep -qF -- "$1" "$report"; then
    echo "harness_test: $report lacks: $1" >&2
    exit 1
  fi
}
expect "node/test_abs (interpreter): crash (signal 11, SIGSEGV)"
expect "node/test_acos (interpreter): timeout after 5 s"
expect "| node/test_add_bcast | Add | pass | fail: generated C++ does not build: model.cpp:"
expect "| node/test_abs | Abs | fail: crash (signal 11, SIGSEGV) | pass |"
# The others in the batch the bad model was in still ran: test_add passes on both paths.
python3 - "$out/report.json" <<'PY'
import json, sys
cases = {c["name"]: c for c in json.load(open(sys.argv[1]))["cases"]}
add = cases["test_add"]
assert add["interp"]["outcome"] == "pass" and add["compiled"]["outcome"] == "pass", add
assert all(c["interp"]["outcome"] != "not run" and c["compiled"]["outcome"] != "not run" for c in cases.values())
PY
echo "harness_test: crash, hang and build failure recorded; the other cases ran"
