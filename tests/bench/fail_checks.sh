#!/usr/bin/env bash
# --fail-if-slower-than and --fail-if-error-above, each passing on the healthy model and
# failing (exit 3, with the reason) on a stand-in: the same model compiled with a test hook
# that makes one node genuinely slow (a 300 ms busy wait) or wrong (0.5 added to its output).
# The limit is wide (100x) because the same script runs in the sanitized build, where the
# healthy model's compiled code runs 20-70x slower than ONNX Runtime; the slow stand-in is
# still hundreds of times slower than that limit allows.
source "$(dirname "$0")/lib.sh"
model="$repo/models/cnn/model.onnx"
node=/maxpool/MaxPool
bench=("$kiln" bench "$model" --against onnxruntime --python "$KILN_PYTHON" --rounds 2 --runs 3 --warmup 1)

# Healthy: both checks pass.
expect_status 0 "$work/healthy.log" "${bench[@]}" --fail-if-slower-than 100 --fail-if-error-above 1e-3 --json "$work/healthy.json"
grep -q '"passed": true' "$work/healthy.json" || fail "healthy report does not say passed"

# Slow stand-in.
KILN_TEST_DELAY_NODE="$node:300" "$kiln" compile "$model" -o "$work/slow" --emit exe 2>"$work/slow-compile.log"
grep -q "deliberately slow" "$work/slow-compile.log" || fail "no warning about the test hook"
expect_status 3 "$work/slow.log" "${bench[@]}" --compiled "$work/slow" --fail-if-slower-than 100 --json "$work/slow.json"
grep -q "fail-if-slower-than 100 failed: kiln takes .*x the time of onnxruntime at p50" "$work/slow.log" ||
  { cat "$work/slow.log"; fail "no reason given for the slow failure"; }
grep -q '"passed": false' "$work/slow.json" || fail "slow report does not say failed"
# ... and its outputs are still right.
expect_status 0 "$work/slow-ok.log" "${bench[@]}" --compiled "$work/slow" --fail-if-error-above 1e-3

# Wrong stand-in.
KILN_TEST_PERTURB_NODE="$node" "$kiln" compile "$model" -o "$work/wrong" --emit exe 2>"$work/wrong-compile.log"
expect_status 3 "$work/wrong.log" "${bench[@]}" --compiled "$work/wrong" --fail-if-error-above 1e-3
grep -q "fail-if-error-above 0.001 failed: output 'output_0' vs onnxruntime: max rel error" "$work/wrong.log" ||
  { cat "$work/wrong.log"; fail "no reason given for the error failure"; }
# ... and a limit it is within passes.
expect_status 0 "$work/wrong-loose.log" "${bench[@]}" --compiled "$work/wrong" --fail-if-error-above 1e6
echo "PASS"
