"""Corrupt and hostile TensorFlow models: each gives one clear error, a non-zero exit, no crash,
and no output directory from `kiln compile`.

    tf_errors.py KILN WORK MODELS_DIR

MODELS_DIR is models/tensorflow/. Each case copies a fixture into WORK, breaks one thing
(a truncated saved_model.pb, a flipped byte in the weights, a truncated index or data shard,
a missing shard, an unknown signature, an unknown op in a frozen GraphDef, an unknown
TensorList op, a jax2tf XlaCallModule whose bytecode has an unknown version, taken from
models/jax/) and checks that
`kiln compile` fails with a message that names the file and what is wrong.
"""
import os
import shutil
import subprocess
import sys


def copy_model(src, work, name):
    dst = os.path.join(work, name)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def patch(path, edit):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data = edit(data)
    with open(path, "wb") as f:
        f.write(data)


def flip_last(data):
    data[-1] ^= 0xFF
    return data


def expect_error(kiln, work, name, model, args, *needles):
    out = os.path.join(work, name + ".out")
    p = subprocess.run([kiln, "compile", model, *args, "-o", out], capture_output=True, text=True)
    message = p.stderr.strip()
    problems = []
    if p.returncode != 1:
        problems.append(f"exit status {p.returncode}, expected 1")
    if os.path.exists(out):
        problems.append("left an output directory")
    for n in needles:
        if n not in message:
            problems.append(f"no '{n}' in the message")
    if problems:
        print(f"FAIL {name}: {'; '.join(problems)}\n  {message}")
        return False
    print(f"ok   {name}: {message.splitlines()[-1] if message else ''}")
    return True


def main():
    kiln, work, models = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cnn = os.path.join(models, "cnn", "saved_model")
    ok = True

    m = copy_model(cnn, work, "truncated_pb")
    patch(os.path.join(m, "saved_model.pb"), lambda d: d[: len(d) // 2])
    ok &= expect_error(kiln, work, "truncated_pb", m, [], "saved_model.pb", "not a SavedModel")

    m = copy_model(cnn, work, "bad_weights_crc")
    data = os.path.join(m, "variables", "variables.data-00000-of-00001")
    patch(data, flip_last)
    ok &= expect_error(kiln, work, "bad_weights_crc", m, [], "variables", "checksum")

    m = copy_model(cnn, work, "short_shard")
    patch(data.replace("bad_weights_crc", "short_shard"), lambda d: d[: len(d) // 3])
    ok &= expect_error(kiln, work, "short_shard", m, [], "variables.data-00000-of-00001")

    m = copy_model(cnn, work, "truncated_index")
    patch(os.path.join(m, "variables", "variables.index"), lambda d: d[:40])
    ok &= expect_error(kiln, work, "truncated_index", m, [], "variables.index")

    m = copy_model(cnn, work, "index_block_crc")
    patch(os.path.join(m, "variables", "variables.index"), lambda d: (d.__setitem__(5, d[5] ^ 0x55), d)[1])
    ok &= expect_error(kiln, work, "index_block_crc", m, [], "variables.index")

    m = copy_model(cnn, work, "missing_shard")
    os.remove(os.path.join(m, "variables", "variables.data-00000-of-00001"))
    ok &= expect_error(kiln, work, "missing_shard", m, [], "variables.data-00000-of-00001")

    ok &= expect_error(kiln, work, "unknown_signature", cnn, ["--signature", "nope"], "no signature 'nope'",
                       "serving_default")

    frozen = os.path.join(work, "unknown_op.pb")
    shutil.copy(os.path.join(models, "frozen", "frozen.pb"), frozen)
    # The op name of the Relu node, same length: the GraphDef still parses.
    patch(frozen, lambda d: bytearray(bytes(d).replace(b"\x12\x04Relu", b"\x12\x04Relq")))
    ok &= expect_error(kiln, work, "unknown_op", frozen, [], "unknown_op.pb", "(Relq): unsupported op")

    # An op of the TensorList family kiln has no tensor form for (same length: the file parses).
    m = copy_model(os.path.join(models, "lstm", "saved_model"), work, "unknown_list_op")
    patch(os.path.join(m, "saved_model.pb"), lambda d: bytearray(bytes(d).replace(b"TensorListSetItem", b"TensorListSetIten")))
    ok &= expect_error(kiln, work, "unknown_list_op", m, [], "(TensorListSetIten)", "TensorList op is not supported")

    # A jax2tf model whose XlaCallModule holds bytecode of an unknown version (same length).
    jax2tf = os.path.join(models, "..", "jax", "jax2tf_cnn", "saved_model")
    m = copy_model(jax2tf, work, "bad_xla_module")
    patch(os.path.join(m, "saved_model.pb"), lambda d: bytearray(bytes(d).replace(b"ML\xefR\x0d", b"ML\xefR\x7f", 1)))
    ok &= expect_error(kiln, work, "bad_xla_module", m, [], "(XlaCallModule)", "bytecode version 63 is not supported")

    ok &= expect_error(kiln, work, "no_such_input", os.path.join(models, "frozen", "frozen.pb"),
                       ["--input-node", "nope"], "--input-node 'nope' names no Placeholder")
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
