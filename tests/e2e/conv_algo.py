"""kiln compile --conv-algo: models/cnn (3x3 stride-1 convolutions with 3 -> 16 and 16 -> 16
channels, where the cost model picks im2col) compiled with each algorithm forced must call the
kernels asked for, and every executable must match the stored reference output and each
other; a bad value must fail with one clear message, a non-zero exit and no output.

  conv_algo.py KILN WORK_DIR
"""
import os
import shutil
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_DIR = os.path.join(REPO, "models", "cnn")
# The three dense 3x3 stride-1 convolutions (the depthwise one and the 1x1s never use Winograd).
WINOGRAD_CONVS = 3

failures = []


def check(ok, message):
    print(("ok:   " if ok else "FAIL: ") + message, flush=True)
    if not ok:
        failures.append(message)


def kiln_compile(kiln, out, *extra):
    return subprocess.run([kiln, "compile", os.path.join(MODEL_DIR, "model.onnx"), "-o", out, "--name", "model",
                           *extra], capture_output=True, text=True)


def memory_plan_line(text):
    """The 'memory plan: arena ...' line kiln prints, or None."""
    return next((line.strip() for line in text.splitlines() if line.startswith("memory plan:")), None)


def main():
    kiln, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    x = os.path.join(MODEL_DIR, "input_0.npy")
    expected = np.load(os.path.join(MODEL_DIR, "expected_0.npy"))

    outputs = {}
    plans = {}
    # algorithm -> (calls of the F(4x4,3x3) kernel, calls of the F(2x2,3x3) kernel)
    for algo, calls in {"im2col": (0, 0), "winograd": (WINOGRAD_CONVS, 0), "winograd2": (0, WINOGRAD_CONVS)}.items():
        out = os.path.join(work, algo)
        p = kiln_compile(kiln, out, "--emit", "exe,source", "--conv-algo", algo, "-v")
        if p.returncode != 0:
            check(False, f"--conv-algo {algo} compiles: exit {p.returncode}\n{p.stderr}")
            continue
        # `kiln inspect --plan` plans memory for the same algorithm (scratch differs by algorithm).
        plan = subprocess.run([kiln, "inspect", os.path.join(MODEL_DIR, "model.onnx"), "--plan", "--conv-algo", algo],
                              capture_output=True, text=True)
        compiled_plan, inspected_plan = memory_plan_line(p.stdout + p.stderr), memory_plan_line(plan.stdout)
        check(plan.returncode == 0 and compiled_plan is not None and compiled_plan == inspected_plan,
              f"--conv-algo {algo}: inspect --plan prints the memory plan compile -v does "
              f"('{inspected_plan}' vs '{compiled_plan}')")
        plans[algo] = inspected_plan
        source = open(os.path.join(out, "src", "model.cpp")).read()
        got = (source.count("kiln::rt::winograd_conv2d_f32(p, 4,"), source.count("kiln::rt::winograd_conv2d_f32(p, 2,"))
        check(got == calls, f"--conv-algo {algo}: the generated code calls Winograd F(4,3) {got[0]} times and "
              f"F(2,3) {got[1]} times (expected {calls[0]} and {calls[1]})")
        result = os.path.join(out, "result")
        subprocess.run([os.path.join(out, "model"), "-o", result, x], check=True)
        y = np.load(os.path.join(result, "output_0.npy"))
        outputs[algo] = y
        err = float(np.abs(y - expected).max())
        check(np.allclose(y, expected, rtol=1e-3, atol=1e-5),
              f"--conv-algo {algo}: output matches the reference (max abs error {err:.3g})")
    if "im2col" in outputs:
        for algo in ("winograd", "winograd2"):
            if algo in outputs:
                diff = float(np.abs(outputs[algo] - outputs["im2col"]).max())
                check(np.allclose(outputs[algo], outputs["im2col"], rtol=1e-4, atol=1e-5),
                      f"--conv-algo {algo} matches --conv-algo im2col (max abs difference {diff:.3g})")

    check(len(set(plans.values())) > 1, f"the memory plan depends on --conv-algo: {plans}")

    for algo in ("auto", "winograd4"):
        p = kiln_compile(kiln, os.path.join(work, algo), "--emit", "source", "--conv-algo", algo)
        check(p.returncode == 0, f"--conv-algo {algo} is accepted ({p.stderr.strip()})")

    out = os.path.join(work, "bad")
    p = kiln_compile(kiln, out, "--conv-algo", "fast")
    message = "--conv-algo: expected auto, im2col, winograd, winograd4 or winograd2, got 'fast'"
    check(p.returncode != 0 and message in (p.stderr.splitlines() or [''])[0] and not os.path.exists(out),
          f"--conv-algo fast: exit {p.returncode}, no output, stderr '{p.stderr.strip()}'")

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    shutil.rmtree(work)
    print("all checks passed")


if __name__ == "__main__":
    main()
