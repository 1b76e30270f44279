"""kiln.load(): a compiled model's shared library (libNAME.so) run through its C API with
ctypes (docs/reference/c_api.md)."""
from __future__ import annotations

import ctypes
import os
import re
import threading
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ._compile import KilnError

# KILN_DTYPE_* codes (ONNX's numbering) -> numpy dtype of the buffer. numpy has no bfloat16,
# so it travels as its uint16 bit pattern; the storage-only types hold one element per byte
# (a float's bit pattern, an integer's value).
_DTYPES = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
    9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64, 16: np.uint16,
    17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8, 21: np.uint8, 22: np.int8,
    23: np.uint8, 24: np.uint8, 25: np.uint8, 26: np.int8,
}


class TensorInfo(NamedTuple):
    """An input or output as the library describes it. With bounded symbolic dims (kiln compile
    --dim seq=1..256) `shape` holds their maxima (Model.min_shapes has the inputs' minima)."""
    name: str
    dtype: np.dtype
    shape: tuple[int, ...]


class _Options(ctypes.Structure):  # NAME_options
    _fields_ = [("threads", ctypes.c_int), ("weights_path", ctypes.c_char_p),
                ("arena", ctypes.c_void_p), ("arena_size", ctypes.c_size_t)]


class _Tensor(ctypes.Structure):  # NAME_tensor
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", ctypes.POINTER(ctypes.c_int64))]


def load(path: str | os.PathLike, *, name: str | None = None, threads: int = 0,
         weights_path: str | os.PathLike | None = None) -> Model:
    """Opens libNAME.so (from `kiln compile --emit shared`) and creates a context for it.

    name: the C API's prefix, by default NAME from the file name. threads: threads per run
    (0: one per physical core). weights_path: the NAME.weights of a model compiled with
    --weights external, by default the one beside the library.
    """
    return Model(path, name=name, threads=threads, weights_path=weights_path)


