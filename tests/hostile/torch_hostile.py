"""Hostile TorchScript archives (written by make_torch_hostile.py) through `kiln compile`.

Run: .venv/bin/python tests/hostile/torch_hostile.py KILN WORK

Each hostile archive must be refused: exit status 1 (no signal, no crash), an error on stderr
that names the archive and contains every substring expected_errors.txt lists for it, nothing
left in the output folder, within a time and address-space limit; and nothing it names may
run (the pickles naming os.system carry a command that would create a marker file). The
control archive, valid_base.pt, must import (kiln inspect).
"""
import os
import resource
import shutil
import subprocess
import sys

MEMORY_LIMIT = 4 << 30
TIMEOUT = 120


def limit_memory():
    if os.environ.get("KILN_HOSTILE_NO_MEMLIMIT") != "1":
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv):
    kiln, work = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    shutil.rmtree(work, ignore_errors=True)
    cases = os.path.join(work, "cases")
    os.makedirs(cases)
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "make_torch_hostile.py"), cases], check=True)
    expected = {}
    with open(os.path.join(cases, "expected_errors.txt")) as f:
        for line in f:
            if line.strip():
                name, sub = line.rstrip("\n").split("\t", 1)
                expected.setdefault(name, []).append(sub)
    passed = failed = 0

    def compile_case(name):
        out = os.path.join(work, "out", name)
        p = subprocess.run([kiln, "compile", os.path.join(cases, name), "-o", out, "--input-shape", "4",
                            "--emit", "exe"], capture_output=True, text=True, timeout=TIMEOUT,
                           preexec_fn=limit_memory, cwd=work)
        return p, out

    for name, subs in sorted(expected.items()):
        p, out = compile_case(name)
        problems = []
        if p.returncode != 1:
            problems.append(f"exit status {p.returncode}, expected 1")
        for s in subs:
            if s not in p.stderr:
                problems.append(f"stderr lacks '{s}'")
        if name not in p.stderr:
            problems.append("the error does not name the archive")
        if os.path.exists(out):
            problems.append("the output folder was written")
        if problems:
            failed += 1
            print(f"FAIL {name}: {'; '.join(problems)}\n  stderr: {p.stderr.strip()[:500]}")
        else:
            passed += 1
            print(f"ok   {name}: {p.stderr.strip().splitlines()[-1][:200] if p.stderr.strip() else ''}")
    p = subprocess.run([kiln, "inspect", os.path.join(cases, "valid_base.pt"), "--input-shape", "4"],
                       capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=limit_memory, cwd=work)
    if p.returncode == 0:
        passed += 1
        print("ok   valid_base.pt is imported")
    else:
        failed += 1
        print(f"FAIL valid_base.pt: exit status {p.returncode}\n  stderr: {p.stderr.strip()[:500]}")
    for marker in ("kiln-hostile-ran", "hostile_ran"):
        if os.path.exists(os.path.join(work, marker)):
            failed += 1
            print(f"FAIL a hostile pickle ran a command ({marker} exists)")
    print(f"{passed} passed, {failed} failed")
    if failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
