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
    raise ValueError(f"Cannot deserialize attr of kind {kind!r}")


# Attrs that are not in an op's signature (colocation and the like) are all list(string).
_PRIVATE_ATTR_KIND = "list(string)"


def _attr_kind(op_def, name):
    attr = op_def.attrs.get(name)
    return attr.kind if attr is not None else _PRIVATE_ATTR_KIND


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def node_def_of(op, add_shapes=False):
    node = graph_pb2.NodeDef(name=op.name, op=op.type, device=op.device)
    node.input.extend(_input_name(t) for t in op.inputs)
    node.input.extend("^" + c.name for c in op.control_inputs)
    for name, value in op._attrs.items():
        if value is None:
            continue
        node.attr[name].CopyFrom(_encode_attr(_attr_kind(op.op_def, name), value))
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
    for node in graph_def.node:
        op_def_lib.get_op_def(node.op)  # fail early on an unknown op type, naming it
    with graph.name_scope(prefix_scope) as scope:
        prefix = scope
    created = {}

    def tensor_for(input_name):
        op_name, index = _parse_input(input_name)
        key = f"{op_name}:{index}"
        if key in input_map:
            return input_map[key]
        if index == 0 and op_name in input_map:
            return input_map[op_name]
        if op_name not in nodes:
            raise ValueError(f"GraphDef node input {input_name!r} names a node not in the graph")
        return build(op_name).outputs[index]

    visiting = set()

    def build(node_name):
        if node_name in created:
            return created[node_name]
        if node_name in visiting:
            raise ValueError(f"GraphDef has a cycle through node {node_name!r}")
        visiting.add(node_name)
        node = nodes[node_name]
        op_def = op_def_lib.get_op_def(node.op)
        data_inputs = [i for i in node.input if not i.startswith("^")]
        control_names = [i[1:] for i in node.input if i.startswith("^")]
        flat = [tensor_for(i) for i in data_inputs]
        attrs = {key: _decode_attr(_attr_kind(op_def, key), value)
                 for key, value in node.attr.items() if key != "_output_shapes"}
        if "_class" in attrs:
            attrs["_class"] = [f"loc:@{prefix}{g[5:]}" if g.startswith("loc:@") else g
                               for g in attrs["_class"]]
        inputs = _regroup_inputs(op_def, flat, attrs, node_name)
        controls = [build(c) for c in control_names if c in nodes]
        op = graph._add_imported_op(node.op, prefix + node_name, inputs, attrs, controls,
                                    node.device)
        created[node_name] = op
        visiting.discard(node_name)
        return op

    for node in graph_def.node:
        build(node.name)
    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        op_name, index = _parse_input(element)
        op = created[op_name]
        results.append(op if ":" not in element else op.outputs[index])
    return results


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


