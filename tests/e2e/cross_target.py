"""kiln compile --target for another architecture: every bundled model (models/*/model.onnx
with expected_0.npy) compiled for TRIPLE and for this machine (--target x86_64-linux-gnu), the
TRIPLE executable run under qemu-user; its outputs must match this machine's executable within
1e-5 of each output's scale (max |expected|), and the stored reference outputs within 1e-4 as
e2e_model_test asks of the native build. One model is also built as static and shared
libraries, each linked into tests/e2e/run_library.c by TRIPLE-gcc and run, and models/digits
in static int8 (the int8 kernels' portable paths) must match this machine's int8 build too.
The --target and --cpu errors must be one clear line, a non-zero exit and no output directory.

  cross_target.py KILN TRIPLE WORK_DIR

Needs TRIPLE-g++ and qemu-ARCH (scripts/setup.sh installs them for aarch64-linux-gnu).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "x86_64-linux-gnu"
ELF_MACHINE = {"x86_64-linux-gnu": 62, "aarch64-linux-gnu": 183}  # e_machine: EM_X86_64, EM_AARCH64
LIBRARY_MODEL = "mlp"  # the one built as libraries too

failures = []


def check(ok, message):
    print(("ok:   " if ok else "FAIL: ") + message, flush=True)
    if not ok:
        failures.append(message)


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def elf_machine(path):
    with open(path, "rb") as f:
        header = f.read(20)
    return int.from_bytes(header[18:20], "little") if header[:4] == b"\x7fELF" else None


def within(actual, reference, rel):
    """(ok, max abs error, tolerance): max |actual - reference| <= rel * max |reference|."""
    if actual.dtype != reference.dtype or actual.shape != reference.shape:
        return False, float("inf"), 0.0
    a, r = actual.astype(np.float64), reference.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(r)
    diff = np.where(both_nan, 0.0, np.abs(a - r))
    err = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff))) if diff.size else 0.0
    scale = float(np.nanmax(np.abs(r))) if r.size else 0.0
    tol = rel * scale if scale > 0 else 1e-7
    return err <= tol, err, tol


def file_name(output):
    """The executable's file name for an output (kiln/rt/sanitize.h)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", output) + ".npy"


def sample_models():
    dirs = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(REPO, "models", "*", "model.onnx")))
    return [d for d in dirs if os.path.exists(os.path.join(d, "expected_0.npy"))]


def inputs_of(model_dir):
    n = len(glob.glob(os.path.join(model_dir, "input_*.npy")))
    return [os.path.join(model_dir, f"input_{k}.npy") for k in range(n)]


def compile_model(kiln, model_dir, out, target, emit="exe"):
    name = os.path.basename(model_dir)
    return run([kiln, "compile", os.path.join(model_dir, "model.onnx"), "-o", out, "--name", name, "--emit", emit,
                "--target", target])


def check_model(kiln, triple, emulator, model_dir, work):
    name = os.path.basename(model_dir)
    inputs = inputs_of(model_dir)
    outputs = [o.name for o in onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False).graph.output]
    emit = "exe,lib,shared,source" if name == LIBRARY_MODEL else "exe"
    results = {}
    for target in (HOST, triple):
        out = os.path.join(work, name, target)
        t0 = time.monotonic()
        p = compile_model(kiln, model_dir, out, target, emit if target == triple else "exe")
        check(p.returncode == 0, f"{name}: kiln compile --target {target} ({time.monotonic() - t0:.1f} s)"
              + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stderr}"))
        if p.returncode != 0:
            return
        exe = os.path.join(out, name)
        check(elf_machine(exe) == ELF_MACHINE[target], f"{name}: the executable is an ELF file for {target}")
        result = os.path.join(out, "result")
        t0 = time.monotonic()
        p = run((emulator if target == triple else []) + [exe, *inputs, "-o", result])
        check(p.returncode == 0, f"{name}: the {target} executable runs ({time.monotonic() - t0:.1f} s)"
              + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stdout}{p.stderr}"))
        if p.returncode != 0:
            return
        results[target] = [np.load(os.path.join(result, file_name(o))) for o in outputs]

    for k, output in enumerate(outputs):
        cross, native = results[triple][k], results[HOST][k]
        ok, err, tol = within(cross, native, 1e-5)
        check(ok, f"{name} output {k} '{output}': {triple} matches {HOST} "
              f"(max abs difference {err:.3g}, tolerance {tol:.3g})")
        expected = np.load(os.path.join(model_dir, f"expected_{k}.npy"))
        ok, err, tol = within(cross, expected, 1e-4)
        check(ok, f"{name} output {k} '{output}': {triple} matches the reference "
              f"(max abs error {err:.3g}, tolerance {tol:.3g})")

    if name == LIBRARY_MODEL:
        check_libraries(triple, emulator, model_dir, os.path.join(work, name, triple), outputs, inputs)


