#!/usr/bin/env bash
# The main job on a fresh machine: set up, build kiln, compile the bundled CNN
# (models/cnn) into a standalone executable, and run it on the bundled input.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
bash scripts/setup.sh
bash scripts/build.sh
echo "== kiln compile models/cnn/model.onnx -o out/cnn --name cnn"
build/bin/kiln compile models/cnn/model.onnx -o out/cnn --name cnn -v
echo "== out/cnn/cnn models/cnn/input_0.npy"
out/cnn/cnn models/cnn/input_0.npy
