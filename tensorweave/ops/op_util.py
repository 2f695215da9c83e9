"""Helpers the op families share to build ops from Python wrappers."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor


def default_graph():
    return graph_lib.get_default_graph()


def make_op(op_type, inputs=(), attrs=None, name=None):
    """Creates the op in the default graph; returns the Operation."""
    return graph_lib.get_default_graph().create_op(op_type, list(inputs), attrs, name)


def make_tensor(op_type, inputs=(), attrs=None, name=None):
    """Creates a single-output op; returns its Tensor."""
    return make_op(op_type, inputs, attrs, name).outputs[0]


def convert_pair(x, y, x_name="x", y_name="y"):
    """Converts two operands so they share a dtype: a Tensor operand decides the other's type."""
    if isinstance(x, graph_lib.Tensor) or hasattr(x, "_as_graph_element"):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype) if not _is_tensor_like(y) else convert_to_tensor(y)
    elif _is_tensor_like(y):
        y = convert_to_tensor(y)
        x = convert_to_tensor(x, dtype=y.dtype)
    else:
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype)
    return x, y


def _is_tensor_like(value):
    return isinstance(value, graph_lib.Tensor) or hasattr(value, "_as_graph_element")


def as_int_tensor(value, name=None):
    """Converts axes/shapes: int32 unless the value is already an int64 tensor."""
    if isinstance(value, graph_lib.Tensor):
        if not value.dtype.is_integer:
            raise TypeError(f"Expected an integer tensor, got {value.name} of {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtypes.int32, name=name)
