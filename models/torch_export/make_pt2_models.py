#!/usr/bin/env python3
"""torch.export fixtures for kiln's .pt2 frontend (frontend/torch_export/).

    .venv-torch2/bin/python models/torch_export/make_pt2_models.py [--big OUTDIR]

Needs torch >= 2.8 (the PT2 archive layout; torch.export itself is 2.1+). Debian's
torch is 1.13, so make a separate venv (gitignored):

    python3 -m venv .venv-torch2
    .venv-torch2/bin/pip install --no-deps torch==2.15.0
    .venv-torch2/bin/pip install sympy mpmath networkx jinja2 MarkupSafe filelock \\
        fsspec typing_extensions numpy "setuptools>=77.0.3"
    # PyPI's Linux wheel links the CUDA libraries even on the CPU: `import torch`
    # fails without them (libcufile.so.0, libcudart.so.13...), so add them (~3 GB):
    .venv-torch2/bin/pip install "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2" \\
        nvidia-cudnn-cu13==9.26.0.51 nvidia-cusparselt-cu13==0.8.1 nvidia-nccl-cu13==2.30.7 \\
        nvidia-nvshmem-cu13==3.7.2
    # --big also needs torchvision (no deps) and pillow:
    .venv-torch2/bin/pip install --no-deps torchvision==0.29.2 pillow  # the newest; made for torch 2.14, its models are plain Python

Writes, for each model below, models/torch_export/<model>/model.pt2 (torch.export.save),
input_0.npy (float32, seeded) and expected_0.npy (PyTorch's output for it):

- cnn: conv+bn+relu, a residual add, maxpool, a depthwise conv, hardswish, adaptive
  average pooling, flatten, linear. Exported as is (higher-level ATen: conv2d, linear...).
- cnn_core_aten: the same module after ExportedProgram.run_decompositions() (Core ATen:
  convolution, addmm, _native_batch_norm_legit_no_training...).
- cnn_dynamic: the same module with a dynamic batch dim (torch.export.Dim("batch",
  max=64)); input_0 has batch 3, set1/input_0 batch 1 (the file's example had batch 2).
- transformer: a 2-layer nn.TransformerEncoder (d_model 16, nhead 2, batch_first).
- mlp: linear/gelu/linear/softmax.
- cnn_legacy: the cnn's program in the layout torch.export.save wrote up to 2.7 (a flat
  zip of serialized_exported_program.json, serialized_state_dict.pt (a torch.save blob),
  serialized_constants.pt, serialized_example_inputs.pt and `version`). Torch >= 2.8 no
  longer writes it; this script reproduces torch 2.5's save() with the same serializer
  (torch._export.serde.serialize.serialize), so the JSON is torch 2.15's schema 8.x in
  the old container, not a file written by an old torch.

With --big OUTDIR (not committed): resnet18 and mobilenet_v2 (torchvision, random
weights, eval) and a TransformerEncoder with d_model 256, 4 layers, 8 heads, each as
OUTDIR/<model>/model.pt2 with its input and expected output.

Every model also gets targets.txt: the sorted `target` strings of its graph's nodes (the
ops kiln's aten table must lower). Deterministic seeds; the committed files are small.
"""
import argparse
import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.act = nn.Hardswish()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = y + self.conv2(y)
        y = self.pool(y)
        y = self.act(self.pw(self.dw(y)))
        y = torch.flatten(self.gap(y), 1)
        return self.fc(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return torch.softmax(self.fc2(nn.functional.gelu(self.fc1(x))), dim=-1)


def transformer(d_model, nhead, layers, ff):
    layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ff, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)


def randomize_bn(module, gen):
    # Non-trivial running statistics, so that batch norm is not an identity.
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


def save_npy(path, t):
    np.save(path, np.ascontiguousarray(t.detach().numpy()), allow_pickle=False)


def json_targets(path):
    """The node targets of the saved program's JSON (getitem is folded into producers there)."""
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith(("models/model.json", "serialized_exported_program.json")))
        graph = json.loads(z.read(name))["graph_module"]["graph"]
    return sorted({n["target"] for n in graph["nodes"]})


