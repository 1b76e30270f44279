"""What examples/cpp_classifier and examples/c_pkgconfig print for MODEL, from ONNX Runtime:
one line "image B: class C" per image of the batch, the input made as they make it.

    expected_classes.py MODEL.onnx
"""
import sys

import numpy as np
import onnxruntime as ort

session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
spec = session.get_inputs()[0]
n = int(np.prod(spec.shape))
image = ((np.arange(n, dtype=np.int64) * 7919) % 239).astype(np.float32) / np.float32(238) - np.float32(0.5)
scores = session.run(None, {spec.name: image.reshape(spec.shape)})[0]
for b, row in enumerate(scores):
    print(f"image {b}: class {row.argmax()}")