class Model:
    """A compiled model: call it with numpy arrays, positionally in input order or by input
    name; it returns the output's array, or a tuple of arrays in output order when the model
    has several. Inputs must have exactly the dtype and shape in `inputs` (lists and scalars
    are converted to the input's dtype). One call runs at a time; close() (or a `with` block)
    frees the context at once, garbage collection does otherwise.
    """

    def __init__(self, path, *, name=None, threads=0, weights_path=None):
        self._ctx = None  # for __del__ when construction fails
        self.path = Path(path)
        if name is None:
            m = re.fullmatch(r"lib(\w+)\.so", self.path.name)
            if not m:
                raise ValueError(f"{self.path}: not named libNAME.so, as kiln names its shared "
                                 "libraries; give name=NAME, the prefix of its C API")
            name = m.group(1)
        self.name = name
        try:
            self._lib = ctypes.CDLL(str(self.path.resolve()))
        except OSError as e:
            raise KilnError(f"cannot load {self.path}: {e}") from None
        f = self._function
        self._create = f("create", ctypes.c_void_p, [ctypes.POINTER(_Options)])
        self._run = f("run_checked", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_Tensor), ctypes.c_size_t,
                                                    ctypes.POINTER(_Tensor), ctypes.c_size_t])
        self._error = f("error", ctypes.c_char_p, [ctypes.c_void_p])
        self._destroy = f("destroy", None, [ctypes.c_void_p])
        self.inputs, self._raw_inputs = self._describe("input")
        self.outputs, self._raw_outputs = self._describe("output")
        # Libraries from kiln versions with bounded dims set each run's input extents and read
        # the outputs' back.
        self._set_input_shape = self._optional("set_input_shape", ctypes.c_int,
                                               [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_int64)])
        self._output_shape = self._optional("output_shape", ctypes.POINTER(ctypes.c_int64),
                                            [ctypes.c_void_p, ctypes.c_size_t])
        min_dims = self._optional("input_min_dims", ctypes.POINTER(ctypes.c_int64), [ctypes.c_size_t])
        # Each input's smallest extents: its shape, but for bounded symbolic dims.
        self.min_shapes = [tuple(min_dims(k)[d] for d in range(len(i.shape))) if min_dims else i.shape
                           for k, i in enumerate(self.inputs)]
        # And their steps: 1, but for dims compiled as MIN..MAX:STEP.
        steps = self._optional("input_dim_steps", ctypes.POINTER(ctypes.c_int64), [ctypes.c_size_t])
        self.dim_steps = [tuple(steps(k)[d] for d in range(len(i.shape))) if steps else (1,) * len(i.shape)
                          for k, i in enumerate(self.inputs)]

        if weights_path is None and (self.path.parent / f"{name}.weights").exists():
            weights_path = self.path.parent / f"{name}.weights"  # the C default is relative to the cwd
        options = _Options(threads, os.fsencode(weights_path) if weights_path is not None else None, None, 0)
        ctx = self._create(ctypes.byref(options))
        if not ctx:
            raise MemoryError(f"{name}_create: out of memory")
        error = self._error(ctx)
        if error:
            self._destroy(ctx)
            raise KilnError(f"{self.path}: {error.decode(errors='replace')}")
        self._ctx = ctx
        self._lock = threading.Lock()  # a context runs on one thread at a time

    def _function(self, suffix, restype, argtypes):
        try:
            fn = getattr(self._lib, f"{self.name}_{suffix}")
        except AttributeError:
            raise KilnError(f"{self.path} has no function {self.name}_{suffix}: not a model kiln "
                            f"compiled with the name '{self.name}'") from None
        fn.restype = restype
        fn.argtypes = argtypes
        return fn

    def _optional(self, suffix, restype, argtypes):
        if not hasattr(self._lib, f"{self.name}_{suffix}"):
            return None
        return self._function(suffix, restype, argtypes)

    def _describe(self, kind):
        count = self._function(f"num_{kind}s", ctypes.c_size_t, [])()
        name = self._function(f"{kind}_name", ctypes.c_char_p, [ctypes.c_size_t])
        dtype = self._function(f"{kind}_dtype", ctypes.c_int, [ctypes.c_size_t])
        rank = self._function(f"{kind}_rank", ctypes.c_int, [ctypes.c_size_t])
        dims = self._function(f"{kind}_dims", ctypes.POINTER(ctypes.c_int64), [ctypes.c_size_t])
        infos, raw = [], []
        for i in range(count):
            code = dtype(i)
            if code not in _DTYPES:
                raise KilnError(f"{self.path}: {kind} {i} has dtype code {code}, which this kiln "
                                "package does not know")
            d = dims(i)
            infos.append(TensorInfo(name(i).decode(), np.dtype(_DTYPES[code]),
                                    tuple(d[k] for k in range(rank(i)))))
            # run_checked is given the code and the library's own dims array, valid as long
            # as the library is loaded.
            raw.append((code, d))
        return infos, raw

    def __call__(self, *args, **kwargs):
        arrays = self._input_arrays(args, kwargs)
        with self._lock:
            if self._ctx is None:
                raise ValueError(f"model {self.name} is closed")
            in_dims, out_shapes = self._shapes(arrays)
            outputs = [np.empty(shape, o.dtype) for shape, o in zip(out_shapes, self.outputs)]
            ins = self._tensors(arrays, [(code, d) for (code, _), d in zip(self._raw_inputs, in_dims)])
            out_dims = [(ctypes.c_int64 * max(len(s), 1))(*s) for s in out_shapes]
            outs = self._tensors(outputs, [(code, d) for (code, _), d in zip(self._raw_outputs, out_dims)])
            if self._run(self._ctx, ins, len(arrays), outs, len(outputs)) != 0:
                raise KilnError(f"{self.name}: {self._error(self._ctx).decode(errors='replace')}")
            if self._output_shape:
                # Sizes only the run knows (NonZero's count): the buffer had the capacity, the
                # output is its first elements at the extents the run produced.
                for i, o in enumerate(self.outputs):
                    d = self._output_shape(self._ctx, i)
                    shape = tuple(d[k] for k in range(len(o.shape))) if d else outputs[i].shape
                    if shape != outputs[i].shape:
                        outputs[i] = outputs[i].reshape(-1)[:int(np.prod(shape))].reshape(shape).copy()
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _shapes(self, arrays):
        """The inputs' dims as C arrays, and the outputs' shapes for them."""
        in_dims = [(ctypes.c_int64 * max(a.ndim, 1))(*a.shape) for a in arrays]
        if not self._set_input_shape or not self._output_shape:
            return in_dims, [o.shape for o in self.outputs]
        for i, (a, d) in enumerate(zip(arrays, in_dims)):
            if self._set_input_shape(self._ctx, i, a.ndim, d) != 0:
                raise ValueError(f"{self.name}: {self._error(self._ctx).decode(errors='replace')}")
        shapes = []
        for i, o in enumerate(self.outputs):
            d = self._output_shape(self._ctx, i)
            if not d:
                raise ValueError(f"{self.name}: {self._error(self._ctx).decode(errors='replace')}")
            shapes.append(tuple(d[k] for k in range(len(o.shape))))
        return in_dims, shapes

    def _input_arrays(self, args, kwargs):
        names = [i.name for i in self.inputs]
        if len(args) > len(names):
            raise TypeError(f"{self.name}: takes {len(names)} input(s) ({', '.join(names)}), got {len(args)}")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{self.name}: no input '{key}'; its inputs: {', '.join(names)}")
            if key in given:
                raise TypeError(f"{self.name}: input '{key}' given twice, by position and by name")
            given[key] = value
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError(f"{self.name}: missing input(s) {', '.join(missing)}")
        arrays = []
        for info, low, steps in zip(self.inputs, self.min_shapes, self.dim_steps):
            a = given[info.name]
            if not isinstance(a, np.ndarray):
                a = np.asarray(a, dtype=info.dtype)
            if a.dtype != info.dtype:
                raise TypeError(f"{self.name}: input '{info.name}' is {a.dtype}, the model takes {info.dtype}")
            if a.ndim != len(info.shape) or any(not lo <= n <= hi or n % st for n, lo, hi, st in
                                                zip(a.shape, low, info.shape, steps)):
                takes = info.shape if low == info.shape else tuple(
                    hi if lo == hi else f"{lo}..{hi}" + (f":{st}" if st > 1 else "")
                    for lo, hi, st in zip(low, info.shape, steps))
                raise ValueError(f"{self.name}: input '{info.name}' has shape {a.shape}, the model takes {takes}")
            arrays.append(np.ascontiguousarray(a))
        return arrays

    @staticmethod
    def _tensors(arrays, raw):
        tensors = (_Tensor * max(len(arrays), 1))()
        for t, a, (code, dims) in zip(tensors, arrays, raw):
            t.data, t.dtype, t.rank, t.dims = a.ctypes.data, code, a.ndim, dims
        return tensors

    def close(self) -> None:
        """Frees the context; later calls raise ValueError."""
        if self._ctx is not None:
            with self._lock:
                self._destroy(self._ctx)
                self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_ctx", None) is not None:
            self.close()

    def __repr__(self):
        def side(infos):
            return ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in infos)
        return f"<kiln.Model {self.name} ({side(self.inputs)}) -> ({side(self.outputs)})>"
