"""ResNet-50 and the BERT-base-shaped encoder on the GPU: kiln --target cuda against PyTorch
eager on the same GPU, batch 1 and 32, fp32 and fp16, in one run (scripts/gpu_check.sh).

    python3 bench/cuda_bench.py KILN WORK [--hgemm-tflops T] [--runs N]

For each model, batch and precision: kiln's executable (--repeat N: the median latency of its
C API run, host inputs to host outputs), and PyTorch's module (CUDA events around forward,
inputs already on the GPU; fp16 through torch.autocast). Prints a table: latencies, the kiln /
PyTorch ratio, kiln's outputs' largest difference from PyTorch fp32 relative to their scale, and
for ResNet-50 the model's FLOPs over kiln's time as a share of the cuBLAS HGEMM (fp16) or SGEMM
(fp32) peak measured in the same run (--hgemm-tflops / --sgemm-tflops, from
bench/cuda_gemm_peak.cu).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

RESNET50_FLOPS = 2 * 4.09e9  # multiply-adds of one 224x224 image, counted twice


def torch_module(name):
    import torch
    import torchvision
    if name == "resnet50":
        torch.manual_seed(0)
        return torchvision.models.resnet50(weights=None).eval()
    return models._bert_module()


def torch_latency(name, inputs, half, runs):
    import torch
    # fp32 means fp32 (no TF32) on both sides, as kiln's fp32 GEMMs do.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = torch_module(name).cuda()
    xs = [torch.from_numpy(x).cuda() for x in inputs]
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=half):
        for _ in range(5):
            y = m(*xs)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            y = m(*xs)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
    return float(np.median(times)), y.float().cpu().numpy()


def kiln_latency(kiln, onnx_path, inputs, precision, work, runs):
    out = os.path.join(work, f"{os.path.basename(onnx_path)[:-5]}_{precision}")
    p = subprocess.run([kiln, "compile", onnx_path, "--target", "cuda", "--precision", precision, "--name", "m",
                        "--emit", "exe", "-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"kiln compile failed:\n{p.stderr[-3000:]}")
    files = []
    for k, x in enumerate(inputs):
        files.append(os.path.join(out, f"input_{k}.npy"))
        np.save(files[-1], x)
    p = subprocess.run([os.path.join(out, "m"), *files, "--repeat", str(runs), "-o", os.path.join(out, "y")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"the kiln executable failed:\n{p.stderr[-3000:]}")
    ms = float(re.search(r"median ([0-9.]+) ms", p.stderr).group(1))
    y = np.load(sorted(os.path.join(out, "y", f) for f in os.listdir(os.path.join(out, "y")))[0])
    return ms, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("work")
    ap.add_argument("--hgemm-tflops", type=float, default=0)
    ap.add_argument("--sgemm-tflops", type=float, default=0)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--only", nargs="*", default=["resnet50", "bert"])
    ap.add_argument("--batch", nargs="*", type=int, default=[1, 32])
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print("| model | batch | precision | kiln ms | PyTorch ms | kiln/PyTorch | max diff / scale | share of cuBLAS peak |")
    print("|---|--:|---|--:|--:|--:|--:|--:|")
    for name in args.only:
        for batch in args.batch:
            data, inputs = models.build(name, batch)
            path = os.path.join(args.work, f"{models.file_stem(name, batch)}.onnx")
            with open(path, "wb") as f:
                f.write(data)
            _, reference = torch_latency(name, inputs, False, 3)
            for precision in ("fp32", "fp16"):
                k_ms, y = kiln_latency(args.kiln, path, inputs, precision, args.work, args.runs)
                t_ms, _ = torch_latency(name, inputs, precision == "fp16", args.runs)
                scale = max(1.0, float(np.abs(reference).max()))
                diff = float(np.abs(y.astype(np.float64) - reference).max()) / scale
                peak = args.hgemm_tflops if precision == "fp16" else args.sgemm_tflops
                share = ""
                if name == "resnet50" and peak > 0:
                    share = f"{RESNET50_FLOPS * batch / (k_ms * 1e-3) / (peak * 1e12) * 100:.0f}%"
                print(f"| {name} | {batch} | {precision} | {k_ms:.3f} | {t_ms:.3f} | {k_ms / t_ms:.2f} | {diff:.2g} | {share} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
