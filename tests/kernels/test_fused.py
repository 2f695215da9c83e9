"""Fused kernels (kernels/fused.py) against NumPy references, and the plan-time rewrite that puts
them in a step (runtime/fusion.py): fused and unfused steps give the same numbers, the step
stats show the fused node, and a chain whose intermediate value is needed stays unfused."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.kernels import fused, intra_op, nn
from tensorweave.runtime import fusion, step_plan
from tests.ops import conv_reference as ref

pytestmark = pytest.mark.timeout(120)

CONV = {"dilations": [1, 1, 1, 1], "explicit_paddings": []}


@pytest.fixture
def two_threads(monkeypatch):
    previous = intra_op.threads()
    intra_op.set_threads(2)
    monkeypatch.setattr(fused, "_MIN_CHUNK_FLOPS", 1)
    yield
    intra_op.set_threads(previous)


def _relu(x):
    return np.maximum(x, 0)


# --- kernels -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 5, 3), (7, 5, 3), (3, 9, 40), (40, 2, 1)])
@pytest.mark.parametrize("activation", ["", "Relu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_matmul_matches_numpy(shape, activation, dtype):
    rng = np.random.default_rng(0)
    m, k, n = shape
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    got = fused.fused_matmul(a, b, bias, transpose_a=False, transpose_b=False,
                             activation=activation)
    expected = a @ b + bias
    if activation:
        expected = _relu(expected)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose_a,transpose_b", [(True, False), (False, True), (True, True)])
def test_fused_matmul_transposes_and_strided_inputs(transpose_a, transpose_b):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((12, 16)).astype(np.float32)[::2, ::2]   # [6, 8], not contiguous
    b = rng.standard_normal((16, 10)).astype(np.float32)[::2, 1::2]  # [8, 5]
    a_in = a.T if transpose_a else a
    b_in = b.T if transpose_b else b
    bias = rng.standard_normal(5).astype(np.float32)
    got = fused.fused_matmul(a_in, b_in, bias, transpose_a=transpose_a,
                             transpose_b=transpose_b, activation="Relu")
    np.testing.assert_allclose(got, _relu(a @ b + bias), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(96, 30, 20), (20, 30, 96), (33, 17, 65)])
def test_split_matmul_by_rows_and_columns(two_threads, shape):
    rng = np.random.default_rng(2)
    m, k, n = shape
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    bias = rng.standard_normal(n)
    calls = []
    finish = fused.epilogue(bias, "Relu", "test")
    got = fused.matmul(a, b, lambda block, lo, hi: (calls.append((lo, hi)),
                                                    finish(block, lo, hi)))
    np.testing.assert_allclose(got, _relu(a @ b + bias), rtol=1e-12)
    assert len(calls) > 1  # it really split
    assert fused.matmul(a, b).shape == (m, n)


def test_matmul_shape_mismatch_names_the_shapes():
    with pytest.raises(ValueError, match=r"In\[0\]: \[2, 3\], In\[1\]: \[4, 5\]"):
        fused.matmul(np.ones((2, 3)), np.ones((4, 5)))


def test_bad_bias_and_activation_are_named():
    with pytest.raises(errors.InvalidArgumentError, match="_FusedMatMul: bias of shape"):
        fused.fused_matmul(np.ones((2, 3)), np.ones((3, 4)), np.ones(3), transpose_a=False,
                           transpose_b=False, activation="")
    with pytest.raises(errors.InvalidArgumentError, match="unsupported fused activation"):
        fused.fused_matmul(np.ones((2, 3)), np.ones((3, 4)), np.ones(4), transpose_a=False,
                           transpose_b=False, activation="Tanh")


@pytest.mark.parametrize("n,hw,c,o,kernel,stride,padding", [
    (1, 7, 1, 4, 3, 1, "SAME"), (3, 9, 2, 8, 5, 1, "SAME"), (2, 11, 6, 3, 3, 2, "VALID"),
    (2, 8, 5, 7, 2, 2, "SAME")])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_conv2d_matches_reference(n, hw, c, o, kernel, stride, padding, data_format):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, hw, hw, c)).astype(np.float32)
    w = rng.standard_normal((kernel, kernel, c, o)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    expected = _relu(ref.conv2d(x, w, (stride, stride), padding) + bias)
    x_in = ref.nchw(x) if data_format == "NCHW" else x
    strides = [1, 1, stride, stride] if data_format == "NCHW" else [1, stride, stride, 1]
    got = fused.fused_conv2d(x_in, w, bias, strides=strides, padding=padding,
                             data_format=data_format, activation="Relu", **CONV)
    if data_format == "NCHW":
        got = ref.nhwc(got)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_fused_conv2d_non_contiguous_input_and_no_activation(two_threads):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 10, 10, 6)).astype(np.float32)[::2, :, :, ::2]
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    got = fused.fused_conv2d(x, w, bias, strides=[1, 1, 1, 1], padding="SAME",
                             data_format="NHWC", activation="", **CONV)
    np.testing.assert_allclose(got, ref.conv2d(x, w) + bias, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("hw,window,stride,padding", [(8, 2, 2, "VALID"), (5, 2, 2, "SAME"),
                                                     (7, 3, 2, "SAME"), (6, 3, 1, "VALID")])
def test_max_pool_grad_relu_grad_equals_the_two_ops(hw, window, stride, padding):
    rng = np.random.default_rng(8)
    x = np.maximum(rng.standard_normal((3, hw, hw, 4)), 0).astype(np.float32)  # ties at 0
    x[0, :3, :3] = 0  # a window of zeros only
    attrs = {"ksize": [1, window, window, 1], "strides": [1, stride, stride, 1],
             "padding": padding, "data_format": "NHWC"}
    y = nn.max_pool(x, **attrs)
    grad = rng.standard_normal(y.shape).astype(np.float32)
    grad[1, 0, 0, 0] = np.nan
    expected = nn.relu_grad(nn.max_pool_grad(x, y, grad, **attrs), x)
    got = fused.max_pool_grad_relu_grad(x, y, grad, **attrs)
    np.testing.assert_array_equal(got, expected)  # the same numbers, NaN positions included
    reference = ref.max_pool_grad(x, np.where(y > 0, grad, 0), (window, window),
                                  (stride, stride), padding)
    finite = ~np.isnan(expected)
    np.testing.assert_allclose(got[finite], (reference * (x > 0))[finite], rtol=1e-6)


# --- the plan-time rewrite -----------------------------------------------------------------------
def _model(x_value, bias_op="bias_add", dtype=tf.float32):
    """conv + bias + relu, then dense + bias + relu, dense + bias; returns (x, loss, logits)."""
    rng = np.random.default_rng(5)
    npdtype = dtype.as_numpy_dtype
    x = tf.placeholder(dtype, [None] + list(x_value.shape[1:]))
    w = tf.Variable(rng.standard_normal((3, 3, x_value.shape[3], 4)).astype(npdtype))
    b = tf.Variable(rng.standard_normal(4).astype(npdtype))
    h = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    h = tf.nn.relu(tf.nn.bias_add(h, b) if bias_op == "bias_add" else h + b)
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")  # 5x5 -> 3x3: padded windows
    h = tf.reshape(h, [-1, 3 * 3 * 4])
    w2 = tf.Variable(rng.standard_normal((int(h.shape[1]), 6)).astype(npdtype) * 0.1)
    b2 = tf.Variable(rng.standard_normal(6).astype(npdtype))
    h = tf.nn.relu(tf.matmul(h, w2) + b2)
    w3 = tf.Variable(rng.standard_normal((6, 3)).astype(npdtype))
    b3 = tf.Variable(rng.standard_normal(3).astype(npdtype))
    logits = tf.nn.bias_add(tf.matmul(h, w3), b3)
    loss = tf.reduce_sum(logits * logits)
    return x, loss, logits, [w, b, w2, b2, w3, b3]


def _run_model(enabled, monkeypatch, batch=2, bias_op="bias_add", extra=None):
    monkeypatch.setattr(fusion, "enabled", enabled)
    x_value = np.random.default_rng(6).standard_normal((batch, 5, 5, 2)).astype(np.float32)
    with tf.Graph().as_default():
        x, loss, logits, params = _model(x_value, bias_op)
        grads = tf.gradients(loss, params)
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            fetches = [loss, logits] + grads + (extra(tf.get_default_graph()) if extra else [])
            values = sess.run(fetches, feed_dict={x: x_value},
                              options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                              run_metadata=metadata)
    types = {n["op"]: n["type"] for dev in metadata.step_stats.dev_stats
             for n in dev["node_stats"]}
    return values, types


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("bias_op", ["bias_add", "add"])
def test_fused_and_unfused_steps_agree_and_stats_show_fusion(monkeypatch, batch, bias_op):
    fused_values, fused_types = _run_model(True, monkeypatch, batch, bias_op)
    plain_values, plain_types = _run_model(False, monkeypatch, batch, bias_op)
    for got, expected in zip(fused_values, plain_values):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    add = "BiasAdd" if bias_op == "bias_add" else "add"
    assert fused_types[f"Conv2D+{'BiasAdd' if bias_op == 'bias_add' else 'Add'}+Relu"] == \
        "_FusedConv2D"
    assert fused_types["MatMul+Add+Relu"] == "_FusedMatMul"
    assert fused_types["MatMul_1+BiasAdd"] == "_FusedMatMul"  # no activation follows
    assert fused_types["gradients/MaxPool_grad/MaxPoolGrad+ReluGrad"] == "_MaxPoolGradReluGrad"
    assert "Relu" not in fused_types and add not in fused_types
    assert plain_types["gradients/MaxPool_grad/MaxPoolGrad"] == "MaxPoolGrad"
    assert "_FusedConv2D" not in plain_types.values() and plain_types["Conv2D"] == "Conv2D"


def test_fused_step_on_the_parallel_lanes_agrees(monkeypatch):
    """The step estimated long runs on the device's lanes (scheduler.py), where the fused nodes'
    dependencies, not the plan's order, decide when they run."""
    plain_values, _ = _run_model(False, monkeypatch, batch=4)
    monkeypatch.setattr(step_plan, "LANES_MIN_ESTIMATED_SECONDS", 0.0)
    monkeypatch.setattr(step_plan, "_worth_lanes", lambda *args: True)
    fused_values, types = _run_model(True, monkeypatch, batch=4)
    assert types["MatMul+Add+Relu"] == "_FusedMatMul"
    for got, expected in zip(fused_values, plain_values):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fetched", ["Conv2D", "BiasAdd"])
