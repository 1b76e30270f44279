#!/usr/bin/env bash
# kiln bench without baselines (no Python needed): --compiled finds the executable beside
# libNAME.so and reports the precision it was compiled in; --precision is passed on to the
# compile, or checked against --compiled; mistakes (int8 without --calibration, a baseline
# that is missing) fail before anything is compiled; sub-microsecond latencies keep their
# digits.
#   compiled.sh KILN WORK_DIR
set -u
kiln=$1
work=$2
data=$(cd "$(dirname "$0")/../e2e/data" && pwd)
rm -rf "$work" && mkdir -p "$work"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-$work/../cache}"
failures=0
short=(--against none --rounds 2 --runs 3 --warmup 1)
model=$data/relu.onnx

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }

# An fp16 build named otherwise than the model, with the shared library beside it.
if ! "$kiln" compile "$model" -o "$work/c16" --name act --emit exe,shared --precision fp16 >"$work/compile.log" 2>&1; then
  cat "$work/compile.log"; echo "FAIL compile"; exit 1
fi
if "$kiln" bench "$model" --compiled "$work/c16" "${short[@]}" --json "$work/c16.json" >"$work/c16.out" 2>"$work/c16.err"; then
  ok "--compiled with libNAME.so beside the executable"
else
  bad "--compiled with libNAME.so beside the executable:"; cat "$work/c16.err"
fi
grep -q '"precision": "fp16"' "$work/c16.json" 2>/dev/null && ok "--compiled reports the build's precision (fp16)" \
  || bad "--compiled precision: $(grep -o '"precision": "[^"]*"' "$work/c16.json" 2>/dev/null)"
kiln_row=$(grep "^kiln " "$work/c16.out")
if echo "$kiln_row" | grep -q " 0\.0 [µu]s"; then
  bad "a sub-microsecond latency printed as 0.0: $kiln_row"
else
  ok "latencies keep their digits: $kiln_row"
fi

# expect_early_error NAME PATTERN ARGS...: kiln bench fails with one line, before compiling.
expect_early_error() {
  local name=$1 pattern=$2
  shift 2
  "$kiln" bench "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -eq 1 ] && grep -q -- "^kiln: error: .*$pattern" "$work/err" && [ "$(wc -l <"$work/err")" -eq 1 ]; then
    ok "$name: $(cat "$work/err")"
  else
    bad "$name (exit $rc):"; sed 's/^/    /' "$work/err"
  fi
}
expect_early_error "--precision against --compiled" "--precision fp32: .* was compiled with --precision fp16" \
  "$model" --compiled "$work/c16" --precision fp32 "${short[@]}"
expect_early_error "int8 without calibration" "--precision int8 needs calibration samples" \
  "$model" --precision int8 "${short[@]}"
expect_early_error "unknown precision" "--precision fp8: expected" "$model" --precision fp8 "${short[@]}"
expect_early_error "a missing baseline, before compiling" "--against onnxruntime: " \
  "$model" --against onnxruntime --python "$work/no-such-python" --rounds 1 --runs 1

# --precision is passed on to the compile.
if "$kiln" bench "$model" --precision bf16 "${short[@]}" --json "$work/bf16.json" >"$work/bf16.out" 2>"$work/bf16.err" \
   && grep -q '"precision": "bf16"' "$work/bf16.json"; then
  ok "--precision bf16 compiles in bf16"
else
  bad "--precision bf16:"; cat "$work/bf16.err"
fi

echo "compiled: $failures failure(s)"
[ "$failures" -eq 0 ] && rm -rf "$work"
[ "$failures" -eq 0 ]