def check_libraries(triple, emulator, model_dir, out, outputs, inputs):
    """libNAME.a and libNAME.so, linked into run_library.c by TRIPLE-gcc, under the emulator."""
    name = os.path.basename(model_dir)
    for f in (f"lib{name}.a", f"lib{name}.so", f"{name}.h", os.path.join("src", "CMakeLists.txt")):
        check(os.path.exists(os.path.join(out, f)), f"{name}: --target {triple} wrote {f}")
    check(elf_machine(os.path.join(out, f"lib{name}.so")) == ELF_MACHINE[triple],
          f"{name}: lib{name}.so is an ELF file for {triple}")
    c_flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", out, f"-DKILN_MODEL={name}",
               f'-DKILN_MODEL_HEADER="{name}.h"', os.path.join(REPO, "tests", "e2e", "run_library.c")]
    links = {"static": [os.path.join(out, f"lib{name}.a"), "-lstdc++", "-lm", "-pthread"],
             "shared": ["-L", out, f"-l{name}", f"-Wl,-rpath,{out}"]}
    for kind, link in links.items():
        program, result = os.path.join(out, f"run_{kind}"), os.path.join(out, f"{kind}_out")
        p = run([f"{triple}-gcc", *c_flags, *link, "-o", program])
        check(p.returncode == 0, f"{name}: a C program links the {kind} library with {triple}-gcc"
              + ("" if p.returncode == 0 else f"\n{p.stderr}"))
        if p.returncode != 0:
            continue
        os.makedirs(result)
        p = run(emulator + [program, result, *inputs])
        check(p.returncode == 0, f"{name}: the C program runs the {kind} library"
              + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stdout}{p.stderr}"))
        if p.returncode != 0:
            continue
        for k, output in enumerate(outputs):
            ok, err, tol = within(np.load(os.path.join(result, f"output_{k}.npy")),
                                  np.load(os.path.join(model_dir, f"expected_{k}.npy")), 1e-4)
            check(ok, f"{name} output {k} '{output}' from the {kind} library matches the reference "
                  f"(max abs error {err:.3g}, tolerance {tol:.3g})")


def check_int8(kiln, triple, emulator, work):
    """models/digits in static int8, on 8 of its test images, against this machine's int8 build."""
    digits = os.path.join(REPO, "models", "digits")
    images = np.load(os.path.join(digits, "test_x.npy"))[:8]
    results = {}
    for target in (HOST, triple):
        out = os.path.join(work, "digits_int8", target)
        p = run([kiln, "compile", os.path.join(digits, "model.onnx"), "-o", out, "--name", "digits", "--emit", "exe",
                 "--dim", "batch=1", "--precision", "int8", "--calibration", os.path.join(digits, "calibration"),
                 "--target", target])
        check(p.returncode == 0, f"digits int8: kiln compile --target {target}"
              + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stderr}"))
        if p.returncode != 0:
            return
        logits = []
        for i, image in enumerate(images):
            x, result = os.path.join(out, f"image_{i}.npy"), os.path.join(out, f"result_{i}")
            np.save(x, image[None])
            p = run((emulator if target == triple else []) + [os.path.join(out, "digits"), x, "-o", result])
            if p.returncode != 0:
                check(False, f"digits int8: the {target} executable runs: exit {p.returncode}\n{p.stdout}{p.stderr}")
                return
            logits.append(np.load(os.path.join(result, file_name("logits"))))
        results[target] = np.stack(logits)
    ok, err, tol = within(results[triple], results[HOST], 1e-5)
    check(ok, f"digits int8 logits of {len(images)} images: {triple} matches {HOST} "
          f"(max abs difference {err:.3g}, tolerance {tol:.3g})")


def check_errors(kiln, triple, work):
    """Each refusal: one line naming what is wrong, a non-zero exit, no output directory."""
    model = os.path.join(REPO, "models", "mlp", "model.onnx")
    cases = [
        (["--target", "riscv64-linux-gnu"], {},
         "--target riscv64-linux-gnu: unknown target (known: x86_64-linux-gnu, aarch64-linux-gnu)"),
        (["--target", triple, "--cpu", "native"], {}, f"--cpu native: {triple} is not this machine's architecture"),
        (["--target", triple, "--cpu", "x86-64-v3"], {}, f"--cpu x86-64-v3: not a CPU of {triple} (expected generic)"),
        (["--target", HOST, "--cpu", "armv8-a"], {},
         f"--cpu armv8-a: not a CPU of {HOST} (expected generic, native, x86-64-v2, x86-64-v3)"),
        (["--target", triple, "--verify-against", "onnxruntime"], {},
         f"--verify-against runs the executable, which --target {triple} builds for another machine"),
        (["--target", triple], {"PATH": os.path.join(work, "empty-path")},
         f"--target {triple}: its C++ compiler '{triple}-g++' is not installed "
         f"(on Debian: apt-get install g++-{triple.replace('_', '-')})"),
    ]
    os.makedirs(os.path.join(work, "empty-path"), exist_ok=True)
    for k, (args, env, message) in enumerate(cases):
        out = os.path.join(work, f"error{k}")
        p = run([kiln, "compile", model, "-o", out, *args], env={**os.environ, **env})
        lines = p.stderr.splitlines()
        check(p.returncode != 0 and len(lines) == 1 and message in lines[0] and not os.path.exists(out),
              f"kiln compile {' '.join(args)}{' (no cross compiler on PATH)' if env else ''}: exit {p.returncode}, "
              f"no output, stderr '{p.stderr.strip()}'")


def main():
    kiln, triple, work = sys.argv[1], sys.argv[2], sys.argv[3]
    arch = triple.split("-")[0]
    missing = [t for t in (f"{triple}-g++", f"{triple}-gcc", f"qemu-{arch}") if shutil.which(t) is None]
    if missing:
        sys.exit(f"FAIL: {', '.join(missing)} not installed; run: bash scripts/setup.sh")
    emulator = [f"qemu-{arch}", "-L", f"/usr/{triple}"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    start = time.monotonic()
    check_errors(kiln, triple, work)
    for model_dir in sample_models():
        check_model(kiln, triple, emulator, model_dir, work)
    check_int8(kiln, triple, emulator, work)
    print(f"{len(sample_models())} models and digits in int8 in {time.monotonic() - start:.0f} s")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    shutil.rmtree(work)
    print("all checks passed")


if __name__ == "__main__":
    main()
