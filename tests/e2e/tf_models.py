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
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import check_run_and_exe, input_files, main  # noqa: E402


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
    model, *options = model_args(folder)
    inputs = input_files(folder)
    if "[batch," in subprocess.run([kiln, "inspect", model, *options], capture_output=True, text=True).stdout:
        batch = np.load(inputs[0]).shape[0] if inputs and np.load(inputs[0]).ndim else 1
        options += ["--dim", f"batch={batch}"]
    return check_run_and_exe(kiln, folder, work, model, options, compile_too)


if __name__ == "__main__":
    sys.exit(main(check_model))
