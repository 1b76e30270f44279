#!/usr/bin/env python3
"""Writes broken and hostile TorchScript archives for kiln's PyTorch frontend, at test time.

    /usr/bin/python3 tests/hostile/make_torch_hostile.py OUTDIR

Every archive starts from a real one: torch.jit.script of a tiny module (y = relu(x + w), w a
float32[4] parameter, x float32[4]) saved by torch.jit.save, whose zip is then rewritten with
Python's zipfile (entries kept in order, stored or deflated as before, each entry's data aligned
to 64 bytes with an "FB" extra field like PyTorch's writer). Pickles are hand-written opcode by
opcode, in the layout torch writes (protocol 2, GLOBAL/NEWOBJ/BUILD module objects,
_rebuild_tensor_v2 with a BINPERSID storage tuple). OUTDIR gets:

    valid_base.pt        the rewritten archive with a hand-written but valid data.pkl: kiln must
                         compile it (checked here to load and run in PyTorch); listed in
                         OUTDIR/expected_ok.txt
    <case>.pt            one per hostile case, named after what it tests
    expected_errors.txt  `<case>.pt<TAB>substring` lines: kiln must reject the file (compile
                         fails, no crash, nothing executed) with an error message containing
                         every substring listed for it (case-sensitive)

Nothing here is ever unpickled by Python: the pickles naming os.system and builtins.eval carry
a harmless command (`touch kiln-hostile-ran`, a marker torch_hostile.py looks for), and are only written. Needs Debian's python3-torch for the base
archive. Deterministic: a rerun writes the same bytes.
"""
from __future__ import annotations

import io
import os
import struct
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

# Harmless if it ever ran: it only creates a marker file that torch_hostile.py looks for.
HARMLESS = "touch kiln-hostile-ran"
# The base module's class is `__torch__.kiln_hostile_base.M` (the Python module's name).
CLASS_MODULE, CLASS = "__torch__.kiln_hostile_base", "M"
CODE = "code/__torch__/kiln_hostile_base.py"

# --------------------------------------------------------------- the base archive

BASE_SOURCE = '''
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.5, -1.0, 2.0, -0.25]))

    def forward(self, x):
        return torch.relu(x + self.w)
'''


def base_archive() -> tuple[bytes, str]:
    """A real torch.jit.save archive of the tiny module, and its top folder name."""
    import linecache
    import types

    import torch
    # TorchScript reads the source through inspect, which finds it in linecache: a fixed file
    # name keeps the path that code/*.debug_pkl records the same from run to run.
    filename = "kiln_hostile_base.py"
    linecache.cache[filename] = (len(BASE_SOURCE), None, BASE_SOURCE.splitlines(True), filename)
    mod = types.ModuleType("kiln_hostile_base")
    mod.__file__ = filename
    sys.modules[mod.__name__] = mod
    exec(compile(BASE_SOURCE, filename, "exec"), mod.__dict__)
    scripted = torch.jit.script(mod.M().eval())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hostile_base.pt"
        torch.jit.save(scripted, str(path))
        data = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
    prefix = names[0].split("/", 1)[0]
    assert f"{prefix}/data.pkl" in names and f"{prefix}/{CODE}" in names, names
    return data, prefix


def rewrite(base: bytes, replace: dict[str, bytes] | None = None, drop=(), add=()) -> bytes:
    """The archive with entries replaced (by name under the top folder), dropped, or added
    at the end ((full name, bytes, compress type)); data aligned to 64 bytes."""
    replace = dict(replace or {})
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as zin, \
            zipfile.ZipFile(out, "w", allowZip64=True) as zout:
        prefix = zin.namelist()[0].split("/", 1)[0] + "/"
        entries = []
        for info in zin.infolist():
            short = info.filename[len(prefix):]
            if short in drop:
                continue
            data = replace.pop(short) if short in replace else zin.read(info)
            entries.append((info.filename, data, info.compress_type))
        assert not replace, f"no entries {list(replace)} to replace"
        entries += list(add)
        for name, data, method in entries:
            write_aligned(zout, name, data, method)
    return out.getvalue()


