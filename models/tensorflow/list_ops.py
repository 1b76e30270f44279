#!/usr/bin/env python3
"""Lists the TensorFlow op types in a SavedModel or a frozen GraphDef, graph by graph.

    /work/wt/tfvenv/bin/python models/tensorflow/list_ops.py PATH [PATH ...] [--attrs]

PATH is a SavedModel folder (holding saved_model.pb), a saved_model.pb, or a frozen GraphDef
(.pb). For each it prints the outer graph's op types, then every function of the graph's
library with its own op types (FunctionDef.node_def), then the union, and the ops the serving_default signature
reaches (the outer nodes its outputs depend on and the functions they call, transitively). --attrs also
prints the nodes of the outer graph and the attributes of every control-flow node (If, While,
their Stateless forms, StatefulPartitionedCall) and every Einsum's equation, which is what a
frontend needs to know to wire function calls together.

Reads the protos only: nothing is loaded or run, so the ops seen are exactly the file's.
"""
import collections
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.protobuf import saved_model_pb2  # noqa: E402

# Ops whose attributes tell how functions are wired: worth printing in full with --attrs.
CALL_OPS = {"If", "StatelessIf", "While", "StatelessWhile", "StatefulPartitionedCall",
            "PartitionedCall", "Case", "StatelessCase"}


def read_graph(path):
    """Returns (GraphDef, signature_defs or None) for a SavedModel folder/.pb or a frozen .pb."""
    if os.path.isdir(path):
        path = os.path.join(path, "saved_model.pb")
    data = open(path, "rb").read()
    if os.path.basename(path) == "saved_model.pb":
        sm = saved_model_pb2.SavedModel()
        sm.ParseFromString(data)
        meta = sm.meta_graphs[0]  # TF2 SavedModels hold one MetaGraph (tag "serve")
        return meta.graph_def, meta.signature_def
    gd = graph_pb2.GraphDef()
    gd.ParseFromString(data)
    return gd, None


def graph_ops(graph_def):
    """Returns {graph name: Counter(op type)}: "<outer>" and then each library function."""
    graphs = {"<outer>": collections.Counter(n.op for n in graph_def.node)}
    for f in sorted(graph_def.library.function, key=lambda f: f.signature.name):
        graphs[f.signature.name] = collections.Counter(n.op for n in f.node_def)
    return graphs


def all_ops(path):
    """The sorted union of op types in the outer graph and every function."""
    graph_def, _ = read_graph(path)
    union = set()
    for ops in graph_ops(graph_def).values():
        union |= set(ops)
    return sorted(union)


def called_functions(node, library):
    """Names of the library functions a node calls: through func attrs (f, then_branch, body,
    ...) or, inside a FunctionDef, by having a function's name as its op."""
    names = {node.op} & library.keys()
    for value in node.attr.values():
        if value.WhichOneof("value") == "func":
            names.add(value.func.name)
        elif value.WhichOneof("value") == "list":
            names.update(f.name for f in value.list.func)
    return names


def serving_ops(path, signature="serving_default"):
    """The sorted op types a signature's outputs depend on: the outer nodes they reach and
    every function called from those, transitively. Leaves out the SavedModel's own plumbing
    (the saver/restore functions, variable initializers and the other signatures)."""
    graph_def, signatures = read_graph(path)
    library = {f.signature.name: f for f in graph_def.library.function}
    if signatures is None:  # a frozen GraphDef: one graph, everything in it is the model
        return sorted({n.op for n in graph_def.node} | {n.op for f in library.values() for n in f.node_def})
    outer = {n.name: n for n in graph_def.node}
    stack = [t.name.split(":")[0] for t in signatures[signature].outputs.values()]
    seen_nodes, functions, ops = set(), [], set()
    while stack:
        name = stack.pop()
        if name in seen_nodes:
            continue
        seen_nodes.add(name)
        node = outer[name]
        ops.add(node.op)
        functions.extend(called_functions(node, library))
        stack.extend(i.lstrip("^").split(":")[0] for i in node.input)
    seen_functions = set()
    while functions:
        fname = functions.pop()
        if fname in seen_functions:
            continue
        seen_functions.add(fname)
        for node in library[fname].node_def:
            if node.op not in library:
                ops.add(node.op)
            functions.extend(called_functions(node, library))
    return sorted(ops)


def short_attr(value):
    """A one-line rendering of an AttrValue: function names, types, shapes, lists, scalars."""
    kind = value.WhichOneof("value")
    if kind == "func":
        return value.func.name
    if kind == "shape":
        return "[" + ",".join(str(d.size) for d in value.shape.dim) + "]" if not value.shape.unknown_rank else "?"
    if kind == "list":
        lst = value.list
        if lst.shape:
            return "(" + " ".join(short_attr_shape(s) for s in lst.shape) + ")"
        if lst.type:
            return "(" + " ".join(str(t) for t in lst.type) + ")"
        if lst.i:
            return str(list(lst.i))
        if lst.s:
            return str([s.decode() for s in lst.s])
        return "()"
    if kind == "s":
        return repr(value.s.decode(errors="replace"))
    return str(getattr(value, kind)).strip()


def short_attr_shape(shape):
    return "?" if shape.unknown_rank else "[" + ",".join(str(d.size) for d in shape.dim) + "]"


def print_details(graph_def, signatures):
    """Outer nodes, signatures, then control-flow and Einsum nodes with their attributes."""
    print("  outer nodes:")
    for n in graph_def.node:
        print(f"    {n.name} = {n.op}({', '.join(n.input)})"
              + (f"  f={n.attr['f'].func.name}" if "f" in n.attr else ""))
    for key, sig in (signatures or {}).items():
        ins = {k: v.name for k, v in sig.inputs.items()}
        outs = {k: v.name for k, v in sig.outputs.items()}
        print(f"  signature {key}: inputs {ins} outputs {outs}")
    named = [("<outer>", graph_def.node)] + [(f.signature.name, f.node_def) for f in graph_def.library.function]
    for fname, nodes in named:
        for n in nodes:
            if n.op in CALL_OPS:
                attrs = {k: short_attr(v) for k, v in sorted(n.attr.items()) if k != "_read_only_resource_inputs"}
                print(f"  {fname}: {n.name} {n.op} {attrs}")
            elif n.op == "Einsum":
                print(f"  {fname}: {n.name} Einsum {n.attr['equation'].s.decode()}")


def main(argv):
    details = "--attrs" in argv
    for path in [a for a in argv if a != "--attrs"]:
        graph_def, signatures = read_graph(path)
        graphs = graph_ops(graph_def)
        print(f"== {path}: {len(graphs) - 1} functions in the library")
        union = collections.Counter()
        for name, ops in graphs.items():
            union.update(ops)
            print(f"  {name}: " + ", ".join(f"{op} x{c}" for op, c in sorted(ops.items())))
        print("  all: " + ", ".join(sorted(union)))
        print("  serving: " + ", ".join(serving_ops(path)))
        if details:
            print_details(graph_def, signatures)


if __name__ == "__main__":
    main(sys.argv[1:])
