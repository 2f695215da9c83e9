"""The shared gradient checker itself: Jacobian layout and values of compute_gradient (TF 1.x
`tf.test.compute_gradient` semantics), and that check_gradients catches wrong first- and
second-order gradient rules."""
import contextlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import gradients as gradients_lib
from tensorweave.ops import math_ops
from tensorweave.testing import gradient_checker
from tensorweave.testing.gradient_checker import (GradientCheckError, check_gradients,
                                                  compute_gradient, compute_gradient_error)

# This module tests the checker, not ops: the ops it builds are covered by the op modules.
COVERED_OP_TYPES = set()


@contextlib.contextmanager
def _gradient_rule(op_type, rule):
    """Temporarily replaces the gradient rule of `op_type`."""
    saved = gradients_lib._GRADIENTS[op_type]
    gradients_lib._GRADIENTS[op_type] = rule
    try:
        yield
    finally:
        gradients_lib._GRADIENTS[op_type] = saved


def test_jacobian_layout_is_x_elements_by_y_elements():
    matrix = np.arange(12.0).reshape(4, 3) / 10
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        y = tf.squeeze(tf.matmul(tf.constant(matrix), tf.expand_dims(x, 1)), 1)  # y = M x
        with tf.Session():
            theoretical, numerical = compute_gradient(x, [3], y, [4],
                                                      x_init_value=np.ones(3))
    assert theoretical.shape == numerical.shape == (3, 4)
    np.testing.assert_allclose(theoretical, matrix.T)
    np.testing.assert_allclose(numerical, matrix.T, atol=1e-9)


def test_list_of_xs_gives_a_list_of_pairs_and_the_error_is_the_max_over_them():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float64, [2])
        b = tf.placeholder(tf.float64, [2, 2])
        y = tf.reduce_sum(a * b, axis=1)
        with tf.Session():
            pairs = compute_gradient([a, b], [[2], [2, 2]], y, [2],
                                     x_init_value=[np.array([1.0, 2.0]), np.ones((2, 2))])
            error = compute_gradient_error([a, b], [[2], [2, 2]], y, [2])
    assert isinstance(pairs, list) and len(pairs) == 2
    assert pairs[0][0].shape == (2, 2) and pairs[1][0].shape == (4, 2)
    np.testing.assert_allclose(pairs[0][0], np.ones((2, 2)))
    np.testing.assert_allclose(pairs[1][0], [[1, 0], [2, 0], [0, 1], [0, 2]])
    assert error < 1e-8


def test_compute_gradient_uses_the_default_session_and_extra_feeds():
    with tf.Graph().as_default():
        scale = tf.Variable(3.0, dtype=tf.float64)
        offset = tf.placeholder(tf.float64, [])
        x = tf.placeholder(tf.float64, [2])
        y = tf.square(x) * scale + offset
        with tf.Session() as session:
            session.run(scale.initializer)
            theoretical, numerical = compute_gradient(
                x, [2], y, [2], x_init_value=np.array([1.0, -2.0]),
                extra_feed_dict={offset: 5.0})
    np.testing.assert_allclose(theoretical, np.diag([6.0, -12.0]))
    np.testing.assert_allclose(numerical, np.diag([6.0, -12.0]), rtol=1e-6)


def test_compute_gradient_without_a_default_session_and_with_float32():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2])
        y = tf.tanh(x)
        error = compute_gradient_error(x, [2, 2], y, [2, 2], delta=1e-2)
    assert error < 1e-3


def test_compute_gradient_densifies_indexed_slices():
    with tf.Graph().as_default():
        params = tf.placeholder(tf.float64, [3, 2])
        y = tf.gather(params, [2, 0, 2])
        theoretical, numerical = compute_gradient(params, [3, 2], y, [3, 2])
    np.testing.assert_allclose(theoretical, numerical, atol=1e-9)
    assert theoretical.sum() == 6


def test_compute_gradient_error_sees_a_wrong_rule():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        y = tf.sin(x)
        with _gradient_rule("Sin", lambda op, g: [g * math_ops.cos(op.inputs[0]) * 1.1]):
            error = compute_gradient_error(x, [3], y, [3])
    assert error > 1e-2


def test_check_gradients_passes_correct_rules_and_returns_the_error():
    rng = np.random.default_rng(0)
    error = check_gradients(lambda a, b: tf.tanh(a) * b + tf.exp(b),
                            [rng.standard_normal((3, 1)), rng.standard_normal(4)], order=2)
    assert 0 <= error < 1e-6


@pytest.mark.parametrize("static_shapes", [True, "partial", False])
def test_check_gradients_catches_a_wrong_first_order_rule(static_shapes):
    with _gradient_rule("Sin", lambda op, g: [g * math_ops.cos(op.inputs[0]) * 1.001]):
        with pytest.raises(GradientCheckError, match=r"order 1.*input 0"):
            check_gradients(tf.sin, [np.linspace(-1, 1, 4)], static_shapes=static_shapes)


def test_check_gradients_catches_a_rule_that_is_wrong_only_when_differentiated_again():
    # Sin's rule uses Cos; a wrong Cos rule leaves first order right, second order wrong.
    with _gradient_rule("Cos", lambda op, g: [g * math_ops.sin(op.inputs[0])]):
        check_gradients(tf.sin, [np.linspace(-1, 1, 4)], order=1)
        with pytest.raises(GradientCheckError, match="order 2"):
            check_gradients(tf.sin, [np.linspace(-1, 1, 4)], order=2)


def test_check_gradients_catches_a_gradient_of_the_wrong_shape():
    def broken(op, grad):
        return [grad, grad]  # no summing back over the broadcast axis
    with _gradient_rule("Add", broken):
        with pytest.raises(GradientCheckError, match="shape"):
            check_gradients(tf.add, [np.ones((3, 1)), np.ones(4)])


def test_check_gradients_makes_non_float_inputs_constants():
    params = np.arange(6.0).reshape(3, 2)
    indices = np.array([2, 2, 0], dtype=np.int32)
    check_gradients(tf.gather, [params, indices], order=2)


def test_check_gradients_ignores_non_float_outputs():
    check_gradients(lambda x: [tf.square(x), tf.argmax(x, 0)], [np.array([1.0, 3.0, 2.0])])


def test_check_gradients_rejects_bad_arguments():
    with pytest.raises(ValueError, match="order"):
        check_gradients(tf.sin, [np.ones(2)], order=3)
    with pytest.raises(ValueError, match="floating-point input"):
        check_gradients(tf.identity, [np.ones(2, dtype=np.int32)])
    with pytest.raises(ValueError, match="floating-point"):
        gradient_checker.default_tolerance(tf.int32)


def test_tolerances_grow_as_precision_shrinks():
    deltas_atols = [gradient_checker.default_tolerance(d)[:2]
                    for d in (tf.float64, tf.float32, tf.float16)]
    assert deltas_atols == sorted(deltas_atols)
