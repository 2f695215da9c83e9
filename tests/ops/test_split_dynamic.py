"""tf.split into `num` equal parts of a dimension known only at run time (TF's `Split` op), as
RNN programs do with `tf.split(tf.reshape(x, [-1, n]), steps, 0)`: NumPy reference, the run-time
check that the parts divide evenly, and the gradient (numeric check)."""
import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"Split"}


def test_split_of_unknown_dimension_matches_numpy():
    x = tf.placeholder(tf.float32, [None, 3])
    parts = tf.split(x, 4, 0)
    assert len(parts) == 4
    assert all(p.shape.as_list() == [None, 3] for p in parts)
    data = np.arange(24, dtype=np.float32).reshape(8, 3)
    with tf.Session() as sess:
        got = sess.run(parts, {x: data})
    for g, want in zip(got, np.split(data, 4, axis=0)):
        np.testing.assert_array_equal(g, want)


def test_split_of_unknown_rank_and_negative_axis():
    x = tf.placeholder(tf.float32)
    parts = tf.split(x, 2, axis=-1)
    data = np.arange(12, dtype=np.float32).reshape(2, 6)
    with tf.Session() as sess:
        got = sess.run(parts, {x: data})
    np.testing.assert_array_equal(got[1], data[:, 3:])


def test_uneven_run_time_split_is_invalid_argument():
    x = tf.placeholder(tf.float32, [None])
    parts = tf.split(x, 3)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"evenly divide.*size = 10"):
            sess.run(parts, {x: np.zeros(10, np.float32)})
    with pytest.raises(ValueError, match="num_or_size_splits"):
        tf.split(x, 0)


def test_known_dimension_still_splits_statically():
    parts = tf.split(tf.zeros([6, 2]), 3, axis=0)
    assert [p.shape.as_list() for p in parts] == [[2, 2]] * 3


def test_gradient_flows_to_the_used_parts_only():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((6, 2))
    x = tf.placeholder(tf.float64, [None, 2])
    a, _, c = tf.split(x, 3, 0)
    loss = tf.reduce_sum(tf.square(a)) + tf.reduce_sum(tf.sin(c))
    grad = tf.gradients(loss, x)[0]
    with tf.Session() as sess:
        got = sess.run(grad, {x: data})

        def f(value):
            return sess.run(loss, {x: value})
        numeric = np.zeros_like(data)
        for index in np.ndindex(*data.shape):
            step = np.zeros_like(data)
            step[index] = 1e-6
            numeric[index] = (f(data + step) - f(data - step)) / 2e-6
    np.testing.assert_allclose(got, numeric, atol=1e-6)
    np.testing.assert_array_equal(got[2:4], 0.0)
