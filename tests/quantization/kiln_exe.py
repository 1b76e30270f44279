"""Shared by the quantization tests: reporting checks, running `kiln`, compiling a model at a
precision, and running the executable it built on numpy inputs."""
import os
import subprocess
import sys

import numpy as np

failures = []


def check(ok, message):
    """Prints the check's outcome; a failed one is remembered for finish()."""
    print(("ok:   " if ok else "FAIL: ") + message, flush=True)
    if not ok:
        failures.append(message)


def finish():
    """Exits non-zero when a check failed."""
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all checks passed")


def run_kiln(kiln, *args, expect_ok=True):
    """Runs the kiln binary at `kiln`; exits the test with its stderr when it fails unexpectedly."""
    p = subprocess.run([kiln, *args], capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: kiln {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p


def compile_model(kiln, model_path, out, precision, *extra):
    """Compiles to OUT/model with external weights; returns the weight file's size in bytes."""
    run_kiln(kiln, "compile", model_path, "-o", out, "--name", "model", "--emit", "exe", "--weights", "external",
             "--precision", precision, *extra)
    return os.path.getsize(os.path.join(out, "model.weights"))


def run_exe(out, inputs, names, env=None):
    """Runs OUT/model on `inputs` (in graph input order), with `env` added to the environment;
    returns the named outputs."""
    files = []
    for k, x in enumerate(inputs):
        files.append(os.path.join(out, f"in_{k}.npy"))
        np.save(files[-1], x)
    subprocess.run([os.path.join(out, "model"), "-o", os.path.join(out, "result"), *files], check=True,
                   env=None if env is None else {**os.environ, **env})
    return {n: np.load(os.path.join(out, "result", n + ".npy")) for n in names}
