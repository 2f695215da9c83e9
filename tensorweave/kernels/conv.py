"""Kernels of the convolution ops and of their gradient primitives (pooling: nn.py).

No loop runs over pixels: every op loops over kernel offsets (or kernel rows) only, each being
one strided slice of the input matched with one slice of the output (`_WindowPlan`).

Convolutions go through BLAS (see the comment above `conv2d` for the two layouts and the
measurements that chose between them). Copies go into buffers kept per thread and per
geometry, so a training step neither re-allocates them (page faults: DESIGN.md) nor re-zeroes
the padding cells, which no copy ever writes. The input and filter gradients are separate ops
so that the session never runs one that nobody fetched (the first layer's input gradient).
"""
import collections
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import intra_op
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
        self.rows, self.cols = rows, cols  # per kernel row / column: (out, in) slices or None
        # The windows tile the input exactly: no padding, no overlap, no remainder.
        self.tiles = (tuple(window) == tuple(strides) and tuple(dilations) == (1, 1) and
                      self.out_h * window[0] == height and self.out_w * window[1] == width)
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


def spatial(values, data_format):
    """The (H, W) entries of a 4-element attr given in `data_format` order."""
    return (values[2], values[3]) if data_format == "NCHW" else (values[1], values[2])


def _explicit(explicit_paddings, data_format):
    if not explicit_paddings:
        return ((0, 0), (0, 0))
    pairs = [tuple(explicit_paddings[k:k + 2]) for k in range(0, 8, 2)]
    return (pairs[2], pairs[3]) if data_format == "NCHW" else (pairs[1], pairs[2])


def to_nhwc(array, data_format):
    return array.transpose(0, 2, 3, 1) if data_format == "NCHW" else array


def from_nhwc(array, data_format):
    if data_format == "NCHW":
        return np.ascontiguousarray(array.transpose(0, 3, 1, 2))
    return array


def nhwc_shape(sizes, data_format):
    n, *rest = sizes
    return (n, rest[1], rest[2], rest[0]) if data_format == "NCHW" else (n, *rest)


def window_plan_for(x_nhwc, window, attrs):
    data_format = attrs["data_format"]
    return _plan(x_nhwc.shape[1], x_nhwc.shape[2], window, spatial(attrs["strides"], data_format),
                 spatial(attrs.get("dilations") or [1, 1, 1, 1], data_format),
                 attrs["padding"], _explicit(attrs.get("explicit_paddings"), data_format))


# --- per-thread scratch buffers ----------------------------------------------------------------
_SCRATCH_BYTES = 256 << 20  # per thread; least recently used buffers are dropped beyond it
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


def _width_columns(source, plan, plan_key, width, kernel_w, tag, into_input):
    """KW copies of `source` ([rows, N, W_src, D]) shifted along the width into a scratch
    [rows, N, width, KW, D] buffer. Forward and filter gradient gather input columns under each
    output column (buffer[:, :, out_w, j] = x[:, :, in_w]); the input gradient gathers output
    columns over each input column (buffer[:, :, in_w, j] = dy[:, :, out_w])."""
    rows, n, _, depth = source.shape
    buffer = _scratch((tag, plan_key), (rows, n, width, kernel_w, depth), source.dtype)
    for j, piece in enumerate(plan.cols):
        if piece is not None:
            out_w, in_w = piece
            if into_input:
                buffer[:, :, in_w, j] = source[:, :, out_w]
            else:
                buffer[:, :, out_w, j] = source[:, :, in_w]
    return buffer.reshape(rows, n * width, kernel_w * depth)


def _row_pieces(plan, covered_by, size):
    """(i, out rows, in rows) per kernel row; one whose `covered_by` slice (0: out, 1: in) is
    all `size` rows comes first, so it can start the sum without a zero-filled array."""
    pieces = [(i, piece[0], piece[1]) for i, piece in enumerate(plan.rows) if piece is not None]
    return sorted(pieces, key=lambda piece: not covers(piece[1 + covered_by], size))


def covers(rows, size):
    return rows.start == 0 and rows.stop == size and rows.step in (None, 1)


