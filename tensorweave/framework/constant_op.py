"""`Const`, and converting Python/NumPy values and Tensor-like objects to Tensors.

Const lives in the framework layer because `convert_to_tensor` needs it and every layer above
converts values; its kernel is in kernels/array.py like any other op's.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework import op_def
from tensorweave.framework import tensor_util


def _const_shape(op):
    return [op.get_attr("value").shape]


op_def.register_op("Const", outputs=["output: dtype"],
                   attrs={"value": "tensor", "dtype": "type"}, shape_fn=_const_shape,
                   doc="A constant tensor; its value is the read-only array in attr `value`.")


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """`tf.constant`: a Const op. With `shape`, a value of that size is reshaped and a smaller
    one is completed with its last element (TF 1.x); `verify_shape=True` demands an exact match."""
    array = tensor_util.to_numpy(value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in (shape if isinstance(shape, (list, tuple)) else
                                       [shape] if np.ndim(shape) == 0 else shape))
        if array.shape != shape:
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {shape}, got {array.shape}.")
            size = int(np.prod(shape))
            if array.size == 1:
                array = np.full(shape, array.reshape(()), dtype=array.dtype)
            elif array.size == size:
                array = array.reshape(shape)
            elif 0 < array.size < size:
                # TF 1.x: a shorter value is completed with its last element.
                flat = array.reshape(-1)
                array = np.concatenate([flat, np.repeat(flat[-1:], size - flat.size)])
                array = array.reshape(shape)
            else:
                raise ValueError(f"tf.constant: value of {array.size} elements does not fit "
                                 f"shape {shape} ({size} elements)")
    array = np.array(array, copy=True)
    array.flags.writeable = False
    graph = graph_lib.get_default_graph()
    # A quantized dtype (qint8 ...) is stored in its NumPy integer: only the request names it.
    quantized = dtype is not None and dtypes.as_dtype(dtype).is_quantized
    op = graph.create_op("Const", [], {"value": array, "dtype": dtypes.as_dtype(
        dtype if quantized else array.dtype)}, name=name)
    return op.outputs[0]


_CONVERSION_FUNCTIONS = []  # (type, fn(value, dtype, name) -> Tensor)


def register_tensor_conversion_function(base_type, conversion_func):
    """Lets objects of `base_type` (Variables, IndexedSlices, ...) be used where Tensors go."""
    _CONVERSION_FUNCTIONS.append((base_type, conversion_func))


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    preferred_dtype = preferred_dtype or dtype_hint
    if isinstance(value, graph_lib.Tensor):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for Tensor {value.name} of dtype {value.dtype.name}")
        return value
    for base_type, conversion_func in _CONVERSION_FUNCTIONS:
        if isinstance(value, base_type):
            tensor = conversion_func(value, dtype=dtype, name=name)
            if tensor is not NotImplemented:
                return tensor
    if isinstance(value, graph_lib.Operation):
        raise TypeError(f"Cannot convert Operation {value.name!r} to a Tensor: an Operation has "
                        f"no value. Did you mean one of its outputs ({value.name}:0)?")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    try:
        return constant(value, dtype=dtype, name=name or "Const")
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Cannot convert {value!r} to a Tensor"
                        f"{'' if dtype is None else ' of dtype ' + dtypes.as_dtype(dtype).name}: "
                        f"{exc}") from None


def convert_n_to_tensor(values, dtype=None, name=None):
    return [convert_to_tensor(v, dtype=dtype, name=name) for v in values]


def is_tensor_like(value):
    if isinstance(value, graph_lib.Tensor):
        return True
    return any(isinstance(value, base) for base, _ in _CONVERSION_FUNCTIONS)


def is_tensor(value):
    """`tf.is_tensor`: True for graph values a TF op accepts as they are - a Tensor, a
    Variable (anything with `_as_graph_element`), IndexedSlices, a SparseTensor of tensors -
    and False for Python and NumPy values, which would be converted."""
    if isinstance(value, (graph_lib.Tensor, IndexedSlices)) or hasattr(value,
                                                                       "_as_graph_element"):
        return True
    return all(isinstance(getattr(value, field, None), graph_lib.Tensor)
               for field in ("indices", "values", "dense_shape"))


def is_numeric_tensor(value):
    """True for a Tensor of a numeric dtype (not string, not bool)."""
    return isinstance(value, graph_lib.Tensor) and (
        value.dtype.is_floating or value.dtype.is_integer or value.dtype.is_complex)


def get_static_value(tensor, partial=False):
    """The value of `tensor` when it is known without running the graph (constants and what
    folds from them, shapes that are fully known), else None; a non-tensor is returned as
    is."""
    if hasattr(tensor, "_as_graph_element") and not isinstance(tensor, graph_lib.Tensor):
        return None  # a Variable's value is only known when a session runs
    if not isinstance(tensor, graph_lib.Tensor):
        return tensor
    return tensor_util.constant_value(tensor)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """IndexedSlices as they are (their dtype checked against `dtype`); anything else through
    convert_to_tensor."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for IndexedSlices of dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
