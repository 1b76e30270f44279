"""kiln compile --backend llvm (the model lowered to LLVM IR, its object written in process):

- a ResNet-shaped CNN made here (the stem, MaxPool, a bottleneck with its residual, a 3x3
  stride 2, GlobalAveragePool, Gemm: NCHW16c convolutions and Winograd) and every bundled model
  (models/*/model.onnx with expected_0.npy): where the LLVM backend compiles the model, its
  executable's outputs are bit-identical to the C++ backend's and within 1e-4 of the stored
  reference; where it lacks an op, kiln fails with one message naming each node, a non-zero
  exit and no output directory. The CNN and models/cnn, mlp, inverted_residual, mobilenet_head,
  mobilenet_tail and transformer must compile.
- --emit obj and lib: run_library.c links NAME.o with libkiln_rt.a, and libNAME.a, with the
  system's C compiler, and gives the executable's outputs.
- --target aarch64-linux-gnu: the CNN's LLVM object is an AArch64 ELF file, its executable and
  a C program linked by aarch64-linux-gnu-gcc run under qemu-user, take the NEON kernels
  (KILN_LOG_KERNELS=1) and match this machine's outputs within 1e-5 of the scale.
- with the runtime cached, --emit obj,lib need no C++ compiler ($CXX naming none); the
  executable, and an empty cache, then fail naming what is missing.
- what the backend refuses (--emit shared, --precision fp16, bounded dims) fails cleanly.

  llvm_backend.py KILN WORK_DIR
"""
import os
import shlex
import shutil
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cross_target as ct  # noqa: E402  (shared helpers: check, run, within, the CNN)

HOST, CROSS = "x86_64-linux-gnu", "aarch64-linux-gnu"
MUST_COMPILE = {"resnet_block", "cnn", "mlp", "inverted_residual", "mobilenet_head", "mobilenet_tail", "transformer"}
LINKED = {"resnet_block", "mlp"}  # also linked from run_library.c
check, run = ct.check, ct.run


def bit_identical(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def outputs_of(model_path):
    return [o.name for o in onnx.load(model_path, load_external_data=False).graph.output]


def run_exe(cmd, out_dir, outputs):
    p = run(cmd + ["-o", out_dir])
    if p.returncode != 0:
        return None, p
    return [np.load(os.path.join(out_dir, ct.file_name(o))) for o in outputs], p


def link_c_program(cc, out, name, link, program):
    """`cc` is a command as a list (the sanitized build's CC carries its flags)."""
    c_flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", out, f"-DKILN_MODEL={name}",
               f'-DKILN_MODEL_HEADER="{name}.h"', os.path.join(ct.REPO, "tests", "e2e", "run_library.c")]
    return run([*cc, *c_flags, *link, "-o", program])


