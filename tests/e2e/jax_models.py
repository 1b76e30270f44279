"""JAX models (StableHLO text, jax.export artifacts, a jax2tf SavedModel; models/jax/) compiled by
kiln and compared with JAX's own outputs.

    jax_models.py KILN WORK MODEL_DIR [MODEL_DIR ...] [--no-compile]

Each MODEL_DIR holds model.mlir (or model.jax_exported, a jax.export serialized artifact, or
saved_model/, a jax2tf SavedModel), input_K.npy, expected_K.npy and, where the weights are
arguments of @main, params.npz (given with --params). For each: `kiln run` (the interpreter)
and the compiled executable (`kiln compile --emit exe`), every output within 1e-4 of the
reference's scale, max|kiln - jax| <= 1e-4 * max(1, max|jax|), as tests/e2e/torch_models.py
checks PyTorch's models. --no-compile (or KILN_TORCH_MODELS_NO_COMPILE=1) runs the interpreter
only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import check_run_and_exe, main  # noqa: E402


def check_model(kiln, folder, work, compile_too):
    params = os.path.join(folder, "params.npz")
    extra = ["--params", params] if os.path.exists(params) else []
    model = os.path.join(folder, "model.mlir")
    for other in ("model.jax_exported", "saved_model"):  # a jax.export artifact, a jax2tf SavedModel
        if not os.path.exists(model):
            model = os.path.join(folder, other)
    return check_run_and_exe(kiln, folder, work, model, extra, compile_too)


if __name__ == "__main__":
    sys.exit(main(check_model))
