"""The hostile-input suite: writes the cases (make_hostile.py) into WORK and runs kiln on each.

Run: .venv/bin/python tests/hostile/run_hostile.py KILN WORK [CASE ...]

Every failing case must end with a non-zero exit (no signal), one line on stderr matching the
case's pattern and naming the model file, no sanitizer report, within a time and address-space
limit, with nothing left in OUTDIR or written anywhere else under WORK. The hostile-names model
must compile and run, its outputs equal to ONNX Runtime's; the compiled executable given bad
inputs must fail the same clean way. KILN_HOSTILE_NO_MEMLIMIT=1 drops the address-space limit
(AddressSanitizer reserves terabytes of it).
"""
import os
import re
import resource
import shutil
import stat
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hostile  # noqa: E402

MEMORY_LIMIT = 4 << 30  # bytes of address space for kiln and what it runs
FAIL_TIMEOUT = 120      # seconds for a case that must fail (generous: loaded CI, sanitizers)
BUILD_TIMEOUT = 900     # seconds for a case that compiles a model


def limit_memory():
    if os.environ.get("KILN_HOSTILE_NO_MEMLIMIT") != "1":
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def snapshot(root, skip):
    """Every path under `root` (but `skip`) with its size and mtime; folders by presence only
    (kiln makes and removes its temporary folder beside OUTDIR, which touches the parent's
    mtime and nothing else)."""
    seen = {}
    for d, dirs, files in os.walk(root):
        if skip and os.path.abspath(d) == os.path.abspath(skip):
            dirs[:] = []
            continue
        for f in dirs + files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            seen[p] = "dir" if stat.S_ISDIR(st.st_mode) else (st.st_size, st.st_mtime_ns)
    return seen


def run(argv, cwd, timeout):
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout,
                           preexec_fn=limit_memory)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"


