"""tf.contrib.opt's update rules against NumPy re-implementations, over several steps.

The loss is sum(var * G) (dense) or sum(gather(var, INDICES) * G) (sparse, so the gradient
is IndexedSlices with a repeated index), with a new G fed each step: the gradient is exactly
what was fed, and every rule is checked on the same sequence of gradients.
"""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.indexed_slices import IndexedSlices

INIT = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25], [2.0, -0.5]])
INDICES = np.array([2, 0, 2])  # row 2 twice: its two gradient rows are summed, as TF does
STEPS = 4


def _gradients(shape, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-1.0, 1.0, size=shape) for _ in range(STEPS)]


def _dedup(values):
    """(distinct rows, summed gradient rows), in order of first appearance."""
    rows = list(dict.fromkeys(INDICES.tolist()))
    summed = np.stack([values[INDICES == row].sum(axis=0) for row in rows])
    return np.array(rows), summed


def _densify(values):
    dense = np.zeros_like(INIT)
    np.add.at(dense, INDICES, values)
    return dense


def train(make_optimizer, sparse=False, dtype=np.float64, minimize_kwargs=None):
    """(final variable, {slot name: final slot}, the optimizer) after STEPS steps."""
    with tf.Graph().as_default():
        var = tf.Variable(INIT.astype(dtype), name="var")
        if sparse:
            fed = tf.placeholder(dtype, shape=[len(INDICES), INIT.shape[1]])
            loss = tf.reduce_sum(tf.gather(var, INDICES) * fed)
        else:
            fed = tf.placeholder(dtype, shape=INIT.shape)
            loss = tf.reduce_sum(var * fed)
        global_step = tf.train.get_or_create_global_step()
        optimizer = make_optimizer()
        if sparse:
            assert isinstance(optimizer.compute_gradients(loss)[0][0], IndexedSlices)
        train_op = optimizer.minimize(loss, global_step=global_step,
                                      **(minimize_kwargs or {}))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for grad in _gradients(fed.shape.as_list()):
                sess.run(train_op, {fed: grad.astype(dtype)})
            assert sess.run(global_step) == STEPS
            slots = {name: sess.run(optimizer.get_slot(var, name))
                     for name in optimizer.get_slot_names()}
            return sess.run(var), slots, optimizer


def reference(step, sparse=False):
    """Runs the NumPy rule `step(var, grad, state, t)` on the same gradients as `train`; a
    sparse rule gets grad as (rows, summed values)."""
    var, state = INIT.copy(), {}
    shape = (len(INDICES), INIT.shape[1]) if sparse else INIT.shape
    for t, grad in enumerate(_gradients(shape), start=1):
        var = step(var, _dedup(grad) if sparse else grad, state, t)
    return var, state


# --- NumPy rules ---------------------------------------------------------------------------
def _adam_moments(state, grad, b1, b2):
    state["m"] = b1 * state.get("m", np.zeros_like(grad)) + (1 - b1) * grad
    state["v"] = b2 * state.get("v", np.zeros_like(grad)) + (1 - b2) * grad * grad
    return state["m"], state["v"]


def adam_rule(lr=0.1, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0, nesterov=False):
    def step(var, grad, state, t):
        var = var - weight_decay * var
        m, v = _adam_moments(state, grad, b1, b2)
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        numerator = b1 * m + (1 - b1) * grad if nesterov else m
        return var - lr_t * numerator / (np.sqrt(v) + eps)
    return step


def momentum_rule(lr, mu, weight_decay=0.0, nesterov=False):
    def step(var, grad, state, t):
        var = var - weight_decay * var
        accum = mu * state.get("momentum", np.zeros_like(var)) + grad
        state["momentum"] = accum
        return var - lr * (grad + mu * accum) if nesterov else var - lr * accum
    return step


