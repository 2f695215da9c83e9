"""Indexing by index tuples: GatherNd, ScatterNd, OneHot, and sequence_mask built on Range/Less.

GatherNd and ScatterNd are each other's gradient (both linear), so gradients of any order are
graphs of the two. Out-of-range indices fail at run time naming the op and the bad index.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_tensor

TensorShape = tensor_shape.TensorShape
_INDEX_TYPES = (dtypes.int32, dtypes.int64)


# --- GatherNd ----------------------------------------------------------------------------------
def _gather_nd_shape(op):
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    if indices.ndims is None:
        return [tensor_shape.unknown_shape()]
    if indices.ndims < 1:
        raise ValueError(f"indices must have rank >= 1, got shape {indices}")
    depth = indices.as_tuple()[-1]
    if depth is None or params.ndims is None:
        return [tensor_shape.unknown_shape()]
    if depth > params.ndims:
        raise ValueError(f"the index depth {depth} (last dimension of indices {indices}) exceeds "
                         f"the rank of params {params}")
    return [TensorShape(indices.as_tuple()[:-1] + params.as_tuple()[depth:])]


register_op("GatherNd", inputs=["params: Tparams", "indices: Tindices"],
            outputs=["output: Tparams"], attrs={"Tparams": "type", "Tindices": "type"},
            shape_fn=_gather_nd_shape, allowed_types={"Tindices": _INDEX_TYPES},
            doc="Slices of params at the index tuples in the last dimension of indices.")


@register_gradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    shape = array_ops._static_or_dynamic_shape(params)
    if not isinstance(shape, list):
        shape = array_ops.shape(params, out_type=indices.dtype)
    return [scatter_nd(indices, grad, shape), None]


def gather_nd(params, indices, name=None, batch_dims=0):
    """Slices of params at the index tuples on the last axis of indices. With batch_dims=b,
    the first b dimensions of params and indices are batch dimensions: each tuple indexes its
    own batch element (composed: the batch position is prepended to every tuple)."""
    params, indices = convert_to_tensor(params), convert_to_tensor(indices)
    if batch_dims:
        rank = indices.shape.ndims
        if rank is None or not 0 <= batch_dims < rank:
            raise ValueError(f"tf.gather_nd: batch_dims={batch_dims} needs indices of known "
                             f"rank greater than it, got shape {indices.shape}")
        _check_batch_dims("gather_nd", params, indices, batch_dims)
        with graph_lib.get_default_graph().name_scope(name or "GatherNd"):
            positions = batch_positions(array_ops.shape(indices, out_type=indices.dtype)[:-1],
                                        rank - 1, batch_dims)
            indices = array_ops.concat([positions, indices], -1)
            return make_tensor("GatherNd", [params, indices])
    return make_tensor("GatherNd", [params, indices], name=name or "GatherNd")


def batch_positions(shape, rank, batch_dims):
    """For a tensor of `shape` (an int tensor; `rank` known), each element's position along
    the first `batch_dims` dimensions, stacked on a new last axis: [*shape, batch_dims]."""
    from tensorweave.ops import math_ops
    along = []
    for k in range(batch_dims):
        steps = math_ops.range_(0, shape[k], dtype=shape.dtype)
        steps = array_ops.reshape(steps, [1] * k + [-1] + [1] * (rank - k - 1))
        along.append(math_ops.broadcast_to(steps, shape))
    return array_ops.stack(along, axis=-1)


def _check_batch_dims(function, params, indices, batch_dims):
    leading = params.shape[:batch_dims] if params.shape.ndims is not None else None
    if params.shape.ndims is not None and params.shape.ndims <= batch_dims:
        raise ValueError(f"tf.{function}: batch_dims={batch_dims} needs params of rank greater "
                         f"than it, got shape {params.shape}")
    if leading is not None and not leading.is_compatible_with(indices.shape[:batch_dims]):
        raise ValueError(f"tf.{function}: the first batch_dims={batch_dims} dimensions of "
                         f"params {params.shape} and indices {indices.shape} must match")


# --- ScatterNd ---------------------------------------------------------------------------------
def _scatter_nd_shape(op):
    indices, updates = op.inputs[0].shape, op.inputs[1].shape
    target = tensor_util.constant_value_as_shape(op.inputs[2])
    if indices.ndims is not None and indices.ndims < 1:
        raise ValueError(f"indices must have rank >= 1, got shape {indices}")
    if indices.ndims is None or target.ndims is None or updates.ndims is None:
        return [target]
    depth = indices.as_tuple()[-1]
    if depth is None:
        return [target]
    if depth > target.ndims:
        raise ValueError(f"the index depth {depth} exceeds the rank of the output shape "
                         f"{target}")
    expected = TensorShape(indices.as_tuple()[:-1] + target.as_tuple()[depth:])
    if not updates.is_compatible_with(expected):
        raise ValueError(f"updates must have shape indices.shape[:-1] + shape[{depth}:] = "
                         f"{expected}, got {updates}")
    return [target]


register_op("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
            outputs=["output: T"], attrs={"T": "type", "Tindices": "type"},
            shape_fn=_scatter_nd_shape, allowed_types={"Tindices": _INDEX_TYPES},
            doc="Zeros of `shape` with `updates` added at the index tuples (duplicates sum).")


@register_gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, gather_nd(grad, op.inputs[0]), None]


def scatter_nd(indices, updates, shape, name=None):
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"tf.scatter_nd: indices must be int32 or int64, got "
                        f"{indices.dtype.name}")
    if not isinstance(shape, graph_lib.Tensor) and not (isinstance(shape, (list, tuple)) and any(
            isinstance(d, graph_lib.Tensor) for d in shape)):
        shape = tensor_shape.as_shape(shape).as_list()
        shape = convert_to_tensor(np.array(shape, dtype=indices.dtype.np_dtype))
    shape = array_ops._shape_to_tensor(shape)
    if shape.dtype != indices.dtype:
        from tensorweave.ops import math_ops
        shape = math_ops.cast(shape, indices.dtype)
    return make_tensor("ScatterNd", [indices, convert_to_tensor(updates), shape],
                       name=name or "ScatterNd")


# --- OneHot ------------------------------------------------------------------------------------
def _one_hot_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    depth = tensor_util.constant_value(op.inputs[1])
    for name, tensor in (("on_value", op.inputs[2]), ("off_value", op.inputs[3])):
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{name} must be a scalar, got shape {tensor.shape}")
    if depth is not None and int(depth) < 0:
        raise ValueError(f"depth must be non-negative, got {int(depth)}")
    if dims is None:
        return [tensor_shape.unknown_shape()]
    axis = op.get_attr("axis")
    if not -1 <= axis <= len(dims):
        raise ValueError(f"axis must be -1 or in [0, {len(dims)}], got {axis}")
    axis = len(dims) if axis == -1 else axis
    depth = None if depth is None else int(depth)
    return [TensorShape(dims[:axis] + (depth,) + dims[axis:])]


register_op("OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
            outputs=["output: T"], attrs={"T": "type", "TI": ("type", dtypes.int64),
                                          "axis": ("int", -1)},
            shape_fn=_one_hot_shape, allowed_types={"TI": (dtypes.uint8,) + _INDEX_TYPES},
            doc="on_value where the new axis equals the index, off_value elsewhere (indices out "
                "of [0, depth) give a row of off_value).")
not_differentiable("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    indices = convert_to_tensor(indices)
    if dtype is None:  # as TF: the type of on_value or off_value when given, else float32
        given = next((v for v in (on_value, off_value) if v is not None), None)
        dtype = dtypes.float32 if given is None else convert_to_tensor(given).dtype
    dtype = dtypes.as_dtype(dtype)
    try:
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype)
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype)
    except ValueError as exc:
        raise TypeError(f"tf.one_hot: on_value and off_value must both be {dtype.name}: "
                        f"{exc}") from None
    depth = convert_to_tensor(depth, dtype=dtypes.int32)
    return make_tensor("OneHot", [indices, depth, on, off], {"axis": -1 if axis is None else axis},
                       name or "one_hot")


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...]: Range and Less, no op of its own."""
    from tensorweave.ops import math_ops
    lengths = convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = math_ops.reduce_max(lengths)
    maxlen = convert_to_tensor(maxlen)
    if maxlen.shape.ndims not in (None, 0):
        raise ValueError(f"tf.sequence_mask: maxlen must be a scalar, got shape {maxlen.shape}")
    steps = math_ops.range_(0, math_ops.cast(maxlen, lengths.dtype), 1, dtype=lengths.dtype)
    mask = math_ops.less(steps, array_ops.expand_dims(lengths, -1), name=name or "SequenceMask")
    return mask if dtypes.as_dtype(dtype) == dtypes.bool else math_ops.cast(mask, dtype)
