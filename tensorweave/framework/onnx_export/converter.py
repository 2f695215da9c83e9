"""A frozen inference GraphDef as an ONNX model.

The walk is small and op-agnostic: it visits the nodes the outputs need in dependency order and
hands each to its op's rule (op_rules.RULES); a rule emits ONNX nodes through the context and
returns the ONNX value name of each of the TF node's outputs. Const nodes become values the rules
can read at conversion time (a Reshape's shape, a Conv2D's filter, a reduction's axes) and
become ONNX initializers only where a rule uses them as tensors.

The GraphDef must be frozen (variables replaced by constants: graph_util.
convert_variables_to_constants); a variable left in it fails with that advice. The `onnx`
package is optional (`pip install tensorweave[onnx]`) and imported only here, when converting.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_util

# Opset 18: every reduction and Squeeze/Unsqueeze take their axes as an input, one convention.
OPSET = 18


class UnsupportedOpError(ValueError):
    """The graph holds op types the converter has no rule for (named in the message)."""


def import_onnx():
    try:
        import onnx
    except ImportError as exc:
        raise ImportError("ONNX export needs the onnx package: pip install "
                          "'tensorweave[onnx]' (or pip install onnx)") from exc
    return onnx


def tensor_name(name):
    """'a' -> 'a:0'; 'a:1' stays."""
    return name if ":" in name else name + ":0"


def onnx_elem_type(onnx, dtype):
    """The ONNX TensorProto element type of a tensorweave dtype (or DataType enum)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype.as_numpy_dtype))
    except (KeyError, TypeError, ValueError) as exc:
        raise UnsupportedOpError(f"dtype {dtype.name} has no ONNX element type") from exc


class ConversionContext:
    """What rules see: the values made so far, the constants, and a sink for ONNX nodes."""

    def __init__(self, onnx):
        self.onnx = onnx
        self.values = {}       # TF tensor name -> ONNX value name
        self.constants = {}    # TF tensor name -> NumPy array known at conversion time
        self.nodes = []
        self.initializers = []
        self._taken = set()

    def reserve(self, names):
        self._taken.update(names)

    def unique(self, base):
        name, count = base, 0
        while name in self._taken:
            count += 1
            name = f"{base}_{count}"
        self._taken.add(name)
        return name

    def constant(self, node, index, what):
        """The conversion-time value of `node`'s input `index` (a Const or folded tensor)."""
        name = tensor_name(node.input[index])
        if name not in self.constants:
            raise UnsupportedOpError(
                f"{node.op} node {node.name!r}: its {what} ({name}) must be a constant for ONNX "
                "export; freeze the graph or compute it from static shapes")
        return self.constants[name]

    def is_constant(self, node, index):
        return tensor_name(node.input[index]) in self.constants

    def initializer(self, array, base):
        name = self.unique(base)
        self.initializers.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def input(self, node, index):
        """The ONNX value of `node`'s input `index`, materialising a constant on first use."""
        return self.value(node.input[index], f"{node.op} node {node.name!r}")

    def value(self, tf_name, user):
        name = tensor_name(tf_name)
        if name not in self.values:
            if name not in self.constants:
                raise UnsupportedOpError(f"{user}: input {name} was not converted")
            self.values[name] = self.initializer(self.constants[name], name.replace(":", "_"))
        return self.values[name]

    def data_inputs(self, node):
        return [name for name in node.input if not name.startswith("^")]

    def add(self, op_type, inputs, base, **attrs):
        """Emits one single-output ONNX node; returns its output's name."""
        output = self.unique(base)
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), [output],
                                                     name=self.unique(f"{base}/{op_type}"),
                                                     **attrs))
        return output

    def int64s(self, values, base):
        return self.initializer(np.asarray(values, dtype=np.int64), base)


def _dims(value_name, shape):
    """ONNX value-info dims: a symbolic name per unknown dimension, its own for each value (one
    name in two places would claim the dims equal); an unknown rank is refused (the checker
    wants a shape on every graph input and output)."""
    if shape is None:
        raise UnsupportedOpError(f"ONNX export needs the rank of {value_name!r}; give the "
                                 "placeholder (or the output) a static rank")
    return [d if d is not None and d >= 0 else f"{value_name}_dim{i}"
            for i, d in enumerate(shape)]


