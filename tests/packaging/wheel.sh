#!/usr/bin/env bash
# kiln's Python wheel (pyproject.toml): built with pip and scikit-build-core around this build
# tree's kiln (KILN_WHEEL_EXECUTABLE: nothing is compiled again), installed into a new venv
# with onnxruntime and numpy from PyPI; examples/python/classify.py then compiles mobilenet_v2
# (made by bench/models.py) and models/cnn and matches ONNX Runtime within 1e-4 of each
# output's scale, and wheel_api.py checks the package's API and errors.
#   wheel.sh BUILD_DIR SOURCE_DIR WORK_DIR KILN_EXECUTABLE
set -u
build=$1
src=$2
work=$3
kiln=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
# shellcheck source=common.sh
source "$here/common.sh"
# Debian's python3, as scripts/setup.sh uses; onnxruntime at setup.sh's version.
python=/usr/bin/python3
ort_version=${KILN_ORT_VERSION:-1.32.0}
venv=$work/venv
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)

# step WHAT COMMAND...: check, say how long it took, and stop at the first failure: every
# step needs the ones before it.
step() {
  local start=$SECONDS
  check "$@"
  echo "     ($((SECONDS - start)) s)"
  [ "$failures" -eq 0 ] || finish
}

step "a new venv" "$python" -m venv "$venv"
# pip builds in an isolated environment with scikit-build-core from PyPI; the venv stays clean.
# (--config-settings: Debian 12's pip 23.0 has no -C.)
step "the wheel builds from $kiln" \
  "${pip[@]}" wheel "$src" --no-deps -w "$work/dist" --config-settings=build-dir="$work/wheel-build" \
  --config-settings=cmake.define.KILN_WHEEL_EXECUTABLE="$kiln"
wheels=("$work"/dist/kiln-*.whl)
wheel=${wheels[0]}
check "one wheel, tagged py3-none-linux_x86_64 (not manylinux: kiln links Debian's libraries)" \
  test "${#wheels[@]}" = 1 -a "${wheel%-py3-none-linux_x86_64.whl}" != "$wheel"
check "the wheel unpacks" "$python" -m zipfile -e "$wheel" "$work/unpacked"
check "the wheel holds kiln/bin/kiln, stripped" \
  sh -c "test -f '$work/unpacked/kiln/bin/kiln' && ! readelf -S '$work/unpacked/kiln/bin/kiln' | grep -q debug_info"
check "the wheel names no source or build folder" sh -c "! grep -rlF -e '$src' -e '$build' '$work/unpacked'"

step "pip installs the wheel and onnxruntime==$ort_version" "${pip[@]}" install "$wheel" "onnxruntime==$ort_version"
check "the installed kiln is this build's: kiln --version" \
  sh -c "test \"\$('$venv/bin/kiln' --version)\" = \"\$('$kiln' --version)\""
check "python -m kiln --help" "$venv/bin/python" -m kiln --help

step "mobilenet_v2 from bench/models.py" \
  bash "$src/scripts/python_env.sh" "$src/bench/models.py" --out "$work/models" --only mobilenet_v2
cd "$work" || exit 1
for model in "$work/models/mobilenet_v2.onnx" "$src/models/cnn/model.onnx"; do
  step "examples/python/classify.py $(basename "$model"): kiln from Python matches ONNX Runtime" \
    "$venv/bin/python" "$src/examples/python/classify.py" "$model"
  sed 's/^/    /' "$work/check.log"
done
# A NonZero model for wheel_api.py, written with onnx from the project's venv (the wheel's has
# only onnxruntime and numpy).
step "a NonZero model (onnx, in the project's venv)" bash "$src/scripts/python_env.sh" -c "
import sys
import onnx
from onnx import TensorProto, helper
graph = helper.make_graph([helper.make_node('NonZero', ['x'], ['coords'])], 'nonzero',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [3, 4])],
                          [helper.make_tensor_value_info('coords', TensorProto.INT64, [2, None])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]), sys.argv[1])
" "$work/nonzero.onnx"
step "the kiln package's API (wheel_api.py)" "$venv/bin/python" "$here/wheel_api.py" "$src" "$work/api" "$work/nonzero.onnx"
sed 's/^/    /' "$work/check.log"
finish
