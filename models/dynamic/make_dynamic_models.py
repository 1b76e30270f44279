#!/usr/bin/env python3
"""Models with bounded dynamic dims, for `kiln compile --dim NAME=MIN..MAX`.

Writes, per model, `model.onnx` (the dynamic dims left symbolic, as torch.onnx.export
writes them with dynamic_axes) and, for each sample size, `input_<size>_K.npy` and
`expected_<size>_K.npy` from ONNX Runtime (one thread, graph optimizations off).

    .venv/bin/python models/dynamic/make_dynamic_models.py [--model bert_seq|torch_encoder]
                                                          [--out DIR] [--hidden H] ...

bert_seq: a BERT-shaped encoder (plain nn.Module: Q/K/V Linear, heads split by view, mask
added to the scores), inputs x [1, seq, hidden] and mask [1, seq]. torch_encoder: token and
position embeddings (position ids from arange(seq)) into torch.nn.TransformerEncoder (its
packed in-projection sliced into Q, K, V) and a Linear head, input ids [1, seq] (int64).
Without --model both are written beside this script. `--hidden 256 --ffn 1024` makes the
larger bert_seq encoder bench/dynamic_dims.py times; the committed fixtures are the small
defaults.
"""
import argparse
import io
import math
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort


def make_encoder(hidden: int, heads: int, ffn: int, layers: int):
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))
            self.out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden)
            self.ff1, self.ff2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
            self.norm2 = nn.LayerNorm(hidden)

        def split(self, x):
            b, s, _ = x.shape
            return x.view(b, s, heads, hidden // heads).permute(0, 2, 1, 3)

        def forward(self, x, mask):
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hidden // heads)
            ctx = torch.matmul(torch.softmax(scores + mask, dim=-1), v).permute(0, 2, 1, 3)
            ctx = ctx.contiguous().view(x.shape[0], x.shape[1], hidden)
            x = self.norm1(x + self.out(ctx))
            return self.norm2(x + self.ff2(nn.functional.gelu(self.ff1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])

        def forward(self, x, mask):
            additive = (1.0 - mask[:, None, None, :]) * -10000.0
            for layer in self.layers:
                x = layer(x, additive)
            return x

    torch.manual_seed(0)
    net = Encoder().eval()
    x = torch.zeros(1, 8, hidden)
    mask = torch.ones(1, 8)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(net, (x, mask), buf, opset_version=13, input_names=["x", "mask"],
                          output_names=["y"],
                          dynamic_axes={"x": {1: "seq"}, "mask": {1: "seq"}, "y": {1: "seq"}})
    m = onnx.load_from_string(buf.getvalue())
    for n in m.graph.node:
        n.doc_string = ""
    m.ir_version = 8  # readable by onnx 1.12 (Debian's libonnx-dev)
    return m


def make_torch_encoder(hidden: int, heads: int, ffn: int, layers: int):
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, hidden)
            self.positions = nn.Embedding(256, hidden)
            layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(hidden, 3)

        def forward(self, ids):
            positions = torch.arange(ids.shape[1]).unsqueeze(0)
            return self.head(self.encoder(self.tokens(ids) + self.positions(positions)))

    torch.manual_seed(0)
    net = Encoder().eval()
    buf = io.BytesIO()
    # Not under no_grad: there PyTorch takes its fused encoder fast path, which has no ONNX form.
    torch.onnx.export(net, (torch.zeros(1, 8, dtype=torch.int64),), buf, opset_version=14, input_names=["ids"],
                      output_names=["y"], dynamic_axes={"ids": {1: "seq"}, "y": {1: "seq"}})
    m = onnx.load_from_string(buf.getvalue())
    for n in m.graph.node:
        n.doc_string = ""
    m.ir_version = 8
    return m


VOCAB = 200


def samples(model: str, hidden: int, seq: int):
    r = np.random.RandomState(seq)
    if model == "torch_encoder":
        return [r.randint(0, VOCAB, (1, seq)).astype(np.int64)]
    x = r.standard_normal((1, seq, hidden)).astype(np.float32)
    mask = np.ones((1, seq), np.float32)
    mask[:, seq - seq // 4:] = 0  # the last quarter padded
    return [x, mask]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["bert_seq", "torch_encoder"])
    ap.add_argument("--out", type=Path, help="the model's folder (default: models/dynamic/MODEL)")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--sizes", default="1,16,64,256", help="seq lengths to write samples for")
    a = ap.parse_args()
    for name in [a.model] if a.model else ["bert_seq", "torch_encoder"]:
        out = a.out or Path(__file__).resolve().parent / name
        make = make_encoder if name == "bert_seq" else make_torch_encoder
        m = make(a.hidden, a.heads, a.ffn, a.layers)
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.onnx").write_bytes(m.SerializeToString())
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        for seq in (int(s) for s in a.sizes.split(",")):
            ins = samples(name, a.hidden, seq)
            outs = sess.run(None, dict(zip(names, ins)))
            for k, t in enumerate(ins):
                np.save(out / f"input_{seq}_{k}.npy", t)
            for k, t in enumerate(outs):
                np.save(out / f"expected_{seq}_{k}.npy", t)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
