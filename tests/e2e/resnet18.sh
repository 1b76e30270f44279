#!/usr/bin/env bash
# torchvision's resnet18 (random weights), exported by PyTorch, compiled by kiln and run
# every way e2e_model_test runs the bundled models, against PyTorch's own output.
# Needs the venv with PyTorch: bash scripts/setup.sh --with-torch.
#   resnet18.sh E2E_MODEL_TEST KILN WORK_DIR
set -euo pipefail
tester=$1
kiln=$2
work=$3
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="${KILN_PYTHON:-$repo/.venv/bin/python}"
if ! "$python" -c "import torch, torchvision" 2>/dev/null; then
  echo "FAIL: $python cannot import torch and torchvision; run: bash scripts/setup.sh --with-torch"
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
"$python" "$repo/tests/e2e/make_resnet18.py" "$work/resnet18"
"$tester" "$kiln" "$work/resnet18" "$work/run"
rm -rf "$work"
