"""Running sums and products along an axis (Cumsum, Cumprod), inclusive or exclusive, forward or
reverse, and evenly spaced sequences (LinSpace) and grids (meshgrid)."""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import as_int_tensor, convert_pair, make_tensor

_NUMBERS = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
            dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16)


def _cumulative_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    axis = tensor_util.constant_value(op.inputs[1])
    if op.inputs[1].shape.ndims not in (None, 0):
        raise ValueError(f"axis must be a scalar, got shape {op.inputs[1].shape}")
    if dims is not None and axis is not None and not -len(dims) <= int(axis) < len(dims):
        raise ValueError(f"axis {int(axis)} is out of range for an input of rank {len(dims)}")
    return common_shapes.unchanged(op)


for _name in ("Cumsum", "Cumprod"):
    register_op(_name, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                attrs={"T": "type", "Tidx": ("type", dtypes.int32),
                       "exclusive": ("bool", False), "reverse": ("bool", False)},
                shape_fn=_cumulative_shape,
                allowed_types={"T": _NUMBERS, "Tidx": (dtypes.int32, dtypes.int64)})


def _flags(op):
    return op.get_attr("exclusive"), op.get_attr("reverse")


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    # Each output sums the inputs before (after, if reverse) it: each input's gradient sums the
    # output gradients after (before) it - the same scan run the other way.
    exclusive, reverse = _flags(op)
    return [cumsum(grad, op.inputs[1], exclusive=exclusive, reverse=not reverse), None]


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    # d out_j / d x_i = out_j / x_i for the i that out_j multiplies: defined where x has no zeros
    # (as TF's rule; the op tests keep x away from zero).
    x = op.inputs[0]
    exclusive, reverse = _flags(op)
    summed = cumsum(op.outputs[0] * grad, op.inputs[1], exclusive=exclusive,
                    reverse=not reverse)
    return [summed / x, None]


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    return make_tensor("Cumsum", [convert_to_tensor(x), as_int_tensor(axis)],
                       {"exclusive": exclusive, "reverse": reverse}, name or "Cumsum")


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    return make_tensor("Cumprod", [convert_to_tensor(x), as_int_tensor(axis)],
                       {"exclusive": exclusive, "reverse": reverse}, name or "Cumprod")


# --- LinSpace, meshgrid -----------------------------------------------------------------------
def _lin_space_shape(op):
    for name, tensor in zip(("start", "stop", "num"), op.inputs):
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{name} must be a scalar, got shape {tensor.shape}")
    num = tensor_util.constant_value(op.inputs[2])
    if num is not None and int(num) < 1:
        raise ValueError(f"num must be positive, got {int(num)}")
    return [tensor_shape.TensorShape([None if num is None else int(num)])]


register_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"], outputs=["output: T"],
            attrs={"T": "type", "Tidx": ("type", dtypes.int32)}, shape_fn=_lin_space_shape,
            allowed_types={"T": (dtypes.float32, dtypes.float64),
                           "Tidx": (dtypes.int32, dtypes.int64)})


@register_gradient("LinSpace")
def _lin_space_grad(op, grad):
    # output[i] = start + (stop - start) * i / (num - 1): linear in start and stop.
    from tensorweave.ops import math_ops
    num = op.inputs[2]
    steps = math_ops.cast(math_ops.range_(0, num, 1, dtype=num.dtype), grad.dtype)
    weight = steps / math_ops.cast(math_ops.maximum(num - 1, 1), grad.dtype)
    toward_stop = math_ops.reduce_sum(grad * weight)
    return [math_ops.reduce_sum(grad) - toward_stop, toward_stop, None]


def lin_space(start, stop, num, name=None):
    """`num` evenly spaced values from start to stop inclusive (Python numbers give float32)."""
    start, stop = convert_pair(*(float(v) if isinstance(v, (int, np.integer)) else v
                                 for v in (start, stop)))
    return make_tensor("LinSpace", [start, stop, as_int_tensor(num)], name=name or "LinSpace")


linspace = lin_space


def meshgrid(*args, **kwargs):
    """Coordinate grids: `indexing="xy"` (default, Cartesian) or "ij" (matrix), as NumPy."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"tf.meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"tf.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [array_ops.reshape(convert_to_tensor(v), [-1]) for v in args]
    count = len(vectors)
    if count == 0:
        return []
    if indexing == "xy" and count > 1:  # the first two axes swap places
        order = [1, 0] + list(range(2, count))
    else:
        order = list(range(count))
    shapes = []
    for i, vector in enumerate(vectors):
        shape = [1] * count
        shape[order.index(i)] = -1
        shapes.append(array_ops.reshape(vector, shape))
    static = [vectors[i].shape.as_tuple()[0] for i in order]
    if all(size is not None for size in static):
        full = static
    else:
        full = array_ops.stack([array_ops.size(vectors[i]) for i in order])
    from tensorweave.ops import math_ops
    return [math_ops.broadcast_to(s, full, name=f"{name}_{i}") for i, s in enumerate(shapes)]