def write_legacy(ep, path):
    """torch 2.5's torch.export.save: a flat, stored zip of the serialized artifact."""
    from torch._export.serde.schema import SCHEMA_VERSION
    from torch._export.serde.serialize import serialize

    artifact = serialize(ep)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("serialized_exported_program.json", artifact.exported_program)
        z.writestr("serialized_state_dict.pt", artifact.state_dict)
        z.writestr("serialized_constants.pt", artifact.constants)
        z.writestr("serialized_example_inputs.pt", artifact.example_inputs)
        z.writestr("version", ".".join(map(str, SCHEMA_VERSION)))


def save_model(out, name, ep, module, inputs, legacy=False):
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    if legacy:
        write_legacy(ep, d / "model.pt2")
    else:
        torch.export.save(ep, str(d / "model.pt2"))
    with torch.no_grad():
        for k, x in enumerate(inputs):  # input sets: the first beside the model, more in set1/, set2/ ...
            sd = d if k == 0 else d / f"set{k}"
            sd.mkdir(parents=True, exist_ok=True)
            save_npy(sd / "input_0.npy", x)
            got = ep.module()(x)
            want = module(x)
            assert torch.allclose(got, want, atol=1e-5), name
            save_npy(sd / "expected_0.npy", want)
    found = json_targets(d / "model.pt2")
    (d / "targets.txt").write_text("".join(t + "\n" for t in found))
    # The file must load back in torch itself.
    if not legacy:
        torch.export.load(str(d / "model.pt2"))
    print(f"{name}: {(d / 'model.pt2').stat().st_size} bytes, {len(found)} targets")


def small(out):
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)

    cnn = TinyCNN().eval()
    randomize_bn(cnn, gen)
    x = torch.randn(1, 3, 16, 16, generator=gen)
    with torch.no_grad():
        ep = torch.export.export(cnn, (x,))
    save_model(out, "cnn", ep, cnn, [x])
    save_model(out, "cnn_legacy", ep, cnn, [x], legacy=True)
    save_model(out, "cnn_core_aten", ep.run_decompositions(), cnn, [x])

    batch = torch.export.Dim("batch", max=64)
    x2 = torch.randn(2, 3, 16, 16, generator=gen)
    with torch.no_grad():
        ep = torch.export.export(cnn, (x2,), dynamic_shapes={"x": {0: batch}})
    save_model(out, "cnn_dynamic", ep, cnn,
               [torch.randn(3, 3, 16, 16, generator=gen), torch.randn(1, 3, 16, 16, generator=gen)])

    enc = transformer(16, 2, 2, 32).eval()
    x = torch.randn(1, 5, 16, generator=gen)
    with torch.no_grad():
        ep = torch.export.export(enc, (x,))
    save_model(out, "transformer", ep, enc, [x])

    mlp = MLP().eval()
    x = torch.randn(4, 12, generator=gen)
    with torch.no_grad():
        ep = torch.export.export(mlp, (x,))
    save_model(out, "mlp", ep, mlp, [x])


def big(out):
    import torchvision

    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    x = torch.randn(1, 3, 224, 224, generator=gen)
    for name, ctor in [("resnet18", torchvision.models.resnet18), ("mobilenet_v2", torchvision.models.mobilenet_v2)]:
        m = ctor(weights=None).eval()
        with torch.no_grad():
            ep = torch.export.export(m, (x,))
        save_model(out, name, ep, m, [x])
    enc = transformer(256, 8, 4, 1024).eval()
    x = torch.randn(1, 64, 256, generator=gen)
    with torch.no_grad():
        ep = torch.export.export(enc, (x,))
    save_model(out, "transformer_256", ep, enc, [x])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--big", metavar="OUTDIR", help="also write the large models there (not committed)")
    p.add_argument("--out", default=str(HERE), help="where the small models go (default: this folder)")
    args = p.parse_args(argv)
    torch.use_deterministic_algorithms(True)
    small(Path(args.out))
    if args.big:
        big(Path(args.big))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
