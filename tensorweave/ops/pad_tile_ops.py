"""Ops that extend or reorder a tensor's elements along its axes: padding with a constant value
(PadV2) or by mirroring (MirrorPad, with MirrorPadGrad as its gradient), Tile and ReverseV2.

Zero CONSTANT padding stays the Pad op of slicing_ops (TF's op for it); `tf.pad` picks the op.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import as_int_tensor, make_tensor

TensorShape = tensor_shape.TensorShape
_INDEX_TYPES = (dtypes.int32, dtypes.int64)
MIRROR_MODES = ("REFLECT", "SYMMETRIC")


def _static_paddings(op, input_dims):
    """The constant paddings checked against the input's rank, or None when not constant."""
    paddings = tensor_util.constant_value(op.inputs[1])
    if paddings is None or input_dims is None:
        return paddings
    if paddings.shape != (len(input_dims), 2):
        raise ValueError(f"paddings must have shape [{len(input_dims)}, 2] for an input of rank "
                         f"{len(input_dims)}, got {list(paddings.shape)}")
    if (paddings < 0).any():
        raise ValueError(f"paddings must be non-negative, got {paddings.tolist()}")
    return paddings


def _padded_shape(op, sign=1):
    dims = op.inputs[0].shape.as_tuple()
    paddings = _static_paddings(op, dims)
    if dims is None:
        rows = op.inputs[1].shape.as_tuple()
        return tensor_shape.unknown_shape(rows[0] if rows else None)
    if paddings is None:
        return tensor_shape.unknown_shape(len(dims))
    out = [None if d is None else d + sign * int(p.sum()) for d, p in zip(dims, paddings)]
    if any(d is not None and d < 0 for d in out):
        raise ValueError(f"paddings {paddings.tolist()} are larger than the input {dims}")
    return TensorShape(out)


# --- PadV2 -------------------------------------------------------------------------------------
def _pad_v2_shape(op):
    if op.inputs[2].shape.ndims not in (None, 0):
        raise ValueError(f"constant_values must be a scalar, got shape {op.inputs[2].shape}")
    return [_padded_shape(op)]


register_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
            outputs=["output: T"], attrs={"T": "type", "Tpaddings": ("type", dtypes.int32)},
            shape_fn=_pad_v2_shape, allowed_types={"Tpaddings": _INDEX_TYPES},
            doc="Pads with a given constant value.")


def _unpad(grad, x, paddings):
    begin = array_ops.reshape(array_ops.slice_(paddings, [0, 0], [-1, 1]), [-1])
    return array_ops.slice_(grad, begin, array_ops.shape(x, out_type=paddings.dtype))


@register_gradient("PadV2")
def _pad_v2_grad(op, grad):
    from tensorweave.ops import math_ops
    x, paddings, _ = op.inputs
    inner = _unpad(grad, x, paddings)
    # Every padded element is constant_values: its gradient is the sum over the padding.
    return [inner, None, math_ops.reduce_sum(grad) - math_ops.reduce_sum(inner)]


# --- MirrorPad, MirrorPadGrad ------------------------------------------------------------------
def _check_mirror(op, limit_of_mode):
    dims = op.inputs[0].shape.as_tuple()
    paddings = _static_paddings(op, dims)
    if dims is None or paddings is None:
        return
    mode = op.get_attr("mode")
    for axis, (dim, (before, after)) in enumerate(zip(dims, paddings.tolist())):
        limit = None if dim is None else limit_of_mode(mode, dim)
        if limit is not None and max(before, after) > limit:
            raise ValueError(f"{mode} paddings {[before, after]} of dimension {axis} exceed "
                             f"{limit} for its size {dim}")


def _mirror_limit(mode, dim):
    """REFLECT mirrors without repeating the edge, so it can add at most dim - 1 elements."""
    return dim - 1 if mode == "REFLECT" else dim


def _mirror_pad_shape(op):
    _check_mirror(op, _mirror_limit)
    return [_padded_shape(op)]


_MIRROR_ATTRS = {"T": "type", "Tpaddings": ("type", dtypes.int32), "mode": "string"}
register_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=_MIRROR_ATTRS, shape_fn=_mirror_pad_shape,
            allowed_types={"Tpaddings": _INDEX_TYPES},
            doc="Pads by mirroring the input at its edges: REFLECT leaves the edge out, "
                "SYMMETRIC repeats it.")


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [make_tensor("MirrorPadGrad", [grad, op.inputs[1]], {"mode": op.get_attr("mode")},
                        "MirrorPadGrad"), None]


def _mirror_pad_grad_shape(op):
    return [_padded_shape(op, sign=-1)]