def lazy_adam_sparse_rule(lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    def step(var, grad, state, t):
        rows, values = grad
        m = state.setdefault("m", np.zeros_like(var))
        v = state.setdefault("v", np.zeros_like(var))
        m[rows] = b1 * m[rows] + (1 - b1) * values
        v[rows] = b2 * v[rows] + (1 - b2) * values * values
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        var = var.copy()
        var[rows] -= lr_t * m[rows] / (np.sqrt(v[rows]) + eps)
        return var
    return step


def nadam_sparse_rule(lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    def step(var, grad, state, t):
        rows, values = grad
        dense = np.zeros_like(var)
        dense[rows] = values
        m, v = _adam_moments(state, dense, b1, b2)
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        var = var.copy()
        m_bar = b1 * m[rows] + (1 - b1) * values
        var[rows] -= lr_t * m_bar / (np.sqrt(v[rows]) + eps)
        return var
    return step


def sign_rule(multiplier, lr, beta, sign_decay=lambda t: 1.0, sparse=False):
    """AddSign / PowerSign; `multiplier(agreement)` maps sign_decay*sign(g)*sign(m)."""
    def step(var, grad, state, t):
        rows, values = grad if sparse else (slice(None), grad)
        dense = np.zeros_like(var)
        dense[rows] = values
        m = beta * state.get("m", np.zeros_like(var)) + (1 - beta) * dense
        state["m"] = m
        agreement = sign_decay(t) * np.sign(values) * np.sign(m[rows])
        var = var.copy()
        var[rows] -= lr * multiplier(agreement) * values
        return var
    return step


def lars_rule(lr, mu, weight_decay, eeta, eps=0.0, skip=False):
    def step(var, grad, state, t):
        if skip:
            scaled, grad = lr, grad
        else:
            w_norm, g_norm = np.linalg.norm(var), np.linalg.norm(grad)
            trust = eeta * w_norm / (g_norm + weight_decay * w_norm + eps) \
                if w_norm > 0 and g_norm > 0 else 1.0
            scaled, grad = lr * trust, grad + weight_decay * var
        accum = mu * state.get("momentum", np.zeros_like(var)) + scaled * grad
        state["momentum"] = accum
        return var - accum
    return step


def adamax_rule(lr=0.1, b1=0.9, b2=0.999, eps=1e-8, sparse=False):
    def step(var, grad, state, t):
        rows, values = grad if sparse else (slice(None), grad)
        m = state.setdefault("m", np.zeros_like(var))
        v = state.setdefault("v", np.zeros_like(var))
        m[rows] = b1 * m[rows] + (1 - b1) * values
        v[rows] = np.maximum(b2 * v[rows], np.abs(values))
        var = var.copy()
        var[rows] -= lr / (1 - b1 ** t) * m[rows] / (v[rows] + eps)
        return var
    return step


def decayed_then(rule, weight_decay):
    """A sparse rule that first decays the rows the gradient touches (each once)."""
    def step(var, grad, state, t):
        rows, values = grad
        var = var.copy()
        var[rows] -= weight_decay * var[rows]
        dense = np.zeros_like(var)
        dense[rows] = values
        return rule(var, dense, state, t)
    return step


copt = tf.contrib.opt
CASES = [  # id, optimizer factory, NumPy rule, sparse?
    ("adamw", lambda: copt.AdamWOptimizer(0.05, learning_rate=0.1),
     adam_rule(weight_decay=0.05), False),
    ("adamw-sparse", lambda: copt.AdamWOptimizer(0.05, learning_rate=0.1),
     decayed_then(adam_rule(), 0.05), True),
    ("momentumw", lambda: copt.MomentumWOptimizer(0.02, 0.1, 0.9),
     momentum_rule(0.1, 0.9, weight_decay=0.02), False),
    ("momentumw-nesterov", lambda: copt.MomentumWOptimizer(0.02, 0.1, 0.9, use_nesterov=True),
     momentum_rule(0.1, 0.9, weight_decay=0.02, nesterov=True), False),
    ("sgdw-extended", lambda: copt.extend_with_decoupled_weight_decay(
        tf.train.GradientDescentOptimizer)(0.1, 0.5),
     lambda var, grad, state, t: var - 0.1 * var - 0.5 * grad, False),
    ("lazy-adam-dense", lambda: copt.LazyAdamOptimizer(0.1), adam_rule(), False),
    ("lazy-adam-sparse", lambda: copt.LazyAdamOptimizer(0.1), lazy_adam_sparse_rule(), True),
    ("adam-gs", lambda: copt.AdamGSOptimizer(tf.train.get_global_step(), 0.1), adam_rule(),
     False),
    ("lazy-adam-gs-sparse", lambda: copt.LazyAdamGSOptimizer(
        global_step=tf.train.get_global_step(), learning_rate=0.1),
     lazy_adam_sparse_rule(), True),
    ("nadam-dense", lambda: copt.NadamOptimizer(0.1), adam_rule(nesterov=True), False),
    ("nadam-sparse", lambda: copt.NadamOptimizer(0.1), nadam_sparse_rule(), True),
    ("addsign", lambda: copt.AddSignOptimizer(0.1, alpha=1.0, beta=0.5),
     sign_rule(lambda a: 1.0 + a, 0.1, 0.5), False),
    ("addsign-sparse", lambda: copt.AddSignOptimizer(0.1, alpha=1.0, beta=0.5),
     sign_rule(lambda a: 1.0 + a, 0.1, 0.5, sparse=True), True),
    ("powersign", lambda: copt.PowerSignOptimizer(0.1, base=2.0, beta=0.9),
     sign_rule(lambda a: 2.0 ** a, 0.1, 0.9), False),
    ("powersign-sparse", lambda: copt.PowerSignOptimizer(0.1, beta=0.9),
     sign_rule(np.exp, 0.1, 0.9, sparse=True), True),
    ("powersign-decay", lambda: copt.PowerSignOptimizer(
        0.1, beta=0.9, sign_decay_fn=lambda step: 1.0 - tf.cast(step, tf.float32) / 8.0),
     sign_rule(np.exp, 0.1, 0.9, sign_decay=lambda t: 1.0 - (t - 1) / 8.0), False),
    ("adamax", lambda: copt.AdaMaxOptimizer(0.1), adamax_rule(), False),
    ("adamax-sparse", lambda: copt.AdaMaxOptimizer(0.1), adamax_rule(sparse=True), True),
    ("lars", lambda: copt.LARSOptimizer(0.5, momentum=0.9, weight_decay=0.01, eeta=0.1),
     lars_rule(0.5, 0.9, 0.01, 0.1), False),
    ("lars-nesterov-off-skip", lambda: copt.LARSOptimizer(0.5, skip_list=["va"]),
     lars_rule(0.5, 0.9, 0.0001, 0.001, skip=True), False),
]


@pytest.mark.parametrize("make_optimizer, rule, sparse",
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_update_rule_matches_numpy(make_optimizer, rule, sparse):
    got, slots, _ = train(make_optimizer, sparse=sparse)
    want, state = reference(rule, sparse=sparse)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    for name, value in state.items():
        np.testing.assert_allclose(slots[name], value, rtol=1e-9, atol=1e-12,
                                   err_msg=f"slot {name}")


def test_float32_adamw_matches_numpy():
    got, slots, _ = train(lambda: copt.AdamWOptimizer(0.05, learning_rate=0.1),
                          dtype=np.float32)
    want, state = reference(adam_rule(weight_decay=0.05))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(slots["v"], state["v"], rtol=1e-5, atol=1e-7)


def test_lazy_adam_leaves_untouched_rows_and_moments_alone():
    got, slots, _ = train(lambda: copt.LazyAdamOptimizer(0.1), sparse=True)
    untouched = [1, 3]
    np.testing.assert_array_equal(got[untouched], INIT[untouched])
    np.testing.assert_array_equal(slots["m"][untouched], 0.0)
    np.testing.assert_array_equal(slots["v"][untouched], 0.0)
    assert np.all(slots["m"][[0, 2]] != 0.0)


def test_nadam_sparse_moves_only_touched_rows():
    got, _, _ = train(lambda: copt.NadamOptimizer(0.1), sparse=True)
    np.testing.assert_array_equal(got[[1, 3]], INIT[[1, 3]])
    assert np.all(got[[0, 2]] != INIT[[0, 2]])
