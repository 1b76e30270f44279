"""TensorFlow models (models/tensorflow/) compiled by kiln and compared with TensorFlow's outputs.

    tf_models.py KILN WORK MODEL_DIR [MODEL_DIR ...] [--no-compile]

Each MODEL_DIR holds saved_model/ (a SavedModel), frozen.pb (a frozen GraphDef, with
inputs.txt and outputs.txt naming its Placeholders and output nodes), or model.txt (the
relative path of another folder's saved_model/), and input_K.npy, expected_K.npy. For each:
`kiln run` (the interpreter) and the compiled executable (`kiln compile --emit exe`), every
output within 1e-4 of the reference's scale, as tests/e2e/torch_models.py checks PyTorch's
models. A symbolic batch (Keras exports a batch of None) is bound to the inputs' with --dim.
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import compare, input_files, run  # noqa: E402


def model_args(folder):
    """The model path and the options that select its inputs and outputs."""
    link = os.path.join(folder, "model.txt")
    if os.path.exists(link):
        with open(link) as f:
            return [os.path.normpath(os.path.join(folder, f.read().strip()))]
    frozen = os.path.join(folder, "frozen.pb")
    if not os.path.exists(frozen):
        return [os.path.join(folder, "saved_model")]
    args = [frozen]
    for option, listing in (("--input-node", "inputs.txt"), ("--output-node", "outputs.txt")):
        with open(os.path.join(folder, listing)) as f:
            for name in f.read().split():
                args += [option, name]
    return args


def check_model(kiln, folder, work, compile_too):
    name = os.path.basename(folder.rstrip("/"))
    inputs = input_files(folder)
    batch = np.load(inputs[0]).shape[0] if inputs and np.load(inputs[0]).ndim else 1
    model, *options = model_args(folder)
    if "[batch," in subprocess.run([kiln, "inspect", model, *options], capture_output=True, text=True).stdout:
        options += ["--dim", f"batch={batch}"]
    out = os.path.join(work, name, "interp")
    # The options after the inputs: --input-node and --dim take several values.
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


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    compile_too = "--no-compile" not in sys.argv
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
