"""The CUDA backend (kiln compile --target cuda) on every sample model of models/.

    cuda_backend.py KILN WORK --runtime-lib LIBKILN_RT [--archs 80,90] [--only NAME,...]

For each sample (ONNX, TorchScript, torch.export, StableHLO, TensorFlow): kiln generates
CUDA C++ for it and builds the executable with nvcc for the given GPU architectures (SASS for
each, default sm_80 and sm_90), linked against cuBLAS. Then, with no GPU on the machine, the
executable must fail cleanly ("no CUDA device", exit 1); with one, its outputs must match the
sample's expected outputs (the framework's) within 1e-4 of their scale.

Every sample's generated code also runs on the CPU emulation of CUDA and cuBLAS
(tests/cuda_emu, tests/e2e/cuda_emulate.py), GPU or not: its kernels' indexing, its cuBLAS
arguments (checked against loops written from cuBLAS's documentation) and its host/device copies
must give the expected outputs within the same tolerance.

The placement of nodes is checked too: models/cnn runs wholly on the GPU and is captured as a
CUDA Graph; a model with control flow keeps its loop on the host, copies its inputs back first
and is not captured; a bounded (--dim) model runs its symbolic nodes on the host.

Skips (exit 77) without nvcc: set $KILN_CUDA_HOME or put the CUDA toolkit on PATH.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf_models import model_args as tf_model_args  # noqa: E402
from torch_models import compare, input_files, shapes_args  # noqa: E402
import cuda_emulate  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOLERANCE = 1e-4
# The sanitized run (scripts/test_sanitized.sh, KILN_EXTRA_CXXFLAGS set) checks kiln's side only:
# the CUDA sources of every sample, not their nvcc builds, which the plain run makes.
SOURCE_ONLY = bool(os.environ.get("KILN_EXTRA_CXXFLAGS"))
# The samples the sanitized run also builds and runs on the emulation (each op family once).
SANITIZED_EMULATED = {"cnn", "transformer", "ops_mix", "recurrent", "control_flow/loop_fixed", "tensorflow/embedding"}


def have_nvcc():
    if os.environ.get("KILN_CUDA_HOME"):
        return os.path.exists(os.path.join(os.environ["KILN_CUDA_HOME"], "bin", "nvcc"))
    return shutil.which("nvcc") is not None or os.path.exists("/usr/local/cuda/bin/nvcc")


def have_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def samples():
    """(name, folder, model, options) for every sample of models/."""
    found = []
    for model in sorted(glob.glob(os.path.join(REPO, "models", "**", "model.*"), recursive=True)):
        folder = os.path.dirname(model)
        if "/tensorflow/" in model or not model.endswith((".onnx", ".pt", ".pt2", ".mlir")):
            continue
        name = os.path.relpath(folder, os.path.join(REPO, "models"))
        options = []
        if model.endswith(".pt"):
            options = shapes_args(input_files(folder))
        params = os.path.join(folder, "params.npz")
        if model.endswith(".mlir") and os.path.exists(params):
            options = ["--params", params]
        found.append((name, folder, model, options))
    for folder in sorted(glob.glob(os.path.join(REPO, "models", "tensorflow", "*", ""))):
        if not (os.path.exists(os.path.join(folder, "saved_model")) or os.path.exists(os.path.join(folder, "frozen.pb"))
                or os.path.exists(os.path.join(folder, "model.txt"))):
            continue
        model, *options = tf_model_args(folder)
        found.append((os.path.relpath(folder, os.path.join(REPO, "models")).rstrip("/"), folder, model, options))
    return found


def run(cmd, timeout=900):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def sample_set(folder, work):
    """The folder holding the sample's inputs and expected outputs as input_K.npy and
    expected_K.npy: the folder itself, or for the dynamic samples (input_SEQ_K.npy) a copy of
    their sequence-16 set."""
    if not glob.glob(os.path.join(folder, "input_16_*.npy")):
        return folder
    os.makedirs(work, exist_ok=True)
    for kind in ("input", "expected"):
        for path in glob.glob(os.path.join(folder, f"{kind}_16_*.npy")):
            shutil.copy(path, os.path.join(work, f"{kind}_{path.rsplit('_', 1)[1]}"))
    return work


BUILT = {}  # model.cu's hash -> the sample whose build compiled it (without a GPU)
BUILT_LOCK = threading.Lock()


def compile_sample(kiln, work, archs, runtime_lib, gpu, sample):
    """Generates the sample's CUDA source, builds its executable, and its emulated build
    (OUT/m_emu); returns (name, out_dir, inputs, note, problem). Without a GPU, a sample whose
    model.cu is identical to one already built (the same network from another frontend) is not
    built again: `note` names that one."""
    name, folder, model, options = sample
    out = os.path.join(work, name.replace("/", "_"))
    inputs = input_files(sample_set(folder, out + "_set"))
    cmd = [kiln, "compile", model, *options, "--target", "cuda", "--cuda-arch", archs, "--name", "m", "-o", out]
    p = run(cmd + ["--emit", "source"])
    if p.returncode != 0 and "--dim" in p.stderr + p.stdout:
        # Symbolic dims: bound to the sample's own inputs (or a batch of one).
        cmd += shapes_args(inputs) if inputs else ["--dim", "batch=1"]
        p = run(cmd + ["--emit", "source"])
    if p.returncode != 0:
        return name, out, inputs, "", f"kiln compile --target cuda failed:\n{p.stderr[-3000:]}"
    note = ""
    if not SOURCE_ONLY:
        with open(os.path.join(out, "src", "model.cu"), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        with BUILT_LOCK:
            first = BUILT.setdefault(digest, name)
        if first != name and not gpu:
            note = f"CUDA source identical to {first}'s, built once"
        else:
            p = run(cmd + ["--emit", "exe,source"])
            if p.returncode != 0:
                return name, out, inputs, "", f"kiln compile --target cuda --emit exe failed:\n{p.stderr[-3000:]}"
            if not os.path.exists(os.path.join(out, "m")):
                return name, out, inputs, "", "no executable"
    if inputs and (not SOURCE_ONLY or name in SANITIZED_EMULATED):
        problem = cuda_emulate.build(os.path.join(out, "src"), os.path.join(out, "m_emu"), runtime_lib,
                                     cache_dir=os.path.join(work, "emu-cache"))
        if problem:
            return name, out, inputs, note, f"the emulated build failed: {problem}"
    return name, out, inputs, note, ""


def name_outputs(src_dir, out_dir):
    """Renames the executable's outputs (written as SANITIZED_NAME.npy) to output_K.npy in graph
    order, which compare() reads first: the order comes from the generated metadata.cpp."""
    with open(os.path.join(src_dir, "metadata.cpp")) as f:
        text = f.read()
    block = text[text.index("k_output[] = {"):]
    block = block[:block.index("{nullptr")]
    names = [bytes(n, "utf-8").decode("unicode_escape") for n in re.findall(r'\{"((?:[^"\\]|\\.)*)", ', block)]
    for k, name in enumerate(names):
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"
        stem = {".": "_", "..": "__"}.get(stem, stem)
        path = os.path.join(out_dir, stem + ".npy")
        if os.path.exists(path):
            os.replace(path, os.path.join(out_dir, f"output_{k}.npy"))


def check_placement(kiln, work, archs):
    """The host-side plan: what runs where, what is copied, and the CUDA Graph."""
    ok = True

    def source(out):
        with open(os.path.join(out, "src", "model.cu")) as f:
            return f.read()

    out = os.path.join(work, "placement_cnn")
    p = run([kiln, "compile", os.path.join(REPO, "models", "cnn", "model.onnx"), "--target", "cuda", "--emit", "source",
             "-o", out, "-v"])
    text = source(out) if p.returncode == 0 else ""
    run_graph = text[text.find("int run_graph(model_context* ctx, const void* const* in, void* const* out) {"):]
    if "0 on the host" not in p.stderr or "kGraphable = true" not in text or "cudaMemcpyDeviceToHost" in run_graph:
        print("FAIL placement: models/cnn should run wholly on the GPU as a CUDA Graph, nothing copied to the host:\n"
              + p.stderr[-2000:])
        ok = False
    out = os.path.join(work, "placement_loop")
    loop = os.path.join(REPO, "models", "control_flow", "loop_fixed", "model.onnx")
    p = run([kiln, "compile", loop, "--target", "cuda", "--emit", "source", "-o", out, "-v"])
    text = source(out) if p.returncode == 0 else ""
    if "Loop: 1 on the host (control flow runs on the host)" not in p.stderr or "kGraphable = false" not in text:
        print("FAIL placement: a Loop should run on the host and the model not be captured:\n" + p.stderr[-2000:])
        ok = False
    out = os.path.join(work, "placement_bounded")
    bert = os.path.join(REPO, "models", "dynamic", "bert_seq", "model.onnx")
    p = run([kiln, "compile", bert, "--dim", "seq=1..256", "--target", "cuda", "--cuda-arch", archs, "--emit",
             "source", "-o", out, "-v"])
    if p.returncode != 0 or "on the host (symbolic shapes)" not in p.stderr:
        print("FAIL placement: a model bounded with --dim seq=1..256 should compile, its symbolic nodes on the host:\n"
              + p.stderr[-3000:])
        ok = False
    # Refusals with their reasons.
    for extra, message in ((["--cuda-arch", "sm_7x"], "--cuda-arch sm_7x"),
                           (["--precision", "int8"], "--precision int8 is not supported"),
                           (["--backend", "llvm"], "--target cuda writes CUDA C++")):
        p = run([kiln, "compile", os.path.join(REPO, "models", "mlp", "model.onnx"), "--target", "cuda", *extra, "-o",
                 os.path.join(work, "refused")])
        if p.returncode == 0 or message not in p.stderr:
            print(f"FAIL refusal: {' '.join(extra)} should fail naming '{message}':\n{p.stderr[-1000:]}")
            ok = False
    print(("ok" if ok else "FAIL") + " placement and refusals")
    return ok


C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "net.h"
/* Creates the model and runs it once on zeros through the C API: prints what happened. */
int main(void) {
  net_context* ctx = net_create(NULL);
  if (net_error(ctx)) {
    printf("create failed: %s\n", net_error(ctx));
    net_destroy(ctx);
    return 2;
  }
  const int64_t* d = net_input_dims(0);
  size_t n = 1;
  for (int k = 0; k < net_input_rank(0); ++k) n *= (size_t)d[k];
  const int64_t* o = net_output_dims(0);
  size_t n_out = 1;
  for (int k = 0; k < net_output_rank(0); ++k) n_out *= (size_t)o[k];
  float* in = calloc(n, sizeof(float));
  float* out = calloc(n_out, sizeof(float));
  const void* ins[] = {in};
  void* outs[] = {out};
  const int rc = net_run(ctx, ins, outs);
  printf("run: %d %s\n", rc, rc ? net_error(ctx) : "ok");
  free(in);
  free(out);
  net_destroy(ctx);
  return rc;
}
"""


