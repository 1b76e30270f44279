"""PyTorch models (TorchScript archives, torch.export programs) compiled by kiln and compared
with PyTorch's own outputs.

    torch_models.py KILN WORK MODEL_DIR [MODEL_DIR ...] [--no-compile]

--no-compile (or KILN_TORCH_MODELS_NO_COMPILE=1, as the sanitized suite sets it) runs the
interpreter only.

Each MODEL_DIR holds model.pt or model.pt2, input_K.npy and expected_K.npy
(models/torch/README.md, models/torch_export/README.md), and
optionally set1/, set2/ ... with more input sets (of other shapes too). For each: `kiln run`
(the interpreter) and the compiled executable (`kiln compile --emit exe`, once per distinct
input shapes) on every input set, each output within 1e-4
of the reference's scale, max|kiln - torch| <= 1e-4 * max(1, max|torch|). The input shapes
come from the input files (TorchScript archives record none; a .pt2 program's symbolic dims
take them too).
"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

TOLERANCE = 1e-4
DTYPES = {"float32": "f32", "float64": "f64", "int64": "i64", "int32": "i32", "bool": "bool", "uint8": "u8",
          "int8": "i8", "float16": "f16"}


def input_files(folder):
    return sorted(glob.glob(os.path.join(folder, "input_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))


def shapes_args(inputs):
    args = []
    for path in inputs:
        a = np.load(path)
        spec = ",".join(str(d) for d in a.shape)
        args += ["--input-shape", f"{spec}:{DTYPES[str(a.dtype)]}" if a.dtype != np.float32 else spec]
    return args


def run(cmd, log):
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        with open(log) as f:
            sys.stdout.write(f.read()[-3000:])
    return p.returncode == 0


def compare(folder, out_dir, what):
    ok = True
    expected = sorted(glob.glob(os.path.join(folder, "expected_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))
    produced = sorted(glob.glob(os.path.join(out_dir, "*.npy")))
    if len(produced) != len(expected):
        print(f"FAIL {what}: {len(produced)} outputs, expected {len(expected)}")
        return False
    names = [f"output_{k}.npy" for k in range(len(expected))]
    for k, ref_path in enumerate(expected):
        path = os.path.join(out_dir, names[k]) if os.path.exists(os.path.join(out_dir, names[k])) else produced[k]
        ref, got = np.load(ref_path), np.load(path)
        if ref.shape != got.shape:
            print(f"FAIL {what}: output {k} has shape {got.shape}, torch's {ref.shape}")
            ok = False
            continue
        scale = max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
        err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) / scale if ref.size else 0.0
        if not err <= TOLERANCE:
            print(f"FAIL {what}: output {k} differs by {err:.3g} of its scale (limit {TOLERANCE})")
            ok = False
    return ok


def check_model(kiln, folder, work, compile_too):
    """The interpreter on every input set; compiled once per distinct set of input shapes."""
    name = os.path.basename(folder.rstrip("/"))
    model = os.path.join(folder, "model.pt")
    if not os.path.exists(model):
        model += "2"
    sets = [folder] + sorted(glob.glob(os.path.join(folder, "set[0-9]*")))
    ok = True
    compiled = {}
    for k, s in enumerate(sets):
        shapes = shapes_args(input_files(s))
        out = os.path.join(work, name, f"interp{k}")
        if run([kiln, "run", model, *shapes, *input_files(s), "-o", out], out + ".log"):
            ok = compare(s, out, f"{name} interpreter (set {k})") and ok
        else:
            print(f"FAIL {name}: kiln run (set {k})")
            ok = False
            continue
        if not compile_too:
            continue
        key = " ".join(shapes)
        if key not in compiled:
            exe_dir = os.path.join(work, name, f"compiled{len(compiled)}")
            if not run([kiln, "compile", model, *shapes, "-o", exe_dir, "--emit", "exe", "--name", "m"], exe_dir + ".log"):
                print(f"FAIL {name}: kiln compile (set {k})")
                ok = False
                continue
            compiled[key] = os.path.join(exe_dir, "m")
        out = os.path.join(work, name, f"exe{k}")
        if run([compiled[key], *input_files(s), "-o", out], out + ".log"):
            ok = compare(s, out, f"{name} executable (set {k})") and ok
        else:
            print(f"FAIL {name}: the executable (set {k})")
            ok = False
    return ok


def check_run_and_exe(kiln, folder, work, model, options, compile_too):
    """`kiln run` and the executable of `kiln compile` on the folder's inputs, each compared with
    its expected_K.npy (the JAX and TensorFlow suites: one input set, one compile)."""
    name = os.path.basename(folder.rstrip("/"))
    inputs = input_files(folder)
    out = os.path.join(work, name, "interp")
    # The options after the inputs: some of them take several values.
    if not run([kiln, "run", model, *inputs, *options, "-o", out], out + ".log"):
        print(f"FAIL {name}: kiln run")
        return False
    ok = compare(folder, out, f"{name} interpreter")
    if not compile_too:
        return ok
    exe_dir = os.path.join(work, name, "compiled")
    if not run([kiln, "compile", model, *options, "-o", exe_dir, "--emit", "exe", "--name", "m"], exe_dir + ".log"):
        print(f"FAIL {name}: kiln compile")
        return False
    out = os.path.join(work, name, "exe")
    if not run([os.path.join(exe_dir, "m"), *inputs, "-o", out], out + ".log"):
        print(f"FAIL {name}: the executable")
        return False
    return compare(folder, out, f"{name} executable") and ok


def main(check=None):
    """Checks each MODEL_DIR of the command line with `check` (default: check_model)."""
    check = check or check_model
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    compile_too = "--no-compile" not in sys.argv and os.environ.get("KILN_TORCH_MODELS_NO_COMPILE") != "1"
    kiln, work, folders = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    passed = failed = 0
    for folder in folders:
        if check(kiln, folder, work, compile_too):
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
