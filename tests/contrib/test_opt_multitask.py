"""MultitaskOptimizerWrapper (a variable whose gradient is all zeros is not updated at all,
slots included), clip_gradients_by_global_norm and RegAdagradOptimizer, against NumPy."""
import math

import numpy as np
import pytest

import tensorweave as tf

copt = tf.contrib.opt
A0, B0 = np.array([1.0, -2.0]), np.array([[0.5, 3.0], [-1.0, 2.0]])
# per step: (gradient of a, gradient of b); b's task is left out of the second step
PLAN = [(np.array([1.0, 0.5]), np.array([[1.0, -1.0], [0.5, 0.0]])),
        (np.array([-0.5, 2.0]), np.zeros((2, 2))),
        (np.array([0.25, -1.0]), np.array([[-2.0, 1.0], [1.0, 1.0]]))]


def _adam_skipping_zeros(start, grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    var, m, v = start.copy(), np.zeros_like(start), np.zeros_like(start)
    for t, grad in enumerate(grads, start=1):
        if not np.any(grad):
            continue  # skipped, but Adam's beta powers still advance (they are shared)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        var = var - lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    return var, m


@pytest.mark.parametrize("sparse", [False, True])
def test_multitask_wrapper_skips_all_zero_gradients(sparse):
    a = tf.Variable(A0, name="a")
    b = tf.Variable(B0, name="b")
    grad_a = tf.placeholder(tf.float64, [2])
    grad_b = tf.placeholder(tf.float64, [2, 2])
    b_part = tf.gather(b, [0, 1]) if sparse else b
    loss = tf.reduce_sum(a * grad_a) + tf.reduce_sum(b_part * grad_b)
    optimizer = copt.MultitaskOptimizerWrapper(tf.train.AdamOptimizer(0.1))
    train_op = optimizer.minimize(loss)
    assert optimizer.get_slot_names() == ["m", "v"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_a, step_b in PLAN:
            sess.run(train_op, {grad_a: step_a, grad_b: step_b})
        got_a, got_b, got_m_b = sess.run([a, b, optimizer.get_slot(b, "m")])
    want_a, _ = _adam_skipping_zeros(A0, [step_a for step_a, _ in PLAN])
    want_b, want_m_b = _adam_skipping_zeros(B0, [step_b for _, step_b in PLAN])
    np.testing.assert_allclose(got_a, want_a, rtol=1e-12)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-12)
    np.testing.assert_allclose(got_m_b, want_m_b, rtol=1e-12)


def test_multitask_wrapper_needs_an_optimizer():
    with pytest.raises(TypeError, match="opt must be a tf.train.Optimizer"):
        copt.MultitaskOptimizerWrapper("adam")


def test_clip_gradients_by_global_norm():
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
    pairs = [(tf.constant([3.0, 0.0]), a), (tf.constant([4.0]), b), (None, tf.Variable([0.0]))]
    clipped = copt.clip_gradients_by_global_norm(pairs, clip_norm=2.5)
    assert clipped[0][1] is a and clipped[1][1] is b and clipped[2][0] is None
    with tf.Session() as sess:
        got = sess.run([clipped[0][0], clipped[1][0]])
    np.testing.assert_allclose(got[0], [1.5, 0.0], rtol=1e-6)  # norm 5 scaled to 2.5
    np.testing.assert_allclose(got[1], [2.0], rtol=1e-6)
    with pytest.raises(ValueError, match="gradients_variables is empty"):
        copt.clip_gradients_by_global_norm([])


def test_reg_adagrad_freezes_the_accumulator_inside_avoid_updating_slots():
    lr, init = 0.5, 0.1
    var = tf.Variable([1.0, -2.0], dtype=tf.float64)
    grad = tf.placeholder(tf.float64, [2])
    optimizer = copt.RegAdagradOptimizer(lr, initial_accumulator_value=init)
    train_op = optimizer.minimize(tf.reduce_sum(var * grad))
    with optimizer.avoid_updating_slots():
        regularize_op = optimizer.minimize(tf.reduce_sum(var * grad))
    assert optimizer.get_slot_names() == ["accumulator"]
    plan = [(train_op, [1.0, 2.0]), (regularize_op, [0.5, -1.0]), (train_op, [-1.0, 0.5])]
    want, accum = np.array([1.0, -2.0]), np.full(2, init)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for op, value in plan:
            sess.run(op, {grad: value})
            value = np.array(value)
            if op is train_op:
                accum = accum + value * value
            want = want - lr * value / np.sqrt(accum)
        np.testing.assert_allclose(sess.run(var), want, rtol=1e-12)
        np.testing.assert_allclose(sess.run(optimizer.get_slot(var, "accumulator")), accum,
                                   rtol=1e-12)
