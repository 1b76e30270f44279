"""kiln.compile(): the kiln executable carried by this package, run as `kiln compile`."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


class KilnError(RuntimeError):
    """kiln failed: a compile (the message is kiln's stderr) or a compiled model's C API."""

    def __init__(self, message: str, command: list[str] | None = None, returncode: int | None = None,
                 stdout: str = "", stderr: str = ""):
        super().__init__(message)
        self.command = command
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def executable() -> Path:
    """The kiln executable inside this package (kiln/bin/kiln of the wheel)."""
    exe = Path(__file__).resolve().parent / "bin" / "kiln"
    if not os.access(exe, os.X_OK):
        raise KilnError(f"no kiln executable at {exe}: use the package installed from kiln's wheel, "
                        "not python/kiln of the source tree")
    return exe


def compile(model: str | os.PathLike, out_dir: str | os.PathLike, name: str | None = None,
            **options) -> dict[str, Path]:
    """Compiles MODEL into OUT_DIR with `kiln compile` and returns what it wrote, by kind.

    Each keyword is the command-line option of the same name, `_` for `-`
    (docs/reference/cli.md): precision="int8" is --precision int8; True gives a bare flag
    (verbose=True: --verbose) and None or False leaves the option out; a list repeats it
    (input_shape=["x=1,3,224,224"]); a dict repeats it as KEY=VALUE (dim={"batch": 1},
    input_shape={"x": [1, 3, 224, 224]}; a list value is joined by commas); a one-letter key
    is a short option (O=1: -O 1). emit defaults to "shared", the library load() opens (the
    command line's default is "exe"); emit=["lib", "shared"] is --emit lib,shared.

    Returns {kind: path} for what OUT_DIR holds: "exe", "lib" (libNAME.a), "shared"
    (libNAME.so), "obj" (NAME.o) and "runtime" (libkiln_rt.a), "header" (NAME.h), "pkgconfig"
    (NAME.pc), "weights" (NAME.weights) and "source" (src/). Raises KilnError with kiln's message when the compile fails; OUT_DIR is
    then left as it was.
    """
    out = Path(out_dir)
    options.setdefault("emit", "shared")
    if not isinstance(options["emit"], str):  # --emit takes one comma-separated list
        options["emit"] = ",".join(options["emit"])
    command = [str(executable()), "compile", os.fspath(model), "-o", os.fspath(out)]
    if name is not None:
        command += ["--name", name]
    command += _option_args(options)
    proc = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if options.get("verbose"):
        sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        message = proc.stderr.strip() or f"exit status {proc.returncode}"
        raise KilnError(message, command, proc.returncode, proc.stdout, proc.stderr)
    return _artifacts(out)


def _option_args(options: dict) -> list[str]:
    args = []
    for key, value in options.items():
        flag = ("-" if len(key) == 1 else "--") + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
            continue
        if isinstance(value, dict):
            values = [f"{k}={_text(v)}" for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            values = [_text(v) for v in value]
        else:
            values = [_text(value)]
        for v in values:
            args += [flag, v]
    return args


def _text(value) -> str:
    if isinstance(value, (list, tuple)):  # a shape: kiln's D0,D1,... form
        return ",".join(str(v) for v in value)
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _artifacts(out: Path) -> dict[str, Path]:
    # kiln replaces OUT_DIR whole, so everything in it is this compile's. NAME is a C
    # identifier (no dot): the executable is the one file without a suffix.
    found = {}
    for p in sorted(out.iterdir()):
        if p.is_dir():
            if p.name == "src":
                found["source"] = p
        elif p.name.startswith("lib") and p.suffix == ".so":
            found["shared"] = p
        elif p.name == "libkiln_rt.a":
            found["runtime"] = p
        elif p.name.startswith("lib") and p.suffix == ".a":
            found["lib"] = p
        elif p.suffix == ".o":
            found["obj"] = p
        elif p.suffix == ".h":
            found["header"] = p
        elif p.suffix == ".pc":
            found["pkgconfig"] = p
        elif p.suffix == ".weights":
            found["weights"] = p
        elif not p.suffix and os.access(p, os.X_OK):
            found["exe"] = p
    return found
