"""kiln from Python: compile a model with the bundled kiln executable and run the compiled
shared library on numpy arrays.

    import kiln
    out = kiln.compile("net.onnx", "out")          # runs `kiln compile net.onnx -o out --emit shared`
    with kiln.load(out["shared"]) as net:           # out/libnet.so through its C API (ctypes)
        logits = net(image)                         # numpy in, numpy out

The compiled library needs nothing from Python; this package only drives kiln and opens the
library with ctypes, so it has no compiled extension of its own.
"""
from ._compile import KilnError, compile, executable
from ._model import Model, TensorInfo, load
from ._version import __version__

__all__ = ["KilnError", "Model", "TensorInfo", "__version__", "compile", "executable", "load"]