def check_model(kiln, name, model, inputs, expected, work):
    outputs = outputs_of(model)
    cpp_out, llvm_out = os.path.join(work, name, "cpp"), os.path.join(work, name, "llvm")
    p = run([kiln, "compile", model, "-o", cpp_out, "--name", name])
    check(p.returncode == 0, f"{name}: the C++ backend compiles it" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
    if p.returncode != 0:
        return
    emit = "exe,obj,lib" if name in LINKED else "exe"
    p = run([kiln, "compile", model, "-o", llvm_out, "--name", name, "--backend", "llvm", "--emit", emit])
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.startswith("  node '")]
        clean = "--backend llvm cannot compile this model" in p.stderr and lines and not os.path.exists(llvm_out)
        check(clean and name not in MUST_COMPILE,
              f"{name}: --backend llvm " + (f"refuses it cleanly, naming {len(lines)} nodes" if clean else "fails")
              + ("" if clean and name not in MUST_COMPILE else f"\n{p.stderr}"))
        return
    check(True, f"{name}: --backend llvm compiles it")
    reference, p1 = run_exe([os.path.join(cpp_out, name), *inputs], os.path.join(cpp_out, "result"), outputs)
    got, p2 = run_exe([os.path.join(llvm_out, name), *inputs], os.path.join(llvm_out, "result"), outputs)
    check(got is not None and reference is not None, f"{name}: both executables run"
          + ("" if got is not None and reference is not None else f"\n{p1.stderr}{p2.stderr}"))
    if got is None or reference is None:
        return
    for k, output in enumerate(outputs):
        check(bit_identical(got[k], reference[k]), f"{name} output {k} '{output}': LLVM bit-identical to C++")
        if expected:
            ok, err, tol = ct.within(got[k], np.load(expected[k]), 1e-4)
            check(ok, f"{name} output {k}: matches the reference (max abs error {err:.3g}, tolerance {tol:.3g})")
    if name not in LINKED:
        return
    check(ct.elf_machine(os.path.join(llvm_out, f"{name}.o")) == ct.ELF_MACHINE[HOST], f"{name}: {name}.o is x86-64 ELF")
    for kind, link in {"object": [os.path.join(llvm_out, f"{name}.o"), os.path.join(llvm_out, "libkiln_rt.a")],
                       "static": [os.path.join(llvm_out, f"lib{name}.a")]}.items():
        program, result = os.path.join(llvm_out, f"run_{kind}"), os.path.join(llvm_out, f"{kind}_out")
        p = link_c_program(shlex.split(os.environ.get("CC", "cc")), llvm_out, name,
                           link + ["-lstdc++", "-lm", "-pthread"], program)
        check(p.returncode == 0, f"{name}: cc links the LLVM {kind}" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
        if p.returncode != 0:
            continue
        os.makedirs(result)
        p = run([program, result, *inputs])
        check(p.returncode == 0, f"{name}: the C program runs the LLVM {kind}" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
        if p.returncode == 0:
            for k in range(len(outputs)):
                check(bit_identical(np.load(os.path.join(result, f"output_{k}.npy")), reference[k]),
                      f"{name} output {k} through the C API of the LLVM {kind}: bit-identical to C++")


def check_cross(kiln, model, inputs, work):
    """The CNN through LLVM for aarch64, under qemu-user."""
    if os.environ.get("KILN_EXTRA_CXXFLAGS"):
        # The sanitized run (scripts/test_sanitized.sh) builds the runtime with sanitizers, which
        # the cross compiler has no runtimes for; the unsanitized run checks this part.
        print(f"skip: {CROSS} under KILN_EXTRA_CXXFLAGS (sanitized runtime)", flush=True)
        return
    missing = [t for t in (f"{CROSS}-gcc", f"{CROSS}-g++", "qemu-aarch64") if shutil.which(t) is None]
    check(not missing, f"{CROSS}: tools present ({', '.join(missing) or 'all'})")
    if missing:
        return
    emulator = ["qemu-aarch64", "-L", f"/usr/{CROSS}"]
    name, outputs = "resnet_block", outputs_of(model)
    host = os.path.join(work, "cross_host")
    p = run([kiln, "compile", model, "-o", host, "--name", name, "--backend", "llvm"])
    check(p.returncode == 0, f"{HOST}: --backend llvm compiles the CNN" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
    native, _ = run_exe([os.path.join(host, name), *inputs], os.path.join(host, "result"), outputs)
    out = os.path.join(work, "cross")
    p = run([kiln, "compile", model, "-o", out, "--name", name, "--backend", "llvm", "--target", CROSS,
             "--emit", "exe,obj"])
    check(p.returncode == 0, f"{CROSS}: --backend llvm compiles the CNN" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
    if p.returncode != 0 or native is None:
        return
    for f in (name, f"{name}.o"):
        check(ct.elf_machine(os.path.join(out, f)) == ct.ELF_MACHINE[CROSS], f"{CROSS}: {f} is an AArch64 ELF file")
    env = dict(os.environ, KILN_LOG_KERNELS="1")
    p = run(emulator + [os.path.join(out, name), *inputs, "-o", os.path.join(out, "result")], env=env)
    check(p.returncode == 0, f"{CROSS}: the LLVM-built executable runs under qemu" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
    if p.returncode != 0:
        return
    kernels = ct.kernel_lines(p.stderr)
    check(kernels and all(isa == "neon" for _, isa in kernels),
          f"{CROSS}: its {len(kernels)} convolutions take the NEON kernels ({sorted(set(kernels))})")
    cross = [np.load(os.path.join(out, "result", ct.file_name(o))) for o in outputs]
    for k in range(len(outputs)):
        ok, err, tol = ct.within(cross[k], native[k], 1e-5)
        check(ok, f"{CROSS} output {k}: matches {HOST} (max abs difference {err:.3g}, tolerance {tol:.3g})")
    program, result = os.path.join(out, "run_object"), os.path.join(out, "object_out")
    p = link_c_program([f"{CROSS}-gcc"], out, name, [os.path.join(out, f"{name}.o"), os.path.join(out, "libkiln_rt.a"),
                                                   "-lstdc++", "-lm", "-pthread"], program)
    check(p.returncode == 0, f"{CROSS}: {CROSS}-gcc links the LLVM object" + ("" if p.returncode == 0 else f"\n{p.stderr}"))
    if p.returncode != 0:
        return
    os.makedirs(result)
    p = run(emulator + [program, result, *inputs])
    check(p.returncode == 0 and bit_identical(np.load(os.path.join(result, "output_0.npy")), cross[0]),
          f"{CROSS}: the C program runs the object and gives the executable's output" + ("" if p.returncode == 0 else f"\n{p.stderr}"))


def check_no_compiler(kiln, work):
    """With kiln's runtime cached, --backend llvm --emit obj,lib runs no C++ compiler: it works
    with $CXX naming none; the executable (linked by the driver) and an empty cache fail clearly."""
    mlp = os.path.join(ct.REPO, "models", "mlp", "model.onnx")
    env = dict(os.environ, CXX="/nonexistent/c++")
    out = os.path.join(work, "no_compiler")
    p = run([kiln, "compile", mlp, "-o", out, "--name", "mlp", "--backend", "llvm", "--emit", "obj,lib"], env=env)
    ok = p.returncode == 0 and all(os.path.exists(os.path.join(out, f)) for f in ("mlp.o", "libkiln_rt.a", "libmlp.a"))
    check(ok, "no C++ compiler: --backend llvm --emit obj,lib builds from the cached runtime" + ("" if ok else f"\n{p.stderr}"))
    for args, env_extra, wanted in (
            (["--emit", "exe"], {}, "linking the executable needs the C++ compiler driver"),
            (["--emit", "obj"], {"KILN_CACHE_DIR": os.path.join(work, "empty_cache")}, "is not built yet")):
        out = os.path.join(work, "no_compiler_" + args[1])
        p = run([kiln, "compile", mlp, "-o", out, "--backend", "llvm", *args], env=dict(env, **env_extra))
        ok = p.returncode != 0 and wanted in p.stderr and not os.path.exists(out)
        check(ok, f"no C++ compiler, {' '.join(args)}{' and an empty cache' if env_extra else ''}: fails saying "
              f"'{wanted}'" + ("" if ok else f"\n{p.stderr}"))


def check_errors(kiln, work):
    mlp = os.path.join(ct.REPO, "models", "mlp", "model.onnx")
    digits = os.path.join(ct.REPO, "models", "digits", "model.onnx")
    cases = [
        ([mlp, "--emit", "shared"], "--emit shared needs the C++ backend"),
        ([mlp, "--precision", "fp16"], "--precision fp16 needs the C++ backend"),
        ([digits, "--dim", "batch=1..4"], "static shapes"),
    ]
    for k, (args, wanted) in enumerate(cases):
        out = os.path.join(work, f"error_{k}")
        p = run([kiln, "compile", *args, "-o", out, "--backend", "llvm"])
        ok = p.returncode != 0 and wanted in p.stderr and not os.path.exists(out) and "Traceback" not in p.stderr
        check(ok, f"kiln compile --backend llvm {' '.join(args[1:])}: fails saying '{wanted}'" + ("" if ok else f"\n{p.stderr}"))


def main():
    kiln, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cnn = os.path.join(work, "resnet_block.onnx")
    ct.resnet_block_model(cnn)
    cnn_inputs = [cnn.replace(".onnx", "_x.npy")]
    check_model(kiln, "resnet_block", cnn, cnn_inputs, [], work)
    for d in ct.sample_models():
        n = len([f for f in os.listdir(d) if f.startswith("expected_")])
        check_model(kiln, os.path.basename(d), os.path.join(d, "model.onnx"), ct.inputs_of(d),
                    [os.path.join(d, f"expected_{k}.npy") for k in range(n)], work)
    check_cross(kiln, cnn, cnn_inputs, work)
    check_no_compiler(kiln, work)
    check_errors(kiln, work)
    failures = ct.failures
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
