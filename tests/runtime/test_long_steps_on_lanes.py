"""A one-device step estimated to compute for long runs on its device's lanes (independent
branches overlap); a short one runs inline on the caller's thread (step_plan.py)."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import step_plan

pytestmark = pytest.mark.timeout(60)


def _lane_threads():
    return {t for t in threading.enumerate() if t.name.startswith("tensorweave lane")}


def _run_two_branches(threshold_seconds, monkeypatch):
    """Runs (x @ w1) + (x @ w2) with the given lanes threshold; returns (value, new lane
    threads seen while the session was open)."""
    monkeypatch.setattr(step_plan, "LANES_MIN_ESTIMATED_SECONDS", threshold_seconds)
    rng = np.random.default_rng(0)
    x_value = rng.standard_normal((64, 64)).astype(np.float32)
    w1, w2 = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    before = _lane_threads()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [64, 64])
        total = tf.matmul(x, tf.constant(w1)) + tf.matmul(x, tf.constant(w2))
        config = tf.ConfigProto(inter_op_parallelism_threads=2)
        with tf.Session(config=config) as sess:
            value = sess.run(total, {x: x_value})
            value_again = sess.run(total, {x: x_value})
            started = _lane_threads() - before
    np.testing.assert_allclose(value, x_value @ w1 + x_value @ w2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(value, value_again)
    return started


def test_a_short_step_runs_inline(monkeypatch):
    assert not _run_two_branches(1e9, monkeypatch)


def test_a_long_step_runs_on_the_device_lanes(monkeypatch):
    assert len(_run_two_branches(0.0, monkeypatch)) == 2


def test_on_lanes_an_update_waits_for_the_steps_reads_of_its_variable(monkeypatch):
    # The read of `w` waits behind a chain of products; the update has no inputs, so a free
    # lane would run it first and the read would see the updated weights.
    monkeypatch.setattr(step_plan, "LANES_MIN_ESTIMATED_SECONDS", 0.0)
    rng = np.random.default_rng(1)
    x_value = (rng.standard_normal((96, 96)) / 10).astype(np.float32)
    with tf.Graph().as_default():
        w = tf.Variable(np.ones((96, 4), np.float32))
        x = tf.placeholder(tf.float32, [96, 96])
        chain = x
        for _ in range(20):
            chain = tf.matmul(chain, x)
        read = tf.matmul(chain, w)
        update = tf.assign_sub(w, tf.ones([96, 4]))
        with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                value, _ = sess.run([read, update], {x: x_value})
                expected = np.linalg.matrix_power(x_value.astype(np.float64), 21) @ (
                    np.ones((96, 4)) * (1 - step))
                np.testing.assert_allclose(value, expected, rtol=1e-3, atol=1e-6)
