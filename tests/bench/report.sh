#!/usr/bin/env bash
# kiln bench --against onnxruntime on every model in models/: the JSON validates against
# docs/bench.schema.json and says what it should, and the Markdown and HTML are written.
source "$(dirname "$0")/lib.sh"
for dir in "$repo"/models/*/; do
  name="$(basename "$dir")"
  [[ -f $dir/model.onnx ]] || continue
  inputs=()
  # ops_mix gathers with its int64 input, so it needs its own in-range indices.
  [[ $name == ops_mix ]] && inputs=(--inputs "$dir")
  expect_status 0 "$work/$name.log" "$kiln" bench "$dir/model.onnx" --against onnxruntime --python "$KILN_PYTHON" \
    --rounds 3 --runs 5 --warmup 2 "${inputs[@]}" --fail-if-error-above 1e-3 \
    --json "$work/$name.json" --markdown "$work/$name.md" --html "$work/$name.html"
  "$KILN_PYTHON" "$here/check_bench_json.py" "$repo/docs/bench.schema.json" "$work/$name.json" --baseline onnxruntime
  grep -q "^| kiln |" "$work/$name.md" || fail "$name.md has no kiln row"
  grep -q "^| onnxruntime |" "$work/$name.md" || fail "$name.md has no onnxruntime row"
  grep -q 'data-chart="latency-distribution"' "$work/$name.html" || fail "$name.html has no latency chart"
  grep -qE 'https?://[^"]*\.(js|css)' "$work/$name.html" && fail "$name.html loads something from the network"
  echo "ok: $name"
done
# A report that breaks the schema is caught (the validator is not a rubber stamp).
sed 's/"schema_version": 1/"schema_version": "one"/' "$work/mlp.json" >"$work/broken.json"
if "$KILN_PYTHON" "$here/check_bench_json.py" "$repo/docs/bench.schema.json" "$work/broken.json" 2>/dev/null; then
  fail "a report with a string schema_version passed validation"
fi
echo "PASS"
