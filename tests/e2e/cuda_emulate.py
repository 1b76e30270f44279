"""Builds a model generated with --target cuda for the CPU emulation of CUDA and cuBLAS
(tests/cuda_emu/include), so that the generated device code and its cuBLAS arguments are run and
checked against reference outputs on machines without a GPU.

The generated model.cu is rewritten into model_emu.cpp: each kernel launch `K<<<grid, block, 0,
S>>>(args)` becomes `kiln_emu::launch(grid, block, [&] { K(args); })`, and the CUDA Graph path is
turned off (the emulation has no graphs). Everything else is the generated code as it is,
compiled by the host's C++ compiler with KILN_CUDA_EMULATION defined and linked with the runtime
library kiln was built with.
"""
import hashlib
import os
import shlex
import shutil
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMU_INCLUDE = os.path.join(REPO, "tests", "cuda_emu", "include")


def split_top_level(text):
    """Splits at commas outside parentheses, brackets and braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def rewrite_launches(source):
    out = []
    for line in source.split("\n"):
        at = line.find("<<<")
        if at < 0:
            out.append(line)
            continue
        end = line.index(">>>", at)
        indent = line[:len(line) - len(line.lstrip())]
        kernel = line[len(indent):at]
        grid, block = split_top_level(line[at + 3:end])[:2]
        rest = line[end + 3:].strip()
        assert rest.startswith("(") and rest.endswith(");"), line
        out.append(f"{indent}kiln_emu::launch(dim3({grid}), dim3({block}), [&] {{ {kernel}{rest[:-1]}; }});")
    return "\n".join(out)


def build(src_dir, out_exe, runtime_lib, name="m", cache_dir=None, opt="-O0"):
    """Compiles the generated sources in `src_dir` for the emulation into `out_exe`; returns "" or
    the compiler's complaint. Objects of identical sources (main.cpp, mostly) are shared through
    `cache_dir` when given. `opt`: -O0 compiles fastest (the samples); big models want -O1, where
    the emulated GEMMs run several times faster."""
    with open(os.path.join(src_dir, "model.cu")) as f:
        text = rewrite_launches(f.read())
    text = text.replace("constexpr bool kGraphable = true;", "constexpr bool kGraphable = false;  // emulated")
    emu = os.path.join(src_dir, "model_emu.cpp")
    with open(emu, "w") as f:
        f.write(text)
    cxx = os.environ.get("CXX", "c++")
    extra = shlex.split(os.environ.get("KILN_EXTRA_CXXFLAGS", ""))
    flags = ["-std=c++17", opt, "-pthread", "-DKILN_CUDA_EMULATION", "-I", EMU_INCLUDE, "-I", src_dir, "-I",
             os.path.join(src_dir, "runtime", "include"), *extra]
    objects = []
    sources = [emu, os.path.join(src_dir, "metadata.cpp"), os.path.join(src_dir, "main.cpp")]
    weights = os.path.join(src_dir, f"{name}_weights.cpp")
    if os.path.exists(weights):
        sources.append(weights)
    for s in sources:
        obj = s[:-4] + ".emu.o"
        cached = None
        if cache_dir and not s.endswith("_weights.cpp"):  # the weights' object embeds another file
            with open(s, "rb") as f:
                key = hashlib.sha256(f.read() + " ".join(flags).encode()).hexdigest()[:24]
            cached = os.path.join(cache_dir, key + ".o")
            if os.path.exists(cached):
                objects.append(cached)
                continue
        p = subprocess.run([cxx, *flags, f"-Wa,-I,{src_dir}", "-c", s, "-o", obj], capture_output=True, text=True)
        if p.returncode != 0:
            return f"{os.path.basename(s)}: {p.stderr[-3000:]}"
        if cached:
            os.makedirs(cache_dir, exist_ok=True)
            tmp = f"{cached}.{os.getpid()}.{id(obj)}"
            shutil.copy(obj, tmp)
            os.replace(tmp, cached)
        objects.append(obj)
    p = subprocess.run([cxx, "-pthread", *extra, "-o", out_exe, *objects, runtime_lib], capture_output=True, text=True)
    return "" if p.returncode == 0 else f"link: {p.stderr[-3000:]}"
