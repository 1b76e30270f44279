"""PP-OCR's text-direction classifier (ch_ppocr_mobile_v2.0_cls_infer.onnx, from the
rapidocr_onnxruntime package on PyPI; input [?, 3, ?, ?], rapidocr feeds it 48x192 crops),
compiled once for a bounded batch (--input-shape x=1..8,3,48,192) and run at batches 1, 3 and 8
against ONNX Runtime (acceptance 2 of the control-flow issue, the classifier's part: its
convolutions, pools and channel-blocked layout run item by item over the batch).

    ppocr_cls.py KILN WORK

The wheel is downloaded into WORK once (pip download, no dependencies) and reused.
"""
import glob
import os
import subprocess
import sys
import zipfile

import numpy as np
import onnxruntime as ort

TOLERANCE = 1e-4
MODEL = "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"


def fetch_model(work):
    model = os.path.join(work, "cls.onnx")
    if os.path.exists(model):
        return model
    wheels = os.path.join(work, "wheel")
    subprocess.run([sys.executable, "-m", "pip", "download", "rapidocr_onnxruntime==1.4.4", "--no-deps", "-q", "-d",
                    wheels], check=True)
    with zipfile.ZipFile(glob.glob(os.path.join(wheels, "rapidocr_onnxruntime-*.whl"))[0]) as z:
        with z.open(MODEL) as src, open(model + ".part", "wb") as dst:
            dst.write(src.read())
    os.replace(model + ".part", model)
    return model


def main():
    kiln, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    model = fetch_model(work)
    out_dir = os.path.join(work, "compiled")
    subprocess.run([kiln, "compile", model, "-o", out_dir, "--emit", "exe", "--name", "cls",
                    "--input-shape", "x=1..8,3,48,192"], check=True)
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    ok = True
    for batch in (1, 3, 8):
        x = rng.standard_normal((batch, 3, 48, 192)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        folder = os.path.join(work, f"batch{batch}")
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "x.npy"), x)
        p = subprocess.run([os.path.join(out_dir, "cls"), "-i", f"x={os.path.join(folder, 'x.npy')}",
                            "-o", os.path.join(folder, "out")], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL batch {batch}: the executable exited {p.returncode}: {p.stderr.strip()[:300]}")
            ok = False
            continue
        (got_path,) = glob.glob(os.path.join(folder, "out", "*.npy"))
        got = np.load(got_path)
        if got.shape != want.shape:
            print(f"FAIL batch {batch}: shape {got.shape}, ONNX Runtime's {want.shape}")
            ok = False
            continue
        err = float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))
        print(f"{'ok  ' if err <= TOLERANCE else 'FAIL'} batch {batch}: max |kiln - ORT| / scale {err:.2e}")
        ok = ok and err <= TOLERANCE
    # Outside the bounds: refused, naming the input, the dim and the bounds.
    x = rng.standard_normal((9, 3, 48, 192)).astype(np.float32)
    np.save(os.path.join(work, "x9.npy"), x)
    p = subprocess.run([os.path.join(out_dir, "cls"), "-i", f"x={os.path.join(work, 'x9.npy')}"], capture_output=True,
                       text=True)
    refused = p.returncode != 0 and "x" in p.stderr and "1..8" in p.stderr
    print(f"batch 9: exit {p.returncode}: {p.stderr.strip()[:200]}")
    if not ok or not refused:
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