def _needed_nodes(graph_def, output_names, input_names):
    """The nodes the outputs need, inputs' producers excluded, in dependency order."""
    by_name = {node.name: node for node in graph_def.node}
    stops = {name.split(":")[0] for name in input_names}
    order, state = [], {}
    for root in output_names:
        stack = [(root.split(":")[0], False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                state[name] = "done"
                order.append(by_name[name])
                continue
            if state.get(name):
                continue
            if name not in by_name:
                raise ValueError(f"The graph has no node named {name!r}")
            state[name] = "open"
            stack.append((name, True))
            if name in stops:
                continue
            for source in by_name[name].input:
                if not source.startswith("^") and not state.get(source.split(":")[0]):
                    stack.append((source.split(":")[0], False))
    return [node for node in order if node.name not in stops]


def graph_def_to_onnx(graph_def, inputs, outputs, graph_name="tensorweave"):
    """An onnx.ModelProto computing `outputs` from `inputs` as the GraphDef does.

    inputs: [(onnx_name, tf_tensor_name, dtype, shape)] where shape is a list with None for an
    unknown dimension (or None for unknown rank); outputs: the same four.
    Raises UnsupportedOpError naming every op type without a rule."""
    from tensorweave.framework.onnx_export.op_rules import RULES, SKIPPED

    onnx = import_onnx()
    helper = onnx.helper
    nodes = _needed_nodes(graph_def, [t for _, t, _, _ in outputs], [t for _, t, _, _ in inputs])
    missing = sorted({node.op for node in nodes
                      if node.op not in RULES and node.op not in SKIPPED and node.op != "Const"})
    if missing:
        hint = ""
        if set(missing) & {"VariableV2", "VarHandleOp", "ReadVariableOp", "Variable"}:
            hint = " (variables must be frozen first: graph_util.convert_variables_to_constants)"
        elif "Placeholder" in missing:
            hint = (" (a Placeholder the outputs need is not among the inputs: "
                    f"{sorted(n.name for n in nodes if n.op == 'Placeholder')})")
        raise UnsupportedOpError(f"ONNX export has no rule for the op types {missing}{hint}; "
                                 f"supported: {sorted(RULES)}")
    names = [name for name, _, _, _ in inputs] + [name for name, _, _, _ in outputs]
    if len(set(names)) != len(names):
        raise ValueError(f"ONNX input and output names must differ; got {names}")
    ctx = ConversionContext(onnx)
    ctx.reserve(names)  # so no intermediate value takes an input's or output's name
    graph_inputs = []
    for onnx_name, tf_name, dtype, shape in inputs:
        ctx.values[tensor_name(tf_name)] = onnx_name
        graph_inputs.append(helper.make_tensor_value_info(onnx_name, onnx_elem_type(onnx, dtype),
                                                          _dims(onnx_name, shape)))
    for node in nodes:
        if node.op == "Const":
            ctx.constants[node.name + ":0"] = tensor_util.make_ndarray(node.attr["value"].tensor)
            continue
        if node.op in SKIPPED:
            continue
        produced = RULES[node.op](ctx, node)
        for index, value in enumerate(produced):
            ctx.values[f"{node.name}:{index}"] = value
    graph_outputs = []
    for onnx_name, tf_name, dtype, shape in outputs:
        source = ctx.value(tf_name, f"output {onnx_name!r}")
        ctx.nodes.append(helper.make_node("Identity", [source], [onnx_name],
                                          name=ctx.unique(f"{onnx_name}/output")))
        graph_outputs.append(helper.make_tensor_value_info(onnx_name, onnx_elem_type(onnx, dtype),
                                                           _dims(onnx_name, shape)))
    graph = helper.make_graph(ctx.nodes, graph_name, graph_inputs, graph_outputs,
                              initializer=ctx.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tensorweave")
    # The onnx package stamps its newest IR version, which older ONNX Runtime releases refuse;
    # the oldest that carries the opset reads everywhere that opset does.
    model.ir_version = helper.find_min_ir_version_for(list(model.opset_import))
    onnx.checker.check_model(model)
    return model

