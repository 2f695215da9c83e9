"""Convolution, pooling and bias ops against loop-based NumPy references (conv_reference.py),
in both data formats, with numeric gradients (second order through the bilinear backprop ops),
build-time errors naming the op and the bad value, and the kernels' buffer reuse."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.op_util import make_tensor

from . import conv_reference as ref
from .op_harness import (ALL_FLOATS, FLOATS, Floats, Grid, OpCase, check_case_gradient,
                         check_gradient_rows_cover, covered, gradient_params, run_case,
                         value_params)


def _explicit_attr(padding, data_format):
    """TF's explicit padding argument ([before, after] per dimension) for (rows, cols) pairs."""
    if not isinstance(padding, (list, tuple)):
        return padding
    rows, cols = padding
    return [[0, 0], [0, 0], list(rows), list(cols)] if data_format == "NCHW" else \
        [[0, 0], list(rows), list(cols), [0, 0]]


def _in_format(shape, data_format):
    n, h, w, c = shape
    return (n, c, h, w) if data_format == "NCHW" else shape


def _to_nhwc(x, data_format):
    return ref.nhwc(x) if data_format == "NCHW" else x


def _from_nhwc(x, data_format):
    return ref.nchw(x) if data_format == "NCHW" else x


class Distinct:
    """Values at least 0.05 apart, in random order: no ties (nor near ties within a finite
    difference step) between the cells of a pooling window."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __call__(self, rng, dtype):
        size = int(np.prod(self.shape))
        values = (rng.permutation(size) - size / 2) * (4.0 / size)
        return values.reshape(self.shape).astype(dtype)


# --- Conv2D: label, x (NHWC), filter, strides, padding, dilations, gradient order --------------
CONV_ROWS = [
    ("same", (2, 5, 5, 2), (3, 3, 2, 3), (1, 1), "SAME", (1, 1), 2),
    ("valid_stride2", (2, 7, 6, 2), (3, 2, 2, 3), (2, 2), "VALID", (1, 1), 1),
    ("same_stride_2x3_even_kernel", (1, 5, 7, 3), (2, 4, 3, 2), (2, 3), "SAME", (1, 1), 1),
    ("same_dilated", (1, 7, 6, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2), 1),
    ("valid_dilated_strided", (1, 9, 8, 1), (2, 3, 1, 2), (2, 1), "VALID", (2, 1), 1),
    ("explicit", (1, 5, 4, 2), (3, 3, 2, 2), (1, 2), ((1, 2), (0, 1)), (1, 1), 1),
    ("pointwise", (2, 3, 3, 4), (1, 1, 4, 2), (1, 1), "VALID", (1, 1), 1),
    # KW * C < out channels: the kernel takes its full-im2col path instead of kernel rows.
    ("thin_input_im2col", (2, 6, 5, 1), (3, 3, 1, 4), (1, 1), "SAME", (1, 1), 2),
    ("thin_input_im2col_strided", (1, 7, 8, 1), (2, 2, 1, 5), (2, 3), "VALID", (2, 1), 1),
]


def _conv_case(label, x_shape, w_shape, strides, padding, dilations, grad, data_format):
    def build(x, w):
        return tf.nn.conv2d(x, w, strides=[1, *strides, 1] if data_format == "NHWC" else
                            [1, 1, *strides], padding=_explicit_attr(padding, data_format),
                            data_format=data_format, dilations=list(dilations))

    def reference(x, w):
        return _from_nhwc(ref.conv2d(_to_nhwc(x, data_format), w, strides, padding, dilations),
                          data_format)

    return OpCase(f"conv2d_{label}_{data_format.lower()}", {"Conv2D"}, build, reference,
                  (Floats(_in_format(x_shape, data_format)), Floats(w_shape)), FLOATS,
                  grad=grad if data_format == "NHWC" else min(grad, 1))


CONV_CASES = [_conv_case(*row, data_format) for row in CONV_ROWS
              for data_format in ("NHWC", "NCHW")]
# float16 sums 18 products here: compare at float16's resolution.
CONV_CASES.append(OpCase("conv2d_float16", {"Conv2D"},
                         lambda x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"),
                         lambda x, w: ref.conv2d(x, w), (Floats((1, 4, 4, 2)), Floats(
                             (3, 3, 2, 2), -1, 1)), (np.float16,), rtol=1e-2, atol=2e-2))


def _backprop_input_case(label, x_shape, w_shape, strides, padding, dilations, data_format,
                         transpose_api=False):
    out_h, out_w = ref.output_hw(x_shape, w_shape[:2], strides, dilations, padding)
    dy_shape = (x_shape[0], out_h, out_w, w_shape[3])
    sizes = list(_in_format(x_shape, data_format))
    full_strides = [1, *strides, 1] if data_format == "NHWC" else [1, 1, *strides]

    def build(w, dy):
        if transpose_api:
            return tf.nn.conv2d_transpose(dy, w, sizes, full_strides,
                                          padding, data_format=data_format)
        return tf.nn.conv2d_backprop_input(sizes, w, dy, full_strides,
                                           _explicit_attr(padding, data_format),
                                           data_format=data_format, dilations=list(dilations))

    def reference(w, dy):
        return _from_nhwc(ref.conv2d_backprop_input(x_shape, w, _to_nhwc(dy, data_format),
                                                    strides, padding, dilations), data_format)

    # conv2d_transpose's filter is [kh, kw, output channels, input channels]: the filter of the
    # convolution it transposes, as is.
    op_types = {"Conv2DBackpropInput"}
    name = "conv2d_transpose" if transpose_api else "conv2d_backprop_input"
    return OpCase(f"{name}_{label}_{data_format.lower()}", op_types, build, reference,
                  (Floats(w_shape), Floats(_in_format(dy_shape, data_format))), FLOATS,
                  grad=2 if data_format == "NHWC" else 1)


def _backprop_filter_case(label, x_shape, w_shape, strides, padding, dilations, data_format):
    out_h, out_w = ref.output_hw(x_shape, w_shape[:2], strides, dilations, padding)
    dy_shape = (x_shape[0], out_h, out_w, w_shape[3])
    full_strides = [1, *strides, 1] if data_format == "NHWC" else [1, 1, *strides]

    def build(x, dy):
        return tf.nn.conv2d_backprop_filter(x, list(w_shape), dy, full_strides,
                                            _explicit_attr(padding, data_format),
                                            data_format=data_format, dilations=list(dilations))

    def reference(x, dy):
        return ref.conv2d_backprop_filter(_to_nhwc(x, data_format), w_shape,
                                          _to_nhwc(dy, data_format), strides, padding, dilations)

    return OpCase(f"conv2d_backprop_filter_{label}_{data_format.lower()}",
                  {"Conv2DBackpropFilter"}, build, reference,
                  (Floats(_in_format(x_shape, data_format)),
                   Floats(_in_format(dy_shape, data_format))), FLOATS,
                  grad=2 if data_format == "NHWC" else 1)


_BACKPROP_ROWS = [
    ("same_stride2", (2, 5, 5, 2), (3, 3, 2, 3), (2, 2), "SAME", (1, 1)),
    ("valid_dilated", (1, 6, 7, 2), (2, 2, 2, 2), (1, 2), "VALID", (2, 1)),
    ("explicit", (1, 4, 5, 1), (2, 3, 1, 2), (1, 1), ((0, 1), (2, 1)), (1, 1)),
    # Strides above 1 take the input gradient's col2im path (kernels/conv_input_grad.py).
    ("valid_stride3_odd", (1, 8, 7, 2), (3, 2, 2, 3), (3, 3), "VALID", (1, 1)),
    ("same_5x5_stride2_dcgan", (1, 7, 6, 2), (5, 5, 2, 3), (2, 2), "SAME", (1, 1)),
]
BACKPROP_CASES = (
    [_backprop_input_case(*row, fmt) for row in _BACKPROP_ROWS for fmt in ("NHWC", "NCHW")] +
    [_backprop_filter_case(*row, fmt) for row in _BACKPROP_ROWS for fmt in ("NHWC", "NCHW")] +
    [_backprop_input_case("same_stride2", (2, 6, 5, 3), (3, 3, 3, 2), (2, 2), "SAME", (1, 1),
                          "NHWC", transpose_api=True),
     _backprop_input_case("valid", (1, 5, 5, 2), (2, 2, 2, 3), (1, 1), "VALID", (1, 1),
                          "NCHW", transpose_api=True)])


# --- depthwise -----------------------------------------------------------------------------------
_DEPTHWISE_ROWS = [
    ("same", (2, 5, 5, 2), (3, 3, 2, 2), (1, 1), "SAME", (1, 1)),
    ("valid_stride2", (1, 6, 7, 3), (2, 3, 3, 1), (2, 2), "VALID", (1, 1)),
    ("dilated", (1, 6, 6, 2), (2, 2, 2, 3), (1, 1), "SAME", (2, 2)),
]


def _depthwise_cases(label, x_shape, w_shape, strides, padding, dilations, data_format):
    full_strides = [1, *strides, 1] if data_format == "NHWC" else [1, 1, *strides]
    out_h, out_w = ref.output_hw(x_shape, w_shape[:2], strides, dilations, padding)
    dy_shape = (x_shape[0], out_h, out_w, w_shape[2] * w_shape[3])
    grad = 2 if data_format == "NHWC" else 1
    x_domain = Floats(_in_format(x_shape, data_format))
    dy_domain = Floats(_in_format(dy_shape, data_format))
    suffix = f"{label}_{data_format.lower()}"

    def forward(x, w):
        return tf.nn.depthwise_conv2d(x, w, full_strides, padding, rate=list(dilations),
                                      data_format=data_format)

    def forward_ref(x, w):
        return _from_nhwc(ref.depthwise_conv2d(_to_nhwc(x, data_format), w, strides, padding,
                                               dilations), data_format)

    def backprop_input(w, dy):
        return tf.nn.depthwise_conv2d_native_backprop_input(
            list(_in_format(x_shape, data_format)), w, dy, full_strides, padding, data_format,
            list(dilations))

    def backprop_input_ref(w, dy):
        # d/dx of sum(depthwise(x, w) * dy) by the reference's linearity: a Jacobian product.
        return _from_nhwc(_depthwise_vjp_x(x_shape, w, _to_nhwc(dy, data_format), strides,
                                           padding, dilations), data_format)

    def backprop_filter(x, dy):
        return tf.nn.depthwise_conv2d_native_backprop_filter(
            x, list(w_shape), dy, full_strides, padding, data_format, list(dilations))

    def backprop_filter_ref(x, dy):
        return _depthwise_vjp_w(_to_nhwc(x, data_format), w_shape, _to_nhwc(dy, data_format),
                                strides, padding, dilations)

    return [
        OpCase(f"depthwise_{suffix}", {"DepthwiseConv2dNative"}, forward, forward_ref,
               (x_domain, Floats(w_shape)), FLOATS, grad=grad),
        OpCase(f"depthwise_backprop_input_{suffix}", {"DepthwiseConv2dNativeBackpropInput"},
               backprop_input, backprop_input_ref, (Floats(w_shape), dy_domain), FLOATS,
               grad=grad),
        OpCase(f"depthwise_backprop_filter_{suffix}", {"DepthwiseConv2dNativeBackpropFilter"},
               backprop_filter, backprop_filter_ref, (x_domain, dy_domain), FLOATS, grad=grad),
    ]


def _depthwise_vjp_x(x_shape, w, dy, strides, padding, dilations):
    """Column k of the (linear) map x -> depthwise(x, w), dotted with dy, for every x cell."""
    dx = np.zeros(x_shape)
    for index in np.ndindex(*x_shape):
        basis = np.zeros(x_shape)
        basis[index] = 1
        dx[index] = np.sum(ref.depthwise_conv2d(basis, w, strides, padding, dilations) * dy)
    return dx


def _depthwise_vjp_w(x, w_shape, dy, strides, padding, dilations):
    dw = np.zeros(w_shape)
    for index in np.ndindex(*w_shape):
        basis = np.zeros(w_shape)
        basis[index] = 1
        dw[index] = np.sum(ref.depthwise_conv2d(x, basis, strides, padding, dilations) * dy)
    return dw


DEPTHWISE_CASES = [case for row in _DEPTHWISE_ROWS for fmt in ("NHWC", "NCHW")
                   for case in _depthwise_cases(*row, fmt)]


# --- pooling -------------------------------------------------------------------------------------
_POOL_ROWS = [
    ("2x2_valid", (2, 4, 6, 3), (2, 2), (2, 2), "VALID"),
    ("3x3_same_stride2_overlapping", (2, 5, 5, 2), (3, 3), (2, 2), "SAME"),
    ("2x3_same_stride1", (1, 4, 5, 2), (2, 3), (1, 1), "SAME"),
]


def _pool_cases(label, x_shape, window, strides, padding, data_format):
    ksize = [1, *window, 1] if data_format == "NHWC" else [1, 1, *window]
    full_strides = [1, *strides, 1] if data_format == "NHWC" else [1, 1, *strides]
    attrs = {"ksize": ksize, "strides": full_strides, "padding": padding,
             "data_format": data_format}
    out_h, out_w = ref.output_hw(x_shape, window, strides, (1, 1), padding)
    y_shape = _in_format((x_shape[0], out_h, out_w, x_shape[3]), data_format)
    x_domain = Distinct(_in_format(x_shape, data_format))
    suffix = f"{label}_{data_format.lower()}"
    grad = 2 if data_format == "NHWC" else 1

    def in_nhwc(fn):
        return lambda *arrays: _from_nhwc(fn(*[_to_nhwc(a, data_format) for a in arrays]),
                                          data_format)

    def max_pool(x):
        return tf.nn.max_pool(x, ksize, full_strides, padding, data_format=data_format)

    def avg_pool(x):
        return tf.nn.avg_pool(x, ksize, full_strides, padding, data_format=data_format)

    return [
        OpCase(f"max_pool_{suffix}", {"MaxPool"}, max_pool,
               in_nhwc(lambda x: ref.max_pool(x, window, strides, padding)), (x_domain,),
               ALL_FLOATS, grad=grad),
        OpCase(f"max_pool_grad_{suffix}", {"MaxPool", "MaxPoolGrad"},
               lambda x, dy: make_tensor("MaxPoolGrad", [x, max_pool(x), dy], attrs),
               in_nhwc(lambda x, dy: ref.max_pool_grad(x, dy, window, strides, padding)),
               (x_domain, Floats(y_shape)), FLOATS, grad=grad),
        OpCase(f"max_pool_grad_grad_{suffix}", {"MaxPool", "MaxPoolGradGrad"},
               lambda x, ddx: make_tensor("MaxPoolGradGrad", [x, max_pool(x), ddx], attrs),
               in_nhwc(lambda x, ddx: ref.max_pool_grad_grad(x, ddx, window, strides, padding)),
               (x_domain, Floats(_in_format(x_shape, data_format))), FLOATS, grad=grad),
        OpCase(f"avg_pool_{suffix}", {"AvgPool"}, avg_pool,
               in_nhwc(lambda x: ref.avg_pool(x, window, strides, padding)), (Floats(
                   _in_format(x_shape, data_format)),), ALL_FLOATS, grad=grad),
        OpCase(f"avg_pool_grad_{suffix}", {"AvgPoolGrad"},
               lambda dy: make_tensor("AvgPoolGrad", [tf.constant(list(_in_format(
                   x_shape, data_format))), dy], attrs),
               in_nhwc(lambda dy: ref.avg_pool_grad(x_shape, dy, window, strides, padding)),
               (Floats(y_shape),), FLOATS, grad=grad),
    ]


POOL_CASES = [case for row in _POOL_ROWS for fmt in ("NHWC", "NCHW")
              for case in _pool_cases(*row, fmt)]
POOL_CASES += [
    OpCase("max_pool2d_int_args", {"MaxPool"},
           lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"),
           lambda x: ref.max_pool(x, (2, 2), (2, 2), "VALID"), (Distinct((1, 4, 4, 2)),),
           FLOATS),
    # TF 1.x names avg_pool2d's tensor value= (or input=), as avg_pool's.
    OpCase("avg_pool2d_keyword_value", {"AvgPool"},
           lambda x: [tf.nn.avg_pool2d(value=x, ksize=2, strides=1, padding="SAME"),
                      tf.nn.avg_pool2d(input=x, ksize=2, strides=1, padding="SAME")],
           lambda x: [ref.avg_pool(x, (2, 2), (1, 1), "SAME")] * 2, (Floats((1, 3, 3, 2)),),
           FLOATS, grad=1),
    # Ties (small integers): each window's gradient goes to its first maximal cell only.
    OpCase("max_pool_grad_ties_tiled", {"MaxPoolGrad"},
           lambda x, dy: make_tensor("MaxPoolGrad", [x, tf.nn.max_pool(x, 2, 2, "VALID"), dy],
                                     {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                      "padding": "VALID"}),
           lambda x, dy: ref.max_pool_grad(x, dy, (2, 2), (2, 2), "VALID"),
           (Grid((2, 4, 6, 3), 0, 3), Floats((2, 2, 3, 3))), FLOATS),
    OpCase("max_pool_grad_ties_overlapping", {"MaxPoolGrad"},
           lambda x, dy: make_tensor("MaxPoolGrad", [x, tf.nn.max_pool(x, 3, 2, "SAME"), dy],
                                     {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1],
                                      "padding": "SAME"}),
           lambda x, dy: ref.max_pool_grad(x, dy, (3, 3), (2, 2), "SAME"),
           (Grid((2, 5, 5, 2), 0, 3), Floats((2, 3, 3, 2))), FLOATS),
    OpCase("max_pool_grad_grad_ties_tiled", {"MaxPoolGradGrad"},
           lambda x, ddx: make_tensor("MaxPoolGradGrad",
                                      [x, tf.nn.max_pool(x, 2, 2, "VALID"), ddx],
                                      {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                       "padding": "VALID"}),
           lambda x, ddx: ref.max_pool_grad_grad(x, ddx, (2, 2), (2, 2), "VALID"),
           (Grid((2, 4, 6, 3), 0, 3), Floats((2, 4, 6, 3))), FLOATS),
    OpCase("avg_pool_window_larger_than_stride_same", {"AvgPool"},
           lambda x: tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
           lambda x: ref.avg_pool(x, (3, 3), (1, 1), "SAME"), (Floats((1, 3, 4, 1)),), FLOATS,
           grad=1),
]


# --- BiasAdd -------------------------------------------------------------------------------------
def _bias_ref(data_format):
    def reference(value, bias):
        if data_format == "NCHW" and value.ndim >= 3:
            return value + bias.reshape((-1,) + (1,) * (value.ndim - 2))
        return value + bias
    return reference


def _bias_grad_ref(data_format):
    def reference(dy):
        axis = 1 if data_format == "NCHW" and dy.ndim >= 3 else dy.ndim - 1
        return dy.sum(axis=tuple(a for a in range(dy.ndim) if a != axis))
    return reference


_BIAS_ROWS = [("nhwc", (2, 3, 3, 4), "NHWC"), ("matrix", (3, 5), "NHWC"),
              ("nchw", (2, 4, 3, 3), "NCHW"), ("nchw_matrix", (3, 5), "NCHW"),
              ("nchw_rank3", (2, 3, 4), "NCHW")]
BIAS_CASES = [
    OpCase(f"bias_add_{label}", {"BiasAdd"},
           (lambda fmt: lambda v, b: tf.nn.bias_add(v, b, data_format=fmt))(fmt), _bias_ref(fmt),
           (Floats(shape), Floats((shape[1] if fmt == "NCHW" and len(shape) >= 3 else
                                   shape[-1],))), ALL_FLOATS, grad=2)
    for label, shape, fmt in _BIAS_ROWS
] + [
    OpCase(f"bias_add_grad_{label}", {"BiasAddGrad"},
           (lambda fmt: lambda dy: make_tensor("BiasAddGrad", [dy], {"data_format": fmt}))(fmt),
           _bias_grad_ref(fmt), (Floats(shape),), FLOATS, grad=2)
    for label, shape, fmt in _BIAS_ROWS
] + [
    OpCase("bias_add_int", {"BiasAdd"}, tf.nn.bias_add, _bias_ref("NHWC"),
           (Floats((2, 3), -5, 5), Floats((3,), -5, 5)), (np.int32, np.int64)),
]

CASES = CONV_CASES + BACKPROP_CASES + DEPTHWISE_CASES + POOL_CASES + BIAS_CASES
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


# --- build-time errors name the op and the bad value --------------------------------------------
def _conv_error(x_shape, w_shape, **kwargs):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, x_shape)
        w = tf.placeholder(tf.float32, w_shape)
        args = dict(strides=[1, 1, 1, 1], padding="SAME")
        args.update(kwargs)
        with pytest.raises(ValueError) as info:
            tf.nn.conv2d(x, w, name="my_conv", **args)
    return str(info.value)


@pytest.mark.parametrize("x_shape,w_shape,kwargs,fragments", [
    ((1, 5, 5, 3), (3, 3, 2, 4), {}, ["my_conv", "Conv2D", "input depth 3", "in_channels 2"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"padding": "FULL"}, ["my_conv", "Conv2D", "padding", "'FULL'"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"strides": [1, 1, 1]}, ["my_conv", "strides", "[1, 1, 1]"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"strides": [2, 1, 1, 1]}, ["my_conv", "strides", "batch"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"strides": [1, 0, 1, 1]}, ["my_conv", "positive"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"dilations": [1, 1, 1, 2]}, ["my_conv", "dilations"]),
    ((1, 2, 5, 3), (3, 3, 3, 4), {"padding": "VALID"}, ["my_conv", "larger than the input "
                                                        "dimension 2"]),
    ((1, 5, 5), (3, 3, 3, 4), {}, ["my_conv", "rank 4", "(1, 5, 5)"]),
    ((1, 5, 5, 3), (3, 3, 3), {}, ["my_conv", "filter must have rank 4"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"data_format": "NWHC"}, ["my_conv", "data_format", "NWHC"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"padding": [[0, 0], [1, 1], [1, 1]]},
     ["my_conv", "explicit", "pairs"]),
    ((1, 5, 5, 3), (3, 3, 3, 4), {"padding": [[0, 0], [1, -1], [1, 1], [0, 0]]},
     ["my_conv", "non-negative"]),
])
def test_conv2d_build_errors(x_shape, w_shape, kwargs, fragments):
    message = _conv_error(x_shape, w_shape, **kwargs)
    for fragment in fragments:
        assert fragment in message, message


def test_pool_and_bias_build_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 4, 4, 3])
        with pytest.raises(ValueError, match=r"pool1 \(MaxPool.*batch or depth"):
            tf.nn.max_pool(x, [1, 2, 2, 2], [1, 2, 2, 1], "VALID", name="pool1")
        with pytest.raises(ValueError, match=r"pool2 \(AvgPool.*larger than the input"):
            tf.nn.avg_pool(x, [1, 5, 1, 1], [1, 1, 1, 1], "VALID", name="pool2")
        with pytest.raises(ValueError, match=r"MaxPool.*explicit padding is not supported for "
                                             r"pooling"):
            tf.nn.max_pool(x, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])
        with pytest.raises(ValueError, match=r"bias1 \(BiasAdd.*bias of size 4 does not match "
                                             r"dimension 3 \(size 3\)"):
            tf.nn.bias_add(x, tf.zeros([4]), name="bias1")
        with pytest.raises(ValueError, match=r"BiasAdd.*bias must be 1-D"):
            tf.nn.bias_add(x, tf.zeros([1, 3]))
        with pytest.raises(ValueError, match=r"out_backprop has shape"):
            tf.nn.conv2d_backprop_input([1, 4, 4, 3], tf.zeros([3, 3, 3, 2]),
                                        tf.zeros([1, 3, 3, 2]), [1, 1, 1, 1], "SAME")


@pytest.mark.parametrize("build,fragments", [
    (lambda x: tf.nn.max_pool(x, 2, 2, "SAMEE", name="p"), ["MaxPool 'p'", "'SAMEE'"]),
    (lambda x: tf.nn.max_pool2d(x, 2, [1, 2, 1], "SAME", name="p"),
     ["MaxPool 'p'", "strides", "[1, 2, 1]"]),
    (lambda x: tf.nn.avg_pool(x, [1, 2, 2], 2, "VALID"), ["AvgPool", "ksize", "[1, 2, 2]"]),
    (lambda x: tf.nn.avg_pool(x, 2, 2, "VALID", data_format="NCWH"), ["AvgPool", "'NCWH'"]),
    (lambda x: tf.nn.conv2d_transpose(x, tf.zeros([3, 3, 2, 3]), [1, 8, 8, 2], 2, "FULL",
                                      name="up"), ["Conv2DBackpropInput 'up'", "'FULL'"]),
    (lambda x: tf.nn.conv2d_transpose(x, tf.zeros([3, 3, 2, 3]), [1, 8, 8, 2], [1, 2, 2],
                                      name="up"), ["Conv2DBackpropInput 'up'", "[1, 2, 2]"]),
    (lambda x: tf.nn.conv2d_transpose(x, tf.zeros([3, 3, 2, 3]), None, 2, name="up"),
     ["up", "output_shape"]),
    (lambda x: tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 3, 2]), [1, 1, 1, 1], "same ",
                                      name="dw"), ["DepthwiseConv2dNative 'dw'", "'same '"]),
    (lambda x: tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 3, 2]), [1, 1, 1], "SAME"),
     ["DepthwiseConv2dNative", "strides", "[1, 1, 1]"]),
    (lambda x: tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 3, 2]), [1, 0, 1, 1], "SAME"),
     ["DepthwiseConv2dNative", "strides", "positive", "[1, 0, 1, 1]"]),
    (lambda x: tf.nn.bias_add(x, tf.zeros([3]), data_format="CHWN", name="b"),
     ["BiasAdd 'b'", "'CHWN'"]),
])
def test_pool_transpose_and_depthwise_argument_errors_name_the_op(build, fragments):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 4, 4, 3])
        with pytest.raises(ValueError) as info:
            build(x)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_depth_mismatch_of_unknown_shapes_fails_at_run_time_naming_the_op():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        w = tf.placeholder(tf.float32)
        y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="late_conv")
        with tf.Session() as session:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"late_conv.*input depth 3"):
                session.run(y, {x: np.zeros((1, 4, 4, 3), np.float32),
                                w: np.zeros((3, 3, 2, 1), np.float32)})


def test_static_shapes_of_strided_and_unknown_inputs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 28, None, 3])
        y = tf.nn.conv2d(x, tf.zeros([5, 5, 3, 8]), [1, 2, 2, 1], "VALID")
        assert y.shape.as_list() == [None, 12, None, 8]
        z = tf.nn.max_pool(tf.placeholder(tf.float32, [2, 3, 7, 7]), [1, 1, 2, 2],
                           [1, 1, 2, 2], "SAME", data_format="NCHW")
        assert z.shape.as_list() == [2, 3, 4, 4]
        t = tf.nn.conv2d_transpose(tf.zeros([2, 4, 4, 8]), tf.zeros([3, 3, 5, 8]),
                                   [2, 8, 8, 5], [1, 2, 2, 1], "SAME")
        assert t.shape.as_list() == [2, 8, 8, 5]


# --- kernels: buffers kept per geometry and per thread ------------------------------------------
@pytest.mark.parametrize("channels,filters", [(2, 2), (1, 4)], ids=["rows", "im2col"])
def test_geometries_sharing_a_buffer_shape_keep_their_zero_padding(channels, filters):
    # SAME on 6x6 and VALID on 8x8 give column buffers of one shape; the first relies on
    # never-written (zero) padding cells that the second would overwrite.
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3, channels, filters))
    small = rng.standard_normal((1, 6, 6, channels))
    large = rng.standard_normal((1, 8, 8, channels))
    with tf.Graph().as_default():
        a, b = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
        same = tf.nn.conv2d(a, w, [1, 1, 1, 1], "SAME")
        valid = tf.nn.conv2d(b, w, [1, 1, 1, 1], "VALID")
        with tf.Session() as session:
            for _ in range(2):
                got_same = session.run(same, {a: small})
                got_valid = session.run(valid, {b: large})
    np.testing.assert_allclose(got_same, ref.conv2d(small, w), rtol=1e-12)
    np.testing.assert_allclose(got_valid, ref.conv2d(large, w, padding="VALID"), rtol=1e-12)


def test_concurrent_convolutions_of_one_geometry_in_threads():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 3, 4, 5)).astype(np.float32)
    inputs = [rng.standard_normal((4, 9, 9, 4)).astype(np.float32) for _ in range(4)]
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [4, 9, 9, 4])
        y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    results, errors = {}, []

    def work(k):
        try:
            with tf.Session(graph=graph) as session:
                for _ in range(5):
                    results[k] = session.run(y, {x: inputs[k]})
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for k in range(4):
        np.testing.assert_allclose(results[k], ref.conv2d(inputs[k].astype(np.float64), w),
                                   rtol=1e-4, atol=1e-4)


def _executed_op_types(session, fetch, feeds):
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    session.run(fetch, feeds, options=options, run_metadata=metadata)
    types = []
    for device in metadata.step_stats.dev_stats:
        for stat in device["node_stats"]:
            types.append(stat["type"] if isinstance(stat, dict) else stat.node_name)
    return types


def test_training_never_computes_the_first_layers_input_gradient():
    rng = np.random.default_rng(2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 1])
        w1 = tf.Variable(rng.standard_normal((3, 3, 1, 4)).astype(np.float32))
        w2 = tf.Variable(rng.standard_normal((3, 3, 4, 2)).astype(np.float32))
        h = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME"))
        y = tf.nn.conv2d(tf.nn.max_pool(h, 2, 2, "VALID"), w2, [1, 1, 1, 1], "SAME")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y * y))
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            types = _executed_op_types(session, train, {x: rng.random((2, 8, 8, 1))})
    assert types.count("Conv2DBackpropFilter") == 2
    assert types.count("Conv2DBackpropInput") == 1  # layer 2's only: x's gradient is pruned


def test_kernels_never_write_into_their_inputs():
    # Pooling starts from the offset that reaches every output cell; when that slice is the
    # whole input it must still be copied before the other offsets are folded into it.
    rng = np.random.default_rng(3)
    value = rng.standard_normal((1, 4, 5, 2)).astype(np.float32)
    kept = value.copy()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, value.shape)
        outputs = [tf.nn.max_pool(x, [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
                   tf.nn.avg_pool(x, [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
                   tf.nn.conv2d(x, tf.ones([3, 3, 2, 2]), [1, 1, 1, 1], "SAME"),
                   tf.nn.bias_add(x, tf.ones([2]))]
        grads = tf.gradients(tf.add_n([tf.reduce_sum(o) for o in outputs]), [x])
        with tf.Session() as session:
            got = session.run(outputs[:2] + grads, {x: value})
    np.testing.assert_array_equal(value, kept)
    np.testing.assert_allclose(got[0], ref.max_pool(kept.astype(np.float64), (2, 3), (1, 1),
                                                    "SAME"), rtol=1e-6)


def test_graph_def_round_trip_keeps_the_attrs():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3], name="x")
        y = tf.nn.conv2d(x, tf.ones([3, 3, 3, 4]), [1, 2, 1, 1], [[0, 0], [1, 1], [0, 2], [0, 0]],
                         dilations=[1, 1, 2, 1])
        y = tf.nn.max_pool(tf.nn.bias_add(y, tf.ones([4])), 2, 2, "SAME")
        y = tf.nn.avg_pool(tf.nn.depthwise_conv2d(y, tf.ones([2, 2, 4, 2]), [1, 1, 1, 1],
                                                  "SAME"), 2, 1, "VALID")
        (grad,) = tf.gradients(tf.reduce_sum(y * y), [x])
    imported = tf.Graph()
    with imported.as_default():
        tf.import_graph_def(graph.as_graph_def(), name="")
    value = np.random.default_rng(4).random((2, 8, 8, 3)).astype(np.float32)
    with tf.Session(graph=graph) as session:
        want = session.run([y, grad], {x: value})
    with tf.Session(graph=imported) as session:
        got = session.run([y.name, grad.name], {"x:0": value})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_gradient_ops_take_the_signature_attrs_only():
    # Copying every attr would carry private ones such as the colocation group (_class).
    with tf.Graph().as_default():
        anchor = tf.constant(1.0, name="anchor")
        x = tf.placeholder(tf.float32, [1, 4, 4, 1])
        with tf.colocate_with(anchor):
            y = tf.nn.max_pool(tf.nn.conv2d(x, tf.ones([3, 3, 1, 1]), [1, 2, 1, 1], "SAME"),
                               2, 1, "VALID")
        (grad,) = tf.gradients(tf.reduce_sum(y), [x])
        grad_ops = [op for op in tf.get_default_graph().get_operations()
                    if op.type in ("Conv2DBackpropInput", "MaxPoolGrad")]
    assert "_class" in y.op.attrs
    assert len(grad_ops) == 2 and grad.op.type == "Conv2DBackpropInput"
    for op in grad_ops:
        assert "_class" not in op.attrs
    assert grad.op.get_attr("strides") == [1, 2, 1, 1]