def _sum_row_products(pieces, size, cols, weights, row_width):
    """sum over kernel rows i of cols[in rows] @ weights[i], added at the out rows of a
    [size, row_width, weights' columns] result. Products other than the first go through a
    per-thread scratch buffer (fresh arrays would be page-faulted in on every step); so is the
    result: use it before the next call."""
    depth, channels = cols.shape[-1], weights.shape[-1]
    total = _scratch(("row_sum",), (size, row_width, channels), weights.dtype)
    first = True
    for i, out_h, in_h in pieces:
        rows = cols[in_h].reshape(-1, depth)
        if first and covers(out_h, size):
            np.matmul(rows, weights[i], out=total.reshape(-1, channels))
            first = False
            continue
        if first:
            total.fill(0)
            first = False
        product = np.matmul(rows, weights[i], out=_scratch(
            ("row_product",), (rows.shape[0], channels), weights.dtype))
        total[out_h] += product.reshape(-1, row_width, channels)
    if first:
        total.fill(0)
    return total


def _conv_attrs(strides, padding, data_format, dilations, explicit_paddings):
    return {"strides": strides, "padding": padding, "data_format": data_format,
            "dilations": dilations, "explicit_paddings": explicit_paddings}


def _check_depth(x_nhwc, filter_shape, what):
    if x_nhwc.shape[3] != filter_shape[2]:
        raise _invalid(f"{what}: input depth {x_nhwc.shape[3]} does not match the filter's input "
                       f"depth {filter_shape[2]} (filter shape {list(filter_shape)})")


# --- Conv2D and its gradients ------------------------------------------------------------------
# Two ways to turn a convolution into matrix products, chosen per op by measurement on the
# reference machine (single BLAS thread, LeNet's layers):
#   full im2col: one [N*OH*OW, KH*KW*C] x [KH*KW*C, O] product; copies KH*KW*C values per
#     output position. Best when KW*C is small (LeNet's first layer: C = 1).
#   row decomposition: copy KW shifted columns once ([H, N, OW, KW*C]), then one product per
#     kernel row on a contiguous block of rows; copies KW*C values per position but adds
#     KH-1 partial outputs of O values each. LeNet's second layer (KW*C = 160, O = 64):
#     forward 7.2 ms vs 12.8, filter gradient 7.6 vs 12.0, input gradient 9.8 vs 14.3 (the
#     latter against one product per kernel offset; it now makes one product for all rows).
# The filter gradient makes the same choice (it has no partial outputs to add, but with KW*C
# small its column copies are single elements: LeNet's first layer took 4.5 ms by rows, ~1 ms
# by im2col); the input gradient (conv_input_grad.py) uses rows at stride 1, col2im above.
# Each op splits its batch into chunks for the intra-op threads (intra_op.py): the forward and
# input gradient write their chunk of the output, the filter gradient sums its chunks' partial
# gradients. No chunk is under ~20 MFLOP (~0.1 ms: the hand-off costs ~5 us a chunk).
_MIN_CHUNK_FLOPS = 20e6


def _conv_chunks(batch, out_h, out_w, filter_shape):
    flops = 2.0 * batch * out_h * out_w * np.prod(filter_shape)
    return intra_op.batch_bounds(batch, flops, _MIN_CHUNK_FLOPS)


@register_kernel("Conv2D")
def conv2d(input, filter, *, strides, padding, data_format, dilations,  # noqa: A002
           explicit_paddings):
    return conv2d_with(input, filter, strides, padding, data_format, dilations,
                       explicit_paddings)


def conv2d_with(input, filter, strides, padding, data_format, dilations,  # noqa: A002
                explicit_paddings, finish=None):
    """Conv2D; `finish(block)` (fused.py: bias and activation) runs in place on each NHWC
    block of the output right after its products are written, while it is in cache."""
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    x = to_nhwc(input, data_format)
    _check_depth(x, filter.shape, "Conv2D")
    plan, key = window_plan_for(x, filter.shape[:2], attrs)
    n, out_channels = x.shape[0], filter.shape[3]
    out = np.empty((n, plan.out_h, plan.out_w, out_channels), dtype=filter.dtype)

    def compute(x, filter, plan, key, out):
        _conv2d_into(x, filter, plan, key, out, finish)
    return _split_batch(compute, x, filter, plan, key, out, data_format)


