"""Makes the small, deliberately broken or unsupported models that tests/e2e/errors.sh uses.

Run: .venv/bin/python tests/e2e/make_error_models.py  (writes tests/e2e/data/)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def save(model, name):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def main():
    os.makedirs(HERE, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])

    # Two ops kiln will never know (a custom domain), three nodes: one error must list all.
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu_ok"),
        helper.make_node("Swizzle", ["a"], ["b"], name="swizzle_1", domain="com.example"),
        helper.make_node("Frobnicate", ["b"], ["c"], name="frob_1", domain="com.example"),
        helper.make_node("Swizzle", ["c"], ["y"], name="swizzle_2", domain="com.example"),
    ]
    g = helper.make_graph(nodes, "unsupported", [x], [y])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    save(helper.make_model(g, opset_imports=opsets), "unsupported_op.onnx")

    # A valid model for the wrong-input-shape case: y = relu(x) for x of shape [1, 4].
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu", [x],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "relu.onnx")
    np.save(os.path.join(HERE, "wrong_shape.npy"), np.ones((2, 3), dtype=np.float32))
    np.save(os.path.join(HERE, "relu_input.npy"), np.array([[-1, 0, 2, -3]], dtype=np.float32))

    with open(os.path.join(HERE, "not_a_model.onnx"), "wb") as f:
        f.write(b"this is a text file, not a protobuf\n" * 4)


if __name__ == "__main__":
    main()
