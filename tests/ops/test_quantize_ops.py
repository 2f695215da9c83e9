"""Quantized dtypes and ops (tf.quantize / dequantize / quantized_concat /
quantize_and_dequantize, tf.nn.quantized_*), against NumPy restatements of TF 1.x's documented
formulas; bfloat16 as a real 16-bit dtype (feeds, fetches, casts, GraphDef, the wire)."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import wire

COVERED_OP_TYPES = {"QuantizeV2", "Dequantize", "QuantizedConcat", "QuantizeAndDequantizeV2",
                    "QuantizedConv2D", "QuantizedAvgPool", "QuantizedMaxPool",
                    "QuantizedReluX"}
RNG = np.random.default_rng(7)


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def _half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _min_first_ref(x, low, high, bits, lowest):
    """The MIN_FIRST formula of TF's tf.quantize documentation."""
    steps = 2.0 ** bits
    range_scale = steps / ((high - low) * steps / (steps - 1))
    q = _half_away(x * range_scale) - _half_away(low * range_scale) + lowest
    return np.clip(q, lowest, lowest + steps - 1)


def test_quantized_dtypes_and_bfloat16_properties():
    assert tf.QUANTIZED_DTYPES == {tf.qint8, tf.quint8, tf.qint16, tf.quint16, tf.qint32}
    assert tf.qint8.is_quantized and not tf.qint8.is_integer and tf.qint8 != tf.int8
    assert (tf.qint8.min, tf.qint8.max, tf.quint16.max) == (-128, 127, 65535)
    assert tf.as_dtype("quint8") is tf.quint8 and tf.as_dtype(11) is tf.qint8
    assert tf.bfloat16.is_floating and tf.bfloat16.size == 2 and tf.bfloat16.as_datatype_enum == 14
    assert tf.as_dtype(ml_dtypes.bfloat16) is tf.bfloat16
    assert tf.bfloat16.max == pytest.approx(3.3895313892515355e38)
    assert tf.dtypes.experimental.float8_e4m3fn.is_floating


def test_bfloat16_feeds_fetches_casts_graph_def_and_wire():
    values = np.array([1.0, 3.14159, -2.5e-3, 65504.0, 1e30], np.float32)
    bits = values.view(np.uint32)  # round to nearest even on the upper 16 bits, by hand
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    expected = rounded.view(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [5])
        b = tf.to_bfloat16(x)
        fed = tf.placeholder(tf.bfloat16, [5])
        back = tf.cast(fed, tf.float32) * 2  # arithmetic stays in float32, as on TF 1.x CPUs
        const = tf.constant(values, dtype=tf.bfloat16)
        graph_def = tf.get_default_graph().as_graph_def()
        got_b, got_back, got_const = _run([b, back, const], {x: values, fed: values})
    assert got_b.dtype == ml_dtypes.bfloat16 and got_b.nbytes == 10
    np.testing.assert_array_equal(got_b.astype(np.float32), expected)
    np.testing.assert_array_equal(got_back, expected * 2)
    np.testing.assert_array_equal(got_const.astype(np.float32), expected)
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        restored = _run(tf.get_default_graph().get_tensor_by_name(const.name))
    np.testing.assert_array_equal(restored.astype(np.float32), expected)
    header = wire.to_inline(got_b)
    assert header.dtype == 14 and len(header.content) == 10
    np.testing.assert_array_equal(wire.from_inline(header), got_b)


@pytest.mark.parametrize("dtype,low,high", [(tf.quint8, 0.0, 6.0), (tf.qint8, -1.0, 1.0),
                                            (tf.quint16, -0.5, 3.0), (tf.qint32, -4.0, 4.0)])
def test_quantize_min_combined_matches_the_documented_formula(dtype, low, high):
    x = RNG.uniform(low - 1, high + 1, size=40).astype(np.float32)
    lowest, highest = dtype.min, dtype.max
    with tf.Graph().as_default():
        q = tf.quantize(x, low, high, dtype)
        deq = tf.dequantize(q.output, q.output_min, q.output_max)
        got, got_min, got_max, got_deq = _run([q.output, q.output_min, q.output_max, deq])
    span = float(highest) - float(lowest)
    scaled = (np.clip(x, low, high).astype(np.float64) - low) * span / (high - low)
    if lowest < 0:  # the documented shift of the signed types, before rounding
        scaled -= (span + 1) / 2
    expected = _half_away(scaled)
    assert got.dtype == dtype.np_dtype and (got_min, got_max) == (low, high)
    np.testing.assert_array_equal(got.astype(np.float64), expected)
    np.testing.assert_allclose(got_deq, np.clip(x, low, high), atol=(high - low) / span * 1.01)