def test_a_fetched_intermediate_ends_its_chain(monkeypatch, fetched):
    def extra(graph):
        return [graph.get_tensor_by_name(f"{fetched}:0")]
    values, types = _run_model(True, monkeypatch, extra=extra)
    if fetched == "Conv2D":  # the product itself is needed: nothing fuses into it
        assert types["Conv2D"] == "Conv2D" and types["BiasAdd"] == "BiasAdd"
    else:  # the bias add's output is needed: the activation stays on its own
        assert types["Conv2D+BiasAdd"] == "_FusedConv2D" and types["Relu"] == "Relu"
    assert types["MatMul+Add+Relu"] == "_FusedMatMul"  # the other chains still fuse
    plain, _ = _run_model(False, monkeypatch, extra=extra)
    for got, expected in zip(values, plain):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_bias_gradient_through_a_fused_step_matches_finite_differences(monkeypatch):
    monkeypatch.setattr(fusion, "enabled", True)
    rng = np.random.default_rng(7)
    x_value = rng.standard_normal((2, 4, 4, 2))
    w_value = rng.standard_normal((3, 3, 2, 3))
    b_value = rng.standard_normal(3) * 0.5
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x_value.shape)
        b = tf.placeholder(tf.float64, [3])
        w = tf.constant(w_value)
        out = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
        loss = tf.reduce_sum(out * out)
        (grad_b,) = tf.gradients(loss, [b])
        with tf.Session() as sess:
            analytic = sess.run(grad_b, {x: x_value, b: b_value})
            numeric = np.zeros(3)
            for i in range(3):
                step = np.zeros(3)
                step[i] = 1e-6
                numeric[i] = (sess.run(loss, {x: x_value, b: b_value + step}) -
                              sess.run(loss, {x: x_value, b: b_value - step})) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_integer_matmul_and_shape_unknown_add_stay_unfused(monkeypatch):
    monkeypatch.setattr(fusion, "enabled", True)
    with tf.Graph().as_default():
        a = tf.constant(np.arange(6, dtype=np.int32).reshape(2, 3))
        ints = tf.matmul(a, tf.ones([3, 2], tf.int32)) + tf.constant([1, -100])
        w = tf.placeholder(tf.float32, [3, None])
        unknown = tf.nn.relu(tf.matmul(tf.ones([2, 3]), w) + tf.constant([1.0, -100.0]))
        known = tf.nn.relu(tf.matmul(tf.ones([2, 3]), tf.ones([3, 2])) + tf.constant([1.0, -9]))
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            got = sess.run([ints, unknown, known], {w: np.ones((3, 2), np.float32)},
                           options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                           run_metadata=metadata)
    types = [n["type"] for dev in metadata.step_stats.dev_stats for n in dev["node_stats"]]
    assert types.count("_FusedMatMul") == 1  # the float chain of known width only
    np.testing.assert_array_equal(got[0], [[4, -97], [13, -88]])
    np.testing.assert_array_equal(got[1], [[4, 0], [4, 0]])
    np.testing.assert_array_equal(got[2], [[4, 0], [4, 0]])
