"""Writes the hostile-input models of tests/hostile into a directory, at test time.

Run: .venv/bin/python tests/hostile/make_hostile.py OUTDIR   (writes OUTDIR/<case>/...)

Each case is a directory holding model.onnx (or a file of another name) and whatever it
refers to; cases() returns what kiln must do with each: fail with a message matching a
pattern, or (hostile names) compile and run like ONNX Runtime. Nothing here is committed as
a binary: the models are made by this script, from a fixed seed.
"""
import os
import random
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Case:
    """A hostile input. `kind`: "compile" (kiln compile must fail), "run" (kiln run must fail),
    "inspect" (kiln inspect must fail), "names" (compile and run must match ONNX Runtime),
    "exe" (the compiled executable given a bad input must fail)."""

    def __init__(self, name, kind, pattern, model="model.onnx", args=(), inputs=()):
        self.name, self.kind, self.pattern = name, kind, pattern
        self.model, self.args, self.inputs = model, list(args), list(inputs)


def model_of(nodes, inputs, outputs, initializers=(), name="hostile", opset=OPSET):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def save(model, d, file="model.onnx"):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, file), "wb") as f:
        f.write(model.SerializeToString())


def relu_model():
    return model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [1, 4])],
                    [vi("y", [1, 4])])


def add_weight_model(tensor):
    """y = x + w, with `tensor` as the initializer w."""
    tensor.name = "w"
    return model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])],
                    [vi("y", [4])], [tensor])


def raw_tensor(dims, raw, dtype=TensorProto.FLOAT):
    t = TensorProto()
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external_tensor(location, offset=None, length=None, dims=(4,)):
    t = TensorProto()
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            e = t.external_data.add()
            e.key, e.value = key, str(value)
    return t


# ------------------------------------------------------------------ protobuf by hand
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def deep_if_model(depth):
    """A model whose graph is `depth` If nodes, each the then_branch of the one above. Written
    from the outside in, with the lengths computed first, so 10,000 levels take linear time."""
    inner = field_bytes(2, b"innermost")  # GraphProto.name
    # Per level, inside out: graph{ node{ input "c", output "y", op_type "If",
    # attribute{ name "then_branch", type GRAPH, g{ <inner graph> } } } }
    prefixes, length = [], len(inner)
    for _ in range(depth):
        attr_head = field_bytes(1, b"then_branch") + field_varint(20, 5)
        attr_len = len(attr_head) + len(varint(6 << 3 | 2)) + len(varint(length)) + length
        node_head = field_bytes(1, b"c") + field_bytes(2, b"y") + field_bytes(4, b"If")
        node_len = len(node_head) + len(varint(5 << 3 | 2)) + len(varint(attr_len)) + attr_len
        graph_len = len(varint(1 << 3 | 2)) + len(varint(node_len)) + node_len
        prefixes.append(varint(1 << 3 | 2) + varint(node_len) + node_head + varint(5 << 3 | 2) +
                        varint(attr_len) + attr_head + varint(6 << 3 | 2) + varint(length))
        length = graph_len
    graph = b"".join(reversed(prefixes)) + inner
    opset = field_bytes(8, field_bytes(1, b"") + field_varint(2, OPSET))
    return field_varint(1, 8) + opset + field_bytes(7, graph)


def nested_if_model(depth, leaf_input="x", **if_attrs):
    """`depth` nested Ifs built with the onnx helper (valid protobuf, small depth); the leaf reads
    `leaf_input` from the outermost graph."""
    leaf = helper.make_graph([helper.make_node("Identity", [leaf_input], ["z"], name="leaf")], "leaf",
                             [], [vi("z", [1, 4])])
    body = leaf
    for level in range(depth):
        node = helper.make_node("If", ["c"], ["z"], name=f"if_{level}", then_branch=body,
                                else_branch=leaf, **if_attrs)
        body = helper.make_graph([node], f"g{level}", [], [vi("z", [1, 4])])
    return model_of(list(body.node), [vi("x", [1, 4]), vi("c", [], TensorProto.BOOL)],
                    [vi("z", [1, 4])])


# ------------------------------------------------------------------ the cases
HOSTILE_NAME = 'x*/ "q" \\ \n\0 ../../etc/ \u00e9 \\'


