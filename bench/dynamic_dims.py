"""One compile with bounded dims against compiles pinned to each size.

    python bench/dynamic_dims.py [--model bert|ppocr-det|ppocr-rec] [--out build/bench/dynamic]
                                 [--sizes ...] [--rounds 5] [--runs 20]
                                 [--hidden 256] [--ffn 1024] [--layers 4]   (bert only)

- bert (the default): a BERT-shaped encoder with a symbolic sequence length
  (models/dynamic/make_dynamic_models.py with these sizes, random weights), compiled once with
  `--dim seq=1..MAX` and once per length with `--dim seq=SIZE`; sizes 16,64,256.
- ppocr-det, ppocr-rec: PP-OCRv4's text detector and recognizer from the rapidocr_onnxruntime
  wheel on PyPI (downloaded into OUT once), compiled once with
  `--input-shape x=1,3,32..960:32,32..960:32` (det; sizes HxW, default 320x320,640x640,960x960)
  or `x=1,3,48,8..1280:8` (rec; widths, default 80,320,1280) and once per size pinned.

Each compiled output is checked against ONNX Runtime on the same input, then the bounded and
the pinned executable are timed at each size in alternating rounds (one thread, 2 warm-up runs
each). The figure is the median over rounds of each round's median; `paired` is the median of
each round's own ratio.

Not a test: nothing fails on a timing. Prints the CPU and its AVX-512 extensions.
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: timing, machine)

REPO = B.REPO
PPOCR = {"ppocr-det": "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
         "ppocr-rec": "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"}


def bert_cases(a):
    """The encoder, its bounded and pinned compile options, and each size's inputs and reference."""
    sizes = [int(s) for s in (a.sizes or "16,64,256").split(",")]
    model_dir = os.path.join(a.out, "bert")
    B.run([a.python, os.path.join(REPO, "models", "dynamic", "make_dynamic_models.py"), "--model", "bert_seq",
           "--out", model_dir, "--hidden", str(a.hidden), "--ffn", str(a.ffn), "--layers", str(a.layers),
           "--sizes", ",".join(map(str, sizes))])
    cases = []
    for s in sizes:
        cases.append((f"seq {s}", ["--dim", f"seq={s}"],
                      {"x": f"{model_dir}/input_{s}_0.npy", "mask": f"{model_dir}/input_{s}_1.npy"},
                      np.load(f"{model_dir}/expected_{s}_0.npy")))
    desc = f"BERT-shaped encoder: hidden {a.hidden}, ffn {a.ffn}, {a.layers} layers"
    return os.path.join(model_dir, "model.onnx"), ["--dim", f"seq=1..{max(sizes)}"], cases, desc


def ppocr_cases(a):
    """PP-OCR's detector or recognizer from PyPI, as bert_cases."""
    work = os.path.join(a.out, "ppocr")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, a.model + ".onnx")
    if not os.path.exists(model):
        wheels = os.path.join(work, "wheel")
        if not glob.glob(os.path.join(wheels, "rapidocr_onnxruntime-*.whl")):
            B.run([a.python, "-m", "pip", "download", "rapidocr_onnxruntime==1.4.4", "--no-deps", "-q", "-d", wheels])
        with zipfile.ZipFile(glob.glob(os.path.join(wheels, "rapidocr_onnxruntime-*.whl"))[0]) as z:
            with z.open(PPOCR[a.model]) as src, open(model, "wb") as dst:
                dst.write(src.read())
    if a.model == "ppocr-det":
        shapes = [tuple(int(v) for v in s.split("x")) for s in (a.sizes or "320x320,640x640,960x960").split(",")]
        shapes = [(1, 3, h, w) for h, w in shapes]
        bounded = "x=1,3,32..960:32,32..960:32"
    else:
        shapes = [(1, 3, 48, int(w)) for w in (a.sizes or "80,320,1280").split(",")]
        bounded = "x=1,3,48,8..1280:8"
    import onnxruntime as ort
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    cases = []
    for shape in shapes:
        x = rng.random(shape).astype(np.float32)
        path = os.path.join(work, f"{a.model}_{'x'.join(map(str, shape))}.npy")
        np.save(path, x)
        cases.append(("x".join(map(str, shape[2:])), ["--input-shape", "x=" + ",".join(map(str, shape))],
                      {"x": path}, session.run(None, {"x": x})[0]))
    return model, ["--input-shape", bounded], cases, f"PP-OCRv4 {a.model[6:]} ({bounded})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["bert", "ppocr-det", "ppocr-rec"], default="bert")
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench", "dynamic"))
    p.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    p.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"))
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--ffn", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--sizes", default="", help="bert: lengths; ppocr-det: HxW,...; ppocr-rec: widths")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=20)
    a = p.parse_args()
    model, bounded_args, cases, desc = bert_cases(a) if a.model == "bert" else ppocr_cases(a)

    def compile_exe(name, args):
        out = os.path.join(a.out, a.model, name)
        B.log(f"compiling {name} ({' '.join(args)})")
        B.run([a.kiln, "compile", model, *args, "--name", "m", "-o", out])
        return os.path.join(out, "m")

    bounded = compile_exe("bounded", bounded_args)
    rows = []
    for k, (label, pin_args, inputs, ref) in enumerate(cases):
        pinned = compile_exe(f"pinned{k}", pin_args)
        in_args = [arg for name, path in inputs.items() for arg in ("-i", f"{name}={path}")]
        for exe in (bounded, pinned):
            res = os.path.join(a.out, a.model, "check")
            B.run([exe, *in_args, "-o", res])
            (out_file,) = glob.glob(os.path.join(res, "*.npy"))
            got = np.load(out_file)
            err = float(np.max(np.abs(got - ref))) / max(1.0, float(np.max(np.abs(ref))))
            if got.shape != ref.shape or err > 1e-4:
                raise SystemExit(f"{exe} at {label}: differs from ONNX Runtime ({got.shape}, {err:.3g} of the scale)")
            os.remove(out_file)
        b_ms, p_ms = [], []
        for _ in range(a.rounds):
            b_ms.append(B.time_kiln(bounded, in_args, 1, a.runs)[0])
            p_ms.append(B.time_kiln(pinned, in_args, 1, a.runs)[0])
        rows.append((label, statistics.median(b_ms), statistics.median(p_ms),
                     statistics.median(b / q for b, q in zip(b_ms, p_ms))))
    m = B.machine()
    print(f"\nmachine: {m['cpu']}, {m['cores']} cores; {B.isa_flags()}")
    print(f"{desc}; one thread; median of {a.rounds} rounds x {a.runs} runs")
    print(f"| size | bounded ({' '.join(bounded_args)}) ms | pinned ms | bounded/pinned | paired |")
    print("|---|--:|--:|--:|--:|")
    for label, b, q, r in rows:
        print(f"| {label} | {b:.3f} | {q:.3f} | {b / q:.2f} | {r:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
