"""tf.nondifferentiable_batch_function: concurrent session.run calls (threads) have their
inputs batched into one run of the function, each getting back exactly its own rows of the
result (checked against NumPy); a lone call runs by itself after the timeout; padding to
allowed_batch_sizes is dropped again; bad settings are named."""
import threading

import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"Batch", "Unbatch"}
pytestmark = pytest.mark.timeout(60)


def build(max_batch_size, timeout_micros, allowed=None):
    """(x placeholder, y, the batch sizes the function saw)."""
    sizes = []

    @tf.nondifferentiable_batch_function(1, max_batch_size, timeout_micros, allowed)
    def layer(a, b):
        seen = tf.py_func(lambda v: (sizes.append(v.shape[0]), np.int64(0))[1], [a], tf.int64)
        with tf.control_dependencies([seen]):
            return a * 2.0 + b, tf.reduce_sum(a, axis=1)
    x = tf.placeholder(tf.float32, [None, 2])
    return x, layer(x, tf.ones_like(x) * 0.5), sizes


def run_concurrently(sess, fetches, x, inputs):
    results, errors = {}, []

    def call(key, value):
        try:
            results[key] = sess.run(fetches, {x: value})
        except Exception as exc:  # reported below
            errors.append(exc)
    threads = [threading.Thread(target=call, args=item) for item in inputs.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors and not any(t.is_alive() for t in threads), errors
    return results


def test_concurrent_calls_share_one_batch():
    x, (doubled, summed), sizes = build(4, 5_000_000)
    inputs = {i: np.full((1, 2), float(i), np.float32) for i in range(3)}
    inputs[3] = np.array([[10.0, 20.0]], np.float32)
    with tf.Session() as sess:
        results = run_concurrently(sess, [doubled, summed], x, inputs)
    for key, value in inputs.items():
        np.testing.assert_allclose(results[key][0], value * 2.0 + 0.5)
        np.testing.assert_allclose(results[key][1], value.sum(axis=1))
    assert sorted(sizes) == [0, 0, 0, 4]      # one run of the function on all four rows


def test_a_lone_call_runs_after_the_timeout_and_padding_is_dropped():
    x, (doubled, _), sizes = build(4, 20_000)
    with tf.Session() as sess:
        got = sess.run(doubled, {x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_allclose(got, [[2.5, 4.5], [6.5, 8.5]])
    assert sizes == [2]
    tf.reset_default_graph()
    x, (doubled, _), sizes = build(4, 20_000, allowed=[3, 4])
    with tf.Session() as sess:
        got = sess.run(doubled, {x: [[1.0, 2.0]]})
    np.testing.assert_allclose(got, [[2.5, 4.5]])
    assert sizes == [3]                        # padded to the allowed size 3, rows dropped


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="allowed_batch_sizes must increase"):
        tf.nondifferentiable_batch_function(1, 4, 10, [4, 2])
    with pytest.raises(ValueError, match="max_batch_size must be >= 1"):
        tf.nondifferentiable_batch_function(1, 0, 10)
