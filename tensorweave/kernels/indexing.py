"""Kernels of the indexing ops: StridedSlice (NumPy basic indexing), GatherNd, ScatterNd, OneHot.
Outputs keep their inputs' dtypes; bad indices raise InvalidArgumentError naming the value."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import slice_spec
from tensorweave.kernels.registry import register_kernel


def _index(begin, end, strides, masks):
    try:
        return slice_spec.numpy_index(np.asarray(begin).reshape(-1), np.asarray(end).reshape(-1),
                                      np.asarray(strides).reshape(-1), masks)
    except ValueError as exc:
        raise errors.InvalidArgumentError(None, None, str(exc)) from None


def _apply(x, index, spec):
    try:
        return x[index]
    except IndexError as exc:
        raise errors.InvalidArgumentError(None, None, f"slice {spec} does not fit a tensor of "
                                          f"shape {list(np.shape(x))}: {exc}") from None


def _spec_text(begin, end, strides):
    return (f"begin={np.asarray(begin).tolist()} end={np.asarray(end).tolist()} "
            f"strides={np.asarray(strides).tolist()}")


@register_kernel("StridedSlice", forwards_input=True)
def strided_slice(x, begin, end, strides, *, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                  shrink_axis_mask):
    masks = dict(zip(slice_spec.MASK_NAMES, (begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                             shrink_axis_mask)))
    x = np.asarray(x)
    result = _apply(x, _index(begin, end, strides, masks), _spec_text(begin, end, strides))
    # A view of the input (the executor knows: forwards_input); strided views are made compact
    # so that downstream kernels and transfers see ordinary arrays.
    result = np.asarray(result)
    return result if result.flags.c_contiguous else result.copy()


@register_kernel("StridedSliceGrad")
def strided_slice_grad(shape, begin, end, strides, dy, *, begin_mask, end_mask, ellipsis_mask,
                       new_axis_mask, shrink_axis_mask):
    masks = dict(zip(slice_spec.MASK_NAMES, (begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                             shrink_axis_mask)))
    dy = np.asarray(dy)
    out = np.zeros([int(d) for d in np.asarray(shape).reshape(-1)], dtype=dy.dtype)
    index = _index(begin, end, strides, masks)
    target = _apply(out, index, _spec_text(begin, end, strides))
    if np.shape(target) != dy.shape:
        raise errors.InvalidArgumentError(None, None, f"dy has shape {list(dy.shape)} but the "
                                          f"slice selects {list(np.shape(target))}")
    out[index] = dy
    return out


def _check_index_tuples(indices, shape, what):
    """Raises naming the first index tuple that falls outside `shape`."""
    depth = indices.shape[-1]
    limits = np.asarray(shape[:depth], dtype=np.int64)
    bad = ((indices < 0) | (indices >= limits)).any(axis=-1)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise errors.InvalidArgumentError(
            None, None, f"indices{list(where)} = {indices[where].tolist()} does not index into "
            f"{what} shape {list(shape)}")


@register_kernel("GatherNd")
def gather_nd(params, indices):
    params, indices = np.asarray(params), np.asarray(indices)
    depth = indices.shape[-1]
    if depth > params.ndim:
        raise errors.InvalidArgumentError(None, None, f"index depth {depth} exceeds the rank of "
                                          f"params {list(params.shape)}")
    out_shape = indices.shape[:-1] + params.shape[depth:]
    if depth == 0:
        return np.array(np.broadcast_to(params, out_shape))
    _check_index_tuples(indices, params.shape, "param")
    return params[tuple(np.moveaxis(indices, -1, 0))]


@register_kernel("ScatterNd")
def scatter_nd(indices, updates, shape):
    indices, updates = np.asarray(indices), np.asarray(updates)
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    depth = indices.shape[-1]
    expected = indices.shape[:-1] + shape[depth:]
    if depth > len(shape) or updates.shape != expected:
        raise errors.InvalidArgumentError(
            None, None, f"updates of shape {list(updates.shape)} do not fit indices of shape "
            f"{list(indices.shape)} into shape {list(shape)} (expected updates of shape "
            f"{list(expected)})")
    out = np.zeros(shape, dtype=updates.dtype)
    if depth == 0:
        return out + updates.sum(axis=tuple(range(indices.ndim - 1)), dtype=updates.dtype)
    _check_index_tuples(indices, shape, "output")
    np.add.at(out, tuple(np.moveaxis(indices, -1, 0)), updates)  # duplicate indices add up
    return out


@register_kernel("OneHot")
def one_hot(indices, depth, on_value, off_value, *, axis):
    indices, depth = np.asarray(indices), int(depth)
    if depth < 0:
        raise errors.InvalidArgumentError(None, None, f"depth must be non-negative, got {depth}")
    axis = indices.ndim if axis == -1 else axis
    positions = np.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
    hot = np.expand_dims(indices, axis) == positions
    return np.where(hot, on_value, off_value)
