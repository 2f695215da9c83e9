"""Clipping and norms, composed from math ops (their gradients come with them): clip_by_value,
clip_by_norm, global_norm, clip_by_global_norm, clip_by_average_norm and tf.norm.

IndexedSlices (sparse gradients) are clipped through their values and stay sparse.
"""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array_ops
from tensorweave.ops import math_ops
from tensorweave.ops import reduction_ops


def _values(t):
    return t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t)


def _like(t, values):
    return IndexedSlices(values, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) \
        else values


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max) elementwise; the bounds may broadcast
    against t but never enlarge it."""
    values = _values(t)
    with graph_lib.name_scope(name, "clip_by_value", [values]):
        low = convert_to_tensor(clip_value_min, dtype=values.dtype)
        high = convert_to_tensor(clip_value_max, dtype=values.dtype)
        for bound, label in ((low, "clip_value_min"), (high, "clip_value_max")):
            try:
                merged = common_shapes.broadcast_shapes(values.shape, bound.shape)
            except ValueError:
                merged = None
            if merged is None or (values.shape.ndims is not None and merged.ndims is not None
                                  and not values.shape.is_compatible_with(merged)):
                raise ValueError(f"clip_by_value: {label} of shape {bound.shape} does not "
                                 f"broadcast to t's shape {values.shape}")
        clipped = math_ops.maximum(math_ops.minimum(values, high), low)
        return _like(t, clipped)


def _squared_sum(values, axes=None, keepdims=False):
    return reduction_ops.reduce_sum(math_ops.square(values), axes, keepdims=keepdims)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(||t||, clip_norm), the L2 norm taken over `axes` (all by default).
    A zero tensor stays zero (and its gradient finite)."""
    values = _values(t)
    with graph_lib.name_scope(name, "clip_by_norm", [values]):
        clip_norm = convert_to_tensor(clip_norm, dtype=values.dtype)
        squared = _squared_sum(values, axes, keepdims=True)
        positive = math_ops.greater(squared, 0)
        safe = math_ops.select(positive, squared, array_ops.ones_like(squared))
        norm = math_ops.select(positive, math_ops.sqrt(safe), squared)
        clipped = values * clip_norm / math_ops.maximum(norm, clip_norm)
        return _like(t, array_ops.identity(clipped))


def global_norm(t_list, name=None):
    """sqrt(sum of squares of every element of every tensor in t_list); None entries skipped."""
    if isinstance(t_list, (graph_lib.Tensor, IndexedSlices)) or not hasattr(t_list, "__iter__"):
        raise TypeError("global_norm expects a list of tensors")
    values = [_values(t) for t in t_list if t is not None]
    if not values:
        raise ValueError("global_norm needs at least one tensor that is not None")
    with graph_lib.name_scope(name, "global_norm", values):
        dtype = values[0].dtype
        squares = [math_ops.cast(_squared_sum(v), dtype) for v in values]
        return math_ops.sqrt(math_ops.add_n(squares), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by clip_norm / max(global_norm, clip_norm); returns (clipped list,
    the global norm). An infinite or NaN norm makes every clipped value NaN, as in TF."""
    if isinstance(t_list, (graph_lib.Tensor, IndexedSlices)) or not hasattr(t_list, "__iter__"):
        raise TypeError("clip_by_global_norm expects a list of tensors")
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    with graph_lib.name_scope(name, "clip_by_global_norm", [norm]):
        clip_norm = convert_to_tensor(clip_norm, dtype=norm.dtype)
        one = convert_to_tensor(1, dtype=norm.dtype)
        scale = clip_norm * math_ops.minimum(one / norm, one / clip_norm)
        nan_if_infinite = math_ops.select(math_ops.is_finite(norm), array_ops.zeros_like(norm),
                                          convert_to_tensor(np.nan, dtype=norm.dtype))
        scale = scale + nan_if_infinite
        clipped = []
        for t in t_list:
            if t is None:
                clipped.append(None)
                continue
            values = _values(t)
            factor = scale if values.dtype == scale.dtype else math_ops.cast(scale, values.dtype)
            clipped.append(_like(t, array_ops.identity(values * factor)))
        return clipped, norm


def clip_by_average_norm(t, clip_norm, name=None):
    """clip_by_norm with the norm divided by the number of elements (TF 1.x)."""
    values = _values(t)
    with graph_lib.name_scope(name, "clip_by_average_norm", [values]):
        count = math_ops.cast(array_ops.size(values), values.dtype)
        clip_norm = convert_to_tensor(clip_norm, dtype=values.dtype)
        average = math_ops.sqrt(_squared_sum(values)) / count
        return _like(t, values * clip_norm / math_ops.maximum(average, clip_norm))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None,  # noqa: A002
         keep_dims=None):
    """`tf.norm`: vector norms (ord 'euclidean', 1, 2, any p > 0, np.inf) over one axis or all
    elements, matrix norms ('fro'/'euclidean', 1, np.inf) over a pair of axes."""
    x = convert_to_tensor(tensor)
    keep = bool(keepdims if keep_dims is None else keep_dims)
    is_matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and len(axis) not in (1, 2):
        raise ValueError(f"tf.norm: axis must be None, an int or a pair of ints, got {axis}")
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    with graph_lib.name_scope(name, "norm", [x]):
        if ord in ("euclidean", "fro") or (ord == 2 and not is_matrix):
            if ord == "fro" and not (is_matrix or axis is None):
                raise ValueError("tf.norm: ord='fro' needs axis=None or a pair of axes")
            return math_ops.sqrt(_squared_sum(x, axis, keepdims=keep))
        magnitude = math_ops.abs(x)
        if is_matrix:
            rows, cols = axis
            if ord == 1:  # the largest column sum
                inner, outer = rows, cols
            elif ord == np.inf:  # the largest row sum
                inner, outer = cols, rows
            else:
                raise ValueError(f"tf.norm: matrix ord must be 'fro', 'euclidean', 1 or np.inf, "
                                 f"got {ord!r} (the spectral norm needs an SVD)")
            sums = reduction_ops.reduce_sum(magnitude, inner, keepdims=True)
            result = reduction_ops.reduce_max(sums, outer, keepdims=True)
            if not keep:
                result = array_ops.squeeze(result, [inner, outer])
            return result
        if ord == np.inf:
            return reduction_ops.reduce_max(magnitude, axis, keepdims=keep)
        if ord == 1:
            return reduction_ops.reduce_sum(magnitude, axis, keepdims=keep)
        if isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord > 0:
            power = convert_to_tensor(ord, dtype=x.dtype)
            total = reduction_ops.reduce_sum(math_ops.pow(magnitude, power), axis, keepdims=keep)
            return math_ops.pow(total, convert_to_tensor(1.0 / ord, dtype=x.dtype))
        raise ValueError(f"tf.norm: ord must be 'euclidean', 'fro', a positive number or np.inf, "
                         f"got {ord!r}")
