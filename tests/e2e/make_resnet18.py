#!/usr/bin/env python3
"""Export torchvision's ResNet-18 (random weights) with an input and PyTorch's output.

    .venv/bin/python tests/e2e/make_resnet18.py OUTDIR

Writes OUTDIR/model.onnx (opset 13, static shapes, batch 1), OUTDIR/input_0.npy
(float32 [1,3,224,224], seeded) and OUTDIR/expected_0.npy (float32 [1,1000],
from PyTorch). Deterministic. The model is ~45 MB: write it outside the
repository (it is not committed). Needs torch and torchvision
(scripts/setup.sh --with-torch). If onnxruntime is importable, the export is
also checked against it (a report line, not part of the reference).

BatchNorm is folded into Conv by the exporter. With random weights many folded
Conv biases are equal, and the exporter deduplicates them into Identity nodes:
ops are Conv x20, Relu x17, Identity x16, Add x8, MaxPool, GlobalAveragePool,
Flatten, Gemm. Takes about 3 s on 2 cores.
"""
import io
import os
import sys
import time
from pathlib import Path

import numpy as np


def save_npy(path: Path, a: np.ndarray) -> None:
    np.save(path, np.ascontiguousarray(a), allow_pickle=False)


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()

    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = np.random.RandomState(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()

    buf = io.BytesIO()
    torch.onnx.export(model, (torch.from_numpy(x),), buf, opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      do_constant_folding=True, dynamic_axes=None)
    data = buf.getvalue()

    # Write to temporary names, then rename, so a failure leaves nothing half-written.
    files = {"model.onnx": data}
    for name, payload in files.items():
        tmp = out / f".{name}.tmp"
        tmp.write_bytes(payload)
        os.replace(tmp, out / name)
    for name, arr in (("input_0.npy", x), ("expected_0.npy", y)):
        tmp = out / f".{name}.tmp.npy"
        save_npy(tmp, arr)
        os.replace(tmp, out / name)

    msg = (f"make_resnet18.py: wrote {out}/model.onnx ({len(data) / 1e6:.1f} MB), "
           f"input_0.npy {list(x.shape)}, expected_0.npy {list(y.shape)} "
           f"(|y| max {np.abs(y).max():.3g})")
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    if ort is not None:
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        (z,) = sess.run(None, {"input": x})
        scale = max(1.0, float(np.abs(y).max()))
        err = float(np.abs(z.astype(np.float64) - y).max()) / scale
        msg += f"; onnxruntime agrees to {err:.1e} (relative to scale)"
    print(msg + f" in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
