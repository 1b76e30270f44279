#!/usr/bin/env bash
# torchvision resnet18 and mobilenet_v2 and a TransformerEncoder (d_model 256), saved by
# PyTorch with torch.jit.trace, torch.jit.script and torch.jit.freeze at test time
# (models/torch/make_torch_models.py --big), compiled by kiln and compared with PyTorch's
# outputs (torch_models.py). Needs the venv with PyTorch: bash scripts/setup.sh --with-torch.
#   torch_big.sh KILN WORK_DIR
set -euo pipefail
kiln=$1
work=$2
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="${KILN_PYTHON:-$repo/.venv/bin/python}"
if ! "$python" -c "import torch, torchvision" 2>/dev/null; then
  echo "FAIL: $python cannot import torch and torchvision; run: bash scripts/setup.sh --with-torch"
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
"$python" "$repo/models/torch/make_torch_models.py" --big "$work/models" >"$work/make.log" 2>&1 || { tail -20 "$work/make.log"; exit 1; }
"$python" "$repo/tests/e2e/torch_models.py" "$kiln" "$work/check" "$work"/models/*/
rm -rf "$work"