class Suite:
    def __init__(self, kiln, work):
        self.kiln, self.work, self.failures, self.passed = kiln, work, [], 0
        # OUTDIRs' parent exists, as for a user: kiln's temporary folder goes beside OUTDIR.
        os.makedirs(os.path.join(work, "out"), exist_ok=True)

    def fail(self, case, why, stderr=""):
        self.failures.append(case)
        print(f"FAIL {case}: {why}")
        for line in stderr.splitlines()[:20]:
            print(f"    {line}")

    def expect_failure(self, case, argv, pattern, model_file, cwd, out):
        before = snapshot(self.work, out)
        rc, _, err = run(argv, cwd, FAIL_TIMEOUT)
        after = snapshot(self.work, out)
        lines = err.strip("\n").split("\n") if err.strip() else []
        if rc is None:
            return self.fail(case, err)
        if rc < 0:
            return self.fail(case, f"killed by signal {-rc}", err)
        if rc == 0:
            return self.fail(case, "exit code 0", err)
        if "Sanitizer" in err or "runtime error:" in err:
            return self.fail(case, "sanitizer report", err)
        if len(lines) != 1:
            return self.fail(case, f"expected one line on stderr, got {len(lines)}", err)
        if not re.search(pattern, err):
            return self.fail(case, f"stderr does not match {pattern!r}", err)
        if model_file and os.path.basename(model_file) not in err:
            return self.fail(case, f"message does not name {os.path.basename(model_file)}", err)
        if out and os.path.exists(out):
            return self.fail(case, f"left {out} behind")
        if before != after:
            changed = sorted(set(before.items()) ^ set(after.items()))[:5]
            return self.fail(case, f"wrote outside OUTDIR: {changed}")
        self.passed += 1
        print(f"ok   {case} (exit {rc}): {lines[0][:200]}")

    def failing_case(self, c, models):
        d = os.path.join(models, c.name)
        model = os.path.normpath(os.path.join(d, c.model))
        cwd = os.path.join(self.work, "cwd", c.name)
        os.makedirs(cwd, exist_ok=True)
        out = os.path.join(self.work, "out", c.name)
        if c.kind == "compile":
            argv = [self.kiln, "compile", model, "-o", out] + c.args
        elif c.kind == "run":
            argv = [self.kiln, "run", model, "-o", out] + c.args
        else:
            argv = [self.kiln, "inspect", model] + c.args
            out = None
        self.expect_failure(c.name, argv, c.pattern, model, cwd, out)

    def names_case(self, c, models):
        """Compiles the hostile-names model, runs the executable and the interpreter, and
        compares both with ONNX Runtime."""
        import onnxruntime as ort
        d = os.path.join(models, c.name)
        model = os.path.join(d, c.model)
        out = os.path.join(self.work, "out", c.name)
        rc, _, err = run([self.kiln, "compile", model, "-o", out, "--name", "hostile",
                          "--emit", "exe,lib,shared,source"], d, BUILD_TIMEOUT)
        if rc != 0:
            return self.fail(c.name, f"kiln compile exit {rc}", err)
        x = np.array([[-1.5, 0.25, 3.0, -0.0]], np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        want = sess.run(None, {sess.get_inputs()[0].name: x})
        sanitize = lambda n: re.sub(r"[^A-Za-z0-9_.-]", "_", n)
        for how, argv in (("exe", [os.path.join(out, "hostile"), os.path.join(d, "x.npy"), "-o",
                                   os.path.join(self.work, "names_exe")]),
                          ("interpreter", [self.kiln, "run", model, os.path.join(d, "x.npy"),
                                           "-o", os.path.join(self.work, "names_run")])):
            rc, _, err = run(argv, d, FAIL_TIMEOUT)
            if rc != 0:
                return self.fail(c.name, f"{how} exit {rc}", err)
            got_dir = argv[-1]
            for name, ref in zip(names, want):
                # Bytes outside [A-Za-z0-9_.-] each become '_' (UTF-8 bytes one by one).
                # NUL reaches the C API as the two characters \0 (the interpreter keeps it).
                c_name = (name.replace("\0", "\\0") if how == "exe" else name).encode()
                file = re.sub(rb"[^A-Za-z0-9_.-]", b"_", c_name).decode() + ".npy"
                path = os.path.join(got_dir, file)
                if not os.path.exists(path):
                    return self.fail(c.name, f"{how}: no {file!r} among {os.listdir(got_dir)}")
                got = np.load(path)
                if got.shape != ref.shape or not np.allclose(got, ref, atol=1e-6):
                    return self.fail(c.name, f"{how}: output {sanitize(name)} = {got}, ONNX Runtime "
                                     f"gives {ref}")
        src = os.path.join(out, "src")
        generated = "".join(open(os.path.join(src, f), errors="replace").read()
                            for f in os.listdir(src) if f.endswith((".cpp", ".h")))
        self.passed += 1
        print(f"ok   {c.name}: compiled, exe and interpreter match ONNX Runtime "
              f"({len(generated)} bytes of generated code)")

    def exe_case(self, c, models):
        """The compiled Gather model given good and bad inputs."""
        d = os.path.join(models, c.name)
        out = os.path.join(self.work, "out", c.name)
        rc, _, err = run([self.kiln, "compile", os.path.join(d, c.model), "-o", out, "--name", "g"],
                         d, BUILD_TIMEOUT)
        if rc != 0:
            return self.fail(c.name, f"kiln compile exit {rc}", err)
        exe = os.path.join(out, "g")
        p = lambda f: os.path.join(d, f)
        rc, _, err = run([exe, p("x.npy"), p("i_ok.npy"), "-o", os.path.join(self.work, "g_out")],
                         d, FAIL_TIMEOUT)
        if rc != 0:
            return self.fail(c.name, f"good input: exit {rc}", err)
        got = np.load(os.path.join(self.work, "g_out", "y.npy"))
        if not np.array_equal(got, np.ones((2, 2), np.float32)):
            return self.fail(c.name, f"good input: got {got}")
        self.passed += 1
        print(f"ok   {c.name}.good")
        bad = {
            "index_too_big": (["x.npy", "i_big.npy"], r"index out of range for axis of size 4"),
            "index_too_negative": (["x.npy", "i_neg.npy"], r"index out of range for axis of size 4"),
            "index_huge": (["x.npy", "i_huge.npy"], r"index out of range for axis of size 4"),
            "index_dtype": (["x.npy", "i_i32.npy"], r"i32|int32|dtype"),
            "input_shape": (["x_shape.npy", "i_ok.npy"], r"shape"),
            "input_rank": (["x_rank.npy", "i_ok.npy"], r"shape|rank"),
            "input_truncated": (["x_truncated.npy", "i_ok.npy"], r"x_truncated\.npy"),
            "input_garbage": (["x_garbage.npy", "i_ok.npy"], r"x_garbage\.npy"),
            "input_missing": (["x.npy"], r"input|expected"),
        }
        for name, (files, pattern) in bad.items():
            o = os.path.join(self.work, "out", "exe_" + name)
            self.expect_failure(f"{c.name}.{name}", [exe] + [p(f) for f in files] + ["-o", o],
                                pattern, None, d, o)

    def run(self, only):
        models = os.path.join(self.work, "models")
        cases = make_hostile.write_all(models)
        for c in cases:
            if only and c.name not in only:
                continue
            {"names": self.names_case, "exe": self.exe_case}.get(c.kind, self.failing_case)(c, models)
        print(f"{self.passed} passed, {len(self.failures)} failed"
              + (f": {' '.join(self.failures)}" if self.failures else ""))
        return 1 if self.failures else 0


def main():
    kiln, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    sys.exit(Suite(kiln, work).run(set(sys.argv[3:])))


if __name__ == "__main__":
    main()