def _split_batch(compute, source, filter, plan, key, out, data_format):
    """`out` (NHWC, returned in `data_format`) filled by compute(source chunk, filter, plan,
    key, out chunk) over the batch chunks."""
    intra_op.run_chunks(lambda lo, hi: compute(source[lo:hi], filter, plan, key, out[lo:hi]),
                        _conv_chunks(out.shape[0], plan.out_h, plan.out_w, filter.shape))
    return from_nhwc(out, data_format)


def _conv2d_into(x, filter, plan, key, out, finish=None):
    """The convolution of the NHWC `x` written into the contiguous NHWC `out`; `finish` as in
    conv2d_with."""
    kernel_h, kernel_w, depth, out_channels = filter.shape
    if kernel_w * depth < out_channels:
        for lo, hi in _image_blocks(x.shape[0], plan.out_h * plan.out_w * filter[..., 0].size):
            cols = _im2col(x[lo:hi], kernel_h, kernel_w, plan, key)
            np.matmul(cols.T, filter.reshape(-1, out_channels),
                      out=out[lo:hi].reshape(-1, out_channels))
            if finish is not None:
                finish(out[lo:hi])
        return
    weights = filter.reshape(kernel_h, kernel_w * depth, out_channels)
    pieces = _row_pieces(plan, 0, plan.out_h)
    for lo, hi in _image_blocks(x.shape[0], plan.out_h * plan.out_w * kernel_w * depth):
        cols = _width_columns(x[lo:hi].transpose(1, 0, 2, 3), plan, key, plan.out_w, kernel_w,
                              "x_columns", into_input=False)
        total = _sum_row_products(pieces, plan.out_h, cols, weights, (hi - lo) * plan.out_w)
        np.copyto(out[lo:hi], total.reshape(plan.out_h, hi - lo, plan.out_w,
                                            out_channels).transpose(1, 0, 2, 3))
        if finish is not None:
            finish(out[lo:hi])


# Images per block of the row-decomposed products: the columns of one block (~1 MB) stay in the
# core's cache for their KH products. Single-thread SGEMM rates for LeNet's second layer: 190
# (forward), 91 (input gradient), 137 (filter gradient) GFLOP/s over 64 images; 200, 216 and
# 176 over 8.
_BLOCK_FLOATS = 1 << 18


