"""Optimizers against NumPy references of their update rules, slots, global step, schedules."""
import numpy as np
import pytest

import tensorweave as tf

C = np.array([1.0, 2.0, 0.5, 3.0])
D = np.array([0.3, -1.0, 2.0, 0.0])
W0 = np.array([1.0, -2.0, 0.5, 4.0])


def _grad(w):
    """Gradient of sum(C * w^2 / 2 + D * w)."""
    return C * w + D


def _sgd(lr):
    def step(w, state, t):
        return w - lr * _grad(w)
    return step


def _momentum(lr, mu, nesterov):
    def step(w, state, t):
        g = _grad(w)
        accum = state.get("accum", np.zeros_like(w)) * mu + g
        state["accum"] = accum
        return w - lr * (g + mu * accum) if nesterov else w - lr * accum
    return step


def _adam(lr, b1, b2, eps):
    def step(w, state, t):
        g = _grad(w)
        m = state.get("m", np.zeros_like(w)) * b1 + (1 - b1) * g
        v = state.get("v", np.zeros_like(w)) * b2 + (1 - b2) * g * g
        state["m"], state["v"] = m, v
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * m / (np.sqrt(v) + eps)
    return step


def _adagrad(lr, init):
    def step(w, state, t):
        g = _grad(w)
        accum = state.get("accum", np.full_like(w, init)) + g * g
        state["accum"] = accum
        return w - lr * g / np.sqrt(accum)
    return step


def _rmsprop(lr, decay, mu, eps, centered):
    def step(w, state, t):
        g = _grad(w)
        ms = state.get("ms", np.ones_like(w)) * decay + (1 - decay) * g * g
        mg = state.get("mg", np.zeros_like(w)) * decay + (1 - decay) * g
        denom = ms - mg * mg if centered else ms
        mom = state.get("mom", np.zeros_like(w)) * mu + lr * g / np.sqrt(denom + eps)
        state.update(ms=ms, mg=mg, mom=mom)
        return w - mom
    return step


CASES = [
    ("sgd", lambda: tf.train.GradientDescentOptimizer(0.1), _sgd(0.1)),
    ("momentum", lambda: tf.train.MomentumOptimizer(0.05, 0.9), _momentum(0.05, 0.9, False)),
    ("nesterov", lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
     _momentum(0.05, 0.9, True)),
    ("adam", lambda: tf.train.AdamOptimizer(0.1, 0.8, 0.95, 1e-7), _adam(0.1, 0.8, 0.95, 1e-7)),
    ("adagrad", lambda: tf.train.AdagradOptimizer(0.3, 0.2), _adagrad(0.3, 0.2)),
    ("rmsprop", lambda: tf.train.RMSPropOptimizer(0.01, 0.9, 0.5, 1e-6),
     _rmsprop(0.01, 0.9, 0.5, 1e-6, False)),
    ("rmsprop_centered", lambda: tf.train.RMSPropOptimizer(0.01, 0.9, 0.5, 1e-6, centered=True),
     _rmsprop(0.01, 0.9, 0.5, 1e-6, True)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,make,reference", CASES, ids=[c[0] for c in CASES])
def test_optimizer_matches_numpy_reference(name, make, reference, dtype):
    w = tf.Variable(W0.astype(dtype))
    loss = tf.reduce_sum(tf.constant(C.astype(dtype)) * w * w / 2 + tf.constant(D.astype(dtype))
                         * w)
    global_step = tf.train.get_or_create_global_step()
    train = make().minimize(loss, global_step=global_step)
    expected, state = W0.copy(), {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t in range(1, 6):
            sess.run(train)
            expected = reference(expected, state, t)
            got = sess.run(w)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, expected, rtol=2e-5 if dtype == np.float32 else 1e-10,
                                       atol=1e-6 if dtype == np.float32 else 1e-12)
        assert sess.run(global_step) == 5


def test_slots_are_named_colocated_and_not_trainable():
    w = tf.Variable(tf.zeros([3]), name="w")
    optimizer = tf.train.AdamOptimizer()
    train = optimizer.minimize(tf.reduce_sum(w * w))
    assert optimizer.get_slot_names() == ["m", "v"]
    m = optimizer.get_slot(w, "m")
    assert m.op.name == "w/Adam_m" and not m.trainable
    assert m.op.colocation_groups() == ["loc:@w"]
    assert m not in tf.trainable_variables() and m in tf.global_variables()
    assert all(v in tf.global_variables() for v in optimizer.variables())
    update_ops = [op for op in tf.get_default_graph().get_operations() if op.type == "ApplyAdam"]
    assert len(update_ops) == 1 and update_ops[0].colocation_groups() == ["loc:@w"]
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)


def test_var_list_restricts_updates_and_unconnected_variables_get_none():
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)
    unused = tf.Variable(3.0)
    loss = a * a + b * b
    optimizer = tf.train.GradientDescentOptimizer(0.5)
    grads = optimizer.compute_gradients(loss, var_list=[a, unused])
    assert grads[1][0] is None
    train = optimizer.apply_gradients(grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run([a, b, unused]) == [0.0, 2.0, 3.0]


def test_minimize_without_any_gradient_fails_clearly():
    a = tf.Variable(1.0)
    loss = tf.constant(3.0)
    with pytest.raises(ValueError, match="No gradients provided"):
        tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[a])


def test_sparse_gradient_updates_only_gathered_rows():
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    rows = tf.gather(table, [1, 3, 1])
    loss = tf.reduce_sum(rows)
    grads = tf.gradients(loss, [table])
    assert isinstance(grads[0], tf.IndexedSlices)
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        expected = np.arange(12, dtype=np.float32).reshape(4, 3)
        expected[1] -= 2
        expected[3] -= 1
        np.testing.assert_array_equal(sess.run(table), expected)


def test_sparse_gradient_with_adam_densifies():
    table = tf.Variable(np.ones((3, 2), np.float32))
    loss = tf.reduce_sum(tf.gather(table, [0]))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        result = sess.run(table)
    np.testing.assert_allclose(result[0], [0.9, 0.9], rtol=1e-5)
    np.testing.assert_array_equal(result[1:], np.ones((2, 2)))


def test_global_step_helpers():
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert step.dtype == tf.int64 and step.op.name == "global_step"
    assert tf.train.get_or_create_global_step() is step
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()
    with tf.Session() as sess:
        sess.run(step.initializer)
        assert tf.train.global_step(sess, step) == 0


def test_exponential_decay_and_piecewise_constant():
    step = tf.placeholder(tf.int64, [])
    smooth = tf.train.exponential_decay(0.1, step, 10, 0.5)
    stairs = tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True)
    piecewise = tf.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1])
    with tf.Session() as sess:
        for value in (0, 5, 10, 15, 25):
            s, st, p = sess.run([smooth, stairs, piecewise], {step: value})
            assert s == pytest.approx(0.1 * 0.5 ** (value / 10), rel=1e-6)
            assert st == pytest.approx(0.1 * 0.5 ** (value // 10), rel=1e-6)
            assert p == (1.0 if value <= 5 else 0.5 if value <= 10 else 0.1)
    with pytest.raises(ValueError, match="one more element"):
        tf.train.piecewise_constant(step, [5], [1.0])


def test_learning_rate_tensor_drives_the_optimizer():
    w = tf.Variable(1.0)
    global_step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(1.0, global_step, 1, 0.5, staircase=True)
    train = tf.train.GradientDescentOptimizer(lr).minimize(w, global_step=global_step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert sess.run(w) == pytest.approx(1.0 - (1.0 + 0.5 + 0.25))