register_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=_MIRROR_ATTRS, shape_fn=_mirror_pad_grad_shape,
            allowed_types={"Tpaddings": _INDEX_TYPES},
            doc="The gradient of MirrorPad: the padded border folded back onto the elements it "
                "mirrors.")


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [make_tensor("MirrorPad", [grad, op.inputs[1]], {"mode": op.get_attr("mode")},
                        "MirrorPad"), None]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """tf.pad: CONSTANT (zeros: Pad, otherwise PadV2), REFLECT or SYMMETRIC (MirrorPad)."""
    tensor = convert_to_tensor(tensor)
    paddings = array_ops._shape_to_tensor(paddings)
    mode = mode.upper() if isinstance(mode, str) else mode
    if mode == "CONSTANT":
        if not isinstance(constant_values, graph_lib.Tensor) and np.all(
                np.asarray(constant_values) == 0):
            return make_tensor("Pad", [tensor, paddings], name=name or "Pad")
        value = convert_to_tensor(constant_values, dtype=tensor.dtype)
        return make_tensor("PadV2", [tensor, paddings, value], name=name or "PadV2")
    if mode in MIRROR_MODES:
        return make_tensor("MirrorPad", [tensor, paddings], {"mode": mode},
                           name or "MirrorPad")
    raise ValueError(f"tf.pad: mode must be one of CONSTANT, REFLECT, SYMMETRIC; got {mode!r}")


# --- Tile --------------------------------------------------------------------------------------
def _tile_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    multiples = tensor_util.constant_value(op.inputs[1])
    if multiples is not None:
        multiples = [int(m) for m in multiples.reshape(-1)]
        if any(m < 0 for m in multiples):
            raise ValueError(f"multiples must be non-negative, got {multiples}")
        if dims is not None and len(multiples) != len(dims):
            raise ValueError(f"multiples {multiples} must have one entry per dimension of the "
                             f"input of shape {list(dims)}")
    if dims is None:
        return [tensor_shape.unknown_shape(None if multiples is None else len(multiples))]
    if multiples is None:
        return [tensor_shape.unknown_shape(len(dims))]
    return [TensorShape([None if d is None else d * m for d, m in zip(dims, multiples)])]


register_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
            attrs={"T": "type", "Tmultiples": ("type", dtypes.int32)}, shape_fn=_tile_shape,
            allowed_types={"Tmultiples": _INDEX_TYPES})


@register_gradient("Tile")
def _tile_grad(op, grad):
    # View the gradient as [m0, d0, m1, d1, ...] and sum over the m axes.
    from tensorweave.ops import math_ops
    x, multiples = op.inputs
    static = tensor_util.constant_value(multiples)
    if x.shape.is_fully_defined() and static is not None:
        pairs = [v for m, d in zip(static.tolist(), x.shape.as_list()) for v in (m, d)]
        axes = list(range(0, len(pairs), 2))
        summed = math_ops.reduce_sum(array_ops.reshape(grad, pairs), axes)
        return [summed, None]
    shape = array_ops.shape(x, out_type=multiples.dtype)
    pairs = array_ops.reshape(array_ops.stack([multiples, shape], axis=1), [-1])
    axes = math_ops.range_(0, array_ops.size(pairs), 2)
    summed = math_ops.reduce_sum(array_ops.reshape(grad, pairs), axes)
    return [array_ops.reshape(summed, shape), None]


def tile(input, multiples, name=None):  # noqa: A002 - TF's argument name
    return make_tensor("Tile", [convert_to_tensor(input), array_ops._shape_to_tensor(multiples)],
                       name=name or "Tile")


# --- ReverseV2 ---------------------------------------------------------------------------------
def _reverse_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    axes = tensor_util.constant_value(op.inputs[1])
    if op.inputs[1].shape.ndims not in (None, 1):
        raise ValueError(f"axis must be a vector, got shape {op.inputs[1].shape}")
    if dims is not None and axes is not None:
        axes = [int(a) for a in axes.reshape(-1)]
        for axis in axes:
            if not -len(dims) <= axis < max(len(dims), 1):
                raise ValueError(f"axis {axis} is out of range for an input of rank {len(dims)}")
        normal = [a % len(dims) for a in axes]
        if len(set(normal)) != len(normal):
            raise ValueError(f"axis {axes} names a dimension more than once")
    return [op.inputs[0].shape]


register_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
            attrs={"T": "type", "Tidx": ("type", dtypes.int32)}, shape_fn=_reverse_shape,
            allowed_types={"Tidx": _INDEX_TYPES})


@register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [reverse(grad, op.inputs[1]), None]


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along each axis in `axis` (a list of ints or an int vector)."""
    axis = [axis] if isinstance(axis, (int, np.integer)) else axis
    return make_tensor("ReverseV2", [convert_to_tensor(tensor), as_int_tensor(axis)],
                       name=name or "ReverseV2")