def _image_blocks(batch, floats_per_image):
    return intra_op.split(batch, -(-batch * floats_per_image // _BLOCK_FLOATS))


@register_kernel("Conv2DBackpropFilter")
def conv2d_backprop_filter(input, filter_sizes, out_backprop, *, strides, padding,  # noqa: A002
                           data_format, dilations, explicit_paddings):
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    x = to_nhwc(input, data_format)
    filter_shape = tuple(int(d) for d in filter_sizes)
    _check_depth(x, filter_shape, "Conv2DBackpropFilter")
    plan, key = window_plan_for(x, filter_shape[:2], attrs)
    grad = to_nhwc(out_backprop, data_format)

    def chunk(lo, hi):
        return _filter_gradient(x[lo:hi], grad[lo:hi], filter_shape, plan, key)

    partials = intra_op.run_chunks(chunk, _conv_chunks(x.shape[0], plan.out_h, plan.out_w,
                                                       filter_shape))
    total = partials[0]
    for partial in partials[1:]:
        total += partial
    return total.reshape(filter_shape)


def _filter_gradient(x, grad, filter_shape, plan, key):
    """The filter gradient (a fresh [KH, KW*C, O] array) of NHWC `x` and `grad`."""
    kernel_h, kernel_w, depth, out_channels = filter_shape
    if kernel_w * depth < out_channels:
        dw = np.zeros((kernel_h * kernel_w * depth, out_channels), dtype=grad.dtype)
        for lo, hi in _image_blocks(x.shape[0], plan.out_h * plan.out_w * kernel_h * kernel_w *
                                    depth):
            cols = _im2col(x[lo:hi], kernel_h, kernel_w, plan, key)
            dw += np.matmul(cols, grad[lo:hi].reshape(-1, out_channels),
                            out=_scratch(("dw_product",), dw.shape, dw.dtype))
        return dw
    dw = np.zeros((kernel_h, kernel_w * depth, out_channels), dtype=grad.dtype)
    pieces = _row_pieces(plan, 0, plan.out_h)
    for lo, hi in _image_blocks(x.shape[0], plan.out_h * plan.out_w * kernel_w * depth):
        cols = _width_columns(x[lo:hi].transpose(1, 0, 2, 3), plan, key, plan.out_w, kernel_w,
                              "x_columns", into_input=False)
        rows_first = _scratch(("dy_rows",), (plan.out_h, hi - lo) + grad.shape[2:], grad.dtype)
        np.copyto(rows_first, grad[lo:hi].transpose(1, 0, 2, 3))
        rows_first = rows_first.reshape(plan.out_h, -1, out_channels)
        product = _scratch(("dw_product",), dw.shape[1:], dw.dtype)
        for i, out_h, in_h in pieces:
            np.matmul(cols[in_h].reshape(-1, kernel_w * depth).T,
                      rows_first[out_h].reshape(-1, out_channels), out=product)
            dw[i] += product
    return dw


# --- DepthwiseConv2dNative and its gradients ---------------------------------------------------
def _depthwise_plan(x, filter_shape, strides, padding, data_format, dilations, explicit_paddings):
    attrs = _conv_attrs(strides, padding, data_format, dilations, explicit_paddings)
    _check_depth(x, filter_shape, "DepthwiseConv2dNative")
    return window_plan_for(x, filter_shape[:2], attrs)[0]


@register_kernel("DepthwiseConv2dNative")
def depthwise_conv2d_native(input, filter, *, strides, padding, data_format,  # noqa: A002
                            dilations, explicit_paddings):
    x = to_nhwc(input, data_format)
    plan = _depthwise_plan(x, filter.shape, strides, padding, data_format, dilations,
                           explicit_paddings)
    n, _, _, channels = x.shape
    multiplier = filter.shape[3]
    out = np.zeros((n, plan.out_h, plan.out_w, channels, multiplier), dtype=filter.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        out[:, out_h, out_w] += x[:, in_h, in_w, :, None] * filter[i, j]
    return from_nhwc(out.reshape(n, plan.out_h, plan.out_w, channels * multiplier), data_format)


@register_kernel("DepthwiseConv2dNativeBackpropFilter")
def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, *,  # noqa: A002
                                            strides, padding, data_format, dilations,
                                            explicit_paddings):
    x = to_nhwc(input, data_format)
    filter_shape = tuple(int(d) for d in filter_sizes)
    plan = _depthwise_plan(x, filter_shape, strides, padding, data_format, dilations,
                           explicit_paddings)
    grad = to_nhwc(out_backprop, data_format)
    grad = grad.reshape(grad.shape[:3] + filter_shape[2:])
    dw = np.zeros(filter_shape, dtype=grad.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        dw[i, j] = np.einsum("nhwc,nhwcm->cm", x[:, in_h, in_w], grad[:, out_h, out_w])
    return dw


@register_kernel("DepthwiseConv2dNativeBackpropInput")
def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, *, strides,
                                           padding, data_format, dilations, explicit_paddings):
    shell = np.empty(nhwc_shape([int(d) for d in input_sizes], data_format), dtype=np.bool_)
    plan = _depthwise_plan(shell, filter.shape, strides, padding, data_format, dilations,
                           explicit_paddings)
    grad = to_nhwc(out_backprop, data_format)
    grad = grad.reshape(grad.shape[:3] + filter.shape[2:])
    dx = np.zeros(shell.shape, dtype=filter.dtype)
    for i, j, out_h, out_w, in_h, in_w in plan.pieces:
        dx[:, in_h, in_w] += np.einsum("nhwcm,cm->nhwc", grad[:, out_h, out_w], filter[i, j])
    return from_nhwc(dx, data_format)
