"""Kernels of quantized_nn_ops.py: integer convolution and pooling on quantized levels.

Windows follow TF's SAME/VALID geometry; cells of a SAME window outside the input are
skipped (the convolution adds nothing for them: they stand for 0.0; the pools do not count
them). The loops run over output positions, vectorised over batch and channels: these ops
exist for API parity on small models, not for speed.
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.quantize import float_to_min_first, round_half_away
from tensorweave.kernels.registry import register_kernel


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _axis_windows(size, window, stride, padding):
    """[(start, stop)] of every output position along one axis, clipped to the input."""
    if padding == "SAME":
        out = -(-size // stride)
        before = max((out - 1) * stride + window - size, 0) // 2
    else:
        out = (size - window) // stride + 1
        before = 0
    if out <= 0:
        raise _invalid(f"the window ({window}) is larger than the input ({size}) with VALID "
                       "padding")
    return [(max(i * stride - before, 0), min(i * stride - before + window, size))
            for i in range(out)], before


def _level_of_zero(low, high, dtype):
    """The level (unclamped) that stands for 0.0 over [low, high] (MIN_FIRST levels)."""
    info = np.iinfo(dtype.np_dtype)
    if low == high:
        return int(info.min)
    steps = float(1 << (8 * dtype.np_dtype.itemsize))
    range_scale = steps / ((high - low) * (steps / (steps - 1.0)))
    return int(info.min - round_half_away(low * range_scale))


def _level_size(low, high, dtype):
    info = np.iinfo(dtype.np_dtype)
    return (high - low) / (float(info.max) - float(info.min))


@register_kernel("QuantizedConv2D")
def quantized_conv2d(x, filter, min_input, max_input, min_filter, max_filter, *,  # noqa: A002
                     Tinput, Tfilter, out_type, strides, padding, dilations):  # noqa: N803
    if np.ndim(x) != 4 or np.ndim(filter) != 4:
        raise _invalid(f"QuantizedConv2D: input and filter must be 4-D, got shapes "
                       f"{list(np.shape(x))} and {list(np.shape(filter))}")
    if x.shape[3] != filter.shape[2]:
        raise _invalid(f"QuantizedConv2D: input depth {x.shape[3]} does not match the "
                       f"filter's in_channels {filter.shape[2]}")
    low_x, high_x = float(min_input), float(max_input)
    low_f, high_f = float(min_filter), float(max_filter)
    centred_x = x.astype(np.int64) - _level_of_zero(low_x, high_x, Tinput)
    centred_f = filter.astype(np.int64) - _level_of_zero(low_f, high_f, Tfilter)
    rows, top = _axis_windows(x.shape[1], filter.shape[0], strides[1], padding)
    cols, left = _axis_windows(x.shape[2], filter.shape[1], strides[2], padding)
    out = np.zeros((x.shape[0], len(rows), len(cols), filter.shape[3]), np.int64)
    for i, (r0, r1) in enumerate(rows):
        fr = r0 - (i * strides[1] - top)
        for j, (c0, c1) in enumerate(cols):
            fc = c0 - (j * strides[2] - left)
            patch = centred_x[:, r0:r1, c0:c1, :]
            taps = centred_f[fr:fr + r1 - r0, fc:fc + c1 - c0]
            out[:, i, j, :] = np.tensordot(patch, taps, axes=([1, 2, 3], [0, 1, 2]))
    info = np.iinfo(np.int32)
    step = _level_size(low_x, high_x, Tinput) * _level_size(low_f, high_f, Tfilter)
    return (np.clip(out, info.min, info.max).astype(np.int32), np.float32(step * info.min),
            np.float32(step * info.max))


def _pool(x, ksize, strides, padding, reduce):
    if np.ndim(x) != 4:
        raise _invalid(f"quantized pooling needs a 4-D (NHWC) input, got shape "
                       f"{list(np.shape(x))}")
    rows, _ = _axis_windows(x.shape[1], ksize[1], strides[1], padding)
    cols, _ = _axis_windows(x.shape[2], ksize[2], strides[2], padding)
    out = np.zeros((x.shape[0], len(rows), len(cols), x.shape[3]), x.dtype)
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            out[:, i, j, :] = reduce(x[:, r0:r1, c0:c1, :])
    return out


@register_kernel("QuantizedMaxPool")
def quantized_max_pool(x, min_input, max_input, *, T, ksize, strides, padding):  # noqa: N803
    return (_pool(x, ksize, strides, padding, lambda w: w.max(axis=(1, 2))),
            np.float32(min_input), np.float32(max_input))


@register_kernel("QuantizedAvgPool")
def quantized_avg_pool(x, min_input, max_input, *, T, ksize, strides, padding):  # noqa: N803
    def average(window):
        return round_half_away(window.astype(np.float64).mean(axis=(1, 2)))
    return (_pool(x, ksize, strides, padding, average), np.float32(min_input),
            np.float32(max_input))


@register_kernel("QuantizedReluX")
def quantized_relu_x(features, max_value, min_features, max_features, *, Tinput,  # noqa: N803
                     out_type):
    if out_type != Tinput:
        raise _invalid(f"QuantizedReluX: out_type ({out_type.name}) must equal the input's "
                       f"type ({Tinput.name})")
    low, high = float(min_features), float(max_features)
    floor = float_to_min_first(np.float32(0.0), low, high, Tinput)
    ceiling = float_to_min_first(np.float32(max_value), low, high, Tinput)
    return (np.clip(features, floor, ceiling).astype(features.dtype), np.float32(low),
            np.float32(high))
