"""PP-OCR's three models from the rapidocr_onnxruntime package on PyPI, each compiled once with
bounded dims and run at three input sizes against ONNX Runtime (acceptance 2 of the
control-flow and dynamic-shapes issue):

- cls, the text-direction classifier (input [?, 3, ?, ?]; rapidocr feeds it 48x192 crops):
  a bounded batch, --input-shape x=1..8,3,48,192, run at batches 1, 3 and 8 (its convolutions,
  pools and channel-blocked layout run item by item over the batch);
- det, the text detector (input [?, 3, ?, ?]): height and width bounded in steps of 32,
  --input-shape x=1,3,32..960:32,32..960:32, so that each of its five stride-2 stages halves a
  polynomial exactly (32 * "H/32" -> 16 * "H/32" ...), up-sampled again by Resize and
  ConvTranspose; run at 64x96, 320x480 and 960x640;
- rec, the text recognizer (input [?, 3, ?, ?], 48 pixels high): the width bounded in steps of
  8, --input-shape x=1,3,48,8..1280:8, its sequence (width / 8) flowing through reshapes,
  attention and the CTC head; run at widths 40, 320 and 1280.

Each also checks that a shape outside the bounds (a batch of 9, a height of 100, a width of
1284) is refused naming the input and the bounds.

    ppocr.py cls|det|rec KILN WORK

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
MODELS = {
    "cls": "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
    "det": "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
    "rec": "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
}
# The compile-time shape, three shapes within it, one outside it, and what the refusal names.
CASES = {
    "cls": ("x=1..8,3,48,192", [(1, 3, 48, 192), (3, 3, 48, 192), (8, 3, 48, 192)], (9, 3, 48, 192),
            "[1..8,3,48,192]"),
    "det": ("x=1,3,32..960:32,32..960:32", [(1, 3, 64, 96), (1, 3, 320, 480), (1, 3, 960, 640)], (1, 3, 100, 96),
            "[1,3,32..960:32,32..960:32]"),
    "rec": ("x=1,3,48,8..1280:8", [(1, 3, 48, 40), (1, 3, 48, 320), (1, 3, 48, 1280)], (1, 3, 48, 1284),
            "[1,3,48,8..1280:8]"),
}


def fetch_model(work, which):
    model = os.path.join(work, f"{which}.onnx")
    if os.path.exists(model):
        return model
    wheels = os.path.join(work, "wheel")
    if not glob.glob(os.path.join(wheels, "rapidocr_onnxruntime-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "rapidocr_onnxruntime==1.4.4", "--no-deps", "-q", "-d",
                        wheels], check=True)
    with zipfile.ZipFile(glob.glob(os.path.join(wheels, "rapidocr_onnxruntime-*.whl"))[0]) as z:
        with z.open(MODELS[which]) as src, open(model + ".part", "wb") as dst:
            dst.write(src.read())
    os.replace(model + ".part", model)
    return model


def main():
    which, kiln, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    model = fetch_model(work, which)
    input_shape, shapes, outside, bounds = CASES[which]
    out_dir = os.path.join(work, f"compiled_{which}")
    subprocess.run([kiln, "compile", model, "-o", out_dir, "--emit", "exe", "--name", which, "--input-shape",
                    input_shape], check=True)
    exe = os.path.join(out_dir, which)
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    ok = True
    for shape in shapes:
        x = rng.random(shape).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        folder = os.path.join(work, f"{which}_{'x'.join(map(str, shape))}")
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "x.npy"), x)
        p = subprocess.run([exe, "-i", f"x={os.path.join(folder, 'x.npy')}", "-o", os.path.join(folder, "out")],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {shape}: the executable exited {p.returncode}: {p.stderr.strip()[:300]}")
            ok = False
            continue
        (got_path,) = glob.glob(os.path.join(folder, "out", "*.npy"))
        got = np.load(got_path)
        if got.shape != want.shape:
            print(f"FAIL {shape}: output shape {got.shape}, ONNX Runtime's {want.shape}")
            ok = False
            continue
        err = float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))
        print(f"{'ok  ' if err <= TOLERANCE else 'FAIL'} {which} {shape}: max |kiln - ORT| / scale {err:.2e}")
        ok = ok and err <= TOLERANCE
    # Outside the bounds: refused, naming the input and the bounds.
    x = rng.random(outside).astype(np.float32)
    np.save(os.path.join(work, f"{which}_outside.npy"), x)
    p = subprocess.run([exe, "-i", f"x={os.path.join(work, f'{which}_outside.npy')}"], capture_output=True, text=True)
    refused = p.returncode != 0 and "'x'" in p.stderr and bounds in p.stderr
    print(f"{outside}: exit {p.returncode}: {p.stderr.strip()[:200]}")
    if not ok or not refused:
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
