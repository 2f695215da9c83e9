"""Ordering and set ops: TopKV2 (the k largest along the last axis, with their indices) and
Unique (the distinct values of a vector in order of first appearance, and where each element
went)."""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_op

TensorShape = tensor_shape.TensorShape
_NUMBERS = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
            dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16)
TopKResult = collections.namedtuple("TopKV2", ["values", "indices"])
UniqueResult = collections.namedtuple("Unique", ["y", "idx"])


# --- TopKV2 ------------------------------------------------------------------------------------
def _top_k_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    k = tensor_util.constant_value(op.inputs[1])
    if op.inputs[1].shape.ndims not in (None, 0):
        raise ValueError(f"k must be a scalar, got shape {op.inputs[1].shape}")
    if k is not None and int(k) < 0:
        raise ValueError(f"k must be non-negative, got {int(k)}")
    if dims is None:
        return [tensor_shape.unknown_shape()] * 2
    if not dims:
        raise ValueError("input must have rank >= 1, got a scalar")
    if k is not None and dims[-1] is not None and int(k) > dims[-1]:
        raise ValueError(f"k = {int(k)} is larger than the last dimension ({dims[-1]})")
    shape = TensorShape(dims[:-1] + (None if k is None else int(k),))
    return [shape, shape]


register_op("TopKV2", inputs=["input: T", "k: int32"], outputs=["values: T", "indices: int32"],
            attrs={"T": "type", "sorted": ("bool", True)}, shape_fn=_top_k_shape,
            allowed_types={"T": _NUMBERS},
            doc="The k largest entries of each last-axis row, largest first; among equal "
                "values the lower index comes first.")


@register_gradient("TopKV2")
def _top_k_grad(op, grad_values, grad_indices):
    # Each value came from one input position: scatter the gradient back to it, row by row,
    # through the flattened input.
    from tensorweave.ops import math_ops
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = array_ops.shape(x)
    row_length = in_shape[-1]
    k = array_ops.shape(indices)[-1]
    rows = array_ops.size(x) // math_ops.maximum(row_length, 1)
    offsets = array_ops.expand_dims(math_ops.range_(0, rows) * row_length, -1)
    flat_index = array_ops.reshape(array_ops.reshape(indices, array_ops.stack([rows, k])) +
                                   offsets, [-1, 1])
    flat_grad = array_ops.reshape(grad_values, [-1])
    dense = array_ops.scatter_nd(flat_index, flat_grad,
                                 array_ops.reshape(array_ops.size(x), [1]))
    return [array_ops.reshape(dense, array_ops._static_or_dynamic_shape(x)), None]


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF's argument names
    """(values, indices) of the k largest entries along the last axis."""
    op = make_op("TopKV2", [convert_to_tensor(input), convert_to_tensor(k, dtype=dtypes.int32)],
                 {"sorted": sorted}, name or "TopKV2")
    return TopKResult(*op.outputs)


# --- Unique ------------------------------------------------------------------------------------
def _unique_shape(op):
    x = op.inputs[0].shape
    if x.ndims is not None and x.ndims != 1:
        raise ValueError(f"unique needs a vector, got shape {x}")
    return [TensorShape([None]), x if x.ndims is not None else TensorShape([None])]


register_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
            attrs={"T": "type", "out_idx": ("type", dtypes.int32)}, shape_fn=_unique_shape,
            allowed_types={"out_idx": (dtypes.int32, dtypes.int64)})
not_differentiable("Unique")


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of vector x in order of first appearance, and x == y[idx]."""
    op = make_op("Unique", [convert_to_tensor(x)], {"out_idx": dtypes.as_dtype(out_idx)},
                 name or "Unique")
    return UniqueResult(*op.outputs)
