"""Resources beside variables (TF 1.x's `tensorflow.python.ops.resources`): objects such as
tensor_forest's trees, registered with the op that creates them and the op saying whether
they exist, and initialised together like variables."""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant
from tensorweave.ops import control_flow_ops, math_ops, slicing_ops


class _Resource:
    def __init__(self, handle, create, is_initialized):
        self.handle, self.create, self.is_initialized = handle, create, is_initialized


def register_resource(handle, create_op, is_initialized_op, is_shared=True):
    """Adds a resource to GraphKeys.RESOURCES (shared) or LOCAL_RESOURCES."""
    graph_lib.add_to_collection(GraphKeys.RESOURCES if is_shared else GraphKeys.LOCAL_RESOURCES,
                                _Resource(handle, create_op, is_initialized_op))


def shared_resources():
    return graph_lib.get_collection(GraphKeys.RESOURCES)


def local_resources():
    return graph_lib.get_collection(GraphKeys.LOCAL_RESOURCES)


def initialize_resources(resource_list, name="init"):
    """One op running every resource's create op (a no-op for an empty list)."""
    if resource_list:
        return control_flow_ops.group(*[r.create for r in resource_list], name=name)
    return control_flow_ops.no_op(name=name)


def report_uninitialized_resources(resource_list=None, name="report_uninitialized_resources"):
    """The names of the resources not created yet, as a string vector."""
    if resource_list is None:
        resource_list = shared_resources() + local_resources()
    with graph_lib.name_scope(name):
        if not resource_list:
            return constant([], dtype=dtypes.string)
        names = constant([r.handle.op.name.encode() for r in resource_list])
        ready = slicing_ops.stack([r.is_initialized for r in resource_list])
        return slicing_ops.boolean_mask(names, math_ops.logical_not(ready))
