"""TF 1.x's renamed and deprecated top-level names, which map onto ops tensorweave has:
each checked for the behaviour TF 1.x documents, against NumPy."""
import numpy as np
import pytest

import tensorweave as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_arg_max_and_arg_min_take_dimension():
    values = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32)
    rows = tf.arg_max(values, 1)
    columns = tf.arg_min(values, 0, output_type=tf.int32)
    assert rows.op.type == "ArgMax" and rows.dtype == tf.int64
    assert columns.op.type == "ArgMin" and columns.dtype == tf.int32
    got_rows, got_columns = _run([rows, columns])
    np.testing.assert_array_equal(got_rows, np.argmax(values, 1))
    np.testing.assert_array_equal(got_columns, np.argmin(values, 0))
    with pytest.raises(TypeError):
        tf.arg_max(values)  # dimension is required, as in TF 1.x


def test_realdiv_div_no_nan_log_sigmoid():
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    y = np.array([2.0, 0.0, -4.0, 0.0], np.float32)
    quotient, safe, log_sig = _run([tf.realdiv(x, np.where(y == 0, 1, y)), tf.div_no_nan(x, y),
                                    tf.log_sigmoid(x)])
    np.testing.assert_allclose(quotient, x / np.where(y == 0, 1, y))
    np.testing.assert_allclose(safe, np.where(y == 0, 0, x / np.where(y == 0, 1, y)))
    np.testing.assert_allclose(log_sig, -np.log1p(np.exp(-x)), rtol=1e-6)
    assert quotient.dtype == safe.dtype == log_sig.dtype == np.float32


def test_scalar_mul_on_tensors_and_indexed_slices():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    slices = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([1]), tf.constant([2, 2]))
    scaled = tf.scalar_mul(3.0, slices)
    assert isinstance(scaled, tf.IndexedSlices)
    dense, values, indices = _run([tf.scalar_mul(2.0, x), scaled.values, scaled.indices])
    np.testing.assert_array_equal(dense, [[2, 4], [6, 8]])
    np.testing.assert_array_equal(values, [[3, 3]])
    assert indices.tolist() == [1]
    with pytest.raises(ValueError, match="only a scalar"):
        tf.scalar_mul([1.0, 2.0], x)


def test_shape_n():
    a, b = tf.placeholder(tf.float32, [None, 3]), tf.zeros([2, 5, 1])
    shapes = tf.shape_n([a, b], out_type=tf.int64)
    assert [s.dtype for s in shapes] == [tf.int64, tf.int64]
    got = _run(shapes, {a: np.zeros((4, 3))})
    assert [g.tolist() for g in got] == [[4, 3], [2, 5, 1]]


def test_is_tensor_is_numeric_tensor_get_static_value():
    constant = tf.constant([1, 2])
    variable = tf.Variable(1.0)
    slices = tf.IndexedSlices(constant, constant)
    assert all(tf.is_tensor(v) for v in (constant, variable, slices))
    assert not any(tf.is_tensor(v) for v in (np.zeros(2), [1], 3.0, "text"))
    assert tf.is_numeric_tensor(constant) and tf.is_numeric_tensor(tf.constant(1.5))
    assert not tf.is_numeric_tensor(tf.constant("s")) and not tf.is_numeric_tensor(
        tf.constant(True)) and not tf.is_numeric_tensor(np.zeros(2))
    np.testing.assert_array_equal(tf.get_static_value(constant), [1, 2])
    np.testing.assert_array_equal(tf.get_static_value(tf.shape(tf.zeros([4, 2]))), [4, 2])
    assert tf.get_static_value(tf.placeholder(tf.float32)) is None
    assert tf.get_static_value(variable) is None
    assert tf.get_static_value(7) == 7
    assert tf.convert_to_tensor_or_indexed_slices(slices) is slices
    assert isinstance(tf.convert_to_tensor_or_indexed_slices([1.0]), tf.Tensor)
    with pytest.raises(ValueError, match="IndexedSlices"):
        tf.convert_to_tensor_or_indexed_slices(slices, dtype=tf.float32)


def test_get_seed_op_error_and_no_gradient():
    tf.set_random_seed(5)
    first = tf.get_seed(None)
    assert first[0] == 5 and first[1] is not None
    assert tf.get_seed(9) == (5, 9)
    tf.reset_default_graph()
    assert tf.get_seed(None) == (None, None)
    with pytest.raises(tf.OpError):
        _run(tf.placeholder(tf.float32))  # an unfed placeholder: InvalidArgumentError
    assert issubclass(tf.errors.InvalidArgumentError, tf.OpError)
    assert tf.NoGradient is tf.NotDifferentiable


def test_v1_behaviour_switches_leave_v1_behaviour():
    """The disable_* switches of TF 1.x name the behaviour tensorweave always has."""
    for switch in (tf.disable_v2_tensorshape, tf.disable_tensor_equality,
                   tf.disable_resource_variables, tf.disable_control_flow_v2,
                   tf.disable_v2_behavior):
        assert switch() is None
    with tf.Graph().as_default():
        assert isinstance(tf.TensorShape([2, 3])[0], tf.Dimension)
        a, b = tf.constant(1.0), tf.constant(1.0)
        assert (a == b) is False and {a: 1, b: 2}[b] == 2  # identity, hashable
        assert tf.variant.name == "variant" and tf.dtypes.complex is tf.complex
