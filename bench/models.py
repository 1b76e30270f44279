#!/usr/bin/env python3
"""Build the benchmark models and export them to ONNX.

    .venv/bin/python bench/models.py --out DIR [--batch N ...] [--only NAME ...] [--list]

For every model NAME and batch N, writes
    DIR/NAME.onnx              batch 1 (or a model without a batch dimension)
    DIR/NAME_bN.onnx           batch N > 1
    DIR/NAME[_bN].input_K.npy  one seeded input per graph input, in graph input order
and DIR/models.json describing every file written (inputs, shapes, dtypes, description).

Models (random weights, fixed seeds; nothing is downloaded):
    resnet50         torchvision ResNet-50, [N,3,224,224] -> [N,1000], opset 13
    mobilenet_v2     torchvision MobileNetV2, [N,3,224,224] -> [N,1000], opset 13
    bert             BERT-base-shaped encoder: 12 layers, hidden 768, 12 heads, FFN 3072,
                     GELU (erf), LayerNorm, sequence 128; inputs hidden [N,128,768] float32
                     and mask [N,128] float32 (1 = attend, 0 = padding; the inputs written
                     have the last 16 positions of every sequence masked); opset 13, so
                     LayerNorm and GELU arrive decomposed, as PyTorch exports them
    matmul_f32_1024  A [1024,1024] input x B [1024,1024] weight, float32 (no batch)
    matmul_f64_1000  A [1000,1000] input x B [1000,1000] weight, float64 (no batch)
    lstm             one LSTM layer, input 512, hidden 512, 512 steps: X [512,N,512] -> Y,
                     opset 13

Other scripts can import this file: `build(name, batch) -> (onnx bytes, [input arrays])`.
Deterministic: the same arguments write byte-identical files on the same machine.
Needs torch and torchvision for the PyTorch models (scripts/setup.sh --with-torch).
"""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

OPSET = 13

# name -> (description, has a batch dimension)
MODELS = {
    "resnet50": ("torchvision ResNet-50, random weights, 224x224", True),
    "mobilenet_v2": ("torchvision MobileNetV2, random weights, 224x224", True),
    "bert": ("BERT-base-shaped encoder: 12 layers, hidden 768, 12 heads, FFN 3072, seq 128", True),
    "matmul_f32_1024": ("1024x1024 by 1024x1024 MatMul, float32, B a weight", False),
    "matmul_f64_1000": ("1000x1000 by 1000x1000 MatMul, float64, B a weight", False),
    "lstm": ("LSTM, input 512, hidden 512, 512 steps", True),
}

BERT_LAYERS = 12
BERT_HIDDEN = 768
BERT_HEADS = 12
BERT_FFN = 3072
BERT_SEQ = 128
BERT_PADDING = 16  # masked positions at the end of every sequence in the written inputs


def _torch_export(module, args, input_names, output_names) -> bytes:
    import torch
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, args, buf, opset_version=OPSET, input_names=input_names,
                          output_names=output_names, do_constant_folding=True,
                          dynamic_axes=None)
    return _strip_doc_strings(buf.getvalue())


def _strip_doc_strings(data: bytes) -> bytes:
    """Exporters put source paths in doc strings; drop them so output is reproducible."""
    import onnx
    m = onnx.load_from_string(data)
    m.doc_string = ""
    m.graph.doc_string = ""
    for n in m.graph.node:
        n.doc_string = ""
    return m.SerializeToString()


def _torchvision(name: str, batch: int):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = np.random.RandomState(0).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    return _torch_export(model, (torch.from_numpy(x),), ["input"], ["logits"]), [x]


