"""Conv2DBackpropInput's kernel (conv2d_transpose's forward) on both of its paths, against the
independent NumPy reference of tests/ops/conv_reference.py: the rows path (stride 1) and the
col2im path (any stride above 1), odd sizes, SAME / VALID / explicit padding, strides 1-3,
dilations, NHWC and NCHW, split over intra-op threads; and its input checks. The numeric
gradient checks of the op (first and second order) are rows of tests/ops/test_conv_ops.py."""
import numpy as np
import pytest

from tensorweave.framework import errors
from tensorweave.kernels import conv, conv_input_grad, intra_op
from tests.ops import conv_reference as ref

# (x shape NHWC, filter shape, strides, padding, dilations)
CASES = [
    ((2, 14, 14, 4), (5, 5, 4, 6), (2, 2), "SAME", (1, 1)),     # DCGAN's layers, smaller
    ((3, 28, 28, 1), (5, 5, 1, 7), (2, 2), "SAME", (1, 1)),     # C = 1
    ((2, 13, 11, 3), (3, 4, 3, 2), (3, 3), "VALID", (1, 1)),    # odd sizes, stride 3
    ((2, 9, 10, 2), (5, 5, 2, 3), (2, 2), "VALID", (1, 1)),
    ((1, 7, 8, 3), (2, 3, 3, 4), (2, 3), "SAME", (1, 1)),       # mixed strides, even kernel
    ((1, 10, 9, 2), (3, 3, 2, 2), (2, 1), "SAME", (2, 2)),      # strided and dilated
    ((2, 8, 7, 2), (3, 3, 2, 3), (2, 2), ((1, 2), (0, 1)), (1, 1)),  # explicit padding
    ((1, 5, 5, 2), (4, 4, 2, 2), (3, 3), "SAME", (1, 1)),       # windows without overlap
    ((2, 9, 8, 3), (3, 5, 3, 4), (1, 1), "SAME", (1, 1)),       # stride 1: the rows path
    ((1, 3, 3, 2), (5, 5, 2, 2), (2, 2), "SAME", (1, 1)),       # kernel larger than the input
]


def _attrs(strides, padding, dilations, data_format):
    explicit = []
    if not isinstance(padding, str):
        pairs = [(0, 0), (0, 0), *padding] if data_format == "NCHW" else \
            [(0, 0), *padding, (0, 0)]
        explicit, padding = [v for pair in pairs for v in pair], "EXPLICIT"

    def full(pair):
        return [1, 1, *pair] if data_format == "NCHW" else [1, *pair, 1]
    return dict(strides=full(strides), padding=padding, data_format=data_format,
                dilations=full(dilations), explicit_paddings=explicit)


def _run(x_shape, w_shape, strides, padding, dilations, data_format, dtype, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(w_shape).astype(dtype)
    out_h, out_w = ref.output_hw(x_shape, w_shape[:2], strides, dilations, padding)
    dy = rng.standard_normal((x_shape[0], out_h, out_w, w_shape[3])).astype(dtype)
    expected = ref.conv2d_backprop_input(x_shape, w.astype(np.float64), dy.astype(np.float64),
                                         strides, padding, dilations)
    sizes, dy_in = x_shape, dy
    if data_format == "NCHW":
        sizes, dy_in = (x_shape[0], x_shape[3], *x_shape[1:3]), ref.nchw(dy)
    dx = conv_input_grad.conv2d_backprop_input(
        np.array(sizes, dtype=np.int32), w, dy_in,
        **_attrs(strides, padding, dilations, data_format))
    assert dx.dtype == dtype and dx.shape == tuple(sizes)
    return (ref.nhwc(dx) if data_format == "NCHW" else dx), expected


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,w_shape,strides,padding,dilations", CASES)
def test_input_gradient_matches_the_reference(x_shape, w_shape, strides, padding, dilations,
                                              data_format):
    for dtype, tolerance in ((np.float64, 1e-10), (np.float32, 1e-4)):
        dx, expected = _run(x_shape, w_shape, strides, padding, dilations, data_format, dtype)
        np.testing.assert_allclose(dx, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("x_shape,w_shape,strides,padding,dilations", CASES[:4])
def test_split_into_chunks_and_blocks_gives_the_same_gradient(monkeypatch, x_shape, w_shape,
                                                              strides, padding, dilations):
    previous = intra_op.threads()
    intra_op.set_threads(2)
    monkeypatch.setattr(conv, "_MIN_CHUNK_FLOPS", 1)
    monkeypatch.setattr(conv, "_BLOCK_FLOATS", 500)
    try:
        dx, expected = _run(x_shape, w_shape, strides, padding, dilations, "NHWC", np.float64)
    finally:
        intra_op.set_threads(previous)
    np.testing.assert_allclose(dx, expected, rtol=1e-10, atol=1e-10)


def test_the_same_thread_reuses_its_buffers_without_stale_values():
    first, expected_first = _run(*CASES[0], "NHWC", np.float64, seed=1)
    second, expected_second = _run(*CASES[0], "NHWC", np.float64, seed=2)
    np.testing.assert_allclose(first, expected_first, atol=1e-10)
    np.testing.assert_allclose(second, expected_second, atol=1e-10)


@pytest.mark.parametrize("sizes,w_shape,dy_shape,message", [
    ((2, 14, 14, 4), (5, 5, 3, 6), (2, 7, 7, 6), "input depth 4 does not match"),
    ((2, 14, 14, 4), (5, 5, 4, 6), (2, 8, 7, 6), "out_backprop has shape"),
    ((2, 14, 14, 4), (5, 5, 4, 6), (2, 7, 7, 5), "out_backprop has shape"),
    ((2, 14, 14), (5, 5, 4, 6), (2, 7, 7, 6), "input_sizes must have 4 entries"),
])
def test_bad_shapes_raise_naming_the_op(sizes, w_shape, dy_shape, message):
    with pytest.raises(errors.InvalidArgumentError, match="Conv2DBackpropInput") as caught:
        conv_input_grad.conv2d_backprop_input(
            np.array(sizes), np.zeros(w_shape, np.float32), np.zeros(dy_shape, np.float32),
            **_attrs((2, 2), "SAME", (1, 1), "NHWC"))
    assert message in str(caught.value)
