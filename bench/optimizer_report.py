#!/usr/bin/env python3
"""Print the optimizer's figures for the benchmark models (issue 5's acceptance).

    .venv/bin/python bench/optimizer_report.py [--kiln build/bin/kiln] [--models DIR]
        [--work DIR] [--only NAME ...] [--no-run] [--json FILE]

For resnet50, mobilenet_v2 and the BERT-base-shaped encoder (bench/models.py, batch 1;
models missing from --models DIR are exported there first), prints:
  - node counts before and after the -O2 pipeline (`kiln inspect --plan`), and the ops that
    fusion should have removed but are still there (BatchNormalization, activations, Add,
    Softmax, Transpose, ...; none is the goal), and for the encoder how many attention blocks
    (Softmax nodes of the exported model) became one Attention node;
  - the memory plan: arena bytes against the lower bound (the most bytes alive at one step),
    the goal being at most 1.05x;
  - unless --no-run: peak resident memory of the compiled executable (`kiln compile`, weights
    embedded, one thread) while it runs one inference on the seeded inputs, against weights +
    arena + 16 MiB (wait4's ru_maxrss, the fork made by a fresh small process); and the largest difference from ONNX
    Runtime's outputs relative to the output's scale (goal: 1e-3).
Exits 1 when a goal is missed. Takes a few minutes (compiling the encoder's 340 MB of weights).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import models as bench_models  # noqa: E402

MODELS = ["resnet50", "mobilenet_v2", "bert"]
MIB = 1 << 20
# Ops no optimized graph of these models should still have: each was folded, fused into a
# kernel's epilogue, or recognized as part of a bigger op.
SHOULD_BE_GONE = ["BatchNormalization", "Relu", "Clip", "Sigmoid", "Tanh", "Gelu", "Erf", "Add", "Softmax",
                  "Transpose", "ReduceMean", "Pow", "Sqrt", "Div", "Identity"]


def counts(line: str) -> dict[str, int]:
    """'12 nodes: Conv 5, Relu 4' -> {'Conv': 5, 'Relu': 4}."""
    body = line.split("nodes:", 1)[1].strip()
    out = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        op, n = part.rsplit(" ", 1)
        out[op] = int(n)
    return out


def inspect_plan(kiln: str, model: Path) -> dict:
    r = subprocess.run([kiln, "inspect", "--plan", str(model)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kiln inspect --plan {model} failed:\n{r.stderr}")
    lines = r.stdout.splitlines()
    before = next(l for l in lines if l.startswith("before:"))
    after = [l for l in lines if l.strip().startswith("after ")][-1]
    plan = next(l for l in lines if l.startswith("memory plan:"))
    m = re.search(r"arena (\d+) bytes, lower bound (\d+)", plan)
    return dict(before=counts(before), after=counts(after), arena=int(m.group(1)), lower_bound=int(m.group(2)))


def compile_model(kiln: str, model: Path, out: Path) -> dict:
    r = subprocess.run([kiln, "compile", "-v", str(model), "-o", str(out), "--name", "model"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kiln compile {model} failed:\n{r.stderr[-4000:]}")
    m = re.search(r"kiln: arena (\d+) bytes .*weights (\d+) bytes", r.stdout + r.stderr)
    return dict(arena=int(m.group(1)), weights=int(m.group(2)))


# Runs argv[1:] and prints its peak RSS in KiB. A fresh small process does the fork: a
# child's ru_maxrss starts at its parent's resident size at fork, and this script's own
# (ONNX Runtime sessions included) would otherwise be counted.
MEASURE = ("import os, subprocess, sys\n"
           "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
           "_, status, usage = os.wait4(p.pid, 0)\n"
           "print(usage.ru_maxrss)\n"
           "sys.exit(os.waitstatus_to_exitcode(status))\n")


def run_measured(exe: Path, inputs: list[Path], outdir: Path) -> int:
    """Runs the executable once; returns its peak resident memory in bytes."""
    r = subprocess.run([sys.executable, "-c", MEASURE, str(exe), "--threads", "1", "-o", str(outdir)]
                       + [str(i) for i in inputs], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{exe} failed: {r.stderr}")
    return int(r.stdout.split()[-1]) * 1024  # KiB on Linux


def ort_outputs(model: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def fmt_counts(c: dict[str, int], top: int = 8) -> str:
    items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{op} {n}" for op, n in items[:top])
    return f"{sum(c.values())} ({text}{', ...' if len(items) > top else ''})"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--kiln", default=str(REPO / "build" / "bin" / "kiln"))
    p.add_argument("--models", type=Path, default=REPO / "build" / "bench-models",
                   help="where the exported models are (exported there when missing)")
    p.add_argument("--work", type=Path, help="where compiled models go (default: a temporary folder)")
    p.add_argument("--only", nargs="+", choices=MODELS, default=MODELS)
    p.add_argument("--no-run", action="store_true", help="skip compiling and running (plan figures only)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args(argv)

    args.models.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="kiln-optimizer-report-"))
    results, ok = {}, True
    for name in args.only:
        model = args.models / f"{name}.onnx"
        inputs = [args.models / f"{name}.input_{k}.npy" for k in range(2 if name == "bert" else 1)]
        if not model.exists() or not all(i.exists() for i in inputs):
            print(f"{name}: exporting to {args.models}", flush=True)
            subprocess.run([sys.executable, str(HERE / "models.py"), "--out", str(args.models), "--only", name],
                           check=True, stdout=subprocess.DEVNULL)
        r = inspect_plan(args.kiln, model)
        r["left"] = {op: r["after"][op] for op in SHOULD_BE_GONE if r["after"].get(op)}
        ok &= not r["left"] and r["arena"] <= 1.05 * r["lower_bound"]
        if name == "bert":
            r["attention_blocks"] = r["before"].get("Softmax", 0)
            r["attention_ops"] = r["after"].get("Attention", 0)
            ok &= r["attention_ops"] == r["attention_blocks"]
        print(f"{name}:")
        print(f"  nodes before  {fmt_counts(r['before'])}")
        print(f"  nodes after   {fmt_counts(r['after'])}")
        print(f"  not fused     {', '.join(f'{op} {n}' for op, n in r['left'].items()) or 'none'}")
        if name == "bert":
            print(f"  attention     {r['attention_blocks']} blocks -> {r['attention_ops']} Attention nodes")
        print(f"  arena         {r['arena'] / MIB:.2f} MiB, lower bound {r['lower_bound'] / MIB:.2f} MiB "
              f"({r['arena'] / max(1, r['lower_bound']):.3f}x)", flush=True)
        if not args.no_run:
            out = work / name
            c = compile_model(args.kiln, model, out)
            outdir = work / f"{name}.outputs"
            outdir.mkdir(parents=True, exist_ok=True)
            rss = run_measured(out / "model", inputs, outdir)
            budget = c["weights"] + c["arena"] + 16 * MIB
            r.update(weights=c["weights"], peak_rss=rss, rss_budget=budget)
            ok &= rss <= budget
            print(f"  peak RSS      {rss / MIB:.1f} MiB; weights {c['weights'] / MIB:.1f} + arena "
                  f"{c['arena'] / MIB:.1f} + 16 = {budget / MIB:.1f} MiB ({'ok' if rss <= budget else 'OVER'})")
            feeds = dict(zip(bench_models.input_names(model), (np.load(i) for i in inputs)))
            want = ort_outputs(model, feeds)
            got = [np.load(f) for f in sorted(outdir.glob("*.npy"))]
            if len(got) == len(want) == 1:
                scale = max(float(np.abs(want[0]).max()), 1e-30)
                r["max_err_rel"] = float(np.abs(got[0].astype(np.float64) - want[0]).max()) / scale
                ok &= r["max_err_rel"] <= 1e-3
                print(f"  vs ORT        max |kiln - ort| / max |ort| = {r['max_err_rel']:.2e}", flush=True)
        results[name] = r
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print("all goals met" if ok else "some goals missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
