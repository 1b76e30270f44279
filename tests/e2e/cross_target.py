"""kiln compile --target for another architecture: every bundled model (models/*/model.onnx
with expected_0.npy) compiled for TRIPLE and for this machine (--target x86_64-linux-gnu), the
TRIPLE executable run under qemu-user; its outputs must match this machine's executable within
1e-5 of each output's scale (max |expected|), and the stored reference outputs within 1e-4 as
e2e_model_test asks of the native build. One model is also built as static and shared
libraries, each linked into tests/e2e/run_library.c by TRIPLE-gcc and run, and models/digits
in static int8 (the int8 kernels' portable paths) must match this machine's int8 build too.
A small ResNet-shaped CNN, made here, must run its convolutions on TRIPLE's vector kernels (NEON
on aarch64), as its KILN_LOG_KERNELS=1 log says layer by layer, and on the plain loops under
KILN_CPU_ISA=portable, both matching this machine's outputs. Built for this machine with `--cpu
generic`, the same executable must take the best kernels the CPU has (AVX-512 where it has it),
the AVX2 ones under KILN_CPU_ISA=avx2 and the plain loops under portable, all three agreeing;
on an AVX-512 machine with CPUID faulting, also the AVX2 ones when the CPU itself reports no
AVX-512 (bench/cpuid_mask.c preloaded), with no KILN_CPU_ISA at all; and the same CNN in int8
must take the AVX-512 VNNI, widened AVX2 and AVX-VNNI kernels as CPUID shows or hides them
(a chain of 9 int8 convolutions made here, full-range weights).
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
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "x86_64-linux-gnu"
ELF_MACHINE = {"x86_64-linux-gnu": 62, "aarch64-linux-gnu": 183}  # e_machine: EM_X86_64, EM_AARCH64
LIBRARY_MODEL = "mlp"  # the one built as libraries too
VECTOR_ISA = {"aarch64-linux-gnu": "neon"}  # the convolution kernels TRIPLE must take

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
    emit = "exe,lib,shared,obj,source" if name == LIBRARY_MODEL else "exe"
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
    """libNAME.a, libNAME.so and NAME.o with libkiln_rt.a, linked into run_library.c by
    TRIPLE-gcc, under the emulator."""
    name = os.path.basename(model_dir)
    for f in (f"lib{name}.a", f"lib{name}.so", f"{name}.o", "libkiln_rt.a", f"{name}.h",
              os.path.join("src", "CMakeLists.txt")):
        check(os.path.exists(os.path.join(out, f)), f"{name}: --target {triple} wrote {f}")
    for f in (f"lib{name}.so", f"{name}.o"):
        check(elf_machine(os.path.join(out, f)) == ELF_MACHINE[triple], f"{name}: {f} is an ELF file for {triple}")
    c_flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", out, f"-DKILN_MODEL={name}",
               f'-DKILN_MODEL_HEADER="{name}.h"', os.path.join(REPO, "tests", "e2e", "run_library.c")]
    links = {"static": [os.path.join(out, f"lib{name}.a"), "-lstdc++", "-lm", "-pthread"],
             "shared": ["-L", out, f"-l{name}", f"-Wl,-rpath,{out}"],
             "object": [os.path.join(out, f"{name}.o"), os.path.join(out, "libkiln_rt.a"), "-lstdc++", "-lm",
                        "-pthread"]}
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


def resnet_block_model(path):
    """ResNet-50's convolution kinds at a small size, random weights: the 7x7 stride-2 stem on
    3 channels and its MaxPool, a bottleneck (1x1, 3x3 stride 1, 1x1, a 1x1 downsample, Add,
    Relu), a 3x3 stride 2, then GlobalAveragePool and a Gemm. Input [1, 3, 64, 64]."""
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def conv(x, c, m, k, stride, relu, name):
        w = (rng.standard_normal((m, c, k, k)) * np.sqrt(2.0 / (c * k * k))).astype(np.float32)
        b = (rng.standard_normal(m) * 0.1).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")])
        out = name + ("_pre" if relu else "")
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [out], name=name, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [name], name=name + "_relu"))
        return name

    stem = conv("x", 3, 16, 7, 2, True, "stem")
    nodes.append(helper.make_node("MaxPool", [stem], ["pool"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    a = conv("pool", 16, 32, 1, 1, True, "b1_conv1")
    a = conv(a, 32, 32, 3, 1, True, "b1_conv2")
    a = conv(a, 32, 64, 1, 1, False, "b1_conv3")
    d = conv("pool", 16, 64, 1, 1, False, "b1_down")
    nodes.append(helper.make_node("Add", [a, d], ["b1_sum"], name="b1_add"))
    nodes.append(helper.make_node("Relu", ["b1_sum"], ["b1_out"], name="b1_relu"))
    s2 = conv("b1_out", 64, 32, 3, 2, True, "s2_conv")
    nodes.append(helper.make_node("GlobalAveragePool", [s2], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat"))
    fc_w = (rng.standard_normal((10, 32)) * 0.2).astype(np.float32)
    inits.append(numpy_helper.from_array(fc_w, "fc_w"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w"], ["y"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "resnet_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)
    np.save(path.replace(".onnx", "_x.npy"), rng.standard_normal((1, 3, 64, 64)).astype(np.float32))
    return sum(n.op_type == "Conv" for n in nodes)


def host_isa():
    """The convolution kernels this x86-64 machine takes natively (x86_dispatch.h's order)."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return "portable"
    if "avx512f" in flags:
        return "avx512"
    return "avx2" if "avx2" in flags and "fma" in flags else "portable"


def cpuid_mask(work):
    """bench/cpuid_mask.c built into WORK where it can hide this CPU's AVX-512 (the CPU has AVX-512
    and CPUID faulting), else None."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return None
    if "avx512f" not in flags or "cpuid_fault" not in flags or not shutil.which("gcc"):
        return None
    shim = os.path.join(work, "cpuid_mask.so")
    p = run(["gcc", "-O2", "-shared", "-fPIC", os.path.join(REPO, "bench", "cpuid_mask.c"), "-o", shim])
    check(p.returncode == 0, "bench/cpuid_mask.c builds" + ("" if p.returncode == 0 else f":\n{p.stderr}"))
    return shim if p.returncode == 0 else None


def kernel_lines(stderr):
    """(family, isa) of each KILN_LOG_KERNELS line."""
    found = re.findall(r"^kiln: kernel (\S+) isa=(\S+) ", stderr, re.MULTILINE)
    return [(family, isa) for family, isa in found]


def check_kernels(kiln, triple, emulator, work):
    """The CNN's convolutions on TRIPLE: each logged once, all on the vector ISA (and the blocked
    and Winograd families both present); under KILN_CPU_ISA=portable all on the plain loops."""
    isa = VECTOR_ISA.get(triple)
    if isa is None:
        return
    os.makedirs(os.path.join(work, "resnet_block"))
    model = os.path.join(work, "resnet_block", "model.onnx")
    convs = resnet_block_model(model)
    x = model.replace(".onnx", "_x.npy")
    results = {}
    for target in (HOST, triple):
        out = os.path.join(work, "resnet_block", target)
        p = run([kiln, "compile", model, "-o", out, "--name", "resnet_block", "--emit", "exe", "--target", target])
        check(p.returncode == 0, f"resnet_block: kiln compile --target {target}"
              + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stderr}"))
        if p.returncode != 0:
            return
        runs = ([("native", {}), ("avx2", {"KILN_CPU_ISA": "avx2"}), ("portable", {"KILN_CPU_ISA": "portable"})]
                if target == HOST else [(isa, {}), ("portable", {"KILN_CPU_ISA": "portable"})])
        shim = cpuid_mask(out) if target == HOST else None
        if shim:  # the CPU, not a cap, says AVX2: what an AVX2-only machine's CPUID reports
            runs.append(("hidden-avx512", {"LD_PRELOAD": shim, "KILN_CPUID_MASK_REQUIRED": "1"}))
        for want, env in runs:
            result = os.path.join(out, f"result_{want}")
            t0 = time.monotonic()
            p = run((emulator if target == triple else []) + [os.path.join(out, "resnet_block"), x, "-o", result,
                                                              "--threads", "1"],
                    env={**os.environ, "KILN_LOG_KERNELS": "1", **env})
            check(p.returncode == 0, f"resnet_block: the {target} executable runs ({want}, "
                  f"{time.monotonic() - t0:.1f} s)" + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stderr}"))
            if p.returncode != 0:
                return
            results[(target, want)] = np.load(os.path.join(result, file_name("y")))
            if target == HOST:
                # One generic binary, its kernels chosen by the CPU when it runs (capped by
                # KILN_CPU_ISA): the best this machine has natively, AVX2 under the avx2 cap.
                lines = kernel_lines(p.stderr)
                expect = {"native": host_isa(), "avx2": "avx2" if host_isa() != "portable" else "portable",
                          "hidden-avx512": "avx2", "portable": "portable"}[want]
                check(len(lines) == convs and all(i == expect for _, i in lines),
                      f"resnet_block on {HOST} ({want}): {convs} convolutions logged, each isa={expect}: "
                      f"{len(lines)} logged, {lines}")
            if target == triple:
                lines = kernel_lines(p.stderr)
                families = sorted({f for f, _ in lines})
                check(len(lines) == convs and all(i == want for _, i in lines),
                      f"resnet_block on {triple} ({want}): {convs} convolutions logged, each isa={want}: "
                      f"{len(lines)} logged, {lines}")
                check("conv_nchwc" in families and any(f.startswith("winograd") for f in families),
                      f"resnet_block on {triple} ({want}): blocked and Winograd convolutions among {families}")
    for want in [w for w in ("avx2", "hidden-avx512", "portable") if (HOST, w) in results]:
        ok, err, tol = within(results[(HOST, want)], results[(HOST, "native")], 1e-5)
        check(ok, f"resnet_block on {HOST} ({want}) matches its native run (max abs difference {err:.3g}, "
              f"tolerance {tol:.3g})")
    for want in (isa, "portable"):
        ok, err, tol = within(results[(triple, want)], results[(HOST, "native")], 1e-5)
        check(ok, f"resnet_block on {triple} ({want}) matches {HOST} (max abs difference {err:.3g}, tolerance {tol:.3g})")


def int8_chain_model(path):
    """10 convolutions (3x3 and 1x1, 16 and 32 channels, ReLU) on 24 x 24: in int8 (the last one
    stays fp32) a chain of 9, long enough for the channels-last layout (passes/layout_nhwc.cpp:
    at most one value entering or leaving per 4 nodes). Writes PATH and its input."""
    rng = np.random.default_rng(12)
    shapes = [(32, 16, 3), (32, 32, 1), (32, 32, 3), (16, 32, 1)] * 2 + [(32, 16, 3), (16, 32, 1)]
    nodes, inits, x = [], [], "x"
    for i, (m, c, k) in enumerate(shapes):
        w = (rng.standard_normal((m, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(rng.standard_normal(m).astype(np.float32) * 0.1, f"b{i}")]
        nodes += [helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], pads=[k // 2] * 4),
                  helper.make_node("Relu", [f"c{i}"], ["y" if i == len(shapes) - 1 else f"r{i}"])]
        x = f"r{i}"
    graph = helper.make_graph(nodes, "int8_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 24])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 24, 24])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    np.save(path.replace(".onnx", "_x.npy"), rng.standard_normal((1, 16, 24, 24)).astype(np.float32))


def check_int8_hidden_isas(kiln, work):
    """A chain of int8 convolutions with full-range weights, one generic executable on this
    machine natively and with CPUID reporting no AVX-512 (bench/cpuid_mask.c), without and with
    AVX-VNNI: its channels-last convolutions must take the AVX-512 VNNI, the widened AVX2
    (avx2-int16: full-range pairs do not fit vpmaddubsw) and the AVX-VNNI kernels, all agreeing.
    Only on an x86-64 CPU with AVX-512 VNNI, AVX-VNNI and CPUID faulting."""
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()
    if not all(f in flags for f in ("avx512_vnni", "avx_vnni", "avx512vbmi")):
        return
    os.makedirs(os.path.join(work, "int8_chain"))
    shim = cpuid_mask(os.path.join(work, "int8_chain"))
    if not shim:
        return
    model = os.path.join(work, "int8_chain", "model.onnx")
    int8_chain_model(model)
    calibration = os.path.join(work, "int8_chain", "calibration")
    rng = np.random.default_rng(11)
    for i in range(4):
        os.makedirs(os.path.join(calibration, f"sample_{i:02d}"), exist_ok=True)
        np.save(os.path.join(calibration, f"sample_{i:02d}", "x.npy"),
                rng.standard_normal((1, 16, 24, 24)).astype(np.float32))
    out = os.path.join(work, "int8_chain", "out")
    p = run([kiln, "compile", model, "-o", out, "--name", "int8_chain", "--emit", "exe", "--precision", "int8",
             "--calibration", calibration, "--weight-range", "full"])
    check(p.returncode == 0, "int8_chain: kiln compile" + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stderr}"))
    if p.returncode != 0:
        return
    x = model.replace(".onnx", "_x.npy")
    hidden = {"LD_PRELOAD": shim, "KILN_CPUID_MASK_REQUIRED": "1"}
    results = {}
    for want, env in (("avx512-vnni", {}), ("avx2-int16", hidden), ("avx-vnni", {**hidden, "KILN_CPUID_MASK_KEEP_AVX_VNNI": "1"})):
        result = os.path.join(out, f"result_{want}")
        p = run([os.path.join(out, "int8_chain"), x, "-o", result, "--threads", "1"],
                env={**os.environ, "KILN_LOG_KERNELS": "1", **env})
        check(p.returncode == 0, f"int8_chain runs ({want})" + ("" if p.returncode == 0 else f": exit {p.returncode}\n{p.stderr}"))
        if p.returncode != 0:
            return
        isas = [i for f, i in kernel_lines(p.stderr) if f == "qconv_nhwc"]
        check(len(isas) == 9 and all(i == want for i in isas),
              f"int8_chain ({want}): 9 channels-last convolutions, each isa={want}: {isas}")
        results[want] = np.load(os.path.join(result, file_name("y")))
    for want in ("avx2-int16", "avx-vnni"):
        ok, err, tol = within(results[want], results["avx512-vnni"], 1e-5)
        check(ok, f"int8_chain ({want}) matches the AVX-512 VNNI run (max abs difference {err:.3g}, "
              f"tolerance {tol:.3g})")


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
    check_kernels(kiln, triple, emulator, work)
    check_int8_hidden_isas(kiln, work)
    print(f"{len(sample_models())} models and digits in int8 in {time.monotonic() - start:.0f} s")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    shutil.rmtree(work)
    print("all checks passed")


if __name__ == "__main__":
    main()