def test_quantize_min_combined_rounds_ties_after_the_signed_shift():
    # qint8 over [0, 255]: x = 127.5 lies at 127.5 - 128 = -0.5, which rounds away to -1
    # (rounding first and shifting after would give 0).
    with tf.Graph().as_default():
        got = _run(tf.quantize([127.5, 0.5, 254.5], 0.0, 255.0, tf.qint8).output)
    assert got.tolist() == [-1, -128, 127]


@pytest.mark.parametrize("dtype", [tf.quint8, tf.qint8, tf.qint16])
def test_quantize_min_first_and_its_round_trip(dtype):
    low, high = -1.3, 2.9
    x = RNG.uniform(-2, 3.5, size=50).astype(np.float32)
    with tf.Graph().as_default():
        q = tf.quantization.quantize(x, low, high, dtype, mode="MIN_FIRST")
        deq = tf.quantization.dequantize(q.output, q.output_min, q.output_max, mode="MIN_FIRST")
        got, got_deq = _run([q.output, deq])
    bits = 8 * dtype.size
    expected = _min_first_ref(np.clip(x, low, high).astype(np.float64), low, high, bits,
                              dtype.min)
    np.testing.assert_array_equal(got.astype(np.float64), expected)
    level = (high - low) / (2 ** bits - 1)
    np.testing.assert_allclose(got_deq, np.clip(x, low, high), atol=level * 1.01)


def test_quantize_scaled_with_both_round_modes():
    x = np.array([-1.2, -0.5, 0.3, 1.0, 1.5, 2.4], np.float32)
    with tf.Graph().as_default():
        away = tf.quantize(x, -1.0, 2.0, tf.qint8, mode="SCALED")
        ties = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5], np.float32) / 64  # exact halves
        even = tf.quantize(ties, -1.0, 127 / 64, tf.qint8, mode="SCALED",
                           round_mode="HALF_TO_EVEN")
        deq = tf.dequantize(away.output, away.output_min, away.output_max, mode="SCALED")
        got, got_min, got_max, got_even, got_deq = _run(
            [away.output, away.output_min, away.output_max, even.output, deq])
    scale = min(-128 / -1.0, 127 / 2.0)  # the factor that fits both bounds: 63.5
    assert got_min == pytest.approx(-128 / scale) and got_max == pytest.approx(2.0)
    np.testing.assert_array_equal(got, _half_away(np.clip(x, -128 / scale, 2.0) * scale))
    np.testing.assert_array_equal(got_even, [0, 2, 2, 0, -2, 4])
    np.testing.assert_allclose(got_deq, got / scale, rtol=1e-6)


def test_quantize_widens_a_degenerate_range_and_rejects_bad_arguments():
    with tf.Graph().as_default():
        q = tf.quantize([0.0, 0.005], 0.0, 0.0, tf.quint8)
        got_min, got_max = _run([q.output_min, q.output_max])
        assert (got_min, got_max) == (0.0, pytest.approx(0.01))
        with pytest.raises(ValueError, match="HALF_TO_EVEN"):
            tf.quantize([1.0], 0.0, 1.0, tf.quint8, round_mode="HALF_TO_EVEN")
        with pytest.raises(TypeError, match="quantized dtype"):
            tf.quantize([1.0], 0.0, 1.0, tf.int8)
        with pytest.raises(ValueError, match="mode"):
            tf.quantize([1.0], 0.0, 1.0, tf.quint8, mode="LINEAR")
        bad = tf.quantize([1.0], 2.0, 1.0, tf.quint8)
        with pytest.raises(tf.errors.InvalidArgumentError, match="max_range"):
            _run(bad.output)


def test_quantized_concat_requantizes_to_the_union_of_ranges():
    a = RNG.integers(0, 256, size=(2, 3)).astype(np.uint8)
    b = RNG.integers(0, 256, size=(2, 2)).astype(np.uint8)
    with tf.Graph().as_default():
        ta, tb = tf.constant(a, dtype=tf.quint8), tf.constant(b, dtype=tf.quint8)
        out = tf.quantized_concat(1, [ta, tb], [0.0, -1.0], [1.0, 4.0])
        deq_in = [tf.dequantize(t, lo, hi, mode="MIN_FIRST")
                  for t, lo, hi in ((ta, 0.0, 1.0), (tb, -1.0, 4.0))]
        deq_out = tf.dequantize(out.output, out.output_min, out.output_max, mode="MIN_FIRST")
        got, low, high, parts, whole = _run([out.output, out.output_min, out.output_max,
                                             deq_in, deq_out])
    assert got.shape == (2, 5) and (low, high) == (-1.0, 4.0)
    np.testing.assert_array_equal(got[:, 3:], b)  # already in the output range: unchanged
    np.testing.assert_allclose(whole, np.concatenate(parts, axis=1), atol=5.0 / 255)


