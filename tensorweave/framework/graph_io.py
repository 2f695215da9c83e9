"""GraphDef: serializing a Graph to protobuf NodeDefs and importing one back.

This is how partitions will be shipped to workers, so a round trip must preserve names, inputs,
control inputs, devices and every attr exactly.
"""

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import op_def as op_def_lib
from tensorweave.framework import tensor_util
from tensorweave.framework.protos import graph_pb2

PRODUCER_VERSION = 1


def _encode_attr(kind, value):
    proto = graph_pb2.AttrValue()
    if kind == "type":
        proto.type = dtypes.as_dtype(value).as_datatype_enum
    elif kind == "int":
        proto.i = int(value)
    elif kind == "float":
        proto.f = float(value)
    elif kind == "bool":
        proto.b = bool(value)
    elif kind == "string":
        proto.s = value if isinstance(value, bytes) else str(value).encode()
    elif kind == "shape":
        proto.shape.CopyFrom(tensor_util.shape_to_proto(value))
    elif kind == "tensor":
        proto.tensor.CopyFrom(tensor_util.make_tensor_proto(value))
    elif kind == "list(int)":
        proto.list.i.extend(int(v) for v in value)
        proto.list.SetInParent()
    elif kind == "list(float)":
        proto.list.f.extend(float(v) for v in value)
        proto.list.SetInParent()
    elif kind == "list(bool)":
        proto.list.b.extend(bool(v) for v in value)
        proto.list.SetInParent()
    elif kind == "list(type)":
        proto.list.type.extend(dtypes.as_dtype(v).as_datatype_enum for v in value)
        proto.list.SetInParent()
    elif kind == "list(string)":
        proto.list.s.extend(v if isinstance(v, bytes) else str(v).encode() for v in value)
        proto.list.SetInParent()
    elif kind == "list(shape)":
        proto.list.shape.extend(tensor_util.shape_to_proto(v) for v in value)
        proto.list.SetInParent()
    elif kind == "func":  # a function body (function_graph.FuncGraph): [name, its GraphDef]
        proto.list.s.extend([value.name.encode(),
                             graph_to_graph_def(value).SerializeToString()])
    else:
        raise ValueError(f"Cannot serialize attr of kind {kind!r}")
    return proto


def _decode_attr(kind, proto):
    if kind == "type":
        return dtypes.as_dtype(proto.type)
    if kind == "int":
        return int(proto.i)
    if kind == "float":
        return float(proto.f)
    if kind == "bool":
        return bool(proto.b)
    if kind == "string":
        return proto.s.decode()
    if kind == "shape":
        return tensor_util.shape_from_proto(proto.shape)
    if kind == "tensor":
        array = tensor_util.make_ndarray(proto.tensor)
        array.flags.writeable = False
        return array
    if kind == "list(int)":
        return [int(v) for v in proto.list.i]
    if kind == "list(float)":
        return [float(v) for v in proto.list.f]
    if kind == "list(bool)":
        return [bool(v) for v in proto.list.b]
    if kind == "list(type)":
        return [dtypes.as_dtype(v) for v in proto.list.type]
    if kind == "list(string)":
        return [v.decode() for v in proto.list.s]
    if kind == "list(shape)":
        return [tensor_util.shape_from_proto(v) for v in proto.list.shape]
    if kind == "func":
        from tensorweave.framework import function_graph  # it imports this module
        name, graph_def = proto.list.s
        return function_graph.FuncGraph.from_graph_def(
            graph_pb2.GraphDef.FromString(graph_def), name.decode())
    raise ValueError(f"Cannot deserialize attr of kind {kind!r}")


# Attrs outside an op's signature ("_class" and other private attrs) carry no declared kind: it
# is inferred from the Python value when writing and read from the proto's oneof when reading.
_ONEOF_KINDS = {"s": "string", "i": "int", "f": "float", "b": "bool", "type": "type",
                "shape": "shape", "tensor": "tensor"}
