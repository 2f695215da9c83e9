"""`tf.profiler` for graphs: parameter and float-operation counts per name scope, as TF 1.x's
tfprof reports them (`tf.profiler.profile(graph, options=...)` returning a GraphNodeProto-like
tree whose root holds `total_parameters` and `total_float_ops`), and run-time totals from a
RunMetadata's step stats.

FLOPs follow tfprof's per-op statistics (checked against TF 2.21 on single-op graphs): MatMul
2mnk; Conv2D 2 * outputs * kh * kw * in_channels; depthwise 2 * outputs * kh * kw; pooling
kernel area * outputs; binary elementwise ops and BiasAdd one per output; Neg, Square, Log, Assign
ops one per output; Rsqrt two; Softmax five per element; L2Loss 3n - 1; Sum, Max, Min, Prod,
ArgMax/ArgMin n_in - n_out; Mean n_in. Ops TF does not count (Relu, Sigmoid, Tanh, Exp, gradient
kernels, ...) count 0. Only tensors with fully known static shapes are counted, as in TF."""
import sys

import numpy as np

from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys


class GraphNodeProto:
    """One name scope (or op) of a profile: its own and its subtree's totals, and children."""

    def __init__(self, name):
        self.name = name
        self.parameters = 0
        self.total_parameters = 0
        self.float_ops = 0
        self.total_float_ops = 0
        self.exec_micros = 0
        self.total_exec_micros = 0
        self.children = []

    def __repr__(self):
        return (f"GraphNodeProto(name={self.name!r}, total_parameters={self.total_parameters}, "
                f"total_float_ops={self.total_float_ops})")


MultiGraphNodeProto = GraphNodeProto


def _elements(tensor):
    shape = tensor.shape
    if not shape.is_fully_defined():
        return None
    return int(np.prod(shape.as_list(), dtype=np.int64))


def _per_output(factor):
    return lambda op: None if _elements(op.outputs[0]) is None else factor * _elements(
        op.outputs[0])


def _matmul(op):
    a = op.inputs[0].shape
    if not a.is_fully_defined() or _elements(op.outputs[0]) is None:
        return None
    transpose = op.attrs.get("transpose_a", op.attrs.get("adj_x", False))
    k = a.as_list()[-2] if transpose else a.as_list()[-1]
    return 2 * k * _elements(op.outputs[0])


def _conv(depthwise):
    def flops(op):
        kernel = op.inputs[1].shape
        out = _elements(op.outputs[0])
        if not kernel.is_fully_defined() or out is None:
            return None
        kh, kw, in_channels = kernel.as_list()[:3]
        return 2 * out * kh * kw * (1 if depthwise else in_channels)
    return flops


def _pool(op):
    out = _elements(op.outputs[0])
    size = op.attrs.get("ksize")
    return None if out is None or size is None else out * int(np.prod(size))


def _reduction(include_outputs):
    def flops(op):
        n_in, n_out = _elements(op.inputs[0]), _elements(op.outputs[0])
        if n_in is None or n_out is None:
            return None
        return n_in - n_out + (n_out if include_outputs else 0)
    return flops


def _l2loss(op):
    n = _elements(op.inputs[0])
    return None if n is None else 3 * n - 1


_FLOPS = {"MatMul": _matmul, "BatchMatMul": _matmul, "BatchMatMulV2": _matmul,
          "Conv2D": _conv(False), "DepthwiseConv2dNative": _conv(True),
          "MaxPool": _pool, "AvgPool": _pool, "Softmax": _per_output(5), "L2Loss": _l2loss,
          "Rsqrt": _per_output(2), "Mean": _reduction(True)}
for _name in ("Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Maximum", "Minimum",
              "Pow", "SquaredDifference", "BiasAdd", "Neg", "Square", "Log", "Greater",
              "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual", "AssignAdd",
              "AssignSub"):
    _FLOPS[_name] = _per_output(1)
for _name in ("Sum", "Max", "Min", "Prod", "ArgMax", "ArgMin"):
    _FLOPS[_name] = _reduction(False)


def op_float_ops(op):
    """The float operations tfprof counts for one op (0 when its shapes are not all known)."""
    rule = _FLOPS.get(op.type)
    value = rule(op) if rule is not None else None
    return int(value) if value else 0