def _bert_module():
    import torch
    from torch import nn

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.key = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.value = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.head_dim = BERT_HIDDEN // BERT_HEADS

        def heads(self, x):  # [B,S,H*D] -> [B,H,S,D]
            b, s, _ = x.shape
            return x.view(b, s, BERT_HEADS, self.head_dim).permute(0, 2, 1, 3)

        def forward(self, x, mask):
            q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            probs = torch.softmax(scores + mask, dim=-1)
            ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            b, s = ctx.shape[0], ctx.shape[1]
            return ctx.view(b, s, BERT_HIDDEN)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = SelfAttention()
            self.attention_out = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.attention_norm = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)
            self.intermediate = nn.Linear(BERT_HIDDEN, BERT_FFN)
            self.gelu = nn.GELU()
            self.output = nn.Linear(BERT_FFN, BERT_HIDDEN)
            self.output_norm = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)

        def forward(self, x, mask):
            x = self.attention_norm(x + self.attention_out(self.attention(x, mask)))
            return self.output_norm(x + self.output(self.gelu(self.intermediate(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(BERT_LAYERS))

        def forward(self, hidden, mask):
            # BERT's extended attention mask: 0 where attended, -10000 at padding,
            # broadcast over heads and query positions.
            additive = (1.0 - mask[:, None, None, :]) * -10000.0
            for layer in self.layers:
                hidden = layer(hidden, additive)
            return hidden

    torch.manual_seed(0)
    model = Encoder().eval()
    with torch.no_grad():  # LayerNorm's default scale 1 and shift 0 would hide mistakes
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
    return model


def _bert(batch: int):
    import torch
    model = _bert_module()
    rng = np.random.RandomState(0)
    hidden = rng.standard_normal((batch, BERT_SEQ, BERT_HIDDEN)).astype(np.float32)
    mask = np.ones((batch, BERT_SEQ), dtype=np.float32)
    mask[:, BERT_SEQ - BERT_PADDING:] = 0.0
    data = _torch_export(model, (torch.from_numpy(hidden), torch.from_numpy(mask)),
                         ["hidden", "mask"], ["output"])
    return data, [hidden, mask]


def _matmul(n: int, dtype) -> tuple[bytes, list[np.ndarray]]:
    import onnx
    from onnx import helper, numpy_helper
    rng = np.random.RandomState(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"], name="matmul")],
        f"matmul_{np.dtype(dtype).name}_{n}",
        [helper.make_tensor_value_info("A", elem, [n, n])],
        [helper.make_tensor_value_info("Y", elem, [n, n])],
        [numpy_helper.from_array(b, "B")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="kiln bench/models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m.SerializeToString(), [a]


def _lstm(batch: int):
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.LSTM(input_size=512, hidden_size=512).eval()
    x = np.random.RandomState(0).standard_normal((512, batch, 512)).astype(np.float32)

    class OutputOnly(nn.Module):  # export Y only; the final states are not needed
        def __init__(self, lstm):
            super().__init__()
            self.lstm = lstm

        def forward(self, x):
            return self.lstm(x)[0]

    return _torch_export(OutputOnly(model), (torch.from_numpy(x),), ["X"], ["Y"]), [x]


def build(name: str, batch: int = 1) -> tuple[bytes, list[np.ndarray]]:
    """The model's ONNX bytes and one seeded input per graph input, in graph input order."""
    if name not in MODELS:
        raise ValueError(f"unknown model '{name}' (known: {', '.join(MODELS)})")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    if name in ("resnet50", "mobilenet_v2"):
        return _torchvision(name, batch)
    if name == "bert":
        return _bert(batch)
    if name == "matmul_f32_1024":
        return _matmul(1024, np.float32)
    if name == "matmul_f64_1000":
        return _matmul(1000, np.float64)
    return _lstm(batch)


def input_names(path) -> list[str]:
    """The graph inputs of an exported model that are not weights, in order."""
    import onnx
    graph = onnx.load(str(path), load_external_data=False).graph
    weights = {t.name for t in graph.initializer}
    return [i.name for i in graph.input if i.name not in weights]


def file_stem(name: str, batch: int) -> str:
    return name if batch == 1 or not MODELS[name][1] else f"{name}_b{batch}"


def _write_atomic(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        write(f)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--out", type=Path, help="output folder (created if missing)")
    p.add_argument("--batch", type=int, nargs="+", default=[1], metavar="N",
                   help="batch sizes to export (default 1)")
    p.add_argument("--only", nargs="+", metavar="NAME", choices=list(MODELS),
                   help="export only these models")
    p.add_argument("--list", action="store_true", help="list the models and exit")
    args = p.parse_args(argv)
    if args.list:
        for name, (desc, _) in MODELS.items():
            print(f"{name:16} {desc}")
        return 0
    if args.out is None:
        p.error("--out DIR is required")
    if any(b < 1 for b in args.batch):
        p.error("--batch values must be at least 1")
    args.out.mkdir(parents=True, exist_ok=True)

    manifest_path = args.out / "models.json"
    manifest = {}
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
    import onnx
    for name in args.only or list(MODELS):
        batches = sorted(set(args.batch)) if MODELS[name][1] else [1]
        for batch in batches:
            stem = file_stem(name, batch)
            data, inputs = build(name, batch)
            _write_atomic(args.out / f"{stem}.onnx", lambda f: f.write(data))
            graph = onnx.load_from_string(data).graph
            weights = {t.name for t in graph.initializer}
            graph_inputs = [i for i in graph.input if i.name not in weights]
            entry_inputs = []
            for k, (vi, arr) in enumerate(zip(graph_inputs, inputs)):
                npy = f"{stem}.input_{k}.npy"
                _write_atomic(args.out / npy,
                              lambda f: np.save(f, np.ascontiguousarray(arr), allow_pickle=False))
                entry_inputs.append(dict(name=vi.name, shape=list(arr.shape),
                                         dtype=arr.dtype.name, file=npy))
            manifest[stem] = dict(model=name, batch=batch if MODELS[name][1] else None,
                                  file=f"{stem}.onnx", description=MODELS[name][0],
                                  inputs=entry_inputs,
                                  outputs=[o.name for o in graph.output])
            print(f"models.py: wrote {args.out / (stem + '.onnx')} ({len(data) / 1e6:.1f} MB, "
                  f"{len(graph.node)} nodes)", flush=True)
    _write_atomic(manifest_path,
                  lambda f: f.write((json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
