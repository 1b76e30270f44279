"""kiln bench adapter: TorchScript archives (torch.jit.load) and torch.export programs (.pt2,
torch.export.load, PyTorch 2.1 and later) on PyTorch's CPU backend.
Outputs: a tensor, or a tuple/list of tensors, in order."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_bench_worker  # noqa: E402


def load(model, threads):
    import torch
    if model is None:
        return torch.__version__, None
    torch.set_num_threads(threads)
    if model.endswith(".pt2"):
        module = torch.export.load(model).module()
    else:
        module = torch.jit.load(model, map_location="cpu").eval()

    def run(inputs):
        with torch.inference_mode():
            out = module(*[torch.from_numpy(x) for x in inputs])
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [o.numpy() for o in outs]

    return torch.__version__, run


if __name__ == "__main__":
    kiln_bench_worker.main("torch", load)
