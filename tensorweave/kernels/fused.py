"""Kernels that do in one pass what a chain of ops does in several: a MatMul or Conv2D with the
bias add and activation that follow it (the plan-time rewrite in runtime/fusion.py puts them in
the step: `_FusedMatMul`, `_FusedConv2D` in the step stats), and the gradient of max pooling
with the gradient of the Relu under it (`_MaxPoolGradReluGrad`).

The bias and activation run on each block of the product right after BLAS wrote it, while the
block is still in cache, instead of two more passes over the whole output in memory. Large
products are split over the intra-op threads (BLAS runs on one thread per chunk there): by rows
when the product is tall, by columns otherwise (a dense layer: 64 rows, 1024 columns).
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import conv, intra_op, nn
from tensorweave.kernels.registry import register_kernel

ACTIVATIONS = ("", "Relu")

# No chunk of a split product is under ~20 MFLOP (as conv.py: ~0.1 ms, the hand-off ~5 us).
_MIN_CHUNK_FLOPS = 20e6


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def epilogue(bias, activation, op):
    """fn(block, lo, hi): adds bias[lo:hi] (None: no bias) to a block whose last axis is the
    channels lo:hi, then applies `activation`, in place."""
    if activation not in ACTIVATIONS:
        raise _invalid(f"{op}: unsupported fused activation {activation!r}; expected one of "
                       f"{ACTIVATIONS}")

    def apply(block, lo, hi):
        if bias is not None:
            np.add(block, bias[lo:hi], out=block)
        if activation == "Relu":
            np.maximum(block, 0, out=block)
    return apply


def _check_bias(bias, channels, op):
    if bias is None:
        return None
    bias = np.asarray(bias)
    if bias.shape != (channels,):
        raise _invalid(f"{op}: bias of shape {list(bias.shape)} does not match the "
                       f"{channels} output channels")
    return bias


def matmul(a, b, finish=None):
    """a @ b for 2-D `a` and `b` (views of transposes included: BLAS takes them by its
    transpose flags), split over the intra-op threads when large; `finish(block, lo, hi)` runs
    on each block of the product (columns lo:hi of it) right after it is written."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)}")
    rows, columns = a.shape[0], b.shape[1]
    out = np.empty((rows, columns), dtype=np.result_type(a, b))
    flops = 2.0 * rows * columns * a.shape[1]
    by_rows = rows >= columns
    # One chunk per thread, not several as elementwise kernels cut: BLAS packs the shared
    # operand again for every chunk (five chunks of the MLP's 128x784x512 product cost 10-15%
    # more CPU than one, two chunks ~8%).
    parts = min(intra_op.threads(), int(flops // _MIN_CHUNK_FLOPS))
    bounds = intra_op.split(rows if by_rows else columns, max(parts, 1),
                            multiple=1 if by_rows else 16)

    def chunk(lo, hi):
        if by_rows:
            block = out[lo:hi]
            np.matmul(a[lo:hi], b, out=block)
            if finish is not None:
                finish(block, 0, columns)
        else:
            block = out[:, lo:hi]
            np.matmul(a, b[:, lo:hi], out=block)
            if finish is not None:
                finish(block, lo, hi)

    if len(bounds) <= 1:
        chunk(0, rows if by_rows else columns)
    else:
        intra_op.run_chunks(chunk, bounds)
    return out


@register_kernel("_FusedMatMul", plan_only=True)
def fused_matmul(a, b, bias, *, transpose_a, transpose_b, activation):
    """activation(a @ b + bias): MatMul, then BiasAdd or Add of a vector, then an activation."""
    a, b = np.asarray(a), np.asarray(b)
    if transpose_a:
        a = a.T
    if transpose_b:
        b = b.T
    bias = _check_bias(bias, b.shape[-1], "_FusedMatMul")
    return matmul(a, b, epilogue(bias, activation, "_FusedMatMul"))


@register_kernel("_FusedConv2D", plan_only=True)
def fused_conv2d(input, filter, bias, *, strides, padding, data_format,  # noqa: A002
                 dilations, explicit_paddings, activation):
    """activation(conv2d(input, filter) + bias), the bias on the channel axis."""
    bias = _check_bias(bias, filter.shape[3], "_FusedConv2D")
    finish = epilogue(bias, activation, "_FusedConv2D")
    return conv.conv2d_with(input, filter, strides, padding, data_format, dilations,
                            explicit_paddings, lambda block: finish(block, 0, block.shape[-1]))


@register_kernel("_MaxPoolGradReluGrad", plan_only=True)
def max_pool_grad_relu_grad(orig_input, orig_output, grad, *, ksize, strides, padding,
                            data_format):
    """ReluGrad(MaxPoolGrad(x, y, grad), x) for x a Relu's output: each window's gradient goes
    to a cell holding the window's max y, whose Relu gate (x > 0) is y > 0; gated on the pooled
    values, before routing. (A NaN gradient still spreads as in the two ops: 0 * NaN.)"""
    gated = np.multiply(grad, orig_output > 0, dtype=np.result_type(grad))
    return nn.max_pool_grad(orig_input, orig_output, gated, ksize=ksize, strides=strides,
                            padding=padding, data_format=data_format)