def check_c_library(kiln, work, archs, gpu):
    """models/mlp as libnet.a (linked through net.pc, which names cuBLAS) and libnet.so, used from C."""
    out = os.path.join(work, "c_library")
    p = run([kiln, "compile", os.path.join(REPO, "models", "mlp", "model.onnx"), "--target", "cuda", "--cuda-arch", archs,
             "--emit", "lib,shared", "--name", "net", "-o", out])
    if p.returncode != 0:
        print(f"FAIL C library: kiln compile --emit lib,shared failed:\n{p.stderr[-2000:]}")
        return False
    program = os.path.join(out, "use.c")
    with open(program, "w") as f:
        f.write(C_PROGRAM)
    env = dict(os.environ, PKG_CONFIG_PATH=out)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "--static", "net"], capture_output=True, text=True, env=env)
    ok = True
    # The archive by path: beside libnet.so, -lnet would find the shared library.
    static = [os.path.join(out, "libnet.a") if f == "-lnet" else f for f in flags.stdout.split()]
    builds = [("static", static), ("shared", ["-I", out, os.path.join(out, "libnet.so"), f"-Wl,-rpath,{out}"])]
    for kind, link in builds:
        exe = os.path.join(out, f"use_{kind}")
        p = run(["cc", program, "-o", exe, *link])
        if p.returncode != 0:
            print(f"FAIL C library ({kind}): the C program does not link:\n{p.stderr[-2000:]}")
            ok = False
            continue
        p = run([exe])
        want = "run: 0 ok" if gpu else "create failed: no CUDA device"
        if want not in p.stdout:
            print(f"FAIL C library ({kind}): expected '{want}', got {p.returncode}: {p.stdout[-500:]}")
            ok = False
    print(("ok" if ok else "FAIL") + " C library: libnet.a through net.pc and libnet.so, from C")
    return ok


