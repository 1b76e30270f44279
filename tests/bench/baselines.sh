#!/usr/bin/env bash
# Choosing baselines: torch (a TorchScript file of the same network) next to onnxruntime, and
# torch alone for a TorchScript archive compiled by kiln itself;
# a framework that cannot be imported is skipped and reported under --against auto, and is
# an error when asked for by name. The torch part is skipped where torch is not installed.
source "$(dirname "$0")/lib.sh"
model="$repo/models/mlp/model.onnx"
short=(--rounds 2 --runs 3 --warmup 1)

# A Python without onnxruntime (an empty venv-less interpreter: -I ignores site packages).
cat >"$work/bare-python" <<SH
#!/usr/bin/env bash
exec "$KILN_PYTHON" -I -S "\$@"
SH
chmod +x "$work/bare-python"
expect_status 0 "$work/auto.log" "$kiln" bench "$model" --python "$work/bare-python" "${short[@]}" --json "$work/auto.json"
grep -q "onnxruntime: skipped: onnxruntime cannot be imported" "$work/auto.log" || { cat "$work/auto.log"; fail "no skip reported"; }
grep -q '"status": "skipped"' "$work/auto.json" || fail "the JSON does not record the skipped baseline"
"$KILN_PYTHON" "$here/check_bench_json.py" "$repo/docs/bench.schema.json" "$work/auto.json"
expect_status 1 "$work/named.log" "$kiln" bench "$model" --python "$work/bare-python" --against onnxruntime "${short[@]}"
grep -q "error: --against onnxruntime: onnxruntime cannot be imported" "$work/named.log" || { cat "$work/named.log"; fail "no error"; }
expect_status 1 "$work/tf.log" "$kiln" bench "$model" --python "$KILN_PYTHON" --against tensorflow "${short[@]}"
grep -q "error: --against tensorflow" "$work/tf.log" || { cat "$work/tf.log"; fail "no error for tensorflow"; }

if ! "$KILN_PYTHON" -c "import torch" 2>/dev/null; then
  echo "PASS (torch not installed: the torch baseline is not tested)"
  exit 0
fi
# The same small network as TorchScript and as ONNX, with the same weights.
"$KILN_PYTHON" - "$work" <<'PY'
import sys, torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).eval()
x = torch.randn(4, 32)
torch.jit.trace(net, x).save(f"{sys.argv[1]}/net.pt")
torch.onnx.export(net, x, f"{sys.argv[1]}/net.onnx", opset_version=13, input_names=["x"], output_names=["y"])
PY
expect_status 0 "$work/torch.log" "$kiln" bench "$work/net.onnx" --python "$KILN_PYTHON" --against onnxruntime,torch \
  --baseline-model torch="$work/net.pt" "${short[@]}" --fail-if-error-above 1e-4 --json "$work/torch.json"
"$KILN_PYTHON" "$here/check_bench_json.py" "$repo/docs/bench.schema.json" "$work/torch.json" --baseline torch
"$KILN_PYTHON" "$here/check_bench_json.py" "$repo/docs/bench.schema.json" "$work/torch.json" --baseline onnxruntime
# The TorchScript archive itself as the model: kiln compiles it, and PyTorch, its own
# framework, runs the same archive as the baseline (--against auto).
expect_status 0 "$work/archive.log" "$kiln" bench "$work/net.pt" --input-shape 4,32 --python "$KILN_PYTHON" \
  "${short[@]}" --fail-if-error-above 1e-4 --json "$work/archive.json"
grep -q "torch: version" "$work/archive.log" || { cat "$work/archive.log"; fail "torch did not run the archive"; }
"$KILN_PYTHON" "$here/check_bench_json.py" "$repo/docs/bench.schema.json" "$work/archive.json" --baseline torch
echo "PASS"