def test_quantize_and_dequantize_values_and_straight_through_gradient():
    x = RNG.uniform(-3, 5, size=30)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        given = tf.quantization.quantize_and_dequantize(xt, -2.0, 4.0, range_given=True,
                                                        num_bits=4)
        own = tf.quantization.quantize_and_dequantize_v2(xt, 0.0, 0.0, signed_input=True)
        grad = tf.gradients(tf.reduce_sum(given * xt), xt)[0]
        got_given, got_own, got_grad = _run([given, own, grad])
    # num_bits 4, signed: levels [-8, 7]; scale = min(-8/-2, 7/4) = 1.75, range [-8/1.75, 4].
    np.testing.assert_allclose(got_given, np.rint(np.clip(x, -8 / 1.75, 4.0) * 1.75) / 1.75)
    scale = 127 / x.max()
    np.testing.assert_allclose(got_own, np.rint(np.clip(x, -128 / scale, x.max()) * scale) / scale)
    np.testing.assert_allclose(got_grad, got_given + x)  # d(q(x) * x) = x * 1 + q(x)


def _conv_reference(x, f, zero_x, zero_f, stride, padding):
    x = x.astype(np.int64) - zero_x
    f = f.astype(np.int64) - zero_f
    kh, kw = f.shape[:2]
    if padding == "SAME":
        out_h, out_w = -(-x.shape[1] // stride), -(-x.shape[2] // stride)
        pad_h = max((out_h - 1) * stride + kh - x.shape[1], 0)
        pad_w = max((out_w - 1) * stride + kw - x.shape[2], 0)
        x = np.pad(x, [(0, 0), (pad_h // 2, pad_h - pad_h // 2),
                       (pad_w // 2, pad_w - pad_w // 2), (0, 0)])
    out_h = (x.shape[1] - kh) // stride + 1
    out_w = (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], out_h, out_w, f.shape[3]), np.int64)
    for i in range(out_h):
        for j in range(out_w):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.einsum("nhwc,hwco->no", patch, f)
    return out


@pytest.mark.parametrize("padding,stride", [("VALID", 1), ("SAME", 2)])
def test_quantized_conv2d_against_integer_reference(padding, stride):
    x = RNG.integers(0, 256, size=(2, 5, 6, 3)).astype(np.uint8)
    f = RNG.integers(0, 256, size=(3, 2, 3, 4)).astype(np.uint8)
    with tf.Graph().as_default():
        out = tf.nn.quantized_conv2d(tf.constant(x, tf.quint8), tf.constant(f, tf.quint8),
                                     -1.0, 3.0, -0.5, 0.5, [1, stride, stride, 1], padding)
        got, low, high = _run(list(out))
    zero_x = 0 - round(-1.0 * 256 / (4.0 * 256 / 255))   # the level that stands for 0.0
    zero_f = 0 - round(-0.5 * 256 / (1.0 * 256 / 255))
    assert out.output.dtype is tf.qint32 and out.output.shape.as_list() == list(got.shape)
    np.testing.assert_array_equal(got, _conv_reference(x, f, zero_x, zero_f, stride, padding))
    step = (4.0 / 255) * (1.0 / 255)
    assert low == pytest.approx(step * -2 ** 31) and high == pytest.approx(step * (2 ** 31 - 1))


def test_quantized_pools_and_relu_x():
    x = RNG.integers(0, 256, size=(1, 4, 4, 2)).astype(np.uint8)
    with tf.Graph().as_default():
        xt = tf.constant(x, dtype=tf.quint8)
        mx = tf.nn.quantized_max_pool(xt, 0.0, 1.0, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        av = tf.nn.quantized_avg_pool(xt, 0.0, 1.0, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
        relu = tf.nn.quantized_relu_x(xt, 0.5, -1.0, 1.0)
        got_max, got_avg, got_relu = _run([mx.output, av.output, relu.activations])
    np.testing.assert_array_equal(got_max, x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4)))
    windows = [[(0, 3), (2, 4)], [(0, 3), (2, 4)]]  # SAME 3x3 stride 2 on 4: pads 1 after
    for i, (r0, r1) in enumerate(windows[0]):
        for j, (c0, c1) in enumerate(windows[1]):
            mean = x[0, r0:r1, c0:c1].astype(np.float64).mean(axis=(0, 1))
            np.testing.assert_array_equal(got_avg[0, i, j], np.floor(mean + 0.5))
    zero = _min_first_ref(0.0, -1.0, 1.0, 8, 0)
    top = _min_first_ref(0.5, -1.0, 1.0, 8, 0)
    np.testing.assert_array_equal(got_relu, np.clip(x, zero, top))