_LIST_FIELD_KINDS = (("s", "list(string)"), ("i", "list(int)"), ("f", "list(float)"),
                     ("b", "list(bool)"), ("type", "list(type)"), ("shape", "list(shape)"))


def _attr_kind(op_def, name):
    attr = op_def.attrs.get(name)
    return attr.kind if attr is not None else None


def _kind_of_value(value):
    """The attr kind of a private attr's Python value."""
    import numpy as np
    from tensorweave.framework import tensor_shape
    if isinstance(value, (list, tuple)):
        if not value:
            return "list(string)"
        return "list(" + _kind_of_value(value[0]) + ")"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, dtypes.DType):
        return "type"
    if isinstance(value, tensor_shape.TensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    raise ValueError(f"Cannot serialize attr value {value!r} of type {type(value).__name__}")


def _kind_of_proto(proto):
    """The attr kind an AttrValue holds (for attrs the op's signature does not declare)."""
    which = proto.WhichOneof("value")
    if which != "list":
        return _ONEOF_KINDS.get(which, "list(string)")
    for field, kind in _LIST_FIELD_KINDS:
        if len(getattr(proto.list, field)):
            return kind
    return "list(string)"


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def node_def_of(op, add_shapes=False):
    node = graph_pb2.NodeDef(name=op.name, op=op.type, device=op.device)
    node.input.extend(_input_name(t) for t in op.inputs)
    node.input.extend("^" + c.name for c in op.control_inputs)
    for name, value in op._attrs.items():
        if value is None:
            continue
        kind = _attr_kind(op.op_def, name) or _kind_of_value(value)
        node.attr[name].CopyFrom(_encode_attr(kind, value))
    if add_shapes:
        node.attr["_output_shapes"].CopyFrom(
            _encode_attr("list(shape)", [t.shape for t in op.outputs]))
    return node


def graph_to_graph_def(graph, add_shapes=False, ops=None):
    """The GraphDef of `graph` (or of just `ops`, in the given order)."""
    graph_def = graph_pb2.GraphDef()
    graph_def.versions.producer = PRODUCER_VERSION
    for op in (graph.get_operations() if ops is None else ops):
        graph_def.node.append(node_def_of(op, add_shapes))
    return graph_def


def _parse_input(name):
    if name.startswith("^"):
        return name[1:], None
    op_name, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return op_name, int(index)
    return name, 0


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Adds the ops of `graph_def` to the default graph under scope `name` ('import' default).

    `input_map` maps tensor names in graph_def to existing Tensors that replace them.
    """
    if isinstance(graph_def, (bytes, bytearray)):
        graph_def = graph_pb2.GraphDef.FromString(bytes(graph_def))
    graph = graph_lib.get_default_graph()
    input_map = dict(input_map or {})
    prefix_scope = "import" if name is None else name
    nodes = {node.name: node for node in graph_def.node}
    if len(nodes) != len(graph_def.node):
        raise ValueError("GraphDef has duplicate node names")
    registered = set(op_def_lib.registered_op_types())
    for node in graph_def.node:  # fail before adding anything, naming the culprit
        if node.op not in registered:
            raise ValueError(f"GraphDef node {node.name!r} has op type {node.op!r}, which is not "
                             "registered: import the module that defines it first.")
        for input_name in node.input:
            source = _parse_input(input_name)[0]
            if source not in nodes:
                raise ValueError(f"GraphDef node {node.name!r} has input {input_name!r}, which "
                                 f"names node {source!r} that is not in the GraphDef.")
    input_map = {_canonical_input(key): value for key, value in input_map.items()}
    for key, value in input_map.items():
        if not isinstance(value, graph_lib.Tensor):
            raise TypeError(f"import_graph_def: input_map[{key!r}] must be a Tensor, got "
                            f"{type(value).__name__}")
        op_name, index = _parse_input(key)
        if op_name not in nodes:
            raise ValueError(f"import_graph_def: input_map key {key!r} names node {op_name!r}, "
                             "which is not in the GraphDef.")
    for element in return_elements or ():
        if _parse_input(element)[0] not in nodes:
            raise ValueError(f"import_graph_def: requested return element {element!r} is not in "
                             "the GraphDef.")
    graph._check_not_finalized()
    with graph.name_scope(prefix_scope) as scope:
        prefix = scope
    created = {}

    def is_mapped(input_name):
        return not input_name.startswith("^") and _canonical_input(input_name) in input_map

    def dependencies(node):
        return [_parse_input(i)[0] for i in node.input if not is_mapped(i)]

    for node_name in _creation_order(graph_def, nodes, dependencies):
        node = nodes[node_name]
        op_def = op_def_lib.get_op_def(node.op)
        flat = []
        for input_name in node.input:
            if input_name.startswith("^"):
                continue
            if is_mapped(input_name):
                flat.append(input_map[_canonical_input(input_name)])
                continue
            source, index = _parse_input(input_name)
            outputs = created[source].outputs
            if index >= len(outputs):
                raise ValueError(f"GraphDef node {node_name!r} has input {input_name!r}, but "
                                 f"{source!r} has only {len(outputs)} outputs.")
            flat.append(outputs[index])
        controls = [created[i[1:]] for i in node.input if i.startswith("^")]
        attrs = {key: _decode_attr(_attr_kind(op_def, key) or _kind_of_proto(value), value)
                 for key, value in node.attr.items() if key != "_output_shapes"}
        if "_class" in attrs:
            attrs["_class"] = [f"loc:@{prefix}{g[5:]}" if g.startswith("loc:@") else g
                               for g in attrs["_class"]]
        if prefix:  # variables a function body mirrors by name were renamed with it
            for value in attrs.values():
                if hasattr(value, "prefix_mirrored_variables"):
                    value.prefix_mirrored_variables(prefix)
        inputs = _regroup_inputs(op_def, flat, attrs, node_name)
        created[node_name] = graph._add_imported_op(node.op, prefix + node_name, inputs, attrs,
                                                    controls, node.device)
    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        op_name, index = _parse_input(element)
        op = created[op_name]
        if ":" not in element:
            results.append(op)
        elif index < len(op.outputs):
            results.append(op.outputs[index])
        else:
            raise ValueError(f"import_graph_def: requested return element {element!r}, but "
                             f"{op_name!r} has only {len(op.outputs)} outputs.")
    return results


def _creation_order(graph_def, nodes, dependencies):
    """Node names, each after the nodes it depends on, otherwise in GraphDef order.

    Iterative depth-first search: GraphDefs of real models are far deeper than Python's
    recursion limit.
    """
    order, state = [], {}  # state: 1 while on the stack, 2 once placed in `order`
    for root in graph_def.node:
        if root.name in state:
            continue
        state[root.name] = 1
        stack = [(root.name, iter(dependencies(root)))]
        while stack:
            name, pending = stack[-1]
            for dep in pending:
                if state.get(dep) == 1:
                    raise ValueError(f"GraphDef has a cycle through node {dep!r}")
                if dep not in state:
                    state[dep] = 1
                    stack.append((dep, iter(dependencies(nodes[dep]))))
                    break
            else:
                stack.pop()
                state[name] = 2
                order.append(name)
    return order


def _canonical_input(name):
    """'x' and 'x:0' name the same tensor; input_map accepts either."""
    op_name, index = _parse_input(name)
    return f"{op_name}:{index}"


def _regroup_inputs(op_def, flat, attrs, node_name):
    """Splits the flat input list of a NodeDef back into the signature's (list) arguments."""
    grouped, position = [], 0
    for arg in op_def.inputs:
        if arg.number_attr is not None:
            count = attrs[arg.number_attr]
        elif arg.type_list_attr is not None:
            count = len(attrs[arg.type_list_attr])
        else:
            count = None
        if count is None:
            grouped.append(flat[position])
            position += 1
        else:
            grouped.append(flat[position:position + count])
            position += count
    if position != len(flat):
        raise ValueError(f"GraphDef node {node_name!r}: {len(flat)} inputs do not match the "
                         f"signature of {op_def.name}")
    return grouped


