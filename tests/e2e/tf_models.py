"""TensorFlow models (models/tensorflow/) compiled by kiln and compared with TensorFlow's outputs.

    tf_models.py KILN WORK MODEL_DIR [MODEL_DIR ...] [--no-compile]

Each MODEL_DIR holds saved_model/ (a SavedModel), frozen.pb (a frozen GraphDef, with
inputs.txt and outputs.txt naming its Placeholders and output nodes), or model.txt (the
relative path of another folder's saved_model/), and input_K.npy, expected_K.npy. For each:
`kiln run` (the interpreter) and the compiled executable (`kiln compile --emit exe`), every
output within 1e-4 of the reference's scale, as tests/e2e/torch_models.py checks PyTorch's
models. A symbolic batch (Keras exports a batch of None) is bound to the inputs' with --dim.
The recurrent models (a While over TensorLists) and the CNN (NHWC convolutions, pools, Pad),
BOUNDED, are also compiled once for a bounded batch (--dim batch=1..4) and run at the inputs'
batch, at batch 1 and at batch 3 (the first row, and the rows repeated; the rows are
independent, so the reference is the expected outputs' rows taken the same way).
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import check_run_and_exe, compare, input_files, main, run  # noqa: E402

BOUNDED = {"lstm", "gru", "cnn"}


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


def check_bounded_batch(kiln, folder, work, model, options):
    """One compile with --dim batch=1..4, run at the inputs' batch and at batch 1."""
    name = os.path.basename(folder.rstrip("/"))
    exe_dir = os.path.join(work, name, "bounded")
    if not run([kiln, "compile", model, *options, "--dim", "batch=1..4", "-o", exe_dir, "--emit", "exe", "--name", "m"],
               exe_dir + ".log"):
        print(f"FAIL {name}: kiln compile --dim batch=1..4")
        return False
    ok = True
    sets = [("the inputs' batch", folder)]
    for batch in (1, 3):  # the first row; the rows repeated to three
        rows = os.path.join(work, name, f"rows{batch}")
        os.makedirs(rows, exist_ok=True)
        files = [(f"input_{k}.npy", p) for k, p in enumerate(input_files(folder))]
        files += [(f, os.path.join(folder, f)) for f in os.listdir(folder) if f.startswith("expected_")]
        for file, path in files:
            a = np.load(path)
            np.save(os.path.join(rows, file), np.concatenate([a] * batch)[:batch])
        sets.append((f"batch {batch}", rows))
    for k, (what, source) in enumerate(sets):
        out = os.path.join(work, name, f"bounded_exe{k}")
        if run([os.path.join(exe_dir, "m"), *input_files(source), "-o", out], out + ".log"):
            ok = compare(source, out, f"{name} bounded executable at {what}") and ok
        else:
            print(f"FAIL {name}: the bounded executable at {what}")
            ok = False
    return ok


def check_model(kiln, folder, work, compile_too):
    model, *options = model_args(folder)
    inputs = input_files(folder)
    if "[batch," in subprocess.run([kiln, "inspect", model, *options], capture_output=True, text=True).stdout:
        batch = np.load(inputs[0]).shape[0] if inputs and np.load(inputs[0]).ndim else 1
        ok = True
        if compile_too and os.path.basename(folder.rstrip("/")) in BOUNDED:
            ok = check_bounded_batch(kiln, folder, work, model, options)
        return check_run_and_exe(kiln, folder, work, model, options + ["--dim", f"batch={batch}"], compile_too) and ok
    return check_run_and_exe(kiln, folder, work, model, options, compile_too)


if __name__ == "__main__":
    sys.exit(main(check_model))
