"""The kiln package as the wheel installs it (packaging.wheel): its version, kiln.compile()'s
artifacts, options and errors, kiln.load() on models/ops_mix (three inputs of two dtypes,
three outputs) and models/cnn with external weights against their committed expected outputs,
load()'s checks of names, dtypes and shapes, a bounded dim, and NonZero's count (a size only
the run knows).

    VENV/bin/python wheel_api.py SOURCE_DIR WORK_DIR NONZERO_MODEL
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import kiln

src, work, nonzero_model = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}{'' if ok else ': ' + str(detail)}")
    failures += not ok


def raises(what, exception, text, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exception as e:
        check(what, text in str(e), f"{type(e).__name__}: {e} (expected the text {text!r})")
    except Exception as e:  # noqa: BLE001 - the wrong kind of failure is a failure
        check(what, False, f"{type(e).__name__}: {e}, expected {exception.__name__}")
    else:
        check(what, False, f"no {exception.__name__}")


def close_to(got, want, rtol=1e-5):
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return got.shape == want.shape and got.dtype == want.dtype and float(np.max(np.abs(got - want))) <= rtol * scale


# The version: the package's, the console script's and the bundled executable's agree.
script = Path(sys.executable).parent / "kiln"
line = subprocess.run([script, "--version"], capture_output=True, text=True).stdout.split()
check(f"kiln.__version__ {kiln.__version__} is `kiln --version`'s", line[:2] == ["kiln", kiln.__version__], line)
check("kiln.executable() is inside the installed package",
      kiln.executable().is_relative_to(Path(kiln.__file__).parent), kiln.executable())

# compile(): options as flags, the artifacts by kind.
mix = src / "models/ops_mix"
files = kiln.compile(mix / "model.onnx", work / "mix", name="mix", emit=["lib", "shared"], O=2)
check("compile(emit=['lib', 'shared']) returns lib, shared, header and pkgconfig",
      sorted(files) == ["header", "lib", "pkgconfig", "shared"], files)
check("compile() names libmix.so", files["shared"] == work / "mix/libmix.so", files)
raises("compile() of a file that is not a model raises KilnError with kiln's message", kiln.KilnError,
       "not an ONNX model", kiln.compile, src / "README.md", work / "bad")
check("a failed compile writes no output folder", not (work / "bad").exists())
raises("an unknown option is kiln's error", kiln.KilnError, "unknown option '--no-such-option'",
       kiln.compile, mix / "model.onnx", work / "bad", no_such_option=1)

# load(): metadata, running, errors.
inputs = [np.load(mix / f"input_{i}.npy") for i in range(3)]
expected = [np.load(mix / f"expected_{i}.npy") for i in range(3)]
with kiln.load(files["shared"], threads=1) as net:
    check("inputs' names, dtypes and shapes",
          net.inputs == [("A", np.float32, (2, 3, 4, 5)), ("B", np.float32, (5, 6)), ("idx", np.int64, (4,))],
          net.inputs)
    check("outputs' names", [o.name for o in net.outputs] == ["out_softmax", "out_squeezed", "out_flat"], net.outputs)
    got = net(*inputs)
    check("three outputs, each equal to the committed expected output",
          isinstance(got, tuple) and len(got) == 3 and all(map(close_to, got, expected)))
    by_name = net(inputs[0], idx=inputs[2], B=inputs[1])
    check("inputs by name give the same outputs", all(np.array_equal(a, b) for a, b in zip(got, by_name)))
    check("a list is taken in the input's dtype",
          np.array_equal(net(inputs[0], inputs[1], inputs[2].tolist())[2], got[2]))
    raises("a wrong dtype is refused", TypeError, "input 'A' is float64, the model takes float32",
           net, inputs[0].astype(np.float64), *inputs[1:])
    raises("a wrong shape is refused", ValueError, "input 'B' has shape (6, 5), the model takes (5, 6)",
           net, inputs[0], inputs[1].T, inputs[2])
    raises("an unknown name is refused", TypeError, "no input 'C'", net, *inputs, C=inputs[1])
    raises("a missing input is refused", TypeError, "missing input(s) B, idx", net, inputs[0])
    raises("an input given twice is refused", TypeError, "'A' given twice", net, *inputs, A=inputs[0])
    bad = inputs[2].copy()
    bad[0] = 1000
    raises("a failed run raises KilnError with the library's message", kiln.KilnError,
           "index out of range", net, inputs[0], inputs[1], bad)
    check("the context runs again after a failed run", all(map(close_to, net(*inputs), expected)))
raises("a closed model refuses to run", ValueError, "closed", net, *inputs)

# External weights: found beside the library whatever the working directory.
cnn = src / "models/cnn"
files = kiln.compile(cnn / "model.onnx", work / "cnn", weights="external")
check("weights='external' writes model.weights", files.get("weights") == work / "cnn/model.weights", files)
os.chdir(work)
net = kiln.load(files["shared"])
check("external weights are read from beside the library",
      close_to(net(np.load(cnn / "input_0.npy")), np.load(cnn / "expected_0.npy"), 1e-4))
del net  # __del__ frees the context
raises("a file not named libNAME.so needs name=", ValueError, "give name=NAME", kiln.load, files["header"])

# A bounded symbolic dim: one library for every sequence length, outputs at the run's extents.
bert = src / "models/dynamic/bert_seq"
files = kiln.compile(bert / "model.onnx", work / "bert", dim="seq=1..256")
net = kiln.load(files["shared"])
check("input_min_dims and input_dims give the bounds", net.min_shapes[0] == (1, 1, 32) and
      net.inputs[0].shape == (1, 256, 32), (net.min_shapes, net.inputs))
for seq in (16, 64):
    inputs = [np.load(bert / f"input_{seq}_{k}.npy") for k in range(2)]
    check(f"seq {seq}: the output matches ONNX Runtime's at its length",
          close_to(net(*inputs), np.load(bert / f"expected_{seq}_0.npy"), 1e-4))
raises("a length outside the bounds is refused", ValueError, "the model takes (1, '1..256', 32)", net,
       np.zeros((1, 257, 32), np.float32), np.ones((1, 257), np.float32))
raises("inputs disagreeing on a symbolic dim are refused", ValueError, "disagree on the symbolic dim 'seq'", net,
       np.zeros((1, 16, 32), np.float32), np.ones((1, 17), np.float32))

# A size only the run knows: NonZero's count, the output at the extents the run produced
# (NONZERO_MODEL: x f32[3,4] -> NonZero, written by wheel.sh).
files = kiln.compile(nonzero_model, work / "nonzero")
net = kiln.load(files["shared"])
for x in (np.eye(3, 4, dtype=np.float32), np.zeros((3, 4), np.float32)):
    got = net(x)
    check(f"NonZero of {int(np.count_nonzero(x))} non-zero elements: the coordinates numpy gives",
          got.shape == (2, np.count_nonzero(x)) and np.array_equal(got, np.array(np.nonzero(x))), got)

sys.exit(1 if failures else 0)
