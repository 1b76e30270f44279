"""ONNX models with If, Loop and Scan (models/control_flow/) through kiln, compared with ONNX
Runtime's outputs.

    control_flow.py KILN WORK MODEL_DIR [MODEL_DIR ...] [--no-compile]

--no-compile (or KILN_CONTROL_FLOW_NO_COMPILE=1) runs the interpreter only.

Each MODEL_DIR holds model.onnx, input_K.npy (graph input order), expected_K.npy (graph
output order) and optionally set1/, set2/ ... with more input sets of the same shapes, chosen
to take the other If branches and other trip counts (models/control_flow/README.md). Every
input set goes through `kiln run` (the interpreter) and through the executable of one
`kiln compile --emit exe`, inputs passed by name and outputs read by name; float outputs
must be within max|kiln - ort| <= 1e-4 * max(1, max|ort|), integer and bool ones exact.
One PASS or FAIL line per model, input set and path; the exit status is 1 if any failed.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx

TOLERANCE = 1e-4
# A Loop whose cond never turns false would hang the suite; these end it as a failure.
RUN_TIMEOUT_S = 120
COMPILE_TIMEOUT_S = 600


def numbered(folder, prefix):
    """prefix_0.npy, prefix_1.npy, ... in numeric order."""
    return sorted(glob.glob(os.path.join(folder, f"{prefix}_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))


def input_sets(folder):
    extra = [p for p in glob.glob(os.path.join(folder, "set*")) if re.fullmatch(r"set\d+", os.path.basename(p))]
    return [folder] + sorted(extra, key=lambda p: int(os.path.basename(p)[3:]))


def graph_io(model):
    """The model's input names (initializers left out) and output names, in graph order."""
    graph = onnx.load(model, load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    return [v.name for v in graph.input if v.name not in initializers], [v.name for v in graph.output]


def output_file(out_dir, name):
    # kiln names each output file after the output, every character outside [A-Za-z0-9_.-] as _.
    return os.path.join(out_dir, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".npy")


def run(cmd, log, timeout):
    """Runs cmd with its output in log; on failure returns why, with the log's tail."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        try:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"timed out after {timeout} s"
    if p.returncode == 0:
        return None
    with open(log) as f:
        return f"exit status {p.returncode}\n{f.read()[-3000:].rstrip()}"


def compare(folder, out_dir, outputs):
    """Why the outputs in out_dir differ from folder's expected_K.npy, or None."""
    expected = numbered(folder, "expected")
    if len(expected) != len(outputs):
        return f"{len(expected)} expected_K.npy files for the model's {len(outputs)} outputs"
    problems = []
    for name, ref_path in zip(outputs, expected):
        path = output_file(out_dir, name)
        if not os.path.exists(path):
            problems.append(f"output {name}: not written")
            continue
        ref, got = np.load(ref_path), np.load(path)
        if got.dtype != ref.dtype or got.shape != ref.shape:
            problems.append(f"output {name}: {got.dtype}{list(got.shape)}, ONNX Runtime's {ref.dtype}{list(ref.shape)}")
        elif ref.dtype.kind in "biu":
            if not np.array_equal(got, ref):
                problems.append(f"output {name}: {int(np.sum(got != ref))} of {ref.size} values differ")
        elif ref.size:
            scale = max(1.0, float(np.max(np.abs(ref))))
            err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) / scale
            if not err <= TOLERANCE:
                problems.append(f"output {name}: differs by {err:.3g} of its scale (limit {TOLERANCE})")
    return "; ".join(problems) or None


def report(what, problem):
    print(f"FAIL {what}: {problem}" if problem else f"PASS {what}")
    return problem is None


def check_model(kiln, folder, work, compile_too):
    """The interpreter and the compiled executable on every input set; True if all pass."""
    name = os.path.basename(folder.rstrip("/"))
    model = os.path.join(folder, "model.onnx")
    inputs, outputs = graph_io(model)
    ok = True
    exe, compile_problem = None, None
    if compile_too:
        exe_dir = os.path.join(work, name, "compiled")
        compile_problem = run([kiln, "compile", model, "-o", exe_dir, "--emit", "exe", "--name", "m"],
                              exe_dir + ".log", COMPILE_TIMEOUT_S)
        if compile_problem:
            compile_problem = f"kiln compile: {compile_problem}"
        else:
            exe = os.path.join(exe_dir, "m")
    for k, s in enumerate(input_sets(folder)):
        files = numbered(s, "input")
        if len(files) != len(inputs):
            ok = report(f"{name} set {k}", f"{len(files)} input_K.npy files for the model's {len(inputs)} inputs") and ok
            continue
        named = [arg for n, f in zip(inputs, files) for arg in ("-i", f"{n}={f}")]
        paths = [("interpreter", "kiln run", [kiln, "run", model])]
        if compile_too:
            paths.append(("executable", "the executable", [exe] if exe else None))
        for path, runner, cmd in paths:
            what = f"{name} {path} (set {k})"
            if cmd is None:
                ok = report(what, compile_problem) and ok
                continue
            out = os.path.join(work, name, f"{path}{k}")
            problem = run([*cmd, *named, "-o", out], out + ".log", RUN_TIMEOUT_S)
            ok = report(what, f"{runner}: {problem}" if problem else compare(s, out, outputs)) and ok
    return ok


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) < 3:
        sys.exit(__doc__)
    compile_too = "--no-compile" not in sys.argv and os.environ.get("KILN_CONTROL_FLOW_NO_COMPILE") != "1"
    kiln, work, folders = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    passed = failed = 0
    for folder in folders:
        if check_model(kiln, os.path.abspath(folder), work, compile_too):
            passed += 1
        else:
            failed += 1
    print(f"{passed} models passed, {failed} failed")
    if failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
