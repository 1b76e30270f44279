"""JAX models (StableHLO text, models/jax/) compiled by kiln and compared with JAX's own outputs.

    jax_models.py KILN WORK MODEL_DIR [MODEL_DIR ...] [--no-compile]

Each MODEL_DIR holds model.mlir, input_K.npy, expected_K.npy and, where the weights are
arguments of @main, params.npz (given with --params). For each: `kiln run` (the interpreter)
and the compiled executable (`kiln compile --emit exe`), every output within 1e-4 of the
reference's scale, max|kiln - jax| <= 1e-4 * max(1, max|jax|), as tests/e2e/torch_models.py
checks PyTorch's models. --no-compile (or KILN_TORCH_MODELS_NO_COMPILE=1) runs the interpreter
only.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import compare, input_files, run  # noqa: E402


def check_model(kiln, folder, work, compile_too):
    name = os.path.basename(folder.rstrip("/"))
    model = os.path.join(folder, "model.mlir")
    params = os.path.join(folder, "params.npz")
    extra = ["--params", params] if os.path.exists(params) else []
    inputs = input_files(folder)
    out = os.path.join(work, name, "interp")
    if not run([kiln, "run", model, *extra, *inputs, "-o", out], out + ".log"):
        print(f"FAIL {name}: kiln run")
        return False
    ok = compare(folder, out, f"{name} interpreter")
    if not compile_too:
        return ok
    exe_dir = os.path.join(work, name, "compiled")
    if not run([kiln, "compile", model, *extra, "-o", exe_dir, "--emit", "exe", "--name", "m"], exe_dir + ".log"):
        print(f"FAIL {name}: kiln compile")
        return False
    out = os.path.join(work, name, "exe")
    if not run([os.path.join(exe_dir, "m"), *inputs, "-o", out], out + ".log"):
        print(f"FAIL {name}: the executable")
        return False
    return compare(folder, out, f"{name} executable") and ok


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    compile_too = "--no-compile" not in sys.argv and os.environ.get("KILN_TORCH_MODELS_NO_COMPILE") != "1"
    kiln, work, folders = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    passed = failed = 0
    for folder in folders:
        if check_model(kiln, folder, work, compile_too):
            print(f"ok   {os.path.basename(folder.rstrip('/'))}")
            passed += 1
        else:
            failed += 1
    print(f"{passed} passed, {failed} failed")
    if failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