def check_fp16(kiln, work, archs, runtime_lib):
    """models/cnn and models/transformer with --precision fp16 and bf16 on the emulation: the
    narrowing kernels, half-precision weights and cublasGemmStridedBatchedEx, within 1e-2 (fp16) and
    5e-2 (bf16) of the samples' outputs' scale."""
    ok = True
    for sample in ("cnn", "transformer"):
        folder = os.path.join(REPO, "models", sample)
        for precision, tolerance in (("fp16", 1e-2), ("bf16", 5e-2)):
            out = os.path.join(work, f"{precision}_{sample}")
            p = run([kiln, "compile", os.path.join(folder, "model.onnx"), "--target", "cuda", "--precision", precision,
                     "--emit", "source", "--name", "m", "-o", out])
            problem = "" if p.returncode == 0 else f"kiln compile failed:\n{p.stderr[-2000:]}"
            if not problem:
                problem = cuda_emulate.build(os.path.join(out, "src"), os.path.join(out, "m_emu"), runtime_lib)
            got = os.path.join(out, "outputs_emulated")
            if not problem:
                p = run([os.path.join(out, "m_emu"), *input_files(folder), "-o", got])
                problem = "" if p.returncode == 0 else f"the emulated run failed: {p.stderr[-1000:]}"
            if problem:
                print(f"FAIL {sample} {precision}: {problem}")
                ok = False
                continue
            name_outputs(os.path.join(out, "src"), got)
            for k, expected in enumerate(sorted(glob.glob(os.path.join(folder, "expected_*.npy")))):
                want = np.load(expected).astype(np.float64)
                have = np.load(os.path.join(got, f"output_{k}.npy")).astype(np.float64)
                err = float(np.abs(want - have).max()) / max(1.0, float(np.abs(want).max()))
                if not err <= tolerance:
                    print(f"FAIL {sample} {precision}: output {k} differs by {err:.3g} of its scale (limit {tolerance})")
                    ok = False
    print(("ok" if ok else "FAIL") + " fp16 and bf16: models/cnn and models/transformer on the emulation")
    return ok


