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
    return _outputs(np.moveaxis(value, axis, 0))


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
    return _outputs(np.split(value, np.cumsum(sizes)[:-1], axis=axis))


def _outputs(parts):
    """A kernel's outputs: the executor stores a one-output op's result as its value, so one
    part is returned as itself (unstack / split into 1: a tuple there reached MatMul)."""
    parts = tuple(parts)
    return parts[0] if len(parts) == 1 else parts


@register_kernel("Split", forwards_input=True)
def split_even(split_dim, value, *, num_split):
    value = np.asarray(value)
    axis = int(split_dim)
    if not -value.ndim <= axis < value.ndim:
        raise ValueError(f"Split: split_dim {axis} is out of range for a value of rank "
                         f"{value.ndim}")
    size = value.shape[axis]
    if size % num_split:
        raise ValueError(f"Number of ways to split should evenly divide the split dimension, "
                         f"but got split_dim {axis % value.ndim} (size = {size}) and num_split "
                         f"{num_split}")
    return tuple(np.split(value, num_split, axis=axis))


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


def _paddings(x, paddings):
    paddings = np.asarray(paddings).astype(np.int64)
    if paddings.shape != (np.ndim(x), 2) or (paddings < 0).any():
        raise errors.InvalidArgumentError(None, None, f"paddings {paddings.tolist()} must be "
                                          f"non-negative with shape [{np.ndim(x)}, 2]")
    return paddings


@register_kernel("PadV2")
def pad_v2(x, paddings, constant_values):
    x = np.asarray(x)
    return np.pad(x, _paddings(x, paddings), constant_values=np.asarray(constant_values))


@register_kernel("MirrorPad")
def mirror_pad(x, paddings, *, mode):
    x = np.asarray(x)
    paddings = _paddings(x, paddings)
    edge = 1 if mode == "REFLECT" else 0  # REFLECT does not repeat the edge element
    too_wide = paddings.max(axis=1, initial=0) > np.array(x.shape, dtype=np.int64) - edge
    if too_wide.any():
        axis = int(np.argmax(too_wide))
        raise errors.InvalidArgumentError(None, None, f"{mode} paddings "
                                          f"{paddings[axis].tolist()} of dimension {axis} exceed "
                                          f"{x.shape[axis] - edge} for its size {x.shape[axis]}")
    return np.pad(x, paddings, mode=mode.lower())


@register_kernel("MirrorPadGrad")
def mirror_pad_grad(grad, paddings, *, mode):
    grad = np.asarray(grad)
    edge = 1 if mode == "REFLECT" else 0
    for axis, (before, after) in enumerate(_paddings(grad, paddings).tolist()):
        moved = np.moveaxis(grad, axis, 0)
        size = moved.shape[0] - before - after
        if size < 0 or max(before, after) > size - edge:
            raise errors.InvalidArgumentError(None, None, f"{mode} paddings {[before, after]} "
                                              f"do not fit dimension {axis} of the gradient")
        core = moved[before:before + size].copy()
        core[edge:edge + before] += moved[:before][::-1]  # the border folds back onto what
        core[size - edge - after:size - edge] += moved[before + size:][::-1]  # it mirrored
        grad = np.moveaxis(core, 0, axis)
    return np.ascontiguousarray(grad)


@register_kernel("Tile")
def tile(x, multiples):
    x = np.asarray(x)
    multiples = [int(m) for m in np.asarray(multiples).reshape(-1)]
    if len(multiples) != x.ndim or min(multiples, default=0) < 0:
        raise errors.InvalidArgumentError(None, None, f"multiples {multiples} must be "
                                          f"non-negative, one per dimension of {list(x.shape)}")
    return np.tile(x, multiples)


@register_kernel("ReverseV2")
def reverse_v2(x, axis):
    x = np.asarray(x)
    axes = [int(a) for a in np.asarray(axis).reshape(-1)]
    if any(not -x.ndim <= a < max(x.ndim, 1) for a in axes):
        raise errors.InvalidArgumentError(None, None, f"axis {axes} is out of range for rank "
                                          f"{x.ndim}")
    return np.flip(x, axis=tuple(a % x.ndim for a in axes)).copy() if axes else x.copy()


@register_kernel("TopKV2")
def top_k_v2(x, k, *, sorted):  # noqa: A002 - the op's attr name
    x, k = np.asarray(x), int(k)
    if x.ndim == 0 or not 0 <= k <= x.shape[-1]:
        raise errors.InvalidArgumentError(None, None, f"k = {k} must be in [0, "
                                          f"{x.shape[-1] if x.ndim else 0}] for input of shape "
                                          f"{list(x.shape)}")
    # A stable ascending sort of the reversed row, read backwards, is a descending sort in which
    # equal values keep their original order (lower index first), as TF orders them.
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    indices = (x.shape[-1] - 1 - order).astype(np.int32)
    return np.take_along_axis(x, indices, axis=-1), indices


@register_kernel("Unique")
def unique(x, *, out_idx):
    x = np.asarray(x)
    if x.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"unique needs a vector, got shape "
                                          f"{list(x.shape)}")
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # sorted distinct values -> first-appearance order
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    return values[order], position[inverse.reshape(-1)].astype(out_idx.np_dtype)
