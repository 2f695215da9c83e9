"""Kernels of the neural-network ops: activations, softmax and cross entropy, BiasAdd, and the
pooling ops (on the window plans of conv.py)."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import conv, intra_op
from tensorweave.kernels.registry import register_kernel


@register_kernel("Relu")
def relu(features):
    bounds = intra_op.row_bounds(features)
    if bounds is None:
        return np.maximum(features, 0, dtype=features.dtype)
    out = np.empty(features.shape, dtype=features.dtype)

    def chunk(lo, hi):
        np.maximum(features[lo:hi], 0, out=out[lo:hi], dtype=features.dtype)

    intra_op.run_chunks(chunk, bounds)
    return out


# gradients * (features > 0), as TF computes it (a NaN or inf gradient stays one). np.where
# with an unpredictable mask ran 15 ms for LeNet's first layer ([64, 28, 28, 32]) where the
# product takes 0.6 ms.
@register_kernel("ReluGrad")
def relu_grad(gradients, features):
    if gradients.shape != features.shape:
        raise errors.InvalidArgumentError(None, None, f"ReluGrad: gradients and features must "
                                          f"have the same shape, got {list(gradients.shape)} "
                                          f"and {list(features.shape)}")
    bounds = intra_op.row_bounds(gradients)
    if bounds is None:
        return np.multiply(gradients, features > 0, dtype=gradients.dtype)
    out = np.empty(gradients.shape, dtype=gradients.dtype)

    def chunk(lo, hi):
        np.multiply(gradients[lo:hi], features[lo:hi] > 0, out=out[lo:hi], dtype=gradients.dtype)

    intra_op.run_chunks(chunk, bounds)
    return out


def _softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=-1, keepdims=True)
    return shifted


@register_kernel("Softmax")
def softmax(logits):
    return _softmax(np.asarray(logits))


@register_kernel("LogSoftmax")
def log_softmax(logits):
    logits = np.asarray(logits)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@register_kernel("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(features, labels):
    features = np.asarray(features)
    if features.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"logits must be 2-dimensional, got shape "
                                          f"{list(features.shape)}")
    labels = np.broadcast_to(labels, features.shape)
    shifted = features - features.max(axis=-1, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    log_probs = shifted - log_sum
    loss = -(labels * log_probs).sum(axis=-1)
    backprop = np.exp(log_probs)
    backprop -= labels
    return loss, backprop


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(features, labels):
    features = np.asarray(features)
    labels = np.asarray(labels)
    classes = features.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        bad = labels[(labels < 0) | (labels >= classes)][0]
        raise errors.InvalidArgumentError(None, None, f"Received a label value of {bad} which is "
                                          f"outside the valid range of [0, {classes}).")
    shifted = features - features.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    rows = np.arange(features.shape[0])
    loss = -log_probs[rows, labels]
    backprop = np.exp(log_probs)
    backprop[rows, labels] -= 1
    return loss, backprop


# --- BiasAdd -------------------------------------------------------------------------------------
def _channel_axis(ndim, data_format):
    return 1 if data_format == "NCHW" and ndim >= 3 else ndim - 1


@register_kernel("BiasAdd")
def bias_add(value, bias, *, data_format):
    axis = _channel_axis(value.ndim, data_format)
    if value.shape[axis] != bias.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"BiasAdd: bias of size {bias.shape[0]} does not match dimension {axis} "
            f"(size {value.shape[axis]}) of the value of shape {list(value.shape)}")
    bias = bias.reshape((-1,) + (1,) * (value.ndim - 1 - axis))
    bounds = intra_op.row_bounds(value) if axis > 0 else None
    if bounds is None:
        return value + bias
    out = np.empty(value.shape, dtype=np.result_type(value, bias))

    def chunk(lo, hi):
        np.add(value[lo:hi], bias, out=out[lo:hi])

    intra_op.run_chunks(chunk, bounds)
    return out


@register_kernel("BiasAddGrad")
def bias_add_grad(out_backprop, *, data_format):
    axis = _channel_axis(out_backprop.ndim, data_format)
    if axis != out_backprop.ndim - 1:
        axes = tuple(a for a in range(out_backprop.ndim) if a != axis)
        return out_backprop.sum(axis=axes)
    # A vector-matrix product (BLAS) sums the rows ~6x faster than ndarray.sum(axis=0):
    # 0.12 ms vs 0.83 ms for LeNet's first layer ([50176, 32] float32).
    rows = out_backprop.reshape(-1, out_backprop.shape[-1])
    bounds = intra_op.row_bounds(rows) or [(0, rows.shape[0])]
    ones = np.ones(bounds[0][1] - bounds[0][0], dtype=rows.dtype)
    partials = intra_op.run_chunks(lambda lo, hi: np.matmul(ones[:hi - lo], rows[lo:hi]), bounds)
    total = partials[0]
    for partial in partials[1:]:
        total += partial
    return total


def _invalid_argument(message):
    return errors.InvalidArgumentError(None, None, message)


# --- pooling -------------------------------------------------------------------------------------
def _pool_plan(x_nhwc, ksize, strides, padding, data_format):
    window = conv.spatial(ksize, data_format)
    if (ksize[0], ksize[3] if data_format != "NCHW" else ksize[1]) != (1, 1):
        raise _invalid_argument(f"pooling over the batch or depth dimension is not supported "
                                f"(ksize {list(ksize)})")
    attrs = {"strides": strides, "padding": padding, "data_format": data_format}
    return conv.window_plan_for(x_nhwc, window, attrs)[0]


@register_kernel("MaxPool")
def max_pool(input, *, ksize, strides, padding, data_format):  # noqa: A002
    x = conv.to_nhwc(input, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    out = _pooled_array(x, plan)

    def chunk(lo, hi):
        pieces = _start_pooling(x[lo:hi], plan, out[lo:hi], -np.inf)
        for _, _, out_h, out_w, in_h, in_w in pieces:
            view = out[lo:hi, out_h, out_w]
            np.maximum(view, x[lo:hi, in_h, in_w], out=view)

    intra_op.run_chunks(chunk, _pool_chunks(x))
    return conv.from_nhwc(out, data_format)


def _pooled_array(x, plan):
    return np.empty((x.shape[0], plan.out_h, plan.out_w, x.shape[3]), dtype=x.dtype)


def _pool_chunks(x):
    """Batch chunks of a pooling kernel for the intra-op threads (elementwise-sized work)."""
    return intra_op.row_bounds(x) or [(0, x.shape[0])]


def _start_pooling(x, plan, out, empty):
    """Starts `out` from an offset that reaches every output cell (a copy, one pass fewer than
    filling first); returns the offsets left to fold in."""
    pieces = list(plan.pieces)
    for piece in pieces:
        _, _, out_h, out_w, in_h, in_w = piece
        if conv.covers(out_h, plan.out_h) and conv.covers(out_w, plan.out_w):
            pieces.remove(piece)
            np.copyto(out, x[:, in_h, in_w])
            return pieces
    out.fill(empty)
    return pieces


def _first_hits(hits, regions, out_shape):
    """Keeps only each window's first True across the offsets' boolean `hits` (in window
    order); hits[k] covers the output cells regions[k] (a pair of slices). In place."""
    waiting = np.ones(out_shape, dtype=np.bool_)
    for k, (hit, (out_h, out_w)) in enumerate(zip(hits, regions)):
        still = waiting[:, out_h, out_w]
        hit &= still
        if k != len(hits) - 1:
            still ^= hit  # hit is a subset of still: this clears the served windows


def _route_to_max(x, y, plan, source, into_input):
    """For each window, the first cell (in window order) equal to the window's max gets
    `source`: scattered into the input's shape (MaxPoolGrad) or gathered from it
    (MaxPoolGradGrad). The batch is split into chunks for the intra-op threads."""
    out = np.empty(x.shape if into_input else y.shape, dtype=source.dtype)

    def chunk(lo, hi):
        _route_chunk(x[lo:hi], y[lo:hi], plan, source[lo:hi], into_input, out[lo:hi])

    intra_op.run_chunks(chunk, _pool_chunks(x))
    return out


def _route_chunk(x, y, plan, source, into_input, result):
    kernel_h, kernel_w = plan.window
    n, out_h, out_w, channels = y.shape
    if plan.tiles:
        # Windows tile the input: one comparison over the input viewed as [N, OH, kh, OW, kw,
        # C] and one product. (np.add(..., where=) on strided views was 9x slower for LeNet's
        # first pooling.)
        tiled = (n, out_h, kernel_h, out_w, kernel_w, channels)
        hit = np.equal(x.reshape(tiled), y[:, :, None, :, None, :])
        everything = (slice(None), slice(None))
        _first_hits([hit[:, :, a, :, b] for a in range(kernel_h) for b in range(kernel_w)],
                    [everything] * (kernel_h * kernel_w), y.shape)
        if into_input:
            np.multiply(hit, source[:, :, None, :, None, :], dtype=source.dtype,
                        out=result.reshape(tiled))
        else:
            np.multiply(hit, source.reshape(tiled), dtype=source.dtype).sum(axis=(2, 4),
                                                                             out=result)
        return
    hits = [np.equal(x[:, in_h, in_w], y[:, o_h, o_w]) for _, _, o_h, o_w, in_h, in_w in
            plan.pieces]
    _first_hits(hits, [(o_h, o_w) for _, _, o_h, o_w, _, _ in plan.pieces], y.shape)
    result.fill(0)
    for hit, (_, _, o_h, o_w, in_h, in_w) in zip(hits, plan.pieces):
        if into_input:
            target = result[:, in_h, in_w]
            target += source[:, o_h, o_w] * hit
        else:
            target = result[:, o_h, o_w]
            target += source[:, in_h, in_w] * hit


@register_kernel("MaxPoolGrad")
def max_pool_grad(orig_input, orig_output, grad, *, ksize, strides, padding, data_format):
    x, y = conv.to_nhwc(orig_input, data_format), conv.to_nhwc(orig_output, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    routed = _route_to_max(x, y, plan, conv.to_nhwc(grad, data_format), True)
    return conv.from_nhwc(routed, data_format)


@register_kernel("MaxPoolGradGrad")
def max_pool_grad_grad(orig_input, orig_output, grad, *, ksize, strides, padding, data_format):
    x, y = conv.to_nhwc(orig_input, data_format), conv.to_nhwc(orig_output, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    return conv.from_nhwc(_route_to_max(x, y, plan, conv.to_nhwc(grad, data_format), False),
                      data_format)


def _inverse_counts(plan, dtype):
    """1 / (number of input cells in each window): padding cells are not averaged."""
    return (1 / plan.counts()).astype(dtype)[None, :, :, None]


@register_kernel("AvgPool")
def avg_pool(value, *, ksize, strides, padding, data_format):
    x = conv.to_nhwc(value, data_format)
    plan = _pool_plan(x, ksize, strides, padding, data_format)
    out = _pooled_array(x, plan)
    pieces = _start_pooling(x, plan, out, 0)
    for _, _, out_h, out_w, in_h, in_w in pieces:
        out[:, out_h, out_w] += x[:, in_h, in_w]
    out *= _inverse_counts(plan, x.dtype)
    return conv.from_nhwc(out, data_format)


@register_kernel("AvgPoolGrad")
def avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format):
    shell = np.empty(conv.nhwc_shape([int(d) for d in orig_input_shape], data_format),
                     dtype=np.bool_)
    plan = _pool_plan(shell, ksize, strides, padding, data_format)
    share = conv.to_nhwc(grad, data_format) * _inverse_counts(plan, grad.dtype)
    dx = np.zeros(shell.shape, dtype=grad.dtype)
    for _, _, out_h, out_w, in_h, in_w in plan.pieces:
        dx[:, in_h, in_w] += share[:, out_h, out_w]
    return conv.from_nhwc(dx, data_format)
