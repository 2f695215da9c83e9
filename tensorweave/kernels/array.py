"""Kernels of the array ops (and of Const). Outputs keep their inputs' dtypes exactly."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


@register_kernel("Const")
def const(*, value):
    return value


@register_kernel("Placeholder")
def placeholder(*, dtype, shape):
    raise errors.InvalidArgumentError(
        None, None, f"You must feed a value for placeholder tensor with dtype {dtype.name}"
        f"{'' if shape is None else ' and shape ' + str(shape)}")


@register_kernel("PlaceholderWithDefault", forwards_input=True)
def placeholder_with_default(value):
    return value


@register_kernel("Identity", forwards_input=True)
def identity(x):
    return x


@register_kernel("StopGradient", forwards_input=True)
def stop_gradient(x):
    return x


@register_kernel("Shape")
def shape(x, *, out_type):
    return np.array(np.shape(x), dtype=out_type.np_dtype)


@register_kernel("Size")
def size(x, *, out_type):
    return np.array(np.size(x), dtype=out_type.np_dtype)


@register_kernel("Rank")
def rank(x):
    return np.array(np.ndim(x), dtype=np.int32)


@register_kernel("Reshape", forwards_input=True)
def reshape(x, new_shape):
    x = np.asarray(x)
    target = [int(d) for d in np.asarray(new_shape).reshape(-1)]
    try:
        return x.reshape(target)
    except ValueError:
        raise ValueError(f"Input to reshape is a tensor with {x.size} values, but the requested "
                         f"shape {target} does not fit it") from None


@register_kernel("Fill")
def fill(dims, value):
    return np.full([int(d) for d in np.asarray(dims).reshape(-1)], value, dtype=np.asarray(
        value).dtype)


@register_kernel("ZerosLike")
def zeros_like(x):
    return np.zeros_like(x)


@register_kernel("OnesLike")
def ones_like(x):
    return np.ones_like(x)


@register_kernel("Pack")
def pack(*values, axis):
    return np.stack(values, axis=axis)


@register_kernel("Unpack", forwards_input=True)
def unpack(value, *, num, axis):
    value = np.asarray(value)
    if value.shape[axis] != num:
        raise ValueError(f"cannot unstack dimension {value.shape[axis]} into num={num}")
    return tuple(np.moveaxis(value, axis, 0))


@register_kernel("ConcatV2")
def concat_v2(*args):
    *values, axis = args
    return np.concatenate(values, axis=int(axis))


@register_kernel("Slice")
def slice_(x, begin, size):
    x = np.asarray(x)
    index = []
    for dim, (b, s) in enumerate(zip(np.asarray(begin).tolist(), np.asarray(size).tolist())):
        end = x.shape[dim] if s == -1 else b + s
        if b < 0 or end > x.shape[dim] or end < b:
            raise ValueError(f"slice of dimension {dim}: begin {b} size {s} is out of bounds for "
                             f"size {x.shape[dim]}")
        index.append(slice(b, end))
    return x[tuple(index)].copy()


@register_kernel("SplitV", forwards_input=True)
def split_v(value, size_splits, axis, *, num_split):
    sizes = np.asarray(size_splits).astype(np.int64)
    value = np.asarray(value)
    axis = int(axis)
    if (sizes == -1).sum() == 1:
        sizes[sizes == -1] = value.shape[axis] - sizes[sizes != -1].sum()
    if sizes.sum() != value.shape[axis]:
        raise ValueError(f"split sizes {sizes.tolist()} do not add up to dimension size "
                         f"{value.shape[axis]}")
    return tuple(np.split(value, np.cumsum(sizes)[:-1], axis=axis))


@register_kernel("Pad")
def pad(x, paddings):
    return np.pad(x, np.asarray(paddings).astype(np.int64))


@register_kernel("ExpandDims", forwards_input=True)
def expand_dims(x, axis):
    return np.expand_dims(x, int(np.asarray(axis).reshape(-1)[0]))  # a scalar or [axis]


@register_kernel("Squeeze", forwards_input=True)
def squeeze(x, *, squeeze_dims):
    x = np.asarray(x)
    return np.squeeze(x, axis=tuple(squeeze_dims)) if squeeze_dims else np.squeeze(x)


@register_kernel("Transpose", forwards_input=True)
def transpose(x, perm):
    return np.ascontiguousarray(np.transpose(x, np.asarray(perm)))


@register_kernel("GatherV2")
def gather_v2(params, indices, axis):
    params = np.asarray(params)
    axis = int(axis)
    limit = params.shape[axis]
    indices = np.asarray(indices)
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = indices[(indices < 0) | (indices >= limit)].reshape(-1)[0]
        raise errors.InvalidArgumentError(None, None, f"indices contains {bad}, which is not in "
                                          f"[0, {limit})")
    return np.take(params, indices, axis=axis)


@register_kernel("Where")
def where(x):
    return np.argwhere(x).astype(np.int64)
