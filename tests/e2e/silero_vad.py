"""silero-vad (the ONNX model in the silero-vad package on PyPI), compiled once by kiln and
run as a stateful streaming model: 20 consecutive 512-sample chunks at 16 kHz, the state each
call returns fed to the next, against ONNX Runtime doing the same (acceptance 1 of the
control-flow issue). The model's If picks the 16 kHz or 8 kHz network by its `sr` input; the
8 kHz branch cannot run on 512-sample chunks, which the compiled code reports if asked to.

    silero_vad.py KILN WORK

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
CHUNK = 512
CHUNKS = 20


def fetch_model(work):
    model = os.path.join(work, "silero_vad.onnx")
    if os.path.exists(model):
        return model
    wheels = os.path.join(work, "wheel")
    subprocess.run([sys.executable, "-m", "pip", "download", "silero-vad==6.2.3", "--no-deps", "-q", "-d", wheels],
                   check=True)
    with zipfile.ZipFile(glob.glob(os.path.join(wheels, "silero_vad-*.whl"))[0]) as z:
        with z.open("silero_vad/data/silero_vad.onnx") as src, open(model + ".part", "wb") as dst:
            dst.write(src.read())
    os.replace(model + ".part", model)
    return model


def audio():
    """Noise, then a voiced-like stretch (harmonics of 180 Hz under a 4 Hz envelope): it moves the
    detector's state from chunk to chunk, which is what carrying the state exercises."""
    rng = np.random.default_rng(0)
    t = np.arange(CHUNKS * CHUNK) / 16000
    voiced = sum(np.sin(2 * np.pi * f * t) / (k + 1) for k, f in enumerate((180, 360, 720, 1100, 2400)))
    envelope = (t > 0.25) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t))
    return (0.3 * voiced * envelope + 0.02 * rng.standard_normal(t.size)).astype(np.float32)


def run_exe(exe, folder, feeds):
    os.makedirs(folder, exist_ok=True)
    args = [exe]
    for name, value in feeds.items():
        np.save(os.path.join(folder, name + ".npy"), value)
        args += ["-i", f"{name}={os.path.join(folder, name + '.npy')}"]
    out = os.path.join(folder, "out")
    p = subprocess.run(args + ["-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {exe} exited {p.returncode}: {p.stderr.strip()}")
    return np.load(os.path.join(out, "output.npy")), np.load(os.path.join(out, "stateN.npy"))


def main():
    kiln, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    model = fetch_model(work)
    out_dir = os.path.join(work, "compiled")
    subprocess.run([kiln, "compile", model, "-o", out_dir, "--emit", "exe", "--name", "vad",
                    "--input-shape", f"input=1,{CHUNK}", "--input-shape", "state=2,1,128", "--input-shape", "sr=:i64"],
                   check=True)
    exe = os.path.join(out_dir, "vad")
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    samples = audio()
    sr = np.array(16000, np.int64)
    state_ort = np.zeros((2, 1, 128), np.float32)
    state_kiln = state_ort.copy()
    worst, probabilities = 0.0, []
    for c in range(CHUNKS):
        x = samples[c * CHUNK:(c + 1) * CHUNK][None, :]
        prob_ort, state_ort = session.run(None, {"input": x, "state": state_ort, "sr": sr})
        prob_kiln, state_kiln = run_exe(exe, os.path.join(work, f"chunk{c}"), {"input": x, "state": state_kiln, "sr": sr})
        # Each within 1e-4 of its scale, as every e2e comparison: max|kiln - ort| / max(1, max|ort|).
        err = max(float(np.abs(prob_kiln - prob_ort).max()),
                  float(np.abs(state_kiln - state_ort).max()) / max(1.0, float(np.abs(state_ort).max())))
        worst = max(worst, err)
        probabilities.append(float(prob_ort.ravel()[0]))
    print(f"speech probability (ORT) per chunk: {' '.join(f'{p:.3f}' for p in probabilities)}")
    print(f"max |kiln - ORT| / max(1, max|ORT|) over {CHUNKS} chunks, output and state: {worst:.2e} "
          f"(limit {TOLERANCE}); largest |state| {float(np.abs(state_ort).max()):.2f}")
    # The 8 kHz branch on a 512-sample chunk is refused at run time, by name, not run.
    folder = os.path.join(work, "sr8000")
    os.makedirs(folder, exist_ok=True)
    feeds = {"input": samples[None, :CHUNK], "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(8000, np.int64)}
    args = [exe]
    for name, value in feeds.items():
        np.save(os.path.join(folder, name + ".npy"), value)
        args += ["-i", f"{name}={os.path.join(folder, name + '.npy')}"]
    p = subprocess.run(args + ["-o", os.path.join(folder, "out")], capture_output=True, text=True)
    refused = p.returncode != 0 and "cannot run on these input shapes" in p.stderr
    print(f"sr=8000 on {CHUNK} samples: exit {p.returncode}: {p.stderr.strip()[:200]}")
    if worst > TOLERANCE or not refused:
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
