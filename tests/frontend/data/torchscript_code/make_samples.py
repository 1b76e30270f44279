#!/usr/bin/env python3
"""Writes the TorchScript code samples the parser tests read (tests/frontend/data/torchscript_code).

Each model is saved with torch.jit.trace, torch.jit.script and
torch.jit.freeze(torch.jit.script(m.eval())); only the archives' code/**/*.py files are kept
(never the weights), in <model>_<mode>/ under the archive's own paths. A file that differs from
one already written only in its numbers (mangle suffixes, shapes, channel counts) is skipped,
so a folder need not hold every class its model uses. Run with Debian's python3-torch (1.13):
    /usr/bin/python3 tests/frontend/data/torchscript_code/make_samples.py
"""
import os
import re
import shutil
import sys
import tempfile
import zipfile

import torch
import torchvision
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Branchy(nn.Module):
    """A data-dependent if and a for loop."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, n: int = 3) -> torch.Tensor:
        if bool(x.sum() > 0):
            x = torch.relu(self.fc(x))
        else:
            x = -x
        for i in range(n):
            x = x * 0.5 + float(i)
        return x


class RnnWrap(nn.Module):
    """Returns only the output, so that trace takes it."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


def models():
    torch.manual_seed(0)
    enc_layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, batch_first=True)
    yield "resnet18", torchvision.models.resnet18(weights=None), torch.randn(1, 3, 64, 64)
    yield "mobilenet_v2", torchvision.models.mobilenet_v2(weights=None), torch.randn(1, 3, 64, 64)
    yield "transformer", nn.TransformerEncoder(enc_layer, num_layers=2), torch.randn(2, 5, 32)
    yield "lstm", RnnWrap(nn.LSTM(16, 32, num_layers=1, batch_first=True)), torch.randn(2, 5, 16)
    yield "gru", RnnWrap(nn.GRU(16, 32, num_layers=1, batch_first=True)), torch.randn(2, 5, 16)
    yield "branchy", Branchy(), torch.randn(2, 8)


def save(name, mode, model, example):
    model = model.eval()
    if mode == "trace":
        m = torch.jit.trace(model, example, check_trace=False)
    elif mode == "script":
        m = torch.jit.script(model)
    else:
        m = torch.jit.freeze(torch.jit.script(model))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.pt")
        torch.jit.save(m, path)
        with zipfile.ZipFile(path) as z:
            return {n: z.read(n) for n in z.namelist() if "/code/" in n and n.endswith(".py")}


def main():
    seen = set()
    total = 0
    for name, model, example in models():
        for mode in ("trace", "script", "freeze"):
            files = save(name, mode, model, example)
            out = os.path.join(HERE, f"{name}_{mode}")
            shutil.rmtree(out, ignore_errors=True)
            for entry, data in sorted(files.items()):
                digest = re.sub(rb"[0-9]+", b"0", data)
                if digest in seen:
                    continue
                seen.add(digest)
                rel = entry[entry.index("/code/") + 1:]  # code/__torch__/...
                dest = os.path.join(out, rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "wb") as f:
                    f.write(data)
                total += len(data)
            print(f"{name}_{mode}: {len(files)} code files", file=sys.stderr)
    print(f"{len(seen)} distinct files, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