def write_aligned(zout: zipfile.ZipFile, name: str, data: bytes, method: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = method
    info.create_system = 0
    offset = zout.fp.tell()
    fixed = 30 + len(name.encode()) + 4
    pad = (-(offset + fixed)) % 64
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zout.writestr(info, data)


def patch_declared_size(blob: bytes, name: str, size: int) -> bytes:
    """Sets entry `name`'s uncompressed size to `size` in its local header and in the
    central directory (CRC and compressed size left as they are)."""
    b = bytearray(blob)
    eocd = b.rfind(b"PK\x05\x06")
    assert eocd >= 0
    count, cd_size, cd_off = struct.unpack_from("<HII", b, eocd + 10)
    pos, found = cd_off, 0
    for _ in range(count):
        assert b[pos:pos + 4] == b"PK\x01\x02"
        nlen, elen, clen = struct.unpack_from("<HHH", b, pos + 28)
        local = struct.unpack_from("<I", b, pos + 42)[0]
        entry = bytes(b[pos + 46:pos + 46 + nlen]).decode()
        if entry == name:
            struct.pack_into("<I", b, pos + 24, size)
            assert b[local:local + 4] == b"PK\x03\x04"
            struct.pack_into("<I", b, local + 22, size)
            found += 1
        pos += 46 + nlen + elen + clen
    assert found == 1, (name, found)
    return bytes(b)


def write_bomb(base: bytes, short: str, inflated: int, declared: int) -> bytes:
    """`short` becomes a deflated entry of `inflated` zero bytes that declares `declared`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as zin, zipfile.ZipFile(out, "w") as zout:
        prefix = zin.namelist()[0].split("/", 1)[0] + "/"
        for info in zin.infolist():
            if info.filename != prefix + short:
                write_aligned(zout, info.filename, zin.read(info), info.compress_type)
                continue
            zi = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 0
            chunk = bytes(1 << 20)
            with zout.open(zi, "w", force_zip64=False) as f:
                for _ in range(inflated // len(chunk)):
                    f.write(chunk)
    return patch_declared_size(out.getvalue(), prefix + short, declared)


# ------------------------------------------------------------------ pickle bytes

class Pickle:
    """Protocol-2 opcodes, written by hand."""

    def __init__(self):
        self.b = bytearray(b"\x80\x02")  # PROTO 2

    def raw(self, op: bytes):
        self.b += op
        return self

    def glob(self, module: str, name: str):
        return self.raw(b"c" + f"{module}\n{name}\n".encode())

    def str(self, s: str):
        e = s.encode()
        return self.raw(b"X" + struct.pack("<I", len(e)) + e)

    def int(self, v: int):
        if 0 <= v < 256:
            return self.raw(b"K" + bytes([v]))
        if 0 <= v < 65536:
            return self.raw(b"M" + struct.pack("<H", v))
        if -2 ** 31 <= v < 2 ** 31:
            return self.raw(b"J" + struct.pack("<i", v))
        return self.raw(b"\x8a\x08" + struct.pack("<q", v))  # LONG1, 8 bytes, as torch writes

    def ints_tuple(self, vs):
        self.mark()
        for v in vs:
            self.int(v)
        return self.tuple()

    def mark(self): return self.raw(b"(")
    def tuple(self): return self.raw(b"t")
    def tuple1(self): return self.raw(b"\x85")
    def empty_tuple(self): return self.raw(b")")
    def empty_dict(self): return self.raw(b"}")
    def empty_list(self): return self.raw(b"]")
    def setitems(self): return self.raw(b"u")
    def appends(self): return self.raw(b"e")
    def reduce(self): return self.raw(b"R")
    def newobj(self): return self.raw(b"\x81")
    def build(self): return self.raw(b"b")
    def binpersid(self): return self.raw(b"Q")
    def none(self): return self.raw(b"N")
    def false(self): return self.raw(b"\x89")
    def put(self, i): return self.raw(b"q" + bytes([i]))
    def get(self, i): return self.raw(b"h" + bytes([i]))

    def stop(self) -> bytes:
        self.raw(b".")
        return bytes(self.b)


def tensor(p: Pickle, key="0", numel=4, offset=0, sizes=(4,), strides=(1,),
           storage="FloatStorage") -> Pickle:
    p.glob("torch._utils", "_rebuild_tensor_v2")
    p.mark()
    p.mark().str("storage").glob("torch", storage).str(key).str("cpu").int(numel).tuple()
    p.binpersid()
    p.int(offset).ints_tuple(sizes).ints_tuple(strides).false()
    p.glob("collections", "OrderedDict").empty_tuple().reduce()
    p.tuple().reduce()
    return p


def module_pickle(w=tensor, **kw) -> bytes:
    """data.pkl of the base module (class M) with attribute w (written by `w`)."""
    p = Pickle().glob(CLASS_MODULE, CLASS).empty_tuple().newobj().empty_dict().mark()
    p.str("w")
    w(p, **kw)
    p.str("training").false()
    p.str("_is_full_backward_hook").none()
    return p.setitems().build().stop()


def call_global(module: str, name: str, arg: str):
    def write(p: Pickle):
        p.glob(module, name).str(arg).tuple1().reduce()
    return write


# Lists are filled with MARK ... APPENDS, as torch writes them (torch 1.13's own unpickler
# does not know APPEND).

def self_list(p: Pickle):
    # EMPTY_LIST, BINPUT 50, MARK, BINGET 50, APPENDS: a list that contains itself.
    p.empty_list().put(50).mark().get(50).appends()


def deep_list(p: Pickle, depth=100_000):
    # [[[...]]]: EMPTY_LIST (MARK EMPTY_LIST)*(depth-1) APPENDS*(depth-1)
    p.empty_list()
    for _ in range(depth - 1):
        p.mark().empty_list()
    for _ in range(depth - 1):
        p.appends()


# ------------------------------------------------------------------------ cases

def cases(base: bytes, prefix: str) -> list[tuple[str, bytes, list[str]]]:
    with zipfile.ZipFile(io.BytesIO(base)) as z:
        code = z.read(f"{prefix}/{CODE}").decode()
    assert "return torch.relu(torch.add(x, w))" in code, code
    syntax_error = code.replace("return torch.relu(torch.add(x, w))",
                                "return torch.relu(torch.add(x, w)")
    unknown_op = code.replace("return torch.relu(torch.add(x, w))",
                              "return torch.my_unknown_op(torch.add(x, w))")
    os_system = Pickle().glob("os", "system").str(HARMLESS).tuple1().reduce().stop()
    constants_posix = Pickle().mark().glob("posix", "system").str(HARMLESS).tuple1().reduce() \
        .tuple().stop()

    def dp(data_pkl: bytes, **kw) -> bytes:
        return rewrite(base, {"data.pkl": data_pkl}, **kw)

    two40 = 1 << 40
    two32 = 1 << 32
    return [
        # pickles that try to run code
        ("pickle_os_system.pt", dp(os_system), ["os.system"]),
        ("pickle_os_system_in_attribute.pt",
         dp(module_pickle(call_global("os", "system", HARMLESS))), ["os.system"]),
        ("pickle_builtins_eval.pt",
         dp(module_pickle(call_global("builtins", "eval", f"__import__('os').system({HARMLESS!r})"))),
         ["builtins.eval"]),
        ("constants_posix_system.pt", rewrite(base, {"constants.pkl": constants_posix}),
         ["constants.pkl", "posix.system"]),
        # pickles that loop or nest
        ("pickle_recursive_list.pt", dp(module_pickle(self_list)), ["data.pkl", "cycl"]),
        ("pickle_deep_nesting.pt", dp(module_pickle(deep_list)), ["data.pkl", "depth"]),
        ("pickle_bad_opcode.pt", dp(b"\x80\x02\xff."), ["data.pkl"]),
        ("pickle_truncated.pt", dp(module_pickle()[:60]), ["data.pkl"]),
        # tensors that do not fit their storage, or are huge
        ("tensor_offset_past_storage.pt", dp(module_pickle(offset=1_000_000)),
         ["data.pkl", "offset"]),
        ("tensor_strides_past_storage.pt", dp(module_pickle(strides=(1000,))),
         ["data.pkl", "stride"]),
        ("tensor_huge_sizes.pt", dp(module_pickle(numel=two40, sizes=(two40,))),
         ["data.pkl", str(two40)]),
        # 2^32 * 2^32 wraps to 0 in 64 bits: the element count must not overflow
        ("tensor_sizes_overflow.pt",
         dp(module_pickle(numel=4, sizes=(two32, two32), strides=(0, 0))),
         ["data.pkl", str(two32)]),
        ("tensor_negative_size.pt", dp(module_pickle(sizes=(-4,))), ["data.pkl", "-4"]),
        ("storage_numel_past_entry.pt", dp(module_pickle(numel=1000, sizes=(1000,))),
         ["data/0"]),
        ("storage_missing_entry.pt", dp(module_pickle(key="7")), ["data/7"]),
        ("storage_unknown_type.pt", dp(module_pickle(storage="EvilStorage")),
         ["EvilStorage"]),
        # the zip container
        ("zip_bomb.pt", write_bomb(base, CODE, 256 << 20, len(code.encode())), [CODE]),
        ("zip_entry_dotdot.pt",
         rewrite(base, add=[("../evil", b"pwned\n", zipfile.ZIP_STORED)]), ["../evil"]),
        ("zip_entry_absolute.pt",
         rewrite(base, add=[("/tmp/kiln_evil", b"pwned\n", zipfile.ZIP_STORED)]),
         ["/tmp/kiln_evil"]),
        ("truncated.pt", None, ["truncated.pt"]),        # filled in below
        ("truncated_tail.pt", None, ["truncated_tail.pt"]),
        ("missing_data_pkl.pt", rewrite(base, drop={"data.pkl"}), ["data.pkl"]),
        # the code
        ("code_syntax_error.pt", rewrite(base, {CODE: syntax_error.encode()}), [CODE]),
        # the op, the entry and the line it stands on
        ("code_unknown_op.pt", rewrite(base, {CODE: unknown_op.encode()}),
         ["unsupported aten op 'aten::my_unknown_op'",
          f"{CODE}:{unknown_op.splitlines().index(next(l for l in unknown_op.splitlines() if 'my_unknown_op' in l)) + 1}:"]),
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    try:
        import torch
    except ImportError:
        print("make_torch_hostile.py: needs torch (Debian's python3-torch) for the base archive",
              file=sys.stderr)
        return 1

    base, prefix = base_archive()
    valid = rewrite(base, {"data.pkl": module_pickle()})
    (out / "valid_base.pt").write_bytes(valid)
    # The rewritten archive and the hand-written pickle must be what PyTorch accepts.
    m = torch.jit.load(str(out / "valid_base.pt"))
    y = m(torch.tensor([1.0, 1.0, -3.0, 0.0]))
    assert y.tolist() == [1.5, 0.0, 0.0, 0.0], y
    (out / "expected_ok.txt").write_text("valid_base.pt\n")

    lines = []
    for name, data, substrings in cases(base, prefix):
        if name == "truncated.pt":
            data = valid[:len(valid) // 2]
        elif name == "truncated_tail.pt":
            data = valid[:-10]
        (out / name).write_bytes(data)
        lines += [f"{name}\t{s}" for s in substrings]
    (out / "expected_errors.txt").write_text("\n".join(lines) + "\n")
    n = len({line.split("\t")[0] for line in lines})
    print(f"make_torch_hostile.py: wrote valid_base.pt and {n} hostile archives to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