def write_all(out):
    """Writes every case under `out`; returns the list of Case."""
    cases = []
    rng = random.Random(8)

    def add(name, kind, pattern, model=None, **kw):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        if model is not None:
            save(model, d)
        cases.append(Case(name, kind, pattern, **kw))
        return d

    # --- files that are not models
    good = relu_model().SerializeToString()
    d = add("truncated", "compile", r"model\.onnx: not an ONNX model")
    open(os.path.join(d, "model.onnx"), "wb").write(good[: len(good) // 2])
    d = add("random_bytes", "compile", r"model\.onnx: not an ONNX model")
    open(os.path.join(d, "model.onnx"), "wb").write(bytes(rng.randrange(256) for _ in range(4096)))
    d = add("empty", "inspect", r"model\.onnx: not an ONNX model \(empty file\)")
    open(os.path.join(d, "model.onnx"), "wb").close()
    add("file_limit", "compile", r"model\.onnx: file of \d+ bytes is over the file size limit of 16 "
        r"bytes \(--max-file-bytes\)", relu_model(), args=["--max-file-bytes", "16"])

    # --- external data
    def ext_case(name, pattern, tensor, setup=None):
        d = add(name, "compile", pattern, add_weight_model(tensor))
        open(os.path.join(d, "w.bin"), "wb").write(np.arange(4, dtype=np.float32).tobytes())
        if setup:
            setup(d)

    outside = os.path.join(out, "outside.bin")
    open(outside, "wb").write(np.ones(4, dtype=np.float32).tobytes())
    ext_case("ext_traversal", r"initializer 'w': external data location '\.\./outside\.bin' leaves "
             r"the model's directory", external_tensor("../outside.bin"))
    ext_case("ext_traversal_deep", r"initializer 'w': external data location .* leaves the model's "
             r"directory", external_tensor("sub/../../../../../../etc/passwd"))
    ext_case("ext_absolute", r"initializer 'w': external data location '/etc/passwd' is an absolute "
             r"path", external_tensor("/etc/passwd"))
    ext_case("ext_symlink", r"initializer 'w': external data location 'link\.bin' resolves to .*, "
             r"outside the model's directory", external_tensor("link.bin"),
             lambda d: os.symlink(outside, os.path.join(d, "link.bin")))
    ext_case("ext_dir_symlink", r"initializer 'w': external data location 'up/outside\.bin' "
             r"resolves to .*, outside the model's directory", external_tensor("up/outside.bin"),
             lambda d: os.symlink("..", os.path.join(d, "up")))
    ext_case("ext_missing", r"initializer 'w': external data file .* not found",
             external_tensor("nowhere.bin"))
    ext_case("ext_directory", r"initializer 'w': external data location 'sub' is not a regular file",
             external_tensor("sub"), lambda d: os.makedirs(os.path.join(d, "sub")))
    ext_case("ext_offset_past_end", r"initializer 'w': external data offset 116 is beyond the end "
             r"of 'w\.bin' \(16 bytes\)", external_tensor("w.bin", offset=116))
    ext_case("ext_offset_2_64", r"initializer 'w': external data offset 18446744073709551615 is "
             r"beyond the end", external_tensor("w.bin", offset=2**64 - 1, length=16))
    ext_case("ext_length_wraps", r"initializer 'w': external data of 18446744073709551608 bytes at "
             r"offset 8 is beyond the end", external_tensor("w.bin", offset=8, length=2**64 - 8))
    ext_case("ext_offset_over_2_64", r"initializer 'w': external data offset '18446744073709551616' "
             r"is not a non-negative integer", external_tensor("w.bin", offset=2**64))
    ext_case("ext_offset_negative", r"initializer 'w': external data offset '-4' is not a "
             r"non-negative integer", external_tensor("w.bin", offset=-4))
    ext_case("ext_length_mismatch", r"initializer 'w': external data has 8 bytes, expected 16",
             external_tensor("w.bin", offset=0, length=8))

    # --- sizes
    add("dims_negative", "compile", r"initializer 'w': negative dimension -1 in shape \[-1\]",
        add_weight_model(raw_tensor([-1], b"\0" * 16)))
    add("dims_2_62", "compile", r"initializer 'w': shape \[4611686018427387904\] has more than "
        r"\d+ elements, the element limit \(--max-elements\)",
        add_weight_model(raw_tensor([2**62], b"\0" * 16)))
    add("dims_2_62_squared", "compile", r"initializer 'w': shape \[.*\] has more than \d+ elements",
        add_weight_model(raw_tensor([2**62, 2**62, 16], b"\0" * 16)))
    add("dims_0_2_32_2_32", "compile", r"initializer 'w': raw_data has 16 bytes, expected 0",
        add_weight_model(raw_tensor([0, 2**32, 2**32], b"\0" * 16)))
    add("dims_tensor_bytes", "compile", r"initializer 'w': shape \[4\] needs 16 bytes, over the "
        r"tensor size limit of 8 bytes \(--max-tensor-bytes\)",
        add_weight_model(raw_tensor([4], b"\0" * 16)), args=["--max-tensor-bytes", "8"])
    add("input_2_62", "compile", r"input 'x' of shape \[.*\] has more than \d+ elements",
        model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vi("x", [2**62, 2**62])], [vi("y", [2**62, 2**62])]))
    add("rank_limit", "compile", r"input 'x' has rank 40, over the rank limit of 32 \(--max-rank\)",
        model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [1] * 40)],
                 [vi("y", [1] * 40)]))
    add("raw_short", "compile", r"initializer 'w': raw_data has 8 bytes, expected 16",
        add_weight_model(raw_tensor([4], b"\0" * 8)))
    add("raw_long", "compile", r"initializer 'w': raw_data has 20 bytes, expected 16",
        add_weight_model(raw_tensor([4], b"\0" * 20)))
    t = TensorProto()
    t.data_type = TensorProto.FLOAT
    t.dims.append(4)
    t.float_data.extend([1.0, 2.0])
    add("typed_short", "compile", r"initializer 'w': has 2 values in float_data, expected 4",
        add_weight_model(t))
    add("const_attr_raw_short", "compile", r"node 'c' \(Constant\): attribute 'value': raw_data",
        model_of([helper.make_node("Constant", [], ["w"], name="c",
                                   value=raw_tensor([1000], b"\0" * 4)),
                  helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [vi("x", [4])], [vi("y", [4])]))

    # --- attributes out of range (shape rules)
    x4 = [vi("x", [1, 1, 5, 5])]
    w = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")

    def conv_case(name, pattern, **attrs):
        node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
        add(name, "compile", r"node 'conv' \(Conv\).*" + pattern,
            model_of([node], x4, [vi("y", None)], [w]))

    conv_case("conv_zero_strides", "stride", strides=[0, 0])
    conv_case("conv_negative_strides", "stride", strides=[-1, 1])
    conv_case("conv_zero_dilations", "dilation", dilations=[0, 1])
    conv_case("conv_zero_group", "group", group=0)
    conv_case("conv_negative_group", "group", group=-2)
    conv_case("conv_dilation_rank", "dilations", dilations=[1])
    conv_case("conv_kernel_rank", "kernel_shape", kernel_shape=[3])
    conv_case("conv_negative_pads", "pad", pads=[-5, 0, 0, 0])

    def pool_case(name, pattern, **attrs):
        node = helper.make_node("MaxPool", ["x"], ["y"], name="pool", **attrs)
        add(name, "compile", r"node 'pool' \(MaxPool\).*" + pattern,
            model_of([node], x4, [vi("y", None)]))

    pool_case("pool_zero_strides", "stride", kernel_shape=[2, 2], strides=[0, 0])
    pool_case("pool_zero_kernel", "kernel", kernel_shape=[0, 2])
    pool_case("pool_kernel_rank", "kernel_shape", kernel_shape=[2])

    x2 = [vi("x", [2, 3])]

    def axis_case(name, op, pattern, inputs=("x",), inits=(), **attrs):
        node = helper.make_node(op, list(inputs), ["y"], name="n", **attrs)
        add(name, "compile", rf"node 'n' \({op}\).*" + pattern,
            model_of([node], x2, [vi("y", None)], inits))

    axis_case("concat_axis", "Concat", "axis", inputs=("x", "x"), axis=5)
    axis_case("softmax_axis", "Softmax", "axis", axis=-9)
    axis_case("flatten_axis", "Flatten", "axis", axis=10)
    axis_case("transpose_perm", "Transpose", "perm", perm=[0, 5])
    axis_case("gather_axis", "Gather", "axis", inputs=("x", "i"), axis=3,
              inits=[numpy_helper.from_array(np.array([0], np.int64), "i")])
    axis_case("squeeze_axes", "Squeeze", "ax", inputs=("x", "a"),
              inits=[numpy_helper.from_array(np.array([7], np.int64), "a")])
    axis_case("gather_const_index", "Gather", "index", inputs=("x", "i"), axis=0,
              inits=[numpy_helper.from_array(np.array([0, 100], np.int64), "i")])
    axis_case("gather_const_negative_index", "Gather", "index", inputs=("x", "i"), axis=1,
              inits=[numpy_helper.from_array(np.array([-4], np.int64), "i")])
    axis_case("reshape_huge", "Reshape", "", inputs=("x", "s"),
              inits=[numpy_helper.from_array(np.array([2**40, 2**40], np.int64), "s")])

    # --- graph structure
    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    add("cycle", "compile", r"node 'a' \(Relu\): input 'q' is used before it is defined",
        model_of([relu("q", "p", "a"), relu("p", "q", "b")], [vi("x", [4])], [vi("q", [4])]))
    add("self_loop", "compile", r"node 'a' \(Relu\): input 'p' is used before it is defined",
        model_of([relu("p", "p", "a")], [vi("x", [4])], [vi("p", [4])]))
    add("dangling_input", "compile", r"node 'a' \(Relu\): input 'nowhere' is not defined",
        model_of([relu("nowhere", "y", "a")], [vi("x", [4])], [vi("y", [4])]))
    add("dangling_output", "compile", r"output 'ghost' is not defined",
        model_of([relu("x", "y", "a")], [vi("x", [4])], [vi("ghost", [4])]))
    add("duplicate_outputs", "compile", r"node 'b' \(Relu\): output 'y' is already defined",
        model_of([relu("x", "y", "a"), relu("x", "y", "b")], [vi("x", [4])], [vi("y", [4])]))
    add("duplicate_graph_outputs", "compile", r"output 'y' is listed twice",
        model_of([relu("x", "y", "a")], [vi("x", [4])], [vi("y", [4]), vi("y", [4])]))
    add("output_shadows_input", "compile", r"node 'a' \(Relu\): output 'x' is already defined",
        model_of([relu("x", "x", "a")], [vi("x", [4])], [vi("x", [4])]))
    add("duplicate_initializer", "compile", r"initializer 'w' is defined twice",
        model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])],
                 [vi("y", [4])], [numpy_helper.from_array(np.ones(4, np.float32), "w")] * 2))
    add("unknown_domain", "compile", r"Foo in domain evil\.example",
        model_of([helper.make_node("Foo", ["x"], ["y"], name="f", domain="evil.example")],
                 [vi("x", [4])], [vi("y", [4])]))
    add("no_input_type", "compile", r"input 'x' has no type",
        model_of([relu("x", "y", "a")], [helper.make_empty_tensor_value_info("x")], [vi("y", [4])]))
    add("node_limit", "compile", r"more than 2 nodes, the node limit \(--max-nodes\)",
        model_of([relu("x", "a", "a"), relu("a", "b", "b"), relu("b", "y", "c")], [vi("x", [4])],
                 [vi("y", [4])]), args=["--max-nodes", "2"])
    add("name_limit", "compile", r"node 'nnnnnnnn.*' has a name of 100000 bytes, over the name "
        r"length limit of 4096 \(--max-name-length\)",
        model_of([relu("x", "y", "n" * 100000)], [vi("x", [4])], [vi("y", [4])]))

    # --- nesting
    d = add("if_10000_deep", "compile", r"model\.onnx: not an ONNX model \(messages nested more "
            r"than 100 deep, the protobuf recursion limit \(--max-proto-depth\)\)")
    open(os.path.join(d, "model.onnx"), "wb").write(deep_if_model(10000))
    cases.append(Case("if_10000_deep_inspect", "inspect", cases[-1].pattern,
                      model="../if_10000_deep/model.onnx"))
    add("if_20_deep", "compile", r"node 'if_\d+' \(If\): subgraphs nested more than 16 deep, the "
        r"subgraph depth limit \(--max-subgraph-depth\)", nested_if_model(20))
    # Nested Ifs within the limit compile (tests/e2e/control_flow.py); a name no enclosing graph
    # defines, kiln's own attributes and a body of the wrong arity are refused by name.
    add("if_3_deep_undefined", "compile", r"node 'leaf' \(Identity\): input 'nowhere' is not defined",
        nested_if_model(3, leaf_input="nowhere"))
    add("if_kiln_attribute", "compile", r"node 'if_0' \(If\): attribute 'num_captured' is not an ONNX attribute",
        nested_if_model(1, num_captured=7))
    add("loop_body_arity", "compile", r"node 'loop' \(Loop\): body 'b' has 1 inputs, the op gives it 3",
        model_of([helper.make_node("Loop", ["", "c", "x"], ["y"], name="loop",
                                   body=helper.make_graph([helper.make_node("Identity", ["i"], ["o"], name="id")], "b",
                                                          [vi("i", [], TensorProto.INT64)], [vi("o", [1, 4])]))],
                 [vi("x", [1, 4]), vi("c", [], TensorProto.BOOL)], [vi("y", [1, 4])]))

    # --- huge results from small inputs
    shape = numpy_helper.from_array(np.array([2**20, 2**20], np.int64), "s")
    huge = r"node '{}' \({}\): output 'y' of shape \[1048576,1048576\] has more than \d+ " \
           r"elements, the element limit \(--max-elements\)|unsupported node"
    cos = helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")
    add("constant_of_shape_2_40", "compile", huge.format("cos", "ConstantOfShape"),
        model_of([cos], [], [vi("y", None)], [shape]))
    add("constant_of_shape_2_40_run", "run", huge.format("cos", "ConstantOfShape"),
        model_of([cos], [], [vi("y", None)], [shape]))
    add("expand_2_40", "compile", huge.format("expand", "Expand"),
        model_of([helper.make_node("Expand", ["x", "s"], ["y"], name="expand")], [vi("x", [1, 1])],
                 [vi("y", None)], [shape]))

    # --- hostile names: must compile and run like ONNX Runtime
    names_dir = add("hostile_names", "names", "")
    save(hostile_names_model(), names_dir, 'we"ird*\\ /name.onnx'.replace("/", "_"))
    cases[-1].model = 'we"ird*\\ _name.onnx'

    # --- the compiled executable given bad inputs
    d = add("exe_inputs", "exe", "", gather_model())
    np.save(os.path.join(d, "x.npy"), np.ones((4, 2), np.float32))
    np.save(os.path.join(d, "i_ok.npy"), np.array([3, -4], np.int64))
    np.save(os.path.join(d, "i_big.npy"), np.array([0, 4], np.int64))
    np.save(os.path.join(d, "i_neg.npy"), np.array([-5, 0], np.int64))
    np.save(os.path.join(d, "i_huge.npy"), np.array([2**62, 0], np.int64))
    np.save(os.path.join(d, "i_i32.npy"), np.array([0, 1], np.int32))
    np.save(os.path.join(d, "x_shape.npy"), np.ones((2, 4), np.float32))
    np.save(os.path.join(d, "x_rank.npy"), np.ones((8,), np.float32))
    raw = open(os.path.join(d, "x.npy"), "rb").read()
    open(os.path.join(d, "x_truncated.npy"), "wb").write(raw[:-5])
    open(os.path.join(d, "x_garbage.npy"), "wb").write(b"\x93NUMPY\x01\x00" + b"\xff" * 60)
    return cases


