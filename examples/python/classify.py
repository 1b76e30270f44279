#!/usr/bin/env python3
"""Compiles an ONNX classifier with kiln from Python, runs it on numpy arrays and compares it
with ONNX Runtime on the same input.

    python classify.py MODEL.onnx [--out DIR] [--tolerance 1e-4] [--dim SYMBOL=VALUE ...]

Needs kiln's wheel, numpy and onnxruntime in the environment (README.md beside this file).
Prints, for each output, the largest |kiln - onnxruntime| and that difference relative to the
output's scale (its largest |value|), then the top class of each; exits 1 when a relative
difference is above --tolerance. Relative, because a model with random weights may have tiny
outputs (torchvision's mobilenet_v2 gives logits near 1e-9), against which an absolute bound
of 1e-4 would say nothing.
"""
import argparse
import sys
import tempfile
import time

import numpy as np
import onnxruntime

import kiln


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="an ONNX classifier with static shapes (or give --dim)")
    p.add_argument("--out", help="where kiln writes the library (default: a temporary folder)")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest |kiln - onnxruntime| accepted, as a fraction of the output's largest |value|")
    p.add_argument("--dim", action="append", default=[], metavar="SYMBOL=VALUE",
                   help="a value for a symbolic dim, as kiln compile --dim")
    args = p.parse_args()

    with tempfile.TemporaryDirectory(prefix="kiln-classify-") as tmp:
        return compare(args, args.out or tmp)


def compare(args, out) -> int:
    start = time.perf_counter()
    files = kiln.compile(args.model, out, dim=args.dim or None)
    print(f"kiln {kiln.__version__} compiled {args.model} in {time.perf_counter() - start:.1f} s: {files['shared']}")

    with kiln.load(files["shared"]) as model:
        print(model)
        # The same seeded input for both engines, in the shapes and dtypes the library reports.
        rng = np.random.default_rng(0)
        feed = {}
        for info in model.inputs:
            if info.dtype.kind != "f":
                sys.exit(f"classify.py: input '{info.name}' is {info.dtype}; this example makes float inputs only")
            feed[info.name] = rng.standard_normal(info.shape).astype(info.dtype)
        ours = model(**feed)
        if not isinstance(ours, tuple):
            ours = (ours,)
        names = [o.name for o in model.outputs]

    session = onnxruntime.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    theirs = session.run(names, feed)

    worst = 0.0
    for name, a, b in zip(names, ours, theirs):
        a, b = a.astype(np.float64), b.astype(np.float64)
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        relative = diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))
        worst = max(worst, relative)
        print(f"output {name} {list(a.shape)}: max |kiln - onnxruntime| = {diff:.3g}, "
              f"{relative:.3g} of its largest |value| {scale:.3g}")
    def top(scores):  # the class of each item of the batch
        return scores.reshape(scores.shape[0], -1).argmax(axis=1).tolist() if scores.ndim > 1 else [int(scores.argmax())]
    print(f"top class: kiln {top(ours[0])}, onnxruntime {top(theirs[0])}")
    if worst > args.tolerance:
        print(f"classify.py: kiln and ONNX Runtime differ by {worst:.3g} of the output's scale, "
              f"more than {args.tolerance:g}", file=sys.stderr)
        return 1
    print(f"ok: within {args.tolerance:g} of the output's scale")
    return 0


if __name__ == "__main__":
    sys.exit(main())
