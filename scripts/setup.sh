#!/usr/bin/env bash
# Set up a Debian 12 (bookworm) machine to build and test kiln.
#
#   bash scripts/setup.sh [--with-torch]
#
# 1. apt: the C++ toolchain and libraries (skipped when all are installed).
#    --with-torch adds python3-torch and python3-torchvision (Debian's CPU
#    builds, ~220 MB to download on a fresh machine); they are needed only to
#    remake the PyTorch-derived models in models/ or to run tests/e2e/make_resnet18.py.
# 2. A virtual environment at <repo>/.venv made from Debian's /usr/bin/python3
#    with --system-site-packages (so it sees Debian's numpy and torch), with
#    onnx and onnxruntime from PyPI. numpy is pinned to the Debian version:
#    torch 1.13 does not work with numpy 2.
#
# Idempotent: a second run with nothing to do takes about a second.
# Environment overrides: KILN_ONNX_VERSION, KILN_ORT_VERSION, KILN_VENV.
set -euo pipefail

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }

with_torch=0
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${KILN_VENV:-$repo/.venv}"
sys_python=/usr/bin/python3
onnx_version="${KILN_ONNX_VERSION:-1.23.2}"
ort_version="${KILN_ORT_VERSION:-1.32.0}"

log="$(mktemp -t kiln-setup.XXXXXX)"
trap 'rm -f "$log"' EXIT
# Run a command with its output kept in $log; show the log only if it fails.
quiet() {
  if ! "$@" >"$log" 2>&1; then
    echo "setup.sh: failed: $*" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}

# ---------------------------------------------------------------- apt
packages=(
  build-essential cmake ninja-build pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev
  libcli11-dev libfmt-dev doctest-dev
  zlib1g-dev  # inflating deflated entries of PyTorch's zip archives
  python3-venv python3-numpy python3-pip
  clang libclang-rt-14-dev  # the sanitizer build and libFuzzer targets (scripts/test_sanitized.sh)
  chromium python3-jsonschema  # tests/bench: the HTML report in headless Chromium; the JSON schema
  g++-aarch64-linux-gnu qemu-user  # --target aarch64-linux-gnu, run under emulation (runtime.aarch64, e2e.aarch64)
  llvm-19-dev  # the LLVM backend (kiln compile --backend llvm; e2e.llvm_backend)
)
if [[ $with_torch == 1 ]]; then
  packages+=(python3-torch python3-torchvision)
fi

missing=()
for p in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)"
  [[ $status == installed ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=()
  if [[ $(id -u) != 0 ]]; then
    if command -v sudo >/dev/null; then sudo=(sudo); else
      echo "setup.sh: not root and no sudo; install as root: ${missing[*]}" >&2
      exit 1
    fi
  fi
  echo "setup.sh: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  quiet "${sudo[@]}" apt-get update
  quiet "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

# ---------------------------------------------------------------- venv
# Recreate the venv if it is missing, broken, or not made the way we want.
venv_ok() {
  [[ -x $venv/bin/python ]] &&
    grep -qx 'include-system-site-packages = true' "$venv/pyvenv.cfg" 2>/dev/null &&
    [[ $("$venv/bin/python" -c 'import sys; print(sys._base_executable)' 2>/dev/null) == "$sys_python"* ]]
}
if ! venv_ok; then
  echo "setup.sh: creating $venv"
  rm -rf "$venv"
  quiet "$sys_python" -m venv --system-site-packages "$venv"
fi
py="$venv/bin/python"

numpy_version="$("$sys_python" -c 'import numpy; print(numpy.__version__)')"

# Up to date when onnx and onnxruntime are at the pinned versions and numpy is
# still Debian's.
pip_ok() {
  "$py" - "$onnx_version" "$ort_version" "$numpy_version" <<'EOF' >/dev/null 2>&1
import sys
import numpy, onnx, onnxruntime
want_onnx, want_ort, want_np = sys.argv[1:]
assert onnx.__version__ == want_onnx, onnx.__version__
assert onnxruntime.__version__ == want_ort, onnxruntime.__version__
assert numpy.__version__ == want_np, numpy.__version__
EOF
}
if ! pip_ok; then
  echo "setup.sh: pip install onnx==$onnx_version onnxruntime==$ort_version (numpy held at $numpy_version)"
  constraints="$venv/kiln-constraints.txt"
  printf 'numpy==%s\n' "$numpy_version" >"$constraints"
  quiet "$py" -m pip install --disable-pip-version-check --no-input -c "$constraints" \
    "onnx==$onnx_version" "onnxruntime==$ort_version"
  if ! pip_ok; then
    echo "setup.sh: onnx/onnxruntime still not importable in $venv after pip install" >&2
    "$py" -c 'import numpy, onnx, onnxruntime' || true
    exit 1
  fi
fi

# ---------------------------------------------------------------- test data
# ONNX's backend test data for the conformance suite, in build/onnx-testdata (idempotent).
bash "$repo/scripts/fetch_onnx_testdata.sh"

# ---------------------------------------------------------------- report
"$py" - "$with_torch" <<'EOF'
import sys, importlib
need_torch = sys.argv[1] == "1"
import numpy, onnx, onnxruntime
parts = [f"numpy {numpy.__version__}", f"onnx {onnx.__version__}",
         f"onnxruntime {onnxruntime.__version__}"]
for mod in ("torch", "torchvision"):
    try:
        m = importlib.import_module(mod)
        parts.append(f"{mod} {m.__version__}")
    except Exception as e:  # torch is optional unless --with-torch
        if need_torch:
            sys.exit(f"setup.sh: --with-torch but 'import {mod}' fails in the venv: {e}")
        parts.append(f"{mod} absent")
print(f"setup.sh: python {sys.version.split()[0]} ({sys.prefix}): " + ", ".join(parts))
EOF
echo "setup.sh: $(cmake --version | head -n1), $(c++ --version | head -n1), protoc $(protoc --version | cut -d' ' -f2)"
