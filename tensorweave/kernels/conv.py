"""Kernels of the convolution and pooling ops, and of their gradient primitives.

No loop runs over pixels: every op loops over the KH*KW kernel offsets only, each offset being
one strided slice of the input matched with one slice of the output (`_window_plan`).

Convolutions go through BLAS. The forward pass and the filter gradient copy the input, offset by
offset, into a preallocated "columns" buffer laid out [KH, KW, C, N, OH, OW]: every copy is then
a run of contiguous rows (copying into [N, OH, OW, KH, KW, C] writes C elements at a time, ~2x
slower at C=32 and ~30x at C=3 on the reference machine), and the buffer is one [KH*KW*C, N*OH*OW]
matrix for the matmul. Buffers are kept per thread and per geometry, so a training step neither
re-allocates them (page faults: DESIGN.md) nor re-zeroes the padding cells, which no copy writes.
The input gradient multiplies by the filter first and then adds the KH*KW shifted column blocks
back ("col2im"); it is a separate op from the filter gradient so that the session never runs
one that nobody fetched (the first layer's input gradient).
"""
import collections
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_CONV_ATTRS = ("strides", "padding", "data_format", "dilations", "explicit_paddings")


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


# --- window geometry -----------------------------------------------------------------------------
def _axis_plan(size, kernel, stride, dilation, padding, explicit):
    """Output length and, per kernel offset, (output slice, input slice) or None if empty.

    The output-size rule is also written in ops/conv_ops.py (`output_size`) for static shapes:
    kernels may not import ops (the layer rule), and the rule is three lines.
    """
    span = (kernel - 1) * dilation + 1
    if padding == "VALID":
        out, before = (size - span) // stride + 1, 0
    elif padding == "SAME":
        out = -(-size // stride)
        before = max((out - 1) * stride + span - size, 0) // 2
    else:
        before, after = explicit
        out = (size + before + after - span) // stride + 1
    if out < 0 or (out == 0 and size > 0 and padding != "SAME"):
        raise _invalid(f"the window (size {kernel}, dilation {dilation}) does not fit the input "
                       f"of size {size} with {padding} padding")
    pieces = []
    for k in range(kernel):
        first = k * dilation - before  # input index under output 0
        lo = max(0, -(first // stride) if first < 0 else 0)
        hi = min(out, (size - 1 - first) // stride + 1) if size - 1 - first >= 0 else 0
        if hi <= lo:
            pieces.append(None)
            continue
        start = first + lo * stride
        pieces.append((slice(lo, hi), slice(start, start + (hi - lo - 1) * stride + 1, stride)))
    return out, tuple(pieces)


class _WindowPlan:
    """The offsets of a 2-D window over an NHWC input: (i, j, out_h, out_w, in_h, in_w)."""

    def __init__(self, height, width, window, strides, dilations, padding, explicit):
        self.out_h, rows = _axis_plan(height, window[0], strides[0], dilations[0], padding,
                                      explicit[0])
        self.out_w, cols = _axis_plan(width, window[1], strides[1], dilations[1], padding,
                                      explicit[1])
        self.window = tuple(window)
        self.pieces = [(i, j, rows[i][0], cols[j][0], rows[i][1], cols[j][1])
                       for i in range(window[0]) for j in range(window[1])
                       if rows[i] is not None and cols[j] is not None]

    def counts(self):
        """How many offsets fall inside the input for each output position (for averaging)."""
        counts = np.zeros((self.out_h, self.out_w), dtype=np.int64)
        for _, _, out_h, out_w, _, _ in self.pieces:
            counts[out_h, out_w] += 1
        return counts


_PLANS = {}


def _plan(height, width, window, strides, dilations, padding, explicit):
    key = (height, width, tuple(window), tuple(strides), tuple(dilations), padding, explicit)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _WindowPlan(height, width, window, strides, dilations, padding,
                                         explicit)
    return plan, key


def _spatial(values, data_format):
    """The (H, W) entries of a 4-element attr given in `data_format` order."""
    return (values[2], values[3]) if data_format == "NCHW" else (values[1], values[2])


def _explicit(explicit_paddings, data_format):
    if not explicit_paddings:
        return ((0, 0), (0, 0))
    pairs = [tuple(explicit_paddings[k:k + 2]) for k in range(0, 8, 2)]
    return (pairs[2], pairs[3]) if data_format == "NCHW" else (pairs[1], pairs[2])


def _to_nhwc(array, data_format):
    return array.transpose(0, 2, 3, 1) if data_format == "NCHW" else array


def _from_nhwc(array, data_format):
    if data_format == "NCHW":
        return np.ascontiguousarray(array.transpose(0, 3, 1, 2))
    return array


def _window_plan_for(x_nhwc, window, attrs):
    data_format = attrs["data_format"]
    return _plan(x_nhwc.shape[1], x_nhwc.shape[2], window, _spatial(attrs["strides"], data_format),
                 _spatial(attrs.get("dilations") or [1, 1, 1, 1], data_format),
                 attrs["padding"], _explicit(attrs.get("explicit_paddings"), data_format))


# --- per-thread scratch buffers ----------------------------------------------------------------
_SCRATCH_BYTES = 512 << 20  # per thread; least recently used buffers are dropped beyond it
_local = threading.local()


def _scratch(key, shape, dtype):
    """A zero-initialised buffer kept for this thread under `key`; callers write only the cells
    that their geometry (part of the key) writes, so the other cells stay zero."""
    cache = getattr(_local, "buffers", None)
    if cache is None:
        cache = _local.buffers = collections.OrderedDict()
    full_key = (key, tuple(shape), np.dtype(dtype).str)
    buffer = cache.get(full_key)
    if buffer is not None:
        cache.move_to_end(full_key)
        return buffer
    buffer = cache[full_key] = np.zeros(shape, dtype=dtype)
    while sum(b.nbytes for b in cache.values()) > _SCRATCH_BYTES and len(cache) > 1:
        cache.popitem(last=False)
    return buffer


def _im2col(x_nhwc, kernel_h, kernel_w, plan, plan_key):
    """The input as a [KH*KW*C, N*OH*OW] matrix (a scratch buffer: use before the next call)."""
    n, _, _, c = x_nhwc.shape
    channel_major = _scratch(("cnhw",), (c,) + x_nhwc.shape[:3], x_nhwc.dtype)
    np.copyto(channel_major, x_nhwc.transpose(3, 0, 1, 2))
    cols = _scratch(("cols", plan_key), (kernel_h, kernel_w, c, n, plan.out_h, plan.out_w),
                    x_nhwc.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        cols[i, j, :, :, out_h, out_w] = channel_major[:, :, in_h, in_w]
    return cols.reshape(kernel_h * kernel_w * c, -1)


def _conv_attrs(strides, padding, data_format, dilations, explicit_paddings):
    return {"strides": strides, "padding": padding, "data_format": data_format,
            "dilations": dilations, "explicit_paddings": explicit_paddings}


def _check_depth(x_nhwc, filter_shape, what):
    if x_nhwc.shape[3] != filter_shape[2]:
        raise _invalid(f"{what}: input depth {x_nhwc.shape[3]} does not match the filter's input "
                       f"depth {filter_shape[2]} (filter shape {list(filter_shape)})")


# --- Conv2D and its gradients ------------------------------------------------------------------
@register_kernel("Conv2D")
def conv2d(input, filter, *, strides, padding, data_format, dilations,  # noqa: A002
           explicit_paddings):
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    x = _to_nhwc(input, data_format)
    kernel_h, kernel_w, _, out_channels = filter.shape
    _check_depth(x, filter.shape, "Conv2D")
    plan, key = _window_plan_for(x, (kernel_h, kernel_w), attrs)
    cols = _im2col(x, kernel_h, kernel_w, plan, key)
    out = np.matmul(cols.T, filter.reshape(-1, out_channels))
    return _from_nhwc(out.reshape(x.shape[0], plan.out_h, plan.out_w, out_channels), data_format)


@register_kernel("Conv2DBackpropFilter")
def conv2d_backprop_filter(input, filter_sizes, out_backprop, *, strides, padding,  # noqa: A002
                           data_format, dilations, explicit_paddings):
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    x = _to_nhwc(input, data_format)
    filter_shape = tuple(int(d) for d in filter_sizes)
    _check_depth(x, filter_shape, "Conv2DBackpropFilter")
    plan, key = _window_plan_for(x, filter_shape[:2], attrs)
    cols = _im2col(x, filter_shape[0], filter_shape[1], plan, key)
    grad = _to_nhwc(out_backprop, data_format).reshape(-1, filter_shape[3])
    return np.matmul(cols, grad).reshape(filter_shape)


@register_kernel("Conv2DBackpropInput")
def conv2d_backprop_input(input_sizes, filter, out_backprop, *, strides, padding,  # noqa: A002
                          data_format, dilations, explicit_paddings):
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    sizes = [int(d) for d in input_sizes]
    n, height, width, channels = _to_nhwc(np.empty(sizes, dtype=np.bool_), data_format).shape
    kernel_h, kernel_w, depth, out_channels = filter.shape
    if depth != channels:
        raise _invalid(f"Conv2DBackpropInput: input depth {channels} does not match the "
                       f"filter's input depth {depth}")
    plan, _ = _plan(height, width, (kernel_h, kernel_w), _spatial(strides, data_format),
                    _spatial(dilations, data_format), padding,
                    _explicit(explicit_paddings, data_format))
    grad = np.ascontiguousarray(_to_nhwc(out_backprop, data_format)).reshape(-1, out_channels)
    # [N*OH*OW, KH*KW*C]: each output position's contribution to each offset's input cells.
    cols = np.matmul(grad, filter.reshape(-1, out_channels).T)
    cols = cols.reshape(n, plan.out_h, plan.out_w, kernel_h, kernel_w, channels)
    dx = np.zeros((n, height, width, channels), dtype=filter.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        dx[:, in_h, in_w, :] += cols[:, out_h, out_w, i, j, :]
    return _from_nhwc(dx, data_format)


# --- DepthwiseConv2dNative and its gradients ---------------------------------------------------
def _depthwise_plan(x, filter_shape, strides, padding, data_format, dilations, explicit_paddings):
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    _check_depth(x, filter_shape, "DepthwiseConv2dNative")
    return _window_plan_for(x, filter_shape[:2], attrs)[0]


@register_kernel("DepthwiseConv2dNative")
def depthwise_conv2d_native(input, filter, *, strides, padding, data_format,  # noqa: A002
                            dilations, explicit_paddings):
    x = _to_nhwc(input, data_format)
    plan = _depthwise_plan(x, filter.shape, strides, padding, data_format, dilations,
                           explicit_paddings)
    n, _, _, channels = x.shape
    multiplier = filter.shape[3]
    out = np.zeros((n, plan.out_h, plan.out_w, channels, multiplier), dtype=filter.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        out[:, out_h, out_w] += x[:, in_h, in_w, :, None] * filter[i, j]
    return _from_nhwc(out.reshape(n, plan.out_h, plan.out_w, channels * multiplier), data_format)


@register_kernel("DepthwiseConv2dNativeBackpropFilter")
def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, *,  # noqa: A002
                                            strides, padding, data_format, dilations,
                                            explicit_paddings):
    x = _to_nhwc(input, data_format)
    filter_shape = tuple(int(d) for d in filter_sizes)
    plan = _depthwise_plan(x, filter_shape, strides, padding, data_format, dilations,
                           explicit_paddings)
    grad = _to_nhwc(out_backprop, data_format)
    grad = grad.reshape(grad.shape[:3] + filter_shape[2:])
    dw = np.zeros(filter_shape, dtype=grad.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        dw[i, j] = np.einsum("nhwc,nhwcm->cm", x[:, in_h, in_w], grad[:, out_h, out_w])
    return dw


@register_kernel("DepthwiseConv2dNativeBackpropInput")
def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, *, strides,
                                           padding, data_format, dilations, explicit_paddings):
    sizes = [int(d) for d in input_sizes]
    shell = _to_nhwc(np.empty(sizes, dtype=np.bool_), data_format)
    plan = _depthwise_plan(shell, filter.shape, strides, padding, data_format, dilations,
                           explicit_paddings)
    grad = _to_nhwc(out_backprop, data_format)
    grad = grad.reshape(grad.shape[:3] + filter.shape[2:])
    dx = np.zeros(shell.shape, dtype=filter.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        dx[:, in_h, in_w] += np.einsum("nhwcm,cm->nhwc", grad[:, out_h, out_w], filter[i, j])
    return _from_nhwc(dx, data_format)


# --- pooling -------------------------------------------------------------------------------------
def _pool_plan(x_nhwc, ksize, strides, padding, data_format):
    window = _spatial(ksize, data_format)
    if (ksize[0], ksize[3] if data_format != "NCHW" else ksize[1]) != (1, 1):
        raise _invalid(f"pooling over the batch or depth dimension is not supported (ksize "
                       f"{list(ksize)})")
    attrs = {"strides": strides, "padding": padding, "data_format": data_format}
    return _window_plan_for(x_nhwc, window, attrs)[0]


@register_kernel("MaxPool")
def max_pool(input, *, ksize, strides, padding, data_format):  # noqa: A002
    x = _to_nhwc(input, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    out = np.full((x.shape[0], plan.out_h, plan.out_w, x.shape[3]), -np.inf, dtype=x.dtype)
    for _, _, out_h, out_w, in_h, in_w in plan.pieces:
        view = out[:, out_h, out_w]
        np.maximum(view, x[:, in_h, in_w], out=view)
    return _from_nhwc(out, data_format)


def _route_to_max(x, y, plan, source, into_input):
    """For each window, the first cell (in window order) equal to the window's max gets
    `source`: scattered into the input's shape (MaxPoolGrad) or gathered from it
    (MaxPoolGradGrad)."""
    pending = np.ones(y.shape, dtype=np.bool_)
    result = np.zeros(x.shape if into_input else y.shape, dtype=source.dtype)
    zero = np.zeros((), dtype=source.dtype)
    for _, _, out_h, out_w, in_h, in_w in plan.pieces:
        hit = x[:, in_h, in_w] == y[:, out_h, out_w]
        waiting = pending[:, out_h, out_w]
        hit &= waiting
        waiting &= ~hit
        if into_input:
            target = result[:, in_h, in_w]
            target += np.where(hit, source[:, out_h, out_w], zero)
        else:
            target = result[:, out_h, out_w]
            target += np.where(hit, source[:, in_h, in_w], zero)
    return result


@register_kernel("MaxPoolGrad")
def max_pool_grad(orig_input, orig_output, grad, *, ksize, strides, padding, data_format):
    x, y = _to_nhwc(orig_input, data_format), _to_nhwc(orig_output, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    return _from_nhwc(_route_to_max(x, y, plan, _to_nhwc(grad, data_format), True), data_format)


@register_kernel("MaxPoolGradGrad")
def max_pool_grad_grad(orig_input, orig_output, grad, *, ksize, strides, padding, data_format):
    x, y = _to_nhwc(orig_input, data_format), _to_nhwc(orig_output, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    return _from_nhwc(_route_to_max(x, y, plan, _to_nhwc(grad, data_format), False),
                      data_format)


def _inverse_counts(plan, dtype):
    """1 / (number of input cells in each window): padding cells are not averaged."""
    return (1 / plan.counts()).astype(dtype)[None, :, :, None]


@register_kernel("AvgPool")
def avg_pool(value, *, ksize, strides, padding, data_format):
    x = _to_nhwc(value, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    out = np.zeros((x.shape[0], plan.out_h, plan.out_w, x.shape[3]), dtype=x.dtype)
    for _, _, out_h, out_w, in_h, in_w in plan.pieces:
        out[:, out_h, out_w] += x[:, in_h, in_w]
    out *= _inverse_counts(plan, x.dtype)
    return _from_nhwc(out, data_format)


@register_kernel("AvgPoolGrad")
def avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format):
    shell = _to_nhwc(np.empty([int(d) for d in orig_input_shape], dtype=np.bool_), data_format)
    plan = _pool_plan(shell, ksize, strides, padding, data_format)
    share = _to_nhwc(grad, data_format) * _inverse_counts(plan, grad.dtype)
    dx = np.zeros(shell.shape, dtype=grad.dtype)
    for _, _, out_h, out_w, in_h, in_w in plan.pieces:
        dx[:, in_h, in_w] += share[:, out_h, out_w]
    return _from_nhwc(dx, data_format)


# --- BiasAdd -------------------------------------------------------------------------------------
def _channel_axis(ndim, data_format):
    return 1 if data_format == "NCHW" and ndim >= 3 else ndim - 1


@register_kernel("BiasAdd")
def bias_add(value, bias, *, data_format):
    axis = _channel_axis(value.ndim, data_format)
    if value.shape[axis] != bias.shape[0]:
        raise _invalid(f"BiasAdd: bias of size {bias.shape[0]} does not match dimension {axis} "
                       f"(size {value.shape[axis]}) of the value of shape {list(value.shape)}")
    return value + bias.reshape((-1,) + (1,) * (value.ndim - 1 - axis))


@register_kernel("BiasAddGrad")
def bias_add_grad(out_backprop, *, data_format):
    axis = _channel_axis(out_backprop.ndim, data_format)
    if axis == out_backprop.ndim - 1:
        return out_backprop.reshape(-1, out_backprop.shape[-1]).sum(axis=0)
    axes = tuple(a for a in range(out_backprop.ndim) if a != axis)
    return out_backprop.sum(axis=axes)
