"""The global step: one int64 variable per graph, in the GLOBAL_STEP collection."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops
from tensorweave.ops.variables import Variable


def get_global_step(graph=None):
    graph = graph or graph_lib.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("There are multiple variables in the GLOBAL_STEP collection")
    if found:
        return found[0]
    try:
        tensor = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    if not tensor.dtype.is_integer:
        raise TypeError(f"Existing 'global_step' must be an integer tensor, got "
                        f"{tensor.dtype.name}")
    return tensor


def create_global_step(graph=None):
    graph = graph or graph_lib.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    with graph.as_default(), graph.name_scope(None):
        return Variable(array_ops.zeros([], dtype=dtypes.int64), trainable=False,
                        name="global_step",
                        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = graph or graph_lib.get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess, global_step_tensor):
    """The current value of the global step, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    dtype = global_step_tensor.dtype
    if not dtype.is_integer:
        raise TypeError(f"Existing 'global_step' does not have integer type: {dtype.name}")
