#!/usr/bin/env python3
"""Writes the tiny PyTorch archives that tests/frontend/test_torch_pickle.cpp reads.

    /usr/bin/python3 tests/frontend/data/torch/make_test_archives.py [OUT_DIR]

Made with Debian's python3-torch (1.13). The values are fixed (no random init), and the test
spells them out, so remaking the files must not change what they hold:
  linear.pt  torch.jit.save of torch.jit.script(nn.Linear(3, 2)) with the weights below
  state.pt   torch.save of a dict: a 3x4 float tensor, a strided view of it with an offset
             (the same storage), an int64 vector, a bool scalar and a float64 parameter
  mixed.pt   torch.save of plain containers, a device and f16, bf16 and empty tensors
"""
import collections
import os
import sys

import torch

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

linear = torch.nn.Linear(3, 2)
with torch.no_grad():
    linear.weight.copy_(torch.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.125]]))
    linear.bias.copy_(torch.tensor([1.5, -2.5]))
torch.jit.save(torch.jit.script(linear), os.path.join(out, "linear.pt"))

base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
state = {
    "base": base,
    "view": base[1:, 1::2],  # offset 5, sizes (2, 2), strides (4, 2): shares base's storage
    "ints": torch.tensor([7, -8, 9], dtype=torch.int64),
    "flag": torch.tensor(True),
    "param": torch.nn.Parameter(torch.tensor([0.5, 1.5], dtype=torch.float64)),
}
torch.save(state, os.path.join(out, "state.pt"))

# Plain containers, as torch.save writes them (and a seed for tests/fuzz's fuzz_torch_archive).
mixed = {
    "list": [1, -2.5, "s", None, True, 1 << 40],
    "tuple": (torch.zeros(2, dtype=torch.float16), torch.ones(1, dtype=torch.bfloat16)),
    "od": collections.OrderedDict(x=1),
    "dev": torch.device("cpu"),
    "empty": torch.zeros(0, 3, dtype=torch.int32),
}
torch.save(mixed, os.path.join(out, "mixed.pt"))
