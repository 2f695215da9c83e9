"""Kernels of fractional_pool_ops.py: the random region boundaries and pooling over them."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


def _region_sizes(rng, size, out, pseudo_random):
    """`out` region lengths, each k or k + 1 (k = size // out), summing to `size`."""
    k = size // out
    if pseudo_random:
        alpha = size / out
        top = min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (out - 1))
        u = rng.uniform(0.0, top)
        cuts = [1] + [int(np.ceil(alpha * (i + u))) for i in range(1, out)] + [size + 1]
        sizes = np.diff(cuts)
    else:
        sizes = np.full(out, k)
        sizes[:size % out] += 1
        sizes = rng.permutation(sizes)
    return sizes


def _boundaries(rng, size, ratio, pseudo_random):
    out = int(size // ratio)
    if out <= 0:
        raise errors.InvalidArgumentError(None, None, f"fractional pooling: ratio {ratio} leaves "
                                          f"no output for an input dimension of {size}")
    return np.concatenate([[0], np.cumsum(_region_sizes(rng, size, out, pseudo_random))]
                          ).astype(np.int64)


def _regions(boundaries, size, overlapping):
    ends = [min(b + 1, size) if overlapping else b for b in boundaries[1:]]
    return list(zip(boundaries[:-1], ends))


def _generator(rng, deterministic, seed, seed2):
    return np.random.default_rng([seed & 0xFFFFFFFF, seed2 & 0xFFFFFFFF]) if deterministic else rng


def _fractional_pool(rng, value, reduce, pooling_ratio, pseudo_random, overlapping,
                     deterministic, seed, seed2):
    if np.ndim(value) != 4:
        raise errors.InvalidArgumentError(None, None, f"fractional pooling needs a 4-D (NHWC) "
                                          f"value, got shape {list(np.shape(value))}")
    draw = _generator(rng, deterministic, seed, seed2)
    rows = _boundaries(draw, value.shape[1], pooling_ratio[1], pseudo_random)
    cols = _boundaries(draw, value.shape[2], pooling_ratio[2], pseudo_random)
    out = np.empty((value.shape[0], len(rows) - 1, len(cols) - 1, value.shape[3]), value.dtype)
    for i, (r0, r1) in enumerate(_regions(rows, value.shape[1], overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, value.shape[2], overlapping)):
            out[:, i, j, :] = reduce(value[:, r0:r1, c0:c1, :])
    return out, rows, cols


@register_kernel("FractionalMaxPool", resource="rng")
def fractional_max_pool(rng, value, *, T, pooling_ratio, pseudo_random, overlapping,  # noqa: N803
                        deterministic, seed, seed2):
    return _fractional_pool(rng, value, lambda w: w.max(axis=(1, 2)), pooling_ratio,
                            pseudo_random, overlapping, deterministic, seed, seed2)


@register_kernel("FractionalAvgPool", resource="rng")
def fractional_avg_pool(rng, value, *, T, pooling_ratio, pseudo_random, overlapping,  # noqa: N803
                        deterministic, seed, seed2):
    def mean(window):
        return window.mean(axis=(1, 2)).astype(value.dtype)
    return _fractional_pool(rng, value, mean, pooling_ratio, pseudo_random, overlapping,
                            deterministic, seed, seed2)


@register_kernel("FractionalMaxPoolGrad")
def fractional_max_pool_grad(orig_input, orig_output, out_backprop, rows, cols, *, T,  # noqa: N803
                             overlapping):
    grad = np.zeros_like(orig_input)
    batch_index, depth_index = np.meshgrid(np.arange(orig_input.shape[0]),
                                           np.arange(orig_input.shape[3]), indexing="ij")
    for i, (r0, r1) in enumerate(_regions(rows, orig_input.shape[1], overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, orig_input.shape[2], overlapping)):
            window = orig_input[:, r0:r1, c0:c1, :]
            flat = window.reshape(window.shape[0], -1, window.shape[3])
            first = np.argmax(flat, axis=1)  # the first maximum, row-major
            row, col = np.divmod(first, c1 - c0)
            np.add.at(grad, (batch_index, r0 + row, c0 + col, depth_index),
                      out_backprop[:, i, j, :])
    return grad


@register_kernel("FractionalAvgPoolGrad")
def fractional_avg_pool_grad(orig_input_tensor_shape, out_backprop, rows, cols, *, T,  # noqa: N803
                             overlapping):
    shape = [int(d) for d in orig_input_tensor_shape]
    grad = np.zeros(shape, out_backprop.dtype)
    for i, (r0, r1) in enumerate(_regions(rows, shape[1], overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, shape[2], overlapping)):
            share = out_backprop[:, i, j, :] / ((r1 - r0) * (c1 - c0))
            grad[:, r0:r1, c0:c1, :] += share[:, None, None, :].astype(grad.dtype)
    return grad
