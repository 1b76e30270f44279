#!/usr/bin/env python3
"""Which kernel each convolution of a model takes on aarch64, and what the NEON kernels save in
instructions against the plain loops, under qemu-user (whose wall time says little about a
real CPU, so instructions are counted instead, by bench/qemu_insn_count.c).

    scripts/python_env.sh bench/aarch64_kernels.py KILN MODEL.onnx WORK_DIR [INPUT.npy ...]

Compiles MODEL for aarch64-linux-gnu, runs it once on one thread under qemu-aarch64 with
KILN_LOG_KERNELS=1 and the counting plugin, then again under KILN_CPU_ISA=portable, and prints
the per-layer kernel table (from the first run's log), both instruction counts and the largest
difference between the two runs' outputs relative to their scale. ResNet-50
(`bench/models.py --only resnet50`): about 10 minutes on one core.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import time

import numpy as np

TRIPLE = "aarch64-linux-gnu"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kwargs):
    p = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p


def main():
    kiln, model, work, inputs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(work, exist_ok=True)
    plugin = os.path.join(work, "libinsn_count.so")
    sh(["gcc", "-O2", "-shared", "-fPIC", "-o", plugin, os.path.join(REPO, "bench", "qemu_insn_count.c")])
    out = os.path.join(work, TRIPLE)
    t0 = time.monotonic()
    sh([kiln, "compile", model, "-o", out, "--name", "model", "--emit", "exe", "--target", TRIPLE])
    print(f"compiled for {TRIPLE} in {time.monotonic() - t0:.0f} s")
    runs = {}
    for name, env in (("neon", {}), ("portable", {"KILN_CPU_ISA": "portable"})):
        result = os.path.join(work, f"result_{name}")
        t0 = time.monotonic()
        p = sh(["qemu-aarch64", "-plugin", plugin, "-L", f"/usr/{TRIPLE}", os.path.join(out, "model"), *inputs,
                "-o", result, "--threads", "1"], env={**os.environ, "KILN_LOG_KERNELS": "1", **env})
        count = int(re.search(r"^qemu_insn_count: (\d+)$", p.stderr, re.MULTILINE).group(1))
        lines = re.findall(r"^kiln: kernel (.*)$", p.stderr, re.MULTILINE)
        outputs = [np.load(f) for f in sorted(glob.glob(os.path.join(result, "*.npy")))]
        runs[name] = (count, lines, outputs)
        print(f"{name}: {count / 1e9:.2f} G instructions, {len(lines)} convolutions logged, "
              f"{time.monotonic() - t0:.0f} s under qemu")
    count, lines, outputs = runs["neon"]
    print("\nper layer (KILN_LOG_KERNELS=1, default ISA), in run order:")
    for k, line in enumerate(lines):
        print(f"  {k + 1:3d}  {line}")
    kinds = collections.Counter(" ".join(line.split()[:2]) for line in lines)
    print("\nby family: " + ", ".join(f"{n} x {kind}" for kind, n in kinds.most_common()))
    portable = runs["portable"][0]
    print(f"\ninstructions: neon {count / 1e9:.2f} G, portable {portable / 1e9:.2f} G "
          f"({portable / count:.2f}x as many)")
    for a, b in zip(outputs, runs["portable"][2]):
        scale = float(np.max(np.abs(b))) or 1.0
        print(f"outputs: max |neon - portable| / max |portable| = {float(np.max(np.abs(a - b))) / scale:.2g}")


if __name__ == "__main__":
    main()