class ProfileOptionBuilder:
    """Options for profile(): what to count (parameters, float ops, time) and where to print."""

    def __init__(self, options=None):
        self._options = dict(options or self.trainable_variables_parameter())

    @staticmethod
    def trainable_variables_parameter():
        return {"select": ["params"], "account_type_regexes": ["_trainable_variables"],
                "max_depth": 10000, "min_params": 0, "output": "stdout"}

    @staticmethod
    def float_operation():
        return {"select": ["float_ops"], "account_type_regexes": [".*"], "max_depth": 10000,
                "min_float_ops": 1, "output": "stdout"}

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0):
        return {"select": ["micros"], "account_type_regexes": [".*"], "max_depth": 10000,
                "min_micros": min_micros, "output": "stdout"}

    def with_max_depth(self, max_depth):
        self._options["max_depth"] = max_depth
        return self

    def with_empty_output(self):
        self._options["output"] = "none"
        return self

    def with_stdout_output(self):
        self._options["output"] = "stdout"
        return self

    def with_file_output(self, outfile):
        self._options["output"] = f"file:outfile={outfile}"
        return self

    def select(self, attributes):
        self._options["select"] = list(attributes)
        return self

    def order_by(self, attribute):
        self._options["order_by"] = attribute
        return self

    def account_displayed_op_only(self, is_true):
        self._options["account_displayed_op_only"] = bool(is_true)
        return self

    def build(self):
        return dict(self._options)


def _scope_tree(graph, run_meta):
    root = GraphNodeProto("_TFProfRoot")
    nodes = {"": root}

    def node_for(path):
        if path not in nodes:
            parent = node_for(path.rsplit("/", 1)[0] if "/" in path else "")
            nodes[path] = GraphNodeProto(path)
            parent.children.append(nodes[path])
        return nodes[path]

    trainable = {v.op.name for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)}
    micros = {}
    if run_meta is not None:
        for device in run_meta.step_stats.dev_stats:
            for stats in device["node_stats"]:
                micros[stats["op"]] = micros.get(stats["op"], 0) + int(
                    stats.get("all_end_rel_micros", 0))
    for op in graph.get_operations():
        node = node_for(op.name)
        if op.name in trainable:
            node.parameters = _elements(op.outputs[0]) or 0
        node.float_ops = op_float_ops(op)
        node.exec_micros = micros.get(op.name, 0)

    def total(node):
        node.total_parameters = node.parameters
        node.total_float_ops = node.float_ops
        node.total_exec_micros = node.exec_micros
        for child in node.children:
            total(child)
            node.total_parameters += child.total_parameters
            node.total_float_ops += child.total_float_ops
            node.total_exec_micros += child.total_exec_micros
    total(root)
    return root


def _report(root, options):
    output = options.get("output", "stdout")
    if output == "none":
        return
    selected = options.get("select", ["params"])
    key = {"params": "total_parameters", "float_ops": "total_float_ops",
           "micros": "total_exec_micros"}
    lines = []

    def visit(node, depth):
        if depth > options.get("max_depth", 10000):
            return
        values = ", ".join(f"{name}: {getattr(node, key[name])}" for name in selected
                           if name in key)
        if depth == 0 or any(getattr(node, key[name]) for name in selected if name in key):
            lines.append(f"{'  ' * depth}{node.name} ({values})")
        for child in node.children:
            visit(child, depth + 1)
    visit(root, 0)
    text = "\n".join(lines) + "\n"
    if output.startswith("file:outfile="):
        with open(output.split("=", 1)[1], "w") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)


def profile(graph=None, run_meta=None, op_log=None, cmd="scope",
            options=None):
    """Profiles `graph` (default: the default graph) by name scope; returns the root node
    with total_parameters, total_float_ops and (with run_meta) total_exec_micros."""
    if cmd not in ("scope", "graph", "op", "code"):
        raise ValueError(f"tf.profiler.profile: unknown cmd {cmd!r}")
    graph = graph or graph_lib.get_default_graph()
    options = options if options is not None else ProfileOptionBuilder.trainable_variables_parameter()
    root = _scope_tree(graph, run_meta)
    _report(root, options)
    return root


class Profiler:
    """Accumulates RunMetadata of several steps and profiles the graph with them."""

    def __init__(self, graph=None, op_log=None):
        self._graph = graph or graph_lib.get_default_graph()
        self._steps = {}

    def add_step(self, step, run_meta):
        self._steps[step] = run_meta

    def _latest(self):
        return self._steps[max(self._steps)] if self._steps else None

    def profile_name_scope(self, options):
        return profile(self._graph, self._latest(), cmd="scope", options=options)

    def profile_graph(self, options):
        return profile(self._graph, self._latest(), cmd="graph", options=options)

    def profile_operations(self, options):
        return profile(self._graph, self._latest(), cmd="op", options=options)


def write_op_log(graph, log_dir, op_log=None, run_meta=None, add_trace=True):
    """Writes the graph's per-op float-op counts as text to log_dir/tfprof_log; an OpLogProto
    `op_log` adds to an op its entry's types (after a tab) and replaces its float-op count
    when the entry gives one."""
    import os
    entries = {entry.name: entry for entry in (op_log.log_entries if op_log else ())}
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "tfprof_log"), "w") as handle:
        for op in graph.get_operations():
            entry = entries.get(op.name)
            flops = entry.float_ops if entry is not None and entry.float_ops else \
                op_float_ops(op)
            types = "\t" + ",".join(entry.types) if entry is not None and entry.types else ""
            handle.write(f"{op.name}\t{op.type}\t{flops}{types}\n")
