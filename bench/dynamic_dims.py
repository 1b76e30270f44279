"""One compile with a bounded sequence length against compiles pinned to each length.

    python bench/dynamic_dims.py [--out build/bench/dynamic] [--hidden 256] [--ffn 1024]
                                 [--layers 4] [--sizes 16,64,256] [--rounds 5] [--runs 20]

Makes a BERT-shaped encoder with a symbolic sequence length (models/dynamic/
make_dynamic_models.py with these sizes, random weights), compiles it once with
`--dim seq=1..MAX` (MAX the largest size) and once per size with `--dim seq=SIZE`, checks each
compiled output against ONNX Runtime, then times the bounded and the pinned executable at each
size in alternating rounds (one thread, 2 warm-up runs each). The figure is the median over
rounds of each round's median; `paired` is the median of each round's own ratio.

Not a test: nothing fails on a timing. Prints the CPU and its AVX-512 extensions.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: timing, machine)

REPO = B.REPO


def isa():
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return ""
    return " ".join(sorted(f for f in flags if f.startswith("avx512") or f in ("avx2", "fma")))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench", "dynamic"))
    p.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    p.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"))
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--ffn", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--sizes", default="16,64,256")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=20)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    model_dir = os.path.join(a.out, "model")
    B.run([a.python, os.path.join(REPO, "models", "dynamic", "make_dynamic_models.py"), "--model", "bert_seq",
           "--out", model_dir,
           "--hidden", str(a.hidden), "--ffn", str(a.ffn), "--layers", str(a.layers), "--sizes", a.sizes])
    model = os.path.join(model_dir, "model.onnx")

    def compile_exe(name, dim):
        out = os.path.join(a.out, name)
        B.log(f"compiling {name} (--dim {dim})")
        B.run([a.kiln, "compile", model, "--dim", dim, "--name", "m", "-o", out])
        return os.path.join(out, "m")

    bounded = compile_exe("bounded", f"seq=1..{max(sizes)}")
    pinned = {s: compile_exe(f"pinned{s}", f"seq={s}") for s in sizes}
    rows = []
    for s in sizes:
        in_args = ["-i", f"x={model_dir}/input_{s}_0.npy", "-i", f"mask={model_dir}/input_{s}_1.npy"]
        for exe in (bounded, pinned[s]):
            res = os.path.join(a.out, "check")
            B.run([exe, *in_args, "-o", res])
            got, ref = np.load(os.path.join(res, "y.npy")), np.load(f"{model_dir}/expected_{s}_0.npy")
            err = float(np.max(np.abs(got - ref))) / max(1.0, float(np.max(np.abs(ref))))
            if err > 1e-4:
                raise SystemExit(f"{exe} at seq {s}: differs from ONNX Runtime by {err:.3g} of the scale")
        b_ms, p_ms = [], []
        for _ in range(a.rounds):
            b_ms.append(B.time_kiln(bounded, in_args, 1, a.runs)[0])
            p_ms.append(B.time_kiln(pinned[s], in_args, 1, a.runs)[0])
        rows.append((s, statistics.median(b_ms), statistics.median(p_ms),
                     statistics.median(b / q for b, q in zip(b_ms, p_ms))))
    m = B.machine()
    print(f"\nmachine: {m['cpu']}, {m['cores']} cores; {isa()}")
    print(f"encoder: hidden {a.hidden}, ffn {a.ffn}, {a.layers} layers; one thread; "
          f"median of {a.rounds} rounds x {a.runs} runs")
    print("| seq | bounded 1..%d ms | pinned ms | bounded/pinned | paired |" % max(sizes))
    print("|-----|-----------------|-----------|----------------|--------|")
    for s, b, q, r in rows:
        print(f"| {s:3} | {b:15.3f} | {q:9.3f} | {b / q:14.2f} | {r:6.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
