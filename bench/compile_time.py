"""Compile time through the LLVM backend against the C++ backend, the runtime already cached.

    python bench/compile_time.py [--model resnet50] [--emit obj] [--rounds 5] [--kiln build/bin/kiln]
                                 [--out build/bench/compile_time]

Generates the model (bench/models.py, batch 1), compiles it once per backend to warm the
runtime cache, then alternates `kiln compile --backend cpp` and `--backend llvm` (same --emit)
for --rounds rounds and reports, per backend, the median wall time of the whole command and
of its phases (`-v`: import, optimize, codegen, write, build), and the ratio cpp / llvm. The two
builds' executables must give bit-identical outputs (checked when exe is emitted). Not a test:
nothing fails on a figure.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: models, machine)

PHASES = ("import", "optimize", "codegen", "write", "build")


def compile_once(kiln, model, out, backend, emit):
    t0 = time.monotonic()
    c = subprocess.run([kiln, "compile", model, "-o", out, "--backend", backend, "--emit", emit, "-v"],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if c.returncode != 0:
        raise SystemExit(f"kiln compile --backend {backend} failed:\n{c.stderr[-2000:]}")
    phases = {m.group(1): float(m.group(2)) / 1000 for m in re.finditer(r"^kiln: (\w+) +([\d.]+) ms$", c.stderr, re.M)}
    return wall, phases


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="resnet50", help="a bench/models.py model")
    p.add_argument("--emit", default="obj", help="what both backends write (obj, exe, lib)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--kiln", default=os.path.join(B.REPO, "build", "bin", "kiln"))
    p.add_argument("--python", default=sys.executable, help="the Python that runs bench/models.py")
    p.add_argument("--out", default=os.path.join(B.REPO, "build", "bench", "compile_time"))
    a = p.parse_args()
    models_dir = os.path.join(a.out, "models")
    manifest = B.generate_models(a.python, models_dir, [1], [a.model])
    entry = next(e for e in manifest.values() if e["model"] == a.model and e["batch"] in (1, None))
    model = os.path.join(models_dir, entry["file"])
    B.log(f"warming the runtime cache ({a.model})")
    for backend in ("cpp", "llvm"):
        compile_once(a.kiln, model, os.path.join(a.out, backend), backend, a.emit)
    times = {"cpp": [], "llvm": []}
    phases = {"cpp": {k: [] for k in PHASES}, "llvm": {k: [] for k in PHASES}}
    for r in range(a.rounds):
        for backend in (("cpp", "llvm") if r % 2 == 0 else ("llvm", "cpp")):
            wall, ph = compile_once(a.kiln, model, os.path.join(a.out, backend), backend, a.emit)
            times[backend].append(wall)
            for k in PHASES:
                phases[backend][k].append(ph.get(k, 0.0))
    if "exe" in a.emit.split(","):
        name = os.path.splitext(os.path.basename(model))[0]
        outs = []
        for backend in ("cpp", "llvm"):
            res = os.path.join(a.out, backend, "result")
            inputs = [os.path.join(models_dir, i["file"]) for i in entry["inputs"]]
            subprocess.run([os.path.join(a.out, backend, name), *inputs, "-o", res], check=True, capture_output=True)
            outs.append(b"".join(open(os.path.join(res, f), "rb").read() for f in sorted(os.listdir(res))))
        B.log("outputs bit-identical" if outs[0] == outs[1] else "OUTPUTS DIFFER")
    m = B.machine()
    print(f"\nmachine: {m['cpu']}, {m['cores']} cores; {B.isa_flags()}")
    print(f"kiln compile {a.model} --emit {a.emit}, runtime cached; median of {a.rounds} alternating rounds (s)\n")
    print("| backend | total | " + " | ".join(PHASES) + " |")
    print("|---|--:|" + "--:|" * len(PHASES))
    for backend in ("cpp", "llvm"):
        cells = [f"{statistics.median(phases[backend][k]):.2f}" for k in PHASES]
        print(f"| {backend} | {statistics.median(times[backend]):.2f} | " + " | ".join(cells) + " |")
    ratio = statistics.median(times["cpp"]) / statistics.median(times["llvm"])
    gen = {b: statistics.median([c + w + d for c, w, d in zip(phases[b]["codegen"], phases[b]["write"], phases[b]["build"])])
           for b in ("cpp", "llvm")}
    print(f"\ncpp / llvm: {ratio:.2f}x for the whole command; {gen['cpp'] / gen['llvm']:.2f}x for codegen + write + build")


if __name__ == "__main__":
    main()
