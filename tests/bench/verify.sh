#!/usr/bin/env bash
# kiln compile --verify-against onnxruntime: passes on the model as it is; on the model
# compiled with one node deliberately perturbed (KILN_TEST_PERTURB_NODE) it fails naming the
# output, and with --bisect it names that node, not one after it.
source "$(dirname "$0")/lib.sh"
model="$repo/models/cnn/model.onnx"
verify=(--verify-against onnxruntime --python "$KILN_PYTHON")

expect_status 0 "$work/ok.log" "$kiln" compile "$model" -o "$work/ok" "${verify[@]}"
grep -q "all 1 outputs agree with onnxruntime" "$work/ok.log" || { cat "$work/ok.log"; fail "no agreement line"; }
expect_status 0 "$work/ok-bisect.log" "$kiln" compile "$model" -o "$work/ok" "${verify[@]}" --bisect

for node in /maxpool/MaxPool /se/Mul; do
  export KILN_TEST_PERTURB_NODE="$node"
  expect_status 1 "$work/bad.log" "$kiln" compile "$model" -o "$work/bad" "${verify[@]}"
  grep -q "output 'output_0' disagrees with onnxruntime" "$work/bad.log" || { cat "$work/bad.log"; fail "no output named"; }
  expect_status 1 "$work/bisect.log" "$kiln" compile "$model" -o "$work/bad" "${verify[@]}" --bisect
  grep -qF "the first node whose output disagrees is '$node'" "$work/bisect.log" ||
    { cat "$work/bisect.log"; fail "--bisect did not name $node"; }
  echo "ok: --bisect names $node"
done
unset KILN_TEST_PERTURB_NODE
echo "PASS"
