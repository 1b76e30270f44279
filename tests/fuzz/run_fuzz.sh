#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS from its seed corpus; fails on any finding.
#   run_fuzz.sh TARGET SECONDS WORK
# Seeds: corpus/<target>/ (committed crashers and small inputs), plus for fuzz_onnx_loader the
# hostile models (written fresh by tests/hostile/make_hostile.py), for fuzz_ir_parser the IR
# test files, for fuzz_torchscript_parser the TorchScript code samples and for fuzz_mlir_bytecode
# the bytecode and jax.export artifacts of models/jax/. New inputs go to WORK/corpus, never into the source tree; a crash leaves
# WORK/crash-* to add to corpus/<target>/ once fixed.
set -euo pipefail
target=$1 seconds=$2 work=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
name="$(basename "$target")"
rm -rf "$work" && mkdir -p "$work/corpus" "$work/seeds"
[[ -d $here/corpus/$name ]] && cp -r "$here/corpus/$name/." "$work/seeds/"
case "$name" in
  fuzz_onnx_loader)
    bash "$repo/scripts/python_env.sh" "$repo/tests/hostile/make_hostile.py" "$work/hostile" >/dev/null
    # Small models only: the fuzzer's inputs are capped (-max_len) anyway.
    find "$work/hostile" -name '*.onnx' -size -64k | while read -r f; do
      cp "$f" "$work/seeds/$(echo "$f" | md5sum | cut -c1-16).onnx"
    done
    find "$repo/models" -name model.onnx -size -64k -exec cp {} "$work/seeds/" \; ;;
  fuzz_ir_parser)
    find "$repo/tests/passes" "$repo/tests/ir" -name '*.ir' | while read -r f; do
      cp "$f" "$work/seeds/$(echo "$f" | md5sum | cut -c1-16).ir"
    done ;;
  fuzz_stablehlo)
    find "$repo/models/jax" -name model.mlir -size -64k | while read -r f; do
      cp "$f" "$work/seeds/$(echo "$f" | md5sum | cut -c1-16).mlir"
    done ;;
  fuzz_mlir_bytecode)
    find "$repo/models/jax" \( -name model.mlirbc -o -name model.jax_exported \) -size -64k | while read -r f; do
      cp "$f" "$work/seeds/$(echo "$f" | md5sum | cut -c1-16).bin"
    done ;;
  fuzz_torchscript_parser)
    find "$repo/tests/frontend/data/torchscript_code" -path '*/code/*' -name '*.py' -size -64k | while read -r f; do
      cp "$f" "$work/seeds/$(echo "$f" | md5sum | cut -c1-16).py"
    done ;;
esac
cd "$work"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
"$target" -seed="${KILN_FUZZ_SEED:-1}" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -print_final_stats=1 "$work/corpus" "$work/seeds" 2>"$work/log" || {
  tail -n 60 "$work/log"
  echo "FAIL $name: finding; reproducer in $work (crash-*/leak-*/timeout-*)"
  exit 1
}
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$work/log" | tr '\n' ' '
echo
echo "ok   $name: ${seconds} s, no findings"
