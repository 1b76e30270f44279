"""The same network imported from a TensorFlow SavedModel and from its tf2onnx conversion.

    python bench/tf_vs_onnx.py SAVED_MODEL_DIR MODEL.onnx [SAVED_MODEL_DIR MODEL.onnx ...]
                               [--out build/bench/tf_vs_onnx] [--threads 1,2] [--rounds 5]
                               [--runs 10] [--batch 1] [--cpu generic] [--compile-args ARGS]
                               [--realtime] [--lock FILE]

For every pair (a Keras SavedModel, e.g. from models/tensorflow/make_big_tf_models.py, and
the ONNX file `python -m tf2onnx.convert --saved-model DIR --output MODEL.onnx --opset 17`
made of it; tf2onnx keeps the NHWC input and puts one Transpose after it):

1. compiles both with `kiln compile MODEL --dim SYM=BATCH --emit exe` for every symbolic dim
   of their inputs (the SavedModel's `batch`, tf2onnx's `unk__NNN`),
2. where SAVED_MODEL_DIR/../input_0.npy and expected_0.npy exist (the generator writes them),
   runs both executables on that input and prints each one's max abs error against
   TensorFlow's output, relative to the output's scale,
3. prints the node counts by op of each after kiln's optimizer (`kiln inspect --plan`): the
   Transposes, BatchNorm Mul/Add and layout conversions the TF import leaves that the ONNX one
   does not are where a layout penalty would come from,
4. times both executables at every thread count in alternating rounds (each in its own process,
   2 untimed warm-up runs, then `--runs` timed ones; `--threads N` of the executable); the
   figure is the median over rounds of each round's median, `paired` the median of each
   round's own TF/ONNX ratio.

Not a test: nothing fails on a timing. Prints the CPU and its AVX-512 extensions.
`--realtime` and `--lock` as in bench/bench.py.
"""
import argparse
import json
import os
import re
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: timing, machine)

REPO = B.REPO


def inspect(kiln, model):
    """`kiln inspect --json`: the inputs and, for --dim, the symbolic dims among their shapes."""
    c = B.run([kiln, "inspect", model, "--json"])
    info = json.loads(c.stdout)
    syms = []
    for i in info["inputs"]:
        for d in i["shape"].strip("[]").split(","):
            d = d.strip()
            if d and not d.isdigit() and d != "?" and d not in syms:
                syms.append(d)
    return info, syms


def optimized_ops(kiln, model, dims):
    """Node counts by op after the last pass of the optimizer (`kiln inspect --plan`)."""
    c = B.run([kiln, "inspect", model, "--plan"] + dims)
    last = [l for l in c.stdout.splitlines() + c.stderr.splitlines() if l.strip().startswith("after ")][-1]
    counts = {}
    for op, n in re.findall(r"([\w.]+) (\d+)(?:,|$)", last.split("nodes:", 1)[1]):
        counts[op] = int(n)
    return int(re.search(r"(\d+) nodes:", last).group(1)), counts


def compile_exe(a, model, dims, out):
    B.log(f"compiling {model} ({' '.join(dims)})")
    B.run([a.kiln, "compile", model, *dims, "--cpu", a.cpu, "--name", "model", "--emit", "exe", "-o", out]
          + a.compile_args.split())
    return os.path.join(out, "model")


