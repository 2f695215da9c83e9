"""Conv2DBackpropInput: the input gradient of Conv2D, which is also conv2d_transpose's forward.

Two ways, on conv.py's window plans and scratch buffers:
  rows (stride 1): copy KW shifted columns of the output gradient under each input column,
    make one product for all kernel rows, add each kernel row's block into its input rows.
  col2im (any stride > 1): one product of the output gradient [N*OH*OW, O] with the filter
    [O, KH*KW*C], then each kernel offset's slice of it is added into the input positions it
    touches (the overlapping windows). With stride s, the rows way multiplies the s-1 zero
    columns of every s that a stride leaves between output columns (2x the work for DCGAN's
    5x5 stride-2 layers): col2im makes exactly the convolution's multiply-adds. Measured on
    one thread, DCGAN's 7x7x128 -> 14x14x64 layer, batch 32: rows 18.8 ms, col2im 12.6 ms
    (its product alone 8.2 ms); BENCHMARKS.md, "DCGAN step".
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.conv import (_explicit, _image_blocks, _plan, _row_pieces, _scratch,
                                      _split_batch, _width_columns, covers, nhwc_shape, spatial,
                                      to_nhwc)
from tensorweave.kernels.registry import register_kernel


@register_kernel("Conv2DBackpropInput")
def conv2d_backprop_input(input_sizes, filter, out_backprop, *, strides, padding,  # noqa: A002
                          data_format, dilations, explicit_paddings):
    sizes = [int(d) for d in input_sizes]
    if len(sizes) != 4 or filter.ndim != 4 or out_backprop.ndim != 4:
        raise errors.InvalidArgumentError(
            None, None, f"Conv2DBackpropInput: input_sizes must have 4 entries and filter and "
            f"out_backprop must be 4-D, got input_sizes {sizes}, filter shape "
            f"{list(filter.shape)}, out_backprop shape {list(out_backprop.shape)}")
    n, height, width, channels = nhwc_shape(sizes, data_format)
    kernel_h, kernel_w, depth, out_channels = filter.shape
    if depth != channels:
        raise errors.InvalidArgumentError(
            None, None, f"Conv2DBackpropInput: input depth {channels} does not match the "
            f"filter's input depth {depth}")
    plan, key = _plan(height, width, (kernel_h, kernel_w), spatial(strides, data_format),
                      spatial(dilations, data_format), padding,
                      _explicit(explicit_paddings, data_format))
    grad = to_nhwc(out_backprop, data_format)
    expected = (n, plan.out_h, plan.out_w, out_channels)
    if grad.shape != expected:
        raise errors.InvalidArgumentError(
            None, None, f"Conv2DBackpropInput: out_backprop has shape {list(grad.shape)} (NHWC) "
            f"but the convolution of an input of size {sizes} gives {list(expected)} (NHWC)")
    dx = np.empty((n, height, width, channels), dtype=filter.dtype)
    strided = spatial(strides, data_format) != (1, 1)
    compute = _col2im_into if strided else _input_gradient_into
    return _split_batch(compute, grad, filter, plan, key, dx, data_format)


def _col2im_into(grad, filter, plan, key, dx):
    """The input gradient of the NHWC `grad` written into the contiguous NHWC `dx` by one
    product per block of images and a scatter-add of each kernel offset's columns."""
    kernel_h, kernel_w, channels, out_channels = filter.shape
    columns = kernel_h * kernel_w * channels
    weights = filter.reshape(columns, out_channels).T  # [O, KH*KW*C], a view: BLAS transposes
    dx.fill(0)
    # Blocks of ~4x conv.py's: the scatter costs one NumPy call per kernel offset and block.
    for lo, hi in _image_blocks(dx.shape[0], plan.out_h * plan.out_w * columns // 4):
        rows = grad[lo:hi].reshape(-1, out_channels)
        products = np.matmul(rows, weights, out=_scratch(("col2im",), (rows.shape[0], columns),
                                                          weights.dtype))
        products = products.reshape(hi - lo, plan.out_h, plan.out_w, kernel_h, kernel_w,
                                    channels)
        block = dx[lo:hi]
        for i, j, out_h, out_w, in_h, in_w in plan.pieces:
            block[:, in_h, in_w] += products[:, out_h, out_w, i, j]


def _input_gradient_into(grad, filter, plan, key, dx):
    """The input gradient of the NHWC `grad` written into the contiguous NHWC `dx`."""
    kernel_h, kernel_w, channels, out_channels = filter.shape
    # One product for all kernel rows ([KW*O] x [KH*C]: N = KH*C columns keep BLAS efficient
    # where N = C alone was not: 9.1 vs 11.0 ms single-thread for LeNet's second layer), then
    # each kernel row's columns are added into its input rows.
    weights = filter.transpose(1, 3, 0, 2).reshape(kernel_w * out_channels, kernel_h * channels)
    for lo, hi in _image_blocks(dx.shape[0], plan.out_h * dx.shape[2] * kernel_w * out_channels):
        _input_gradient_block(grad[lo:hi], weights, filter.shape, plan, key, dx[lo:hi])


def _input_gradient_block(grad, weights, filter_shape, plan, key, dx):
    n, height, width, channels = dx.shape
    kernel_h, kernel_w, _, out_channels = filter_shape
    cols = _width_columns(grad.transpose(1, 0, 2, 3), plan, key, width, kernel_w, "dy_columns",
                          into_input=True)
    products = np.matmul(cols.reshape(-1, kernel_w * out_channels), weights, out=_scratch(
        ("dy_products",), (cols.shape[0] * cols.shape[1], kernel_h * channels), weights.dtype))
    products = products.reshape(plan.out_h, n * width, kernel_h, channels)
    total = None
    for i, out_h, in_h in _row_pieces(plan, 1, height):
        if total is None:
            total = _scratch(("dx_rows",), (height, n * width, channels), weights.dtype)
            if not covers(in_h, height):
                total.fill(0)
            else:
                np.copyto(total, products[out_h, :, i])
                continue
        total[in_h] += products[out_h, :, i]
    if total is None:
        dx.fill(0)
        return
    np.copyto(dx, total.reshape(height, n, width, channels).transpose(1, 0, 2, 3))