def hostile_names_model():
    """x -> Relu -> Add(w) -> two outputs, every name hostile (and distinct after the exe's
    file-name sanitizing: the suffix)."""
    n = HOSTILE_NAME
    w = numpy_helper.from_array(np.array([[0.5, -1, 2, 3]], np.float32), n + "w")
    nodes = [
        helper.make_node("Relu", [n + "x"], [n + "r"], name=n + "relu */ /*"),
        helper.make_node("Add", [n + "r", n + "w"], [n + "y1"], name=n + "add \\"),
        helper.make_node("Mul", [n + "y1", n + "x"], [n + "y2"], name=n),
    ]
    return model_of(nodes, [vi(n + "x", [1, 4])], [vi(n + "y1", [1, 4]), vi(n + "y2", [1, 4])],
                    [w], name=n + "graph")


def gather_model():
    """y = x[i] along axis 0, x [4, 2] f32, i [2] i64: the fuzzed entry point's model."""
    return model_of([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                    [vi("x", [4, 2]), vi("i", [2], TensorProto.INT64)], [vi("y", [2, 2])])


def main():
    if sys.argv[1:2] == ["--gather-model"]:  # tests/fuzz builds its compiled model from this
        d, f = os.path.split(os.path.abspath(sys.argv[2]))
        save(gather_model(), d, f)
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "hostile-models"
    cases = write_all(out)
    print(f"{len(cases)} hostile cases in {out}")


if __name__ == "__main__":
    main()