def check_big_models(kiln, work, archs, runtime_lib):
    """ResNet-50 and the BERT-base-shaped encoder (bench/models.py, batch 1), with --big (or
    KILN_CUDA_BIG=1; scripts/gpu_check.sh sets it): built by nvcc (ResNet-50 in fp16, BERT in fp32),
    and ResNet-50 in fp32
    and fp16 and BERT in fp32 on the emulation against ONNX Runtime (fp32 within 1e-4 of the
    output's scale, fp16 within 1e-2). Skipped without torch, torchvision and onnxruntime."""
    try:
        sys.path.insert(0, os.path.join(REPO, "bench"))
        import models  # noqa: E402
        import onnxruntime
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"skip ResNet-50 and BERT: {e}")
        return True
    ok = True
    for name in ("resnet50", "bert"):
        data, inputs = models.build(name, 1)
        folder = os.path.join(work, f"big_{name}")
        os.makedirs(folder, exist_ok=True)
        model = os.path.join(folder, "model.onnx")
        with open(model, "wb") as f:
            f.write(data)
        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        feeds = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
        for k, x in enumerate(inputs):
            np.save(os.path.join(folder, f"input_{k}.npy"), x)
        for k, y in enumerate(session.run(None, feeds)):
            np.save(os.path.join(folder, f"expected_{k}.npy"), y)
        # nvcc builds ResNet-50 in fp16 (the samples build fp32's code paths) and BERT in fp32; the
        # emulation runs ResNet-50 in both and BERT in fp32 (its fp16 GEMMs are ResNet-50's Gemm's).
        for precision, tolerance in (("fp32", 1e-4), ("fp16", 1e-2)):
            if name == "bert" and precision == "fp16":
                continue
            out = os.path.join(folder, precision)
            build = not SOURCE_ONLY and (precision == "fp16" or name == "bert")
            p = run([kiln, "compile", model, "--target", "cuda", "--precision", precision, "--cuda-arch", archs, "--emit",
                     "exe,source" if build else "source", "--name", "m", "-o", out])
            if p.returncode != 0:
                print(f"FAIL {name} {precision}: kiln compile --target cuda failed:\n{p.stderr[-3000:]}")
                ok = False
                continue
            problem = cuda_emulate.build(os.path.join(out, "src"), os.path.join(out, "m_emu"), runtime_lib, opt="-O1")
            if problem:
                print(f"FAIL {name} {precision}: the emulated build failed: {problem}")
                ok = False
                continue
            got = os.path.join(out, "outputs_emulated")
            p = run([os.path.join(out, "m_emu"), *input_files(folder), "-o", got])
            if p.returncode != 0:
                print(f"FAIL {name} {precision}: the emulated run failed: {p.stderr[-1000:]}")
                ok = False
                continue
            name_outputs(os.path.join(out, "src"), got)
            for k in range(len(session.get_outputs())):
                want = np.load(os.path.join(folder, f"expected_{k}.npy")).astype(np.float64)
                have = np.load(os.path.join(got, f"output_{k}.npy")).astype(np.float64)
                err = float(np.abs(want - have).max()) / max(1.0, float(np.abs(want).max()))
                if not err <= tolerance:
                    print(f"FAIL {name} {precision}: output {k} differs from ONNX Runtime by {err:.3g} of its scale "
                          f"(limit {tolerance})")
                    ok = False
                else:
                    print(f"ok {name} {precision}: {'built by nvcc; ' if build else ''}emulated run within "
                          f"{err:.2g} of ONNX Runtime (limit {tolerance})")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("work")
    ap.add_argument("--archs", default="80,90")
    ap.add_argument("--runtime-lib", required=True, help="libkiln_rt.a, for the emulated builds")
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--big", action="store_true", default=os.environ.get("KILN_CUDA_BIG") == "1",
                    help="also ResNet-50 and BERT (a few minutes; scripts/gpu_check.sh)")
    args = ap.parse_args()
    if not have_nvcc():
        print("SKIP: no nvcc (install the CUDA toolkit or set $KILN_CUDA_HOME)")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    gpu = have_gpu()
    print(f"GPU: {'present: outputs compared' if gpu else 'none: executables must fail cleanly'}")
    chosen = [s for s in samples() if not args.only or s[0] in args.only.split(",")]
    ok = check_placement(args.kiln, args.work, args.archs)
    if not SOURCE_ONLY and not args.only:
        ok = check_c_library(args.kiln, args.work, args.archs, gpu) and ok
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # fp16/bf16 and (with --big) ResNet-50 and BERT beside the samples.
        big = None if not args.big or SOURCE_ONLY else pool.submit(check_big_models, args.kiln, args.work, args.archs,
                                                                     args.runtime_lib)
        fp16 = None if args.only else pool.submit(check_fp16, args.kiln, args.work, args.archs, args.runtime_lib)
        results = list(pool.map(lambda s: compile_sample(args.kiln, args.work, args.archs, args.runtime_lib, gpu, s), chosen))
        if big:
            ok = big.result() and ok
        if fp16:
            ok = fp16.result() and ok
    folders = {s[0]: sample_set(s[1], os.path.join(args.work, s[0].replace("/", "_") + "_set")) for s in chosen}
    for name, out, inputs, note, problem in results:
        if problem:
            print(f"FAIL {name}: {problem}")
            ok = False
            continue
        if os.path.exists(os.path.join(out, "m_emu")):
            emulated = os.path.join(out, "outputs_emulated")
            p = run([os.path.join(out, "m_emu"), *inputs, "-o", emulated])
            if p.returncode != 0:
                print(f"FAIL {name}: the emulated run failed: {p.stderr[-1000:]}")
                ok = False
                continue
            name_outputs(os.path.join(out, "src"), emulated)
            if not compare(folders[name], emulated, f"{name} emulated"):
                ok = False
                continue
        if SOURCE_ONLY:
            emulated = os.path.exists(os.path.join(out, "m_emu"))
            print(f"ok {name}: CUDA source generated{', emulated run matches' if emulated else ''} (sanitized run: not built by nvcc)")
            continue
        if note:
            print(f"ok {name}: {note}{', emulated run matches' if inputs else ''}")
            continue
        if not inputs:
            print(f"ok {name}: built for sm_{args.archs.replace(',', ', sm_')}; no sample inputs to run")
            continue
        got = os.path.join(out, "outputs")
        p = run([os.path.join(out, "m"), *inputs, "-o", got])
        if not gpu:
            if p.returncode != 1 or "no CUDA device" not in p.stderr:
                print(f"FAIL {name}: without a GPU the executable should fail with 'no CUDA device', got "
                      f"{p.returncode}: {p.stderr[-500:]}")
                ok = False
                continue
            print(f"ok {name}: built for sm_{args.archs.replace(',', ', sm_')}, emulated run matches; no GPU here")
            continue
        if p.returncode != 0:
            print(f"FAIL {name}: the executable failed: {p.stderr[-1000:]}")
            ok = False
            continue
        name_outputs(os.path.join(out, "src"), got)
        if compare(folders[name], got, f"{name} on the GPU"):
            print(f"ok {name}: matches the expected outputs on the GPU")
        else:
            ok = False
    print(f"{len(results)} samples")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