def check(exe, in_name, x_path, ref_path, work):
    res = os.path.join(work, "check")
    B.run([exe, "-i", f"{in_name}={x_path}", "-o", res])
    outs = sorted(f for f in os.listdir(res) if f.endswith(".npy"))
    got = np.load(os.path.join(res, outs[0])).astype(np.float64)
    ref = np.load(ref_path).astype(np.float64)
    if got.shape != ref.shape:
        return f"shape {got.shape} vs {ref.shape}"
    return f"{float(np.abs(got - ref).max()) / max(float(np.abs(ref).max()), 1e-30):.1e}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pairs", nargs="+", metavar="SAVED_MODEL_DIR MODEL.onnx")
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench", "tf_vs_onnx"))
    p.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--batch", type=int, default=1, help="value of every symbolic input dim")
    p.add_argument("--cpu", default="generic", help="kiln compile --cpu (the same for both)")
    p.add_argument("--compile-args", default="", help="extra `kiln compile` arguments (both)")
    B.add_timing_args(p)
    a = p.parse_args()
    B.apply_timing_args(a)
    if len(a.pairs) % 2:
        p.error("give SAVED_MODEL_DIR MODEL.onnx pairs")
    threads = [int(t) for t in a.threads.split(",")]
    os.makedirs(a.out, exist_ok=True)

    rows, op_rows, checks = [], [], []
    for sm, onnx_path in zip(a.pairs[::2], a.pairs[1::2]):
        sm = os.path.abspath(sm.rstrip("/"))
        name = os.path.splitext(os.path.basename(onnx_path))[0]
        work = os.path.join(a.out, name)
        exes, in_names = {}, {}
        for kind, model in (("tf", sm), ("onnx", onnx_path)):
            info, syms = inspect(a.kiln, model)
            dims = [arg for s in syms for arg in ("--dim", f"{s}={a.batch}")]
            in_names[kind] = info["inputs"][0]["name"]
            exes[kind] = compile_exe(a, model, dims, os.path.join(work, kind))
            op_rows.append((name, kind, *optimized_ops(a.kiln, model, dims)))
        x_path = os.path.join(os.path.dirname(sm), "input_0.npy")
        ref_path = os.path.join(os.path.dirname(sm), "expected_0.npy")
        if a.batch == 1 and os.path.exists(x_path) and os.path.exists(ref_path):
            checks.append((name, *(check(exes[k], in_names[k], x_path, ref_path, work) for k in ("tf", "onnx"))))
            x_args = {k: ["-i", f"{in_names[k]}={x_path}"] for k in exes}
        else:
            x = np.random.default_rng(0).standard_normal((a.batch, 224, 224, 3)).astype(np.float32)
            x_path = os.path.join(work, "input.npy")
            np.save(x_path, x)
            x_args = {k: ["-i", f"{in_names[k]}={x_path}"] for k in exes}
        for t in threads:
            tf_ms, onnx_ms = [], []
            for _ in range(a.rounds):
                tf_ms.append(B.time_kiln(exes["tf"], x_args["tf"], t, a.runs)[0])
                onnx_ms.append(B.time_kiln(exes["onnx"], x_args["onnx"], t, a.runs)[0])
            tf, on = statistics.median(tf_ms), statistics.median(onnx_ms)
            paired = statistics.median(x / y for x, y in zip(tf_ms, onnx_ms))
            B.log(f"{name} threads {t}: from TF {tf:.2f} ms, from ONNX {on:.2f} ms, ratio {tf / on:.2f}")
            rows.append((name, t, tf, on, tf / on, paired))

    m = B.machine()
    print(f"\nmachine: {m['cpu']}, {m['cores']} cores; {B.isa_flags()}")
    print(f"kiln compile --cpu {a.cpu}, batch {a.batch}; median of {a.rounds} alternating rounds x {a.runs} runs"
          + ("; timed under chrt -f 50" if a.realtime else ""))
    if checks:
        print("\nmax abs error / output scale against TensorFlow's expected_0.npy:")
        print("| model                | from TF | from ONNX |")
        print("|----------------------|---------|-----------|")
        for name, e_tf, e_onnx in checks:
            print(f"| {name:20} | {e_tf:>7} | {e_onnx:>9} |")
    print("\n| model                | threads | from TF ms | from ONNX ms | TF/ONNX | paired |")
    print("|----------------------|---------|------------|--------------|---------|--------|")
    for name, t, tf, on, r, paired in rows:
        print(f"| {name:20} | {t:7} | {tf:10.3f} | {on:12.3f} | {r:7.2f} | {paired:6.2f} |")

    print("\nnodes after kiln's optimizer (kiln inspect --plan), by op:")
    for name in dict.fromkeys(r[0] for r in op_rows):
        got = {kind: (total, counts) for n, kind, total, counts in op_rows if n == name}
        ops = sorted({op for _, c in got.values() for op in c}, key=lambda o: (o.startswith("kiln."), o))
        print(f"| {name:23} | from TF | from ONNX |")
        print(f"|{'-' * 25}|---------|-----------|")
        print(f"| {'(all nodes)':23} | {got['tf'][0]:7} | {got['onnx'][0]:9} |")
        for op in ops:
            print(f"| {op:23} | {got['tf'][1].get(op, 0):7} | {got['onnx'][1].get(op, 0):9} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
