"""Control-flow ops: NoOp, group, tuple, with_dependencies; cond and case (cond_ops.py) and
while_loop (while_ops.py) are re-exported here, where TF 1.x keeps them."""
import builtins

from tensorweave.framework import common_shapes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.cond_ops import case, cond  # noqa: F401 - re-exported
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op
from tensorweave.ops.while_ops import while_loop  # noqa: F401 - re-exported

register_op("NoOp", shape_fn=common_shapes.no_outputs, doc="Does nothing; a control point.")
not_differentiable("NoOp")


def no_op(name=None):
    return make_op("NoOp", name=name or "NoOp")


def _as_op(item):
    if isinstance(item, graph_lib.Operation):
        return item
    if isinstance(item, graph_lib.Tensor):
        return item.op
    if hasattr(item, "op") and isinstance(item.op, graph_lib.Operation):
        return item.op
    raise TypeError(f"Expected a Tensor or Operation, got {type(item).__name__}: {item!r}")


def group(*inputs, name=None):
    """An op that runs after all of `inputs` (Tensors, Operations or nested lists of them)."""
    flat = []

    def collect(item):
        if isinstance(item, (list, builtins.tuple)):
            for sub in item:
                collect(sub)
        elif isinstance(item, dict):
            for sub in item.values():
                collect(sub)
        elif item is not None:
            flat.append(_as_op(item))

    collect(inputs)
    graph = graph_lib.get_default_graph()
    with graph.control_dependencies(flat):
        return no_op(name=name or "group_deps")


def with_dependencies(dependencies, output_tensor, name=None):
    with graph_lib.get_default_graph().control_dependencies(dependencies):
        return array_ops.identity(convert_to_tensor(output_tensor), name=name)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's name
    """Tensors with the same values that are only available once all of them are computed."""
    gate = group(*[t for t in tensors if t is not None], *(control_inputs or []),
                 name=name or "tuple")
    return [None if t is None else with_dependencies([gate], t) for t in tensors]
