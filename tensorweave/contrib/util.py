"""`tf.contrib.util`: TensorProto conversion, constant folding of a tensor's value, and the op
types a GraphDef uses, as TF 1.x's contrib.util."""
from tensorweave.framework import op_def
from tensorweave.framework.tensor_util import (constant_value, make_ndarray,  # noqa: F401
                                               make_tensor_proto)


def ops_used_by_graph_def(graph_def):
    """The op type names the GraphDef's nodes use (sorted, each once)."""
    return sorted({node.op for node in graph_def.node})


def stripped_op_list_for_graph(graph_def):
    """The definitions of the op types `graph_def` uses (tensorweave's OpDef objects, with
    name, inputs, outputs and attrs; TF returns an OpList proto); an op type tensorweave does
    not register is a ValueError naming it."""
    used = ops_used_by_graph_def(graph_def)
    missing = [name for name in used if name not in op_def.registered_op_types()]
    if missing:
        raise ValueError(f"stripped_op_list_for_graph: unregistered op types {missing}")
    return [op_def.get_op_def(name) for name in used]
