#!/usr/bin/env bash
# The CUDA backend's checks on a machine with an NVIDIA GPU, in one run:
#   1. cuBLAS's own SGEMM and HGEMM peak (bench/cuda_gemm_peak.cu);
#   2. every sample of models/ compiled with --target cuda, built by nvcc and run on the GPU,
#      its outputs compared with the samples' expected outputs, and ResNet-50 and BERT on the
#      CPU emulation against ONNX Runtime (tests/e2e/cuda_backend.py --big);
#   3. ResNet-50 and the BERT-base-shaped encoder at batch 1 and 32, fp32 and fp16, timed
#      against PyTorch on the same GPU, ResNet-50 as a share of the HGEMM peak (bench/cuda_bench.py).
#
#   bash scripts/gpu_check.sh --prepare   # here: builds build-gpu/ (kiln without LLVM and its
#                                         # runtime) and gathers the libraries kiln loads, the C
#                                         # library included, into build-gpu/lib
#   bash scripts/gpu_check.sh [OUT]       # on the GPU machine (nvcc, Python with numpy, onnx,
#                                         # torch and torchvision); writes OUT/ (default gpu-check/)
#
# A GPU machine that reaches nothing outside needs only the working tree and, from build-gpu/,
# kiln, bin/kiln, lib/ and runtime/libkiln_rt.a (about 25 MB; with the device tool: carry
# ["build-gpu/kiln", "build-gpu/bin", "build-gpu/lib", "build-gpu/runtime/libkiln_rt.a"]).
# Prints each step's result and a table; exits non-zero when a sample or a model fails.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

if [[ ${1:-} == --prepare ]]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_WITH_LLVM=OFF > /dev/null
  ninja -C build-gpu kiln kiln_rt
  # Every shared library kiln loads, the C library and its loader included, so that it runs on
  # a GPU machine of another distribution (build-gpu/kiln starts it through that loader).
  rm -rf build-gpu/lib
  mkdir -p build-gpu/lib
  ldd build-gpu/bin/kiln | grep -o '/[^ ]*' | while read -r lib; do cp -L "$lib" build-gpu/lib/; done
  loader=$(basename "$(ldd build-gpu/bin/kiln | grep -o '/[^ ]*ld-linux[^ ]*')")
  cat > build-gpu/kiln <<WRAPPER
#!/bin/sh
# kiln with the libraries it was built with (scripts/gpu_check.sh --prepare).
here="\$(cd "\$(dirname "\$0")" && pwd)"
exec "\$here/lib/$loader" --library-path "\$here/lib" "\$here/bin/kiln" "\$@"
WRAPPER
  chmod +x build-gpu/kiln
  build-gpu/kiln --version
  du -sh build-gpu/bin/kiln build-gpu/lib
  exit 0
fi

out="$(realpath -m "${1:-gpu-check}")"
mkdir -p "$out"
kiln="$repo/build-gpu/kiln"
runtime_lib="$repo/build-gpu/runtime/libkiln_rt.a"
if [[ ! -x $kiln ]]; then  # a machine that builds kiln itself
  kiln="$repo/build/bin/kiln"
  runtime_lib="$repo/build/runtime/libkiln_rt.a"
fi
[[ -x $kiln ]] || { echo "gpu_check: no kiln: run 'bash scripts/gpu_check.sh --prepare' first" >&2; exit 1; }
export KILN_CACHE_DIR="$out/cache"
python="${PYTHON:-python3}"
nvidia-smi -L
"$kiln" --version

echo "== cuBLAS peak"
nvcc -O2 -o "$out/cuda_gemm_peak" bench/cuda_gemm_peak.cu -lcublas
"$out/cuda_gemm_peak" | tee "$out/peak.txt"
hgemm=$(awk '/^peak HGEMM/ {print $3}' "$out/peak.txt")
sgemm=$(awk '/^peak SGEMM/ {print $3}' "$out/peak.txt")

echo "== every sample on the GPU against its expected outputs"
status=0
"$python" tests/e2e/cuda_backend.py "$kiln" "$out/samples" --runtime-lib "$runtime_lib" --jobs "$(nproc)" --big |
  tee "$out/samples.txt" || status=1

echo "== ResNet-50 and BERT-base-shaped, kiln against PyTorch"
"$python" bench/cuda_bench.py "$kiln" "$out/bench" --hgemm-tflops "$hgemm" --sgemm-tflops "$sgemm" | tee "$out/bench.txt" ||
  status=1
exit $status
